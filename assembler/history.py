"""Message-aligned history pages and the follow snapshot (PROTOCOL 3.2, 3.3): select on logical seqs, then pack.

Rules: a page is the logical slice ``[cut, end)`` where ``cut`` is the group start of the N-th newest append-origin
message; packing happens only after the cut, so it never moves it. With ``from_seq`` (a deep link's row, so the
page asks once instead of page by page) the page ends its walk at the newest message whose seq is <= ``from_seq``
(the page's first message holds that seq, or the log's start), if that is no more than N messages back; N stays
the cap. Two paths give byte-identical values:

* the *reference* path (``paginate`` / ``page_value``) works on the fully expanded logical log, as the reference
  host does;
* the *no-expansion* path (``MessageIndex``) keeps a message-boundary index over storage records (rows stay rows),
  slices a row only where a page boundary falls inside it, and re-packs with ``repack_records``.

Pure and sans-I/O: storage records in (as the log parser gives them: event dicts and row Structs). Out: JSON-ready
values for the wire (``page``), or typed ``SessionPage`` Structs to fold (``session_page``), built from the records
already decoded: a row is renamed, never re-decoded; an event dict is converted to a ``SessionEvent`` once.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from .chunk_rows import expand_records, expand_row, pack_chunk_runs, repack_records, slice_storage_row
from .errors import AssemblerError, DiscontinuityError, RecordDecodeError
from .records import (
    MAX_SAFE_INTEGER,
    ChunksRecord,
    EventRecord,
    HistoryRecord,
    SessionEvent,
    SessionPage,
    StorageRecord,
    is_safe_integer,
)

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "PageRequestError",
    "MessageIndex",
    "check_page_request",
    "check_max_messages",
    "group_start",
    "is_append_message",
    "paginate",
    "history_records",
    "wire_records",
    "scalar_records",
    "page_value",
    "snapshot_value",
]

DEFAULT_MAX_MESSAGES = 50
_MESSAGE_TYPES = frozenset({"user/message", "assistant/message"})


class PageRequestError(AssemblerError):
    """A page or follow request field breaks its rule (the reference's ``gateway/bad-request``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(field, message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def _is_int(value: object) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def check_max_messages(max_messages: object) -> int:
    """Validate ``maxMessages`` (a positive safe integer) and return it.

    Raises:
        PageRequestError: not a positive safe integer.
    """
    if not _is_int(max_messages) or max_messages < 1:  # type: ignore[operator]
        raise PageRequestError("maxMessages", f"must be a positive safe integer, got {max_messages!r}")
    return max_messages  # type: ignore[return-value]


def check_page_request(through_seq: object, before_seq: object, max_messages: object, last_seq: int) -> None:
    """Apply the ``session.page`` field rules of PROTOCOL 3.2 against a log whose last seq is ``last_seq``.

    Raises:
        PageRequestError: naming the first field that breaks its rule; ``throughSeq`` past ``last_seq`` included.
    """
    if not _is_int(through_seq) or through_seq < -1:  # type: ignore[operator]
        raise PageRequestError("throughSeq", f"must be a safe integer >= -1, got {through_seq!r}")
    if before_seq is not None and (not _is_int(before_seq) or before_seq < 0):  # type: ignore[operator]
        raise PageRequestError("beforeSeq", f"must be a safe integer >= 0, got {before_seq!r}")
    check_max_messages(max_messages)
    if through_seq > last_seq:  # type: ignore[operator]
        raise PageRequestError("throughSeq", f"{through_seq} is past the last seq of the log ({last_seq})")


def is_append_message(event: dict[str, Any]) -> bool:
    """An append-origin ``user/message`` or ``assistant/message`` (counted by the pager)."""
    return event.get("type") in _MESSAGE_TYPES and event.get("surfaceOp") == "append"


def group_start(event: dict[str, Any]) -> int:
    """The smallest of a message's own seq and its ``sourceEventSeqs`` (non-integer or negative sources ignored)."""
    start: int = event["seq"]
    sources = event.get("sourceEventSeqs")
    if type(sources) is list:
        for source in sources:
            if is_safe_integer(source) and 0 <= source < start:
                start = int(source)
    return start


def _page_end(count: int, through_seq: int | None, before_seq: int | None) -> int:
    if through_seq is None:
        through_seq = count - 1
    end = through_seq + 1 if before_seq is None else min(through_seq + 1, before_seq)
    return max(0, min(end, count))


def paginate(events: Sequence[dict[str, Any]], through_seq: int | None = None, before_seq: int | None = None,
             max_messages: int = DEFAULT_MAX_MESSAGES, from_seq: int | None = None) -> tuple[int, int, bool]:
    """Choose a page on the expanded logical log (the reference): ``(cut, end, has_more)``, page ``events[cut:end]``.

    ``events[i]["seq"] == i`` is assumed (a contiguous log from 0). ``through_seq`` defaults to the last seq;
    ``through_seq = -1`` or ``before_seq = 0`` gives an empty page with ``has_more`` False. ``from_seq``: stop at
    the first message (walking back) whose seq is <= it, if that comes before the ``max_messages``-th.

    Raises:
        PageRequestError: ``max_messages`` is not a positive integer.
    """
    check_max_messages(max_messages)
    end = _page_end(len(events), through_seq, before_seq)
    count = 0
    cut = 0
    for i in range(end - 1, -1, -1):
        event = events[i]
        if not is_append_message(event):
            continue
        count += 1
        if count == max_messages or (from_seq is not None and i <= from_seq):
            cut = group_start(event)
            break
    return cut, end, cut > 0


def history_records(storage_records: Iterable[StorageRecord]) -> list[dict[str, Any]]:
    """Wrap storage records as JSON-ready ``SessionHistoryRecord`` values: rows are renamed (never expanded), events
    pass as written (unknown fields included)."""
    out: list[dict[str, Any]] = []
    for value in storage_records:
        if isinstance(value, dict):
            out.append({"type": "event", "event": value})
        else:
            out.append({"type": "chunks", "event": value.to_wire()})
    return out


_to_event = msgspec.convert


def _event(value: dict[str, Any]) -> SessionEvent:
    try:
        return _to_event(value, SessionEvent)
    except msgspec.ValidationError as exc:
        seq = value.get("seq")
        where = int(seq) if is_safe_integer(seq) else None  # type: ignore[arg-type]
        raise RecordDecodeError(f"invalid event: {exc}", seq=where) from None


def wire_records(storage_records: Iterable[StorageRecord]) -> list[HistoryRecord]:
    """Typed history records to fold: a row is renamed to its wire Struct (``data`` shared), an event converted to a
    ``SessionEvent``. Nothing is decoded again.

    Raises:
        RecordDecodeError: an event whose envelope is not a valid ``SessionEvent`` (naming its seq).
    """
    out: list[HistoryRecord] = []
    for value in storage_records:
        if isinstance(value, dict):
            out.append(EventRecord(_event(value)))
        else:
            out.append(ChunksRecord(value.to_wire()))
    return out


def scalar_records(storage_records: Iterable[StorageRecord]) -> list[HistoryRecord]:
    """The scalar form of ``wire_records``: every row expanded, one event record per logical event (the explicit
    codec call; benchmarks and parity tests compare it with the packed form)."""
    out: list[HistoryRecord] = []
    for value in storage_records:
        if isinstance(value, dict):
            out.append(EventRecord(_event(value)))
        else:
            out.extend(EventRecord(SessionEvent(e["type"], e["seq"], e["time"], e["data"])) for e in expand_row(value))
    return out


def page_value(events: Sequence[dict[str, Any]], through_seq: int | None = None, before_seq: int | None = None,
               max_messages: int = DEFAULT_MAX_MESSAGES, from_seq: int | None = None) -> dict[str, Any]:
    """The reference ``SessionPage`` value for a logical log: paginate, then pack the selected slice."""
    cut, end, has_more = paginate(events, through_seq, before_seq, max_messages, from_seq)
    return {"records": history_records(pack_chunk_runs(events[cut:end])), "hasMore": has_more}


def snapshot_value(header: dict[str, Any], events: Sequence[dict[str, Any]],
                   max_messages: int = DEFAULT_MAX_MESSAGES) -> dict[str, Any]:
    """The reference follow snapshot frame (PROTOCOL 3.3): the tail page, whose last record ends at ``cursor``."""
    cursor = len(events) - 1
    page = page_value(events, None, None, max_messages)
    return {"type": "snapshot", "header": header, "cursor": cursor, "records": page["records"],
            "hasMore": page["hasMore"], "projections": {"asOfSeq": cursor, "values": {}}}


class MessageIndex:
    """A message-boundary index over storage records: pages straight from a packed log, rows never expanded.

    Kept per record: its first logical seq. Kept per append-origin message: its seq and its group start. Both lists
    only grow, so a growing file extends the index with ``extend``. ``records`` is the index's own list.
    """

    __slots__ = ("records", "_firsts", "_msg_seqs", "_msg_starts", "event_count", "canonical")

    def __init__(self, records: Iterable[StorageRecord] = (), *, canonical: bool = False) -> None:
        """``canonical``: the records are already the canonical packing of their events (a caller that repacked
        them, ``chunk_rows.repack_records``): a page then repacks only its edges, where a row may be cut."""
        self.canonical = canonical
        self.records: list[StorageRecord] = []
        self._firsts: list[int] = []
        self._msg_seqs: list[int] = []
        self._msg_starts: list[int] = []
        self.event_count = 0
        self.extend(records)

    @property
    def last_seq(self) -> int:
        """The last logical seq, or -1 for an empty log."""
        return self.event_count - 1

    @property
    def message_count(self) -> int:
        return len(self._msg_seqs)

    def extend(self, records: Iterable[StorageRecord]) -> None:
        """Append storage records that continue the log (as the log parser produced them).

        Raises:
            DiscontinuityError: a record does not start at the next logical seq.
        """
        firsts, count = self._firsts, self.event_count
        for record in records:
            if isinstance(record, dict):
                first = record["seq"]
                n = 1
                if is_append_message(record):
                    self._msg_seqs.append(first)
                    self._msg_starts.append(group_start(record))
            else:
                first = record.seq
                n = record.members
            if first != count:
                self.event_count = count
                raise DiscontinuityError(count, first, "message index")
            firsts.append(first)
            self.records.append(record)
            count += n
        self.event_count = count

    def select(self, through_seq: int | None = None, before_seq: int | None = None,
               max_messages: int | None = DEFAULT_MAX_MESSAGES, from_seq: int | None = None) -> tuple[int, int, bool]:
        """``(cut, end, has_more)`` exactly as ``paginate`` gives on the expanded log, in O(log n).
        ``max_messages=None`` selects everything before ``end`` (the whole log by default).

        Raises:
            PageRequestError: ``max_messages`` is not a positive integer.
        """
        end = _page_end(self.event_count, through_seq, before_seq)
        if max_messages is None:
            return 0, end, False
        check_max_messages(max_messages)
        # Messages with seq < end, oldest first; the N-th newest is N places from the end of that prefix.
        k = bisect_left(self._msg_seqs, end) - max_messages
        if from_seq is not None:  # the newest message at or before from_seq, when it is within the cap
            k = max(k, min(bisect_right(self._msg_seqs, from_seq), bisect_left(self._msg_seqs, end)) - 1)
        cut = self._msg_starts[k] if k >= 0 else 0
        return cut, end, cut > 0

    def storage_slice(self, cut: int, end: int) -> list[StorageRecord]:
        """The storage records covering logical seqs ``[cut, end)``, rows at either edge sliced (not expanded)."""
        if cut >= end:
            return []
        firsts = self._firsts
        i0 = bisect_right(firsts, cut) - 1
        i1 = bisect_right(firsts, end - 1) - 1
        out = self.records[i0:i1 + 1]
        head, tail = out[0], out[-1]
        if i0 == i1:
            if not isinstance(head, dict):
                out[0] = slice_storage_row(head, cut, end - 1)
            return out
        if not isinstance(head, dict) and head.seq != cut:
            out[0] = slice_storage_row(head, cut, head.last_seq)
        if not isinstance(tail, dict):
            out[-1] = slice_storage_row(tail, tail.seq, min(end - 1, tail.last_seq))
        return out

    def page(self, through_seq: int | None = None, before_seq: int | None = None,
             max_messages: int | None = DEFAULT_MAX_MESSAGES, *, scalar: bool = False,
             from_seq: int | None = None) -> dict[str, Any]:
        """The ``SessionPage`` value; ``encode`` of it equals ``encode(page_value(expanded log, ...))``. ``scalar``
        gives the same slice with every row expanded, one ``event`` record per logical event.

        Raises:
            PageRequestError: ``max_messages`` is not a positive integer.
        """
        cut, end, has_more = self.select(through_seq, before_seq, max_messages, from_seq)
        selected = self.storage_slice(cut, end)
        if scalar:
            return {"records": [{"type": "event", "event": e} for e in expand_records(selected)],
                    "hasMore": has_more}
        return {"records": history_records(self._packed(selected)), "hasMore": has_more}

    def session_page(self, through_seq: int | None = None, before_seq: int | None = None,
                     max_messages: int | None = DEFAULT_MAX_MESSAGES, *, scalar: bool = False,
                     from_seq: int | None = None) -> SessionPage:
        """The same page as ``page``, typed to fold; ``scalar`` expands its rows into one event record per member.

        Raises:
            PageRequestError: ``max_messages`` is not a positive integer.
            RecordDecodeError: an event in the page is not a valid ``SessionEvent``.
        """
        cut, end, has_more = self.select(through_seq, before_seq, max_messages, from_seq)
        selected = self.storage_slice(cut, end)
        records = scalar_records(selected) if scalar else wire_records(self._packed(selected))
        return SessionPage(records, has_more)

    def _packed(self, selected: list[StorageRecord]) -> Iterable[StorageRecord]:
        """The canonical packing of a page's records: repacked whole, or, when the index's records are canonical
        already, only where a page edge may have cut a row (its first and last two records)."""
        if not self.canonical or len(selected) <= 4:
            return repack_records(selected)
        return [*repack_records(selected[:2]), *selected[2:-2], *repack_records(selected[-2:])]

    def snapshot(self, header: dict[str, Any], max_messages: int = DEFAULT_MAX_MESSAGES) -> dict[str, Any]:
        """The follow snapshot frame value (PROTOCOL 3.3) at the current end of the index.

        Raises:
            PageRequestError: ``max_messages`` is not a positive integer.
        """
        cursor = self.last_seq
        page = self.page(None, None, max_messages)
        return {"type": "snapshot", "header": header, "cursor": cursor, "records": page["records"],
                "hasMore": page["hasMore"], "projections": {"asOfSeq": cursor, "values": {}}}

