"""Deterministic synthetic sessions for benchmarks (ASSEMBLY 6): our own generator, no copied data.

``history_transport_events()`` is the 416,756-event page: 116 reasoning runs split by block index, separated by
ignorable ``benchmark/separator`` events. ``whitespace_prefix_row(n)`` is the 5.7 case as a wire page.
"""

from __future__ import annotations

import uuid
from typing import Any

__all__ = [
    "LOGICAL_EVENTS", "DELTA_EVENTS", "ORDINARY", "DELTA_RUNS", "TIME_ZERO",
    "fragment", "history_transport_events", "whitespace_prefix_page",
]

LOGICAL_EVENTS = 416_756
DELTA_EVENTS = 416_176
ORDINARY = 580
DELTA_RUNS = 116
TIME_ZERO = 1_700_000_000_000
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _imul32(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def fragment(run: int, i: int) -> str:
    """A deterministic two-character base-36 fragment: ``fragment(0, 0..4) == sq 4n 00 kt di``."""
    v = _imul32(run + 1, 0x9E3779B1) ^ _imul32(i + 1, 0x85EBCA6B)
    digits = ""
    while v:
        v, d = divmod(v, 36)
        digits = _BASE36[d] + digits
    return digits.rjust(7, "0")[-2:]


def history_transport_events(runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS) -> list[dict[str, Any]]:
    """The logical events of the synthetic history-transport page, ``seq = index``, ``time = TIME_ZERO + seq``."""
    events: list[dict[str, Any]] = []

    def add(etype: str, data: Any, **extra: Any) -> None:
        seq = len(events)
        events.append({"type": etype, "seq": seq, "time": TIME_ZERO + seq, "data": data, **extra})

    add("turn/start", {"turn": 1})
    add("user/message", {"id": str(uuid.UUID(int=0x5EED)), "role": "user",
                         "content": [{"type": "text", "text": "synthetic history transport benchmark"}],
                         "source": {"kind": "user"}}, surfaceOp="append")
    add("step/start", {"turn": 1, "step": 1})
    base, extra_runs = divmod(total_deltas, runs)
    for r in range(runs):
        length = base + (1 if r < extra_runs else 0)
        for i in range(length):
            add("assistant/chunk", {"turn": 1, "step": 1,
                                    "chunk": {"type": "reasoning-delta", "index": r, "text": fragment(r, i)}})
        for s in range(4 if r < 3 else 5):
            add("benchmark/separator", {"run": r, "separator": s}, ignorable=True)
    return events


def whitespace_prefix_page(n: int) -> dict[str, Any]:
    """A ``SessionPage`` value: ``step/start`` at seq 0, then one reasoning row of ``n-1`` spaces and ``'x'``."""
    return {
        "records": [
            {"type": "event", "event": {"type": "step/start", "seq": 0, "time": TIME_ZERO,
                                        "data": {"turn": 1, "step": 1}}},
            {"type": "chunks", "event": {"type": "chunkrow/reasoning-chunks", "seq": 1, "time": TIME_ZERO + 1,
                                         "data": {"turn": 1, "step": 1, "index": 0, "dt": [1] * (n - 1),
                                                  "texts": [" "] * (n - 1) + ["x"]}}},
        ],
        "hasMore": False,
    }
