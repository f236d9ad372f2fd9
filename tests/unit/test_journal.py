"""The journal rules of PROTOCOL 4, one behaviour per test. Entries are ``(first, last)`` ranges."""

from __future__ import annotations

import pickle

import pytest

from assembler.errors import AssemblerError, DiscontinuityError
from assembler.journal import (
    Append,
    CursorMismatch,
    DiscontinuousHistory,
    DiscontinuousPage,
    InvertedRange,
    Journal,
    JournalFailed,
    JournalNotOpen,
    OpeningViolation,
    Output,
    PackedLiveRecord,
    PageReadFailed,
    PageRequest,
    PartialOverlap,
    Prepend,
    ProtocolViolation,
    Replace,
    StaleResume,
    StreamEnded,
    session_journal,
)
from assembler.records import ChunksRecord, EventRecord, SessionEvent, TextChunksEvent, TextRowData
from perf.kept_window import KeptWindow

R = tuple[int, int]


def only_request(out: list[Output]) -> PageRequest:
    """The one publication of ``out``, which must be a page request."""
    [request] = out
    assert isinstance(request, PageRequest), out
    return request


def journal() -> KeptWindow[R]:
    return KeptWindow(Journal(lambda e: e, max_messages=10))


def opened(cursor: int = 9, entries: list[R] | None = None, has_more: bool = True) -> KeptWindow[R]:
    j = journal()
    j.opened(cursor, [(0, 4), (5, 9)] if entries is None else entries, has_more)
    return j


def test_opening_publishes_replace_and_sets_cursors() -> None:
    j = journal()
    out = j.opened(9, [(2, 4), (5, 9)], True)
    assert out == [Replace(((2, 4), (5, 9)), True)]
    assert (j.first_cursor, j.last_cursor, j.resume_cursor) == (2, 9, 9)
    assert j.window == [(2, 4), (5, 9)] and j.has_more and j.revision == 1


def test_empty_opening_at_empty_cursor() -> None:
    j = journal()
    assert j.opened(-1, [], False) == [Replace((), False)]
    assert j.first_cursor is None and j.last_cursor == -1
    assert j.entry((0, 0)) == [Append((0, 0))]
    assert j.first_cursor == 0


def test_rejects_inverted_range() -> None:
    with pytest.raises(InvertedRange, match="inverted cursor range"):
        journal().opened(9, [(5, 4)], False)


def test_rejects_discontinuous_opening_page() -> None:
    with pytest.raises(DiscontinuousPage, match="page contains discontinuous entries") as info:
        journal().opened(9, [(0, 4), (6, 9)], False)
    assert isinstance(info.value, DiscontinuityError)
    assert (info.value.expected, info.value.got) == (5, 6)


def test_rejects_overlapping_opening_page() -> None:
    with pytest.raises(DiscontinuousPage):
        journal().opened(9, [(0, 5), (5, 9)], False)


def test_rejects_opening_page_not_ending_at_cursor() -> None:
    with pytest.raises(CursorMismatch, match="page did not end at its requested cursor"):
        journal().opened(10, [(0, 9)], False)


def test_rejects_entry_before_opening() -> None:
    with pytest.raises(OpeningViolation, match="emitted an entry before its opening cursor"):
        journal().entry((0, 0))


def test_rejects_second_opening_in_a_generation() -> None:
    j = opened()
    with pytest.raises(OpeningViolation, match="emitted more than one opening cursor"):
        j.opened(9, [(0, 9)], False)
    assert j.window == [(0, 4), (5, 9)]


def test_end_before_opening_is_a_violation() -> None:
    with pytest.raises(OpeningViolation, match="ended before its opening cursor"):
        journal().end()


def test_live_append_follows_last_cursor() -> None:
    j = opened()
    assert j.entry((10, 10)) == [Append((10, 10))]
    assert j.entry((11, 13)) == [Append((11, 13))]
    assert j.last_cursor == 13 and j.window[-1] == (11, 13) and j.has_more


def test_drops_complete_duplicates() -> None:
    j = opened()
    assert j.entry((9, 9)) == []
    assert j.entry((3, 3)) == []
    assert j.window == [(0, 4), (5, 9)] and j.revision == 1


def test_packed_row_is_neither_false_gap_nor_hidden_overlap() -> None:
    j = opened(9, [(0, 4), (5, 9)])
    assert j.entry((9, 9)) == []
    assert j.entry((10, 10)) == [Append((10, 10))]


def test_rejects_partial_overlap_and_keeps_window() -> None:
    j = opened()
    with pytest.raises(PartialOverlap, match="emitted a partially overlapping entry"):
        j.entry((8, 11))
    assert j.window == [(0, 4), (5, 9)]
    with pytest.raises(JournalFailed):
        j.entry((10, 10))


