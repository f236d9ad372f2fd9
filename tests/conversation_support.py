"""Test support for the assembler: a tiny session builder and packed/scalar folding helpers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from msgspec import UNSET

from assembler.definition import Definition
from assembler.history import MessageIndex
from assembler.records import ChunksRecord, EventRecord, HistoryRecord, SessionPage, StorageRecord, decode_page, encode
from assembler.transcript import Transcript, assemble, canonical_json
from assembler.views import NodeLocation, ViewNode
from definitions import default_definitions

T0 = 1_700_000_000_000


class Session:
    """Logical events with ``seq = index``; ``time`` advances by ``dt`` per event."""

    def __init__(self, t0: int = T0) -> None:
        self.events: list[dict[str, Any]] = []
        self.time = t0

    def add(self, etype: str, data: Any, dt: int = 1, **extra: Any) -> int:
        seq = len(self.events)
        self.time += dt
        self.events.append({"type": etype, "seq": seq, "time": self.time, "data": data, **extra})
        return seq

    def turn_start(self, turn: int) -> int:
        return self.add("turn/start", {"turn": turn})

    def turn_end(self, turn: int, reason: Any = None) -> int:
        return self.add("turn/end", {"turn": turn, "reason": reason or {"kind": "completed"}})

    def step_start(self, turn: int, step: int) -> int:
        return self.add("step/start", {"turn": turn, "step": step})

    def step_end(self, turn: int, step: int) -> int:
        return self.add("step/end", {"turn": turn, "step": step})

    def chunk(self, turn: int, step: int, chunk: dict[str, Any], dt: int = 1) -> int:
        return self.add("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk}, dt)

    def text(self, turn: int, step: int, index: int, text: str, kind: str = "text", dt: int = 1) -> int:
        return self.chunk(turn, step, {"type": f"{kind}-delta", "index": index, "text": text}, dt)

    def texts(self, turn: int, step: int, index: int, texts: list[str], kind: str = "text") -> int:
        first = -1
        for t in texts:
            s = self.text(turn, step, index, t, kind)
            first = s if first < 0 else first
        return first

    def tool_delta(self, turn: int, step: int, index: int, call_id: str, args: str, name: str | None = None,
                   dt: int = 1) -> int:
        chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
        if name is not None:
            chunk["name"] = name
        chunk["argumentsDelta"] = args
        return self.chunk(turn, step, chunk, dt)

    def usage(self, turn: int, step: int, usage: dict[str, Any]) -> int:
        return self.chunk(turn, step, {"type": "usage", "usage": usage})

    def message(self, turn: int, step: int, content: list[Any], usage: Any = None, interrupted: bool = False,
                append: bool = True, mid: str | None = None) -> int:
        data: dict[str, Any] = {"turn": turn, "step": step, "message": {
            "role": "assistant", "content": content,
            "source": {"kind": "model", "provider": "p", "model": "m"}, "id": mid or f"m{len(self.events)}"}}
        if usage is not None:
            data["usage"] = usage
        if interrupted:
            data["interrupted"] = True
        extra = {"surfaceOp": "append"} if append else {"surfaceOp": {"op": "replace", "start": 0, "end": 0}}
        return self.add("assistant/message", data, **extra)

    def user(self, text: str, mid: str | None = None, source: Any = None) -> int:
        return self.add("user/message", {"id": mid or f"u{len(self.events)}", "role": "user",
                                         "content": [{"type": "text", "text": text}],
                                         "source": source or {"kind": "user"}}, surfaceOp="append")

    def retry(self, turn: int, step: int, retry: int = 1, code: str = "RATE", message: str = "slow down") -> int:
        return self.add("llm/retry", {"retryId": f"r{len(self.events)}", "turn": turn, "step": step,
                                      "provider": "p", "mode": "normal", "policyKey": "k", "retry": retry,
                                      "maxRetries": 3, "delayMs": 100,
                                      "failure": {"message": message, "code": code}})


def assemble_entries(records: Sequence[HistoryRecord], has_more: bool,
                     definitions: Sequence[Definition] | None = None) -> Transcript:
    """The core ``assemble`` with the default Definitions unless others are given (what the edges wire in)."""
    return assemble(records, has_more, default_definitions() if definitions is None else definitions)


def assemble_page(p: SessionPage, definitions: Sequence[Definition] | None = None) -> Transcript:
    return assemble_entries(p.records, p.hasMore, definitions)


def view_node(kind: str, data: Any, key: str = "k", anchor: int | float = 0, visibility: Any = UNSET) -> ViewNode:
    """A chat node as a Definition publishes it (tests of the renderer build their own)."""
    return ViewNode(key=key, kind=kind, id=key, target="chat", anchorSeq=anchor, location=NodeLocation("session"),
                    data=data, visibility=visibility)


def page(events: list[dict[str, Any]], mode: str, max_messages: int | None = None) -> SessionPage:
    return decode_page(storage_page_bytes(events, mode, max_messages))  # type: ignore[arg-type]


def fold(events: list[dict[str, Any]], mode: str, max_messages: int | None = None,
         definitions: Any = None) -> Transcript:
    return assemble_page(page(events, mode, max_messages), definitions)


def both(events: list[dict[str, Any]], max_messages: int | None = None, definitions: Any = None) -> tuple[bytes, bytes]:
    """Canonical JSON of the packed and the scalar fold."""
    return (canonical_json(fold(events, "packed", max_messages, definitions)),
            canonical_json(fold(events, "scalar", max_messages, definitions)))


def row_count(p: SessionPage) -> int:
    return sum(1 for r in p.records if type(r) is ChunksRecord)


def scalar_records(p: SessionPage) -> list[EventRecord]:
    return [r for r in p.records if type(r) is EventRecord]

def storage_page_bytes(storage_records: Iterable[StorageRecord], mode: str = "packed",
                       max_messages: int | None = None) -> bytes:
    """The JSON bytes of a ``SessionPage`` over a log's storage records, as a server sends them: ``packed`` from the
    no-expansion pager, ``scalar`` the same slice with every row expanded. ``max_messages=None`` takes the whole log.
    """
    if mode not in ("packed", "scalar"):
        raise ValueError(f"unknown mode {mode!r}")
    return encode(MessageIndex(storage_records).page(None, None, max_messages, scalar=mode == "scalar"))
