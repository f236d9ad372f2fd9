"""The journal state machine (PROTOCOL 4): ``Journal`` keeps a window of history records continuous across pages,
live frames and reconnects, and ``session_journal`` binds it to wire ``HistoryRecord`` Structs.

Rules: sans-I/O; frames and pages go in, publications and page requests come out, it never fetches. It keeps the
window's cursors, never its entries: the caller applies the publications to what holds them (the viewer's
assembler). A protocol violation raises and leaves the last good window published; after one on the live stream the
journal is failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, Literal, TypeVar

from ..records import ChunksRecord, HistoryRecord, record_range
from .errors import (
    STREAM_NAME,
    CursorMismatch,
    DiscontinuousHistory,
    DiscontinuousPage,
    InvertedRange,
    JournalError,
    JournalFailed,
    JournalNotOpen,
    OpeningViolation,
    PackedLiveRecord,
    PageReadFailed,
    PartialOverlap,
    ProtocolViolation,
    StaleResume,
    StreamEnded,
)
from .publications import Append, Output, PageRequest, Prepend, Publication, Replace

__all__ = [
    "EMPTY_CURSOR",
    "Journal",
    "session_journal",
]

EMPTY_CURSOR = -1

E = TypeVar("E")

# The spec's phrases for the violation classes that cover more than one rule.
_BEFORE_OPENING = "emitted an entry before its opening cursor"
_ENDED_BEFORE_OPENING = "ended before its opening cursor"
_SECOND_OPENING = "emitted more than one opening cursor"
_NOT_AT_CURSOR = "page did not end at its requested cursor"
_NOT_REACHED = "page did not reach its opening cursor"
_PARTIAL = "emitted a partially overlapping entry"
_PARTIAL_MERGE = "replacement contains a partially overlapping entry"
_ENDED_REPAIR = "ended while reading its replacement page"


class _Repair:
    __slots__ = ("queue", "request", "second")

    def __init__(self, queue: list[Any], request: PageRequest) -> None:
        self.queue = queue
        self.request = request
        self.second = False


class Journal(Generic[E]):
    """A journal over entries of type ``E`` whose inclusive seq range is ``range_of(entry)``.

    Feed it in stream order: ``opened`` (first item of every generation), ``entry`` (live items), ``end`` (the
    stream closed), ``reconnect`` (a new physical connection starts; the next item must be ``opened``). Each call
    returns the publications to apply and any ``PageRequest`` to answer with ``page``/``page_failed``. The journal
    applies its publications to ``has_more`` and ``revision``; the entries are the caller's to keep.

    Raises (from every feeding method):
        ProtocolViolation: the input broke a rule; the window stays as last published.
        JournalFailed: the journal had already failed.
    """

    def __init__(self, range_of: Callable[[E], tuple[int, int]], *, stream: str = STREAM_NAME,
                 max_messages: int | None = None, live_check: Callable[[E], None] | None = None) -> None:
        self.range_of = range_of
        self.stream = stream
        self.max_messages = max_messages
        self._live_check = live_check
        self.generation = 1
        self.first_cursor: int | None = None
        self.last_cursor: int | None = None
        self.has_more = False
        self.revision = 0
        self.failed: JournalError | None = None
        self._opened = False  # opened in the current generation
        self._ever_opened = False
        self._repair: _Repair | None = None
        self._prepends: dict[int, PageRequest] = {}
        self._next_id = 1

    # -- state --------------------------------------------------------------------------------------------------

    @property
    def resume_cursor(self) -> int | None:
        """The cursor older pages are read through (equal to ``last_cursor``)."""
        return self.last_cursor

    @property
    def repairing(self) -> bool:
        return self._repair is not None

    def _fail(self, exc: JournalError) -> JournalError:
        self.failed = exc
        self._repair = None
        return exc

    def _check_alive(self) -> None:
        if self.failed is not None:
            raise JournalFailed(self.failed)

    def _request(self, kind: Literal["repair", "prepend"], through: int, before: int | None = None,
                 max_messages: int | None = None) -> PageRequest:
        request = PageRequest(self._next_id, kind, self.generation, through, before,
                              self.max_messages if max_messages is None else max_messages)
        self._next_id += 1
        return request

    def _bounds(self, entry: E) -> tuple[int, int]:
        first, last = self.range_of(entry)
        if first > last:
            raise InvertedRange(f"[{first}, {last}]", self.stream)
        return first, last

    def _check_page(self, entries: Sequence[E]) -> int:
        """Page continuity (4.2); returns the page tail (``EMPTY_CURSOR`` for an empty page)."""
        tail: int | None = None
        for entry in entries:
            first, last = self._bounds(entry)
            if tail is not None and first != tail + 1:
                raise DiscontinuousPage(tail + 1, first, self.stream)
            tail = last
        return EMPTY_CURSOR if tail is None else tail

    def _publish(self, publication: Publication) -> Publication:
        if not isinstance(publication, Append):
            self.has_more = publication.has_more
        self.revision += 1
        return publication

    # -- stream input -------------------------------------------------------------------------------------------

    def reconnect(self) -> int:
        """A new physical connection (generation) begins: abandons any repair; the next item must be ``opened``."""
        self._check_alive()
        self.generation += 1
        self._opened = False
        self._repair = None
        return self.generation

    def opened(self, cursor: int, entries: Sequence[E], has_more: bool) -> list[Output]:
        """The generation's opening frame: a page ending exactly at ``cursor`` (4.3, 4.4). Publishes ``Replace``."""
        self._check_alive()
        try:
            if self._opened:
                raise OpeningViolation(_SECOND_OPENING, f"cursor {cursor}", self.stream)
            if self.last_cursor is not None and cursor < self.last_cursor:
                raise StaleResume(f"cursor {cursor} < last applied {self.last_cursor}", self.stream)
            tail = self._check_page(entries)
            if tail != cursor:
                raise CursorMismatch(_NOT_AT_CURSOR, f"page ends at {tail}, cursor {cursor}", self.stream)
        except ProtocolViolation as exc:
            raise self._fail(exc) from None
        self._opened = self._ever_opened = True
        self.first_cursor = self.range_of(entries[0])[0] if entries else None
        self.last_cursor = cursor
        return [self._publish(Replace(tuple(entries), has_more))]

    def entry(self, entry: E) -> list[Output]:
        """One live entry (4.5): append, drop a duplicate, reject a partial overlap, or start a gap repair."""
        self._check_alive()
        try:
            if not self._opened:
                raise OpeningViolation(_BEFORE_OPENING, "", self.stream)
            first, last = self._bounds(entry)
            if self._repair is not None:
                self._repair.queue.append(entry)
                return []
            applied = self.last_cursor
            assert applied is not None
            if last <= applied:
                return []
            if first <= applied:
                raise PartialOverlap(_PARTIAL, f"[{first}, {last}] over last applied {applied}", self.stream)
            if first == applied + 1:
                if self._live_check is not None:
                    self._live_check(entry)
                self.last_cursor = last
                if self.first_cursor is None:
                    self.first_cursor = first
                return [self._publish(Append(entry))]
        except ProtocolViolation as exc:
            raise self._fail(exc) from None
        request = self._request("repair", last)
        self._repair = _Repair([entry], request)
        return [request]

    def end(self) -> None:
        """The stream closed. Raises a violation when it closed before opening or during a repair."""
        self._check_alive()
        if not self._opened:
            raise self._fail(OpeningViolation(_ENDED_BEFORE_OPENING, "", self.stream))
        if self._repair is not None:
            raise self._fail(StreamEnded(_ENDED_REPAIR, "", self.stream))

    # -- pages ----------------------------------------------------------------------------------------------------

    def request_prepend(self, max_messages: int | None = None, before: int | None = None) -> PageRequest:
        """Ask for the page before the window (4.6), read through ``resume_cursor``; ``before`` defaults to
        ``first_cursor``.

        Raises:
            JournalNotOpen: nothing has been opened yet.
        """
        self._check_alive()
        if not self._ever_opened or self.last_cursor is None:
            raise JournalNotOpen(f"{self.stream} is not open")
        request = self._request("prepend", self.last_cursor, self.first_cursor if before is None else before,
                                max_messages)
        self._prepends[request.id] = request
        return request

    def page(self, request: PageRequest, entries: Sequence[E], has_more: bool) -> list[Output]:
        """Answer ``request`` with the page that was read. A stale answer (abandoned repair) is ignored."""
        self._check_alive()
        if request.kind == "prepend":
            if self._prepends.pop(request.id, None) is None:
                return []
            return self._join(entries, has_more)
        repair = self._repair
        if repair is None or repair.request.id != request.id:
            return []
        try:
            return self._merge_repair(repair, entries, has_more)
        except ProtocolViolation as exc:
            raise self._fail(exc) from None

    def page_failed(self, request: PageRequest, reason: str) -> None:
        """The caller could not read ``request``. Ignored when the request is stale (its generation was abandoned);
        otherwise the journal fails.

        Raises:
            PageReadFailed: a current request could not be read.
        """
        self._check_alive()
        if request.kind == "prepend":
            if self._prepends.pop(request.id, None) is not None:
                raise PageReadFailed(f"{self.stream} could not read an older page: {reason}")
            return
        if self._repair is None or self._repair.request.id != request.id:
            return
        raise self._fail(PageReadFailed(f"{self.stream} could not read its replacement page: {reason}"))

    def _merge(self, entries: Sequence[E], tail: int, queue: list[E]) -> tuple[list[E], int] | None:
        merged = list(entries)
        for entry in sorted(queue, key=lambda e: self.range_of(e)[0]):
            first, last = self.range_of(entry)
            if last <= tail:
                continue
            if first <= tail:
                raise PartialOverlap(_PARTIAL_MERGE, f"[{first}, {last}] over page tail {tail}", self.stream)
            if first != tail + 1:
                return None
            merged.append(entry)
            tail = last
        return merged, tail

    def _merge_repair(self, repair: _Repair, entries: Sequence[E], has_more: bool) -> list[Output]:
        through = repair.request.through
        tail = self._check_page(entries)
        if tail != through:
            raise CursorMismatch(_NOT_AT_CURSOR, f"page ends at {tail}, requested {through}", self.stream)
        result = self._merge(entries, tail, repair.queue)
        target = max(self.range_of(e)[1] for e in repair.queue)
        if result is None or result[1] < target:
            if repair.second:
                got = "a gap" if result is None else f"tail {result[1]}"
                raise CursorMismatch(_NOT_REACHED, f"{got}, target {target}", self.stream)
            repair.second = True
            repair.request = self._request("repair", target)
            return [repair.request]
        merged, merged_tail = result
        self._repair = None
        self.first_cursor = self.range_of(merged[0])[0] if merged else None
        self.last_cursor = merged_tail
        return [self._publish(Replace(tuple(merged), has_more))]

    def _join(self, entries: Sequence[E], has_more: bool) -> list[Output]:
        self._check_page(entries)
        first_cursor = self.first_cursor
        if first_cursor is None:
            kept = list(entries)
        else:
            kept = [e for e in entries if self.range_of(e)[0] < first_cursor]
            if kept and self.range_of(kept[-1])[1] + 1 != first_cursor:
                self._publish(Prepend((), False))
                raise DiscontinuousHistory(
                    f"older page ends at {self.range_of(kept[-1])[1]}, window starts at {first_cursor}", self.stream)
        if kept:
            self.first_cursor = self.range_of(kept[0])[0]
        return [self._publish(Prepend(tuple(kept), has_more))]


def _scalar_live(record: HistoryRecord) -> None:
    if type(record) is ChunksRecord:
        raise PackedLiveRecord(f"seq {record.event.seq}")


def session_journal(max_messages: int | None = None) -> Journal[HistoryRecord]:
    """A journal over wire ``HistoryRecord`` Structs, as the session adapter uses it (PROTOCOL 3.3): ranges from
    ``record_range``, and a live ``chunks`` append is a protocol violation."""
    return Journal(record_range, max_messages=max_messages, live_check=_scalar_live)