def test_gap_returns_repair_request_then_replaces() -> None:
    j = opened()
    request = only_request(j.entry((12, 12)))
    assert isinstance(request, PageRequest)
    assert (request.kind, request.through, request.max_messages) == ("repair", 12, 10)
    assert j.entry((13, 13)) == []  # queued while the page is in flight
    assert j.window == [(0, 4), (5, 9)]  # old window stays until the replacement is accepted
    out = j.page(request, [(6, 9), (10, 12)], True)
    assert out == [Replace(((6, 9), (10, 12), (13, 13)), True)]
    assert (j.first_cursor, j.last_cursor) == (6, 13)
    assert j.entry((14, 14)) == [Append((14, 14))]


def test_repair_reads_one_more_page_when_queue_is_not_contiguous() -> None:
    j = opened()
    first = only_request(j.entry((12, 12)))
    j.entry((15, 15))  # a second gap while repairing
    second = only_request(j.page(first, [(10, 12)], False))
    assert isinstance(second, PageRequest) and second.through == 15
    j.entry((16, 16))
    out = j.page(second, [(10, 15)], False)
    assert out == [Replace(((10, 15), (16, 16)), False)]
    assert j.last_cursor == 16


def test_repair_fails_when_second_page_still_short() -> None:
    j = opened()
    first = only_request(j.entry((12, 12)))
    j.entry((15, 15))
    second = only_request(j.page(first, [(10, 12)], False))
    j.entry((18, 18))
    with pytest.raises(CursorMismatch, match="page did not reach its opening cursor"):
        j.page(second, [(10, 15)], False)
    assert j.window == [(0, 4), (5, 9)]


def _second_repair_read() -> tuple[Journal[R], PageRequest]:
    """The sequence Hypothesis found (tests/property/test_journal_stateful.py): seq 34 and 37 lost, duplicates
    queued, the first read (through 35) answered, so the second read goes out through 38."""
    j = opened(33, [(30, 33)])
    first = only_request(j.entry((35, 35)))
    for entry in [(35, 35), (36, 36), (35, 35), (38, 38), (36, 36)]:
        assert j.entry(entry) == []
    second = only_request(j.page(first, [(32, 34), (35, 35)], True))
    assert isinstance(second, PageRequest) and (second.kind, second.through) == ("repair", 38)
    return j, second


def test_gap_during_second_repair_read_fails_without_a_third_read() -> None:
    j, second = _second_repair_read()
    assert j.entry((40, 40)) == []  # seq 39 was lost while the second read was in flight
    with pytest.raises(CursorMismatch, match=r"page did not reach its opening cursor \(a gap, target 40\)"):
        j.page(second, [(33, 35), (36, 38)], True)
    assert j.window == [(30, 33)] and j.last_cursor == 33 and not j.repairing
    with pytest.raises(JournalFailed):
        j.entry((41, 41))


def test_live_frames_following_during_second_repair_read_are_merged() -> None:
    j, second = _second_repair_read()
    assert j.entry((39, 39)) == [] and j.entry((40, 41)) == []
    out = j.page(second, [(33, 35), (36, 38)], True)
    assert out == [Replace(((33, 35), (36, 38), (39, 39), (40, 41)), True)]
    assert (j.first_cursor, j.last_cursor, j.repairing) == (33, 41, False)
    assert j.entry((42, 42)) == [Append((42, 42))]


def test_repair_page_must_end_at_requested_cursor() -> None:
    j = opened()
    request = only_request(j.entry((12, 12)))
    with pytest.raises(CursorMismatch, match="page did not end at its requested cursor"):
        j.page(request, [(10, 11)], False)
    assert j.window == [(0, 4), (5, 9)]


def test_repair_rejects_partially_overlapping_queued_entry() -> None:
    j = opened()
    request = only_request(j.entry((12, 12)))
    j.entry((11, 14))
    with pytest.raises(PartialOverlap, match="replacement contains a partially overlapping entry"):
        j.page(request, [(10, 12)], False)


def test_second_opening_during_repair_is_a_violation() -> None:
    j = opened()
    j.entry((12, 12))
    with pytest.raises(OpeningViolation, match="emitted more than one opening cursor"):
        j.opened(12, [(0, 12)], False)


def test_stream_end_during_repair() -> None:
    j = opened()
    j.entry((12, 12))
    with pytest.raises(StreamEnded, match="ended while reading its replacement page"):
        j.end()


