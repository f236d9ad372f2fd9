"""Crash repair: the events that close a turn a crash left open (seeds/001, "Crash recovery"; PROTOCOL 1.2).

Rules: a log whose last turn is open gets, in order, one ``tool/result`` closer per tool call still waiting for its
result (``surfaceOp:'append'``, ``sourceEventSeqs`` citing the ``tool/call`` when one was recorded), a ``step/end``
when a step is open, and ``turn/end`` with ``reason:{kind:'interrupted'}``. Closers continue the seqs and reuse the
last event's time, so the result is deterministic; a balanced log gets nothing, so repair is idempotent. Both payload
generations are read. Packed rows are never expanded (they hold only deltas). Sans-I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from .chunk_rows import is_storage_row, storage_record_range

__all__ = [
    "TOOL_OUTCOME_UNKNOWN",
    "TOOL_NOT_STARTED",
    "OUTCOME_UNKNOWN_TEXT",
    "NOT_STARTED_TEXT",
    "interrupted_turn_closers",
    "repair_events",
]

TOOL_OUTCOME_UNKNOWN: Final = "TOOL_OUTCOME_UNKNOWN"
"""Error code of a closer for a recorded ``tool/call`` whose result was never durably written."""

TOOL_NOT_STARTED: Final = "TOOL_NOT_STARTED"
"""Error code of a closer for a tool call the model requested but that never reached a ``tool/call``."""

OUTCOME_UNKNOWN_TEXT: Final = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is "
    "unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or "
    "idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly.")
NOT_STARTED_TEXT: Final = (
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.")


class _Pending:
    __slots__ = ("step", "call_seq")

    def __init__(self, step: Any, call_seq: int | None = None) -> None:
        self.step = step
        self.call_seq = call_seq


def _data(event: Mapping[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    return data if type(data) is dict else {}


def _tool_call_ids(data: dict[str, Any]) -> list[str]:
    message = data.get("message")
    content = message.get("content") if type(message) is dict else data.get("content")
    if type(content) is not list:
        return []
    return [b["id"] for b in content if type(b) is dict and b.get("type") == "tool-call" and type(b.get("id")) is str]


def _result_call_id(data: dict[str, Any]) -> Any:
    message = data.get("message")
    if type(message) is not dict:
        return data.get("callId")  # the flat generation
    source = message.get("source")
    if type(source) is dict and "callId" in source:
        return source["callId"]
    for block in message.get("content") or ():
        if type(block) is dict and block.get("type") == "tool-result":
            return block.get("toolCallId")
    return None


def interrupted_turn_closers(records: Iterable[Any], problems: list[str] | None = None) -> list[dict[str, Any]]:
    """The synthetic events that close an open last turn, or ``[]`` for a balanced (or empty) log.

    ``records`` are logical events or storage records (rows are skipped, except that a final row anchors the
    closers' seq and time), contiguous and in log order. A call id that is not a string (a crafted or damaged
    ``callId``) cannot be closed: that call gets no closer and ``problems`` (when given) gets ``seq N: ...``.
    """
    open_turn: Any = None
    open_step: Any = None
    pending: dict[Any, _Pending] = {}
    last_seq = -1
    last_time: Any = 0
    for record in records:
        if is_storage_row(record):
            last_seq = storage_record_range(record)[1]
            last_time = record.last_time
            continue
        last_seq, last_time = record.get("seq", last_seq + 1), record.get("time", 0)
        etype = record.get("type")
        data = _data(record)
        if etype == "turn/start":
            open_turn, open_step = data.get("turn"), None
            pending.clear()
        elif etype == "turn/end":
            open_turn = open_step = None
            pending.clear()
        elif etype == "step/start":
            open_step = data.get("step")
        elif etype == "step/end":
            open_step = None
            pending.clear()
        elif etype == "assistant/message":
            for call_id in _tool_call_ids(data):
                pending.setdefault(call_id, _Pending(data.get("step")))
        elif etype == "tool/call":
            called = data.get("callId")
            if type(called) is not str:
                if problems is not None:
                    problems.append(f"seq {last_seq}: tool/call callId is not a string (got {called!r}"[:200] +
                                    "); no closer is written for it")
                continue
            entry = pending.get(called)
            if entry is None:  # a call no assistant message announced is still orphaned
                entry = pending[called] = _Pending(data.get("step"))
            entry.call_seq = last_seq
        elif etype == "tool/result":
            answered = _result_call_id(data)
            if type(answered) is str:
                pending.pop(answered, None)
    if open_turn is None:
        return []
    seq = last_seq + 1
    closers: list[dict[str, Any]] = []
    for call_id, entry in pending.items():
        started = entry.call_seq is not None
        message = {
            "id": f"interrupted-tool-result-{call_id}-{seq}",
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                         "content": [{"type": "text", "text": OUTCOME_UNKNOWN_TEXT if started else NOT_STARTED_TEXT}]}],
        }
        error = ({"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN} if started
                 else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED})
        # Key order as the reference writes closers: surfaceOp before sourceEventSeqs.
        closer: dict[str, Any] = {"type": "tool/result", "seq": seq, "time": last_time,
                                  "data": {"turn": open_turn, "step": entry.step, "message": message, "error": error},
                                  "surfaceOp": "append"}
        if started:
            closer["sourceEventSeqs"] = [entry.call_seq]
        closers.append(closer)
        seq += 1
    if open_step is not None:
        closers.append({"type": "step/end", "seq": seq, "time": last_time,
                        "data": {"turn": open_turn, "step": open_step}})
        seq += 1
    closers.append({"type": "turn/end", "seq": seq, "time": last_time,
                    "data": {"turn": open_turn, "reason": {"kind": "interrupted"}}})
    return closers


def repair_events(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The log with its closers appended (a balanced log comes back unchanged, as a new list)."""
    log = list(events)
    return log + interrupted_turn_closers(log)
