"""The sans-I/O log parser (``logfile.LogParser``): bytes in by ``feed`` in any slices, one item out of
``next_event`` at a time, the partial line carried inside the parser (h11's way); ``LogLoader`` keeps the records."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assembler.errors import SessionFileError
from assembler.logfile import END, NEED_DATA, Fault, Header, LogLoader, LogParser, Record, Skipped
from assembler.records import TextChunksRow

HEADER = {"type": "session", "version": 0, "id": "p", "createdAt": 0}
ROW = {"type": "text-chunks", "seq0": 1, "time0": 11,
       "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}}


def line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


LOG = line(HEADER) + line({"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}}) + b"\n" + line(ROW) + (
    line({"type": "turn/end", "seq": 4, "time": 20, "data": {"turn": 1}}))


def drain(parser: LogParser) -> list[Any]:
    out = []
    while True:
        event = parser.next_event()
        if event is NEED_DATA or event is END:
            return out
        out.append(event)


def test_items_come_out_one_at_a_time_and_need_data_between() -> None:
    parser = LogParser()
    assert parser.next_event() is NEED_DATA
    parser.feed(LOG[:30])
    assert parser.next_event() is NEED_DATA  # the header line is not complete yet
    assert parser.buffered == 30
    parser.feed(LOG[30:])
    header = parser.next_event()
    assert type(header) is Header and header.value == HEADER and header.line == 1
    event = parser.next_event()
    assert type(event) is Record and event.value["type"] == "turn/start" and (event.first, event.members) == (0, 1)
    row = parser.next_event()
    assert type(row) is Record and type(row.value) is TextChunksRow and row.line == 4  # a blank line was skipped
    assert (row.first, row.members) == (1, 3)
    last = parser.next_event()
    assert type(last) is Record and last.first == 4
    assert parser.next_event() is NEED_DATA
    parser.feed_eof()
    assert parser.next_event() is END
    assert parser.lines == 5 and parser.next_seq == 5


@pytest.mark.parametrize("size", [1, 2, 7, 64, 1 << 20])
def test_any_slicing_gives_the_same_items(size: int) -> None:
    whole = LogParser()
    whole.feed(LOG.replace(b"\n", b"\r\n"))
    whole.feed_eof()
    expected = [(type(e), getattr(e, "value", None), getattr(e, "line", None)) for e in drain(whole)]
    parser = LogParser()
    got = []
    data = LOG.replace(b"\n", b"\r\n")
    for i in range(0, len(data), size):
        parser.feed(memoryview(data)[i:i + size])
        got += [(type(e), getattr(e, "value", None), getattr(e, "line", None)) for e in drain(parser)]
    parser.feed_eof()
    got += [(type(e), getattr(e, "value", None), getattr(e, "line", None)) for e in drain(parser)]
    assert got == expected and len(got) == 4


def test_a_torn_last_line_is_skipped_only_at_the_end_of_input() -> None:
    parser = LogParser()
    parser.feed(LOG + b'{"type":"turn/st')
    assert len(drain(parser)) == 4  # the partial line waits: more bytes may come
    parser.feed_eof()
    (skipped,) = drain(parser)
    assert type(skipped) is Skipped and skipped.line == 6 and "torn last line" in skipped.message
    strict = LogParser(strict=True)
    strict.feed(LOG + b'{"type":"turn/st')
    strict.feed_eof()
    fault = drain(strict)[-1]
    assert type(fault) is Fault and fault.error.line == 6


def test_a_fault_ends_the_parse_and_names_its_line() -> None:
    parser = LogParser()
    parser.feed(LOG.replace(b'"seq":4', b'"seq":9'))
    *records, fault = drain(parser)
    assert len(records) == 3 and type(fault) is Fault
    assert isinstance(fault.error, SessionFileError) and fault.error.line == 5
    parser.feed(b"more bytes are ignored\n")
    assert parser.next_event() is END


def test_max_line_bytes_bounds_the_buffer() -> None:
    parser = LogParser(max_line_bytes=64)
    parser.feed(line(HEADER))
    assert type(parser.next_event()) is Header
    parser.feed(b'{"type":"x","data":"' + b"y" * 100)  # no newline yet: the carry alone passes the cap
    fault = parser.next_event()
    assert type(fault) is Fault and fault.error.line == 2 and "longer than 64 bytes" in str(fault.error)
    assert parser.buffered == 0


def test_feed_after_eof_is_a_usage_error() -> None:
    parser = LogParser()
    parser.feed_eof()
    with pytest.raises(RuntimeError):
        parser.feed(b"x")


def test_the_loader_keeps_records_and_reports_how_many_each_slice_completed() -> None:
    loader = LogLoader()
    assert loader.feed(LOG[:-5]) == 2  # the header is not a record; the last line is incomplete
    assert loader.feed(LOG[-5:]) == 1
    result = loader.finish()
    assert result.ok and result.header == HEADER and len(result.records) == 3
    assert (result.event_count, result.row_count, result.row_members, result.lines) == (5, 1, 3, 5)