def test_reconnect_abandons_repair_and_ignores_stale_page() -> None:
    j = opened()
    request = only_request(j.entry((12, 12)))
    j.reconnect()
    assert j.page(request, [(10, 12)], False) == []
    j.page_failed(request, "aborted")  # stale: ignored
    assert j.opened(20, [(15, 20)], True) == [Replace(((15, 20),), True)]
    assert j.generation == 2 and j.last_cursor == 20


def test_reconnect_rejects_cursor_behind_last_applied() -> None:
    j = opened()
    j.entry((10, 10))
    j.reconnect()
    with pytest.raises(StaleResume, match="resumed at a cursor behind the last applied entry"):
        j.opened(9, [(0, 9)], False)
    assert j.window == [(0, 4), (5, 9), (10, 10)]


def test_reconnect_at_same_cursor_replaces() -> None:
    j = opened()
    j.reconnect()
    assert j.opened(9, [(7, 9)], False) == [Replace(((7, 9),), False)]


def test_reconnect_requires_opening_first() -> None:
    j = opened()
    j.reconnect()
    with pytest.raises(OpeningViolation, match="before its opening cursor"):
        j.entry((10, 10))


def test_failed_repair_read_fails_journal() -> None:
    j = opened()
    request = only_request(j.entry((12, 12)))
    with pytest.raises(PageReadFailed):
        j.page_failed(request, "boom")
    with pytest.raises(JournalFailed):
        j.entry((13, 13))


def test_prepend_trims_overlap_and_joins() -> None:
    j = opened(9, [(5, 9)])
    request = j.request_prepend()
    assert (request.kind, request.through, request.before) == ("prepend", 9, 5)
    out = j.page(request, [(0, 2), (3, 4), (5, 9)], False)
    assert out == [Prepend(((0, 2), (3, 4)), False)]
    assert j.window == [(0, 2), (3, 4), (5, 9)] and j.first_cursor == 0 and not j.has_more


def test_prepend_rejects_entry_reaching_into_window() -> None:
    j = opened(9, [(5, 9)])
    request = j.request_prepend()
    with pytest.raises(DiscontinuousHistory, match="history page is discontinuous"):
        j.page(request, [(0, 2), (3, 6)], True)
    assert j.window == [(5, 9)] and not j.has_more
    assert j.entry((10, 10)) == [Append((10, 10))]  # a failed join does not stop the stream


def test_prepend_rejects_gap_before_window() -> None:
    j = opened(9, [(5, 9)])
    request = j.request_prepend()
    with pytest.raises(DiscontinuousHistory):
        j.page(request, [(0, 3)], True)


def test_prepend_page_must_be_continuous() -> None:
    j = opened(9, [(5, 9)])
    request = j.request_prepend()
    with pytest.raises(DiscontinuousPage):
        j.page(request, [(0, 1), (3, 4)], True)


def test_prepend_keeping_nothing_is_not_an_error() -> None:
    j = opened(9, [(5, 9)])
    request = j.request_prepend()
    assert j.page(request, [(5, 9)], False) == [Prepend((), False)]
    assert j.first_cursor == 5


def test_prepend_before_opening_is_not_open() -> None:
    with pytest.raises(JournalNotOpen):
        journal().request_prepend()


def test_session_journal_rejects_packed_live_record() -> None:
    j = KeptWindow(session_journal())
    event = SessionEvent(type="turn/start", seq=0, time=0, data={})
    j.opened(0, [EventRecord(event)], False)
    row = ChunksRecord(TextChunksEvent(seq=1, time=0, data=TextRowData(turn=1, step=1, index=0, dt=[0, 0],
                                                                           texts=["a", "b", "c"])))
    with pytest.raises(PackedLiveRecord, match="live stream emitted a packed history record"):
        j.entry(row)
    assert len(j.window) == 1


def test_errors_pickle_and_share_the_root() -> None:
    for exc in (DiscontinuousPage(1, 3), StaleResume("x"), CursorMismatch("page did not end", "d"),
                JournalFailed(StaleResume("y"))):
        again = pickle.loads(pickle.dumps(exc))
        assert str(again) == str(exc) and isinstance(again, AssemblerError)
    assert issubclass(PartialOverlap, ProtocolViolation)


def test_the_journal_keeps_cursors_never_entries() -> None:
    """The publications are the caller's to apply (the viewer's assembler holds the entries); a client without one
    keeps them beside the journal (``perf.kept_window``)."""
    j = session_journal()
    j.opened(0, [EventRecord(SessionEvent(type="turn/start", seq=0, time=0, data={}))], True)
    assert j.last_cursor == 0 and j.has_more and j.revision == 1
    assert not hasattr(j, "window") and not hasattr(j, "repack")
