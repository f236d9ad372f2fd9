"""Message-aligned history pages (PROTOCOL 3.2): select on logical seqs, then pack into history records.

Rules: a page is the slice ``events[cut:end]`` where ``cut`` is the group start of the N-th newest append-origin
message; packing happens only after the cut, so it never moves it. Pure; the log is a list of logical events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .chunk_rows import is_storage_row, pack_chunk_runs, storage_row_to_wire

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "is_append_message",
    "paginate",
    "history_records",
    "page_value",
]

DEFAULT_MAX_MESSAGES = 50
_MESSAGE_TYPES = frozenset({"user/message", "assistant/message"})


def is_append_message(event: dict[str, Any]) -> bool:
    """An append-origin ``user/message`` or ``assistant/message`` (counted by the pager)."""
    return event.get("type") in _MESSAGE_TYPES and event.get("surfaceOp") == "append"


def paginate(events: Sequence[dict[str, Any]], through_seq: int | None = None, before_seq: int | None = None,
             max_messages: int = DEFAULT_MAX_MESSAGES) -> tuple[int, int, bool]:
    """Choose a page: returns ``(cut, end, has_more)``; the page is ``events[cut:end]``.

    ``events[i]["seq"] == i`` is assumed (a contiguous log from 0). ``through_seq`` defaults to the last seq.
    """
    if through_seq is None:
        through_seq = len(events) - 1
    end = through_seq + 1 if before_seq is None else min(through_seq + 1, before_seq)
    end = max(0, min(end, len(events)))
    count = 0
    cut = 0
    for i in range(end - 1, -1, -1):
        event = events[i]
        if not is_append_message(event):
            continue
        count += 1
        if count == max_messages:
            sources = event.get("sourceEventSeqs") or ()
            cut = min([event["seq"], *sources])
            break
    return cut, end, cut > 0


def history_records(storage_records: Iterable[Any]) -> list[dict[str, Any]]:
    """Wrap storage records as ``SessionHistoryRecord`` values: rows are renamed (never expanded)."""
    out: list[dict[str, Any]] = []
    for value in storage_records:
        if is_storage_row(value):
            out.append({"type": "chunks", "event": storage_row_to_wire(value)})
        else:
            out.append({"type": "event", "event": value})
    return out


def page_value(events: Sequence[dict[str, Any]], through_seq: int | None = None, before_seq: int | None = None,
               max_messages: int = DEFAULT_MAX_MESSAGES) -> dict[str, Any]:
    """The ``SessionPage`` value for a logical log: paginate, then pack the selected slice."""
    cut, end, has_more = paginate(events, through_seq, before_seq, max_messages)
    return {"records": history_records(pack_chunk_runs(events[cut:end])), "hasMore": has_more}
