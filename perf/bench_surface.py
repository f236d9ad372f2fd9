"""Benchmark "surface-append-read": append N events to a Session and read the surface after every append.

The delta-based ``SurfaceManager`` should make the whole run linear in N, so the 100k run takes about 10x the 10k
run (the bound is 12x). For contrast the same workload runs with a naive dirty-flag manager that rebuilds
the whole surface on every read (quadratic), at smaller N; a naive size is skipped, not estimated, when the
previous size's measured time says it would exceed the budget. Reports medians and ratios, asserts nothing.

    .venv/bin/python -m perf.bench_surface --json build/perf/bench_surface.json
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from assembler.session import Session
from assembler.surface import SurfaceManager, replace_op

__all__ = ["workload", "run_delta", "run_naive", "main"]

T0 = 1_700_000_000_000


def workload(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """A deterministic realistic log of ``n`` events: turns of a user prompt, steps of chunk runs with an
    ``assistant/message`` citing its chunks, tool calls and results, and every so often a compaction whose summary
    ``user/message`` replaces the older part of the surface (sources cover every shadowed node)."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    surface: list[int] = []  # the generator's own list, to aim replaces (not timed)
    turn = 0

    def add(etype: str, data: Any, **extra: Any) -> int:
        seq = len(events)
        events.append({"type": etype, "seq": seq, "time": T0 + seq, "data": data, **extra})
        return seq

    while len(events) < n:
        turn += 1
        add("turn/start", {"turn": turn})
        surface.append(add("user/message", {"role": "user", "content": [{"type": "text", "text": f"prompt {turn}"}],
                                            "source": {"kind": "user"}}, surfaceOp="append"))
        for step in range(1, rng.randint(1, 3) + 1):
            add("step/start", {"turn": turn, "step": step})
            chunks = [add("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                "type": "text-delta", "index": 0, "text": "tok"}}) for _ in range(rng.randint(5, 60))]
            call = f"call-{turn}-{step}"
            blocks = [{"type": "text", "text": "tok" * len(chunks)},
                      {"type": "tool-call", "id": call, "name": "bash", "arguments": "{}"}]
            surface.append(add("assistant/message", {"turn": turn, "step": step, "message": {
                "role": "assistant", "content": blocks}}, sourceEventSeqs=chunks, surfaceOp="append"))
            call_seq = add("tool/call", {"turn": turn, "step": step, "callId": call, "name": "bash",
                                         "arguments": "{}"})
            surface.append(add("tool/result", {"turn": turn, "step": step, "message": {
                "role": "user", "source": {"kind": "tool", "callId": call},
                "content": [{"type": "tool-result", "toolCallId": call, "content": [], "isError": False}]}},
                sourceEventSeqs=[call_seq], surfaceOp="append"))
            add("step/end", {"turn": turn, "step": step})
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        if turn % 25 == 0 and len(surface) > 8:
            # Compact the older half and keep the newer half verbatim. An earlier summary at the head has a
            # larger seq than the nodes after it, so the range starts after it (start <= end in seq).
            first, cut = 0, len(surface) // 2
            while surface[first] > surface[cut - 1]:
                first += 1
            start_seq = add("compaction/start", {"compactionId": f"c{turn}", "turn": turn})
            summary_seq = add("compaction/summary", {"compactionId": f"c{turn}", "summary": []})
            shadowed = surface[first:cut]
            seq = add("user/message", {"role": "user", "content": [{"type": "text", "text": "summary"}],
                                       "source": {"kind": "plugin", "plugin": "compact"}},
                      sourceEventSeqs=[start_seq, summary_seq, *shadowed],
                      surfaceOp=replace_op(shadowed[0], shadowed[-1]))
            surface[first:cut] = [seq]
            add("compaction/end", {"compactionId": f"c{turn}", "turn": turn})
    return events[:n]


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        self.now += 1
        return self.now


def _replay(events: list[dict[str, Any]], naive: bool) -> tuple[float, int]:
    session = Session(clock=_Clock())
    append = session.append
    checksum = 0
    started = time.perf_counter()
    for e in events:
        append(e["type"], e["data"], surface=e.get("surfaceOp"), source_event_seqs=e.get("sourceEventSeqs"))
        if naive:
            # Dirty flag + full rebuild: every read rescans the whole log.
            surface = SurfaceManager(session.events)
        else:
            surface = session.surface  # advanced by the delta since the last read
        checksum += len(surface)
        tail = surface.tail
        checksum += tail.seq if tail is not None else 0
    return time.perf_counter() - started, checksum


def run_delta(n: int, repeats: int) -> dict[str, Any]:
    """Median wall time of the delta-based run over ``repeats`` runs."""
    return _measure(workload(n), repeats, naive=False)


def run_naive(n: int, repeats: int) -> dict[str, Any]:
    """Median wall time of the naive dirty-flag run (same workload, same appends)."""
    return _measure(workload(n), repeats, naive=True)


def _measure(events: list[dict[str, Any]], repeats: int, naive: bool) -> dict[str, Any]:
    n = len(events)
    _replay(events[: min(n, 1000)], naive=naive)  # warm-up, not measured
    # The generated input is not part of the session under test: freeze it so CPython's cycle collector does not
    # rescan 100k input dicts on every full collection (that would charge the input's size to the session).
    gc.collect()
    gc.freeze()
    runs = []
    checksum = 0
    try:
        for _ in range(repeats):
            gc.collect()
            seconds, checksum = _replay(events, naive=naive)
            runs.append(seconds)
    finally:
        gc.unfreeze()
    median = statistics.median(runs)
    return {"n": n, "repeats": repeats, "runs_s": [round(r, 4) for r in runs], "median_s": round(median, 4),
            "min_s": round(min(runs), 4), "per_event_us": round(median / n * 1e6, 3), "checksum": checksum}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--repeats", type=int, default=5, help="runs per delta size (median reported)")
    parser.add_argument("--naive-sizes", type=int, nargs="*", default=[1_000, 2_000, 4_000, 10_000])
    parser.add_argument("--naive-repeats", type=int, default=3)
    parser.add_argument("--naive-budget", type=float, default=30.0,
                        help="skip a naive size when the last measured one says a single run would exceed this (s)")
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    args = parser.parse_args(argv)

    small, large = args.sizes
    delta = {str(n): run_delta(n, args.repeats) for n in (small, large)}
    ratio = delta[str(large)]["median_s"] / delta[str(small)]["median_s"]

    naive: dict[str, Any] = {}
    delta_same_n: dict[str, Any] = {}
    previous: tuple[int, float] | None = None
    for n in args.naive_sizes:
        if previous is not None and previous[1] * (n / previous[0]) ** 2 > args.naive_budget:
            naive[str(n)] = {"n": n, "skipped": f"over the {args.naive_budget:.0f} s budget (not estimated)"}
            continue
        naive[str(n)] = run_naive(n, args.naive_repeats)
        delta_same_n[str(n)] = run_delta(n, args.naive_repeats)
        previous = (n, naive[str(n)]["median_s"])
    measured = [k for k, v in naive.items() if "median_s" in v]
    naive_ratio = None
    if len(measured) >= 2:
        lo, hi = measured[0], measured[-1]
        naive_ratio = {"sizes": [int(lo), int(hi)], "ratio": round(naive[hi]["median_s"] / naive[lo]["median_s"], 2),
                       "linear_would_be": round(int(hi) / int(lo), 2)}

    events = workload(large)
    mix: dict[str, int] = {}
    for e in events:
        mix[e["type"]] = mix.get(e["type"], 0) + 1
    report = {
        "scenario": "surface-append-read",
        "description": "append N events to a Session, reading the surface (length and tail) after every append",
        "workload_mix_at_large_n": dict(sorted(mix.items(), key=lambda kv: -kv[1])),
        "replace_ops_at_large_n": sum(1 for e in events if isinstance(e.get("surfaceOp"), dict)),
        "delta": delta,
        "ratio_large_over_small": round(ratio, 2),
        "ratio_of_minimums": round(delta[str(large)]["min_s"] / delta[str(small)]["min_s"], 2),
        "gc": "input frozen (gc.freeze) and gc.collect() before each run; collector enabled during runs",
        "size_ratio": large / small,
        "linear_bound": 12,
        "within_linear_bound": ratio <= 12,
        "naive_dirty_flag": naive,
        "delta_at_naive_sizes": delta_same_n,
        "naive_ratio": naive_ratio,
        "naive_and_delta_surfaces_agree": all(
            naive[k]["checksum"] == delta_same_n[k]["checksum"] for k in delta_same_n),
        "python": sys.version.split()[0],
        "machine": platform.platform(),
    }
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
