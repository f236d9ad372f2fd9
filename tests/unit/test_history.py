"""Pagination rules of PROTOCOL 3.2/3.3, on the reference path and on the message-boundary index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assembler.chunk_rows import pack_chunk_runs
from assembler.errors import DiscontinuityError
from assembler.history import (
    MessageIndex,
    PageRequestError,
    check_page_request,
    group_start,
    page_value,
    paginate,
    snapshot_value,
)
from assembler.records import decode_page, encode, record_range


def ev(seq: int, etype: str = "turn/start", **extra: Any) -> dict[str, Any]:
    return {"type": etype, "seq": seq, "time": seq, "data": {}, **extra}


def delta(seq: int, text: str = "x") -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": seq,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": text}}}


def log_with_messages() -> list[dict[str, Any]]:
    """0 turn/start, 1 user msg, 2 block-start, 3-8 deltas, 9 assistant msg citing 2..8, 10 user msg."""
    events = [ev(0), ev(1, "user/message", surfaceOp="append"),
              {"type": "assistant/chunk", "seq": 2, "time": 2,
               "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0}}}]
    events += [delta(s) for s in range(3, 9)]
    events.append(ev(9, "assistant/message", surfaceOp="append", sourceEventSeqs=list(range(2, 9))))
    events.append(ev(10, "user/message", surfaceOp="append"))
    return events


def test_cut_is_group_start_of_nth_newest_message() -> None:
    events = log_with_messages()
    assert paginate(events, None, None, 1) == (10, 11, True)
    assert paginate(events, None, None, 2) == (2, 11, True)  # the assistant message's first chunk
    assert paginate(events, None, None, 3) == (1, 11, True)
    assert paginate(events, None, None, 4) == (0, 11, False)


def test_from_seq_reaches_back_to_the_message_holding_it_within_the_cap() -> None:
    """A deep link's page: the walk back stops at the newest message at or before ``from_seq``; N stays the cap."""
    events = log_with_messages()
    index = MessageIndex(events)
    for from_seq, max_messages, expected in [(10, 50, (10, 11, True)), (9, 50, (2, 11, True)),
                                             (5, 50, (1, 11, True)),  # a chunk: the message before it
                                             (1, 50, (1, 11, True)), (0, 50, (0, 11, False)),
                                             (5, 1, (10, 11, True)),  # more than one message back: the cap
                                             (99, 3, (10, 11, True))]:
        assert paginate(events, None, None, max_messages, from_seq) == expected, (from_seq, max_messages)
        assert index.select(None, None, max_messages, from_seq) == expected, (from_seq, max_messages)


def test_tool_results_and_non_append_messages_do_not_count() -> None:
    events = [ev(0, "user/message", surfaceOp="append"), ev(1, "tool/result", surfaceOp="append"),
              ev(2, "user/message"), ev(3, "user/message", surfaceOp={"op": "replace", "start": 0, "end": 0}),
              ev(4, "assistant/message", surfaceOp="append")]
    assert paginate(events, None, None, 2) == (0, 5, False)
    assert paginate(events, None, None, 1) == (4, 5, True)


def test_has_more_true_when_only_non_messages_before_cut() -> None:
    events = [ev(0), ev(1), ev(2, "user/message", surfaceOp="append")]
    assert paginate(events, None, None, 1) == (2, 3, True)


def test_empty_pages() -> None:
    events = log_with_messages()
    assert page_value(events, -1) == {"records": [], "hasMore": False}
    assert page_value(events, None, 0) == {"records": [], "hasMore": False}
    assert page_value([], None) == {"records": [], "hasMore": False}


def test_before_seq_above_through_has_no_effect() -> None:
    events = log_with_messages()
    assert paginate(events, 9, 100, 1) == paginate(events, 9, None, 1)


def test_group_start_ignores_bad_sources() -> None:
    assert group_start(ev(9, sourceEventSeqs=[4, "x", -1, True, 12])) == 4
    assert group_start(ev(9, sourceEventSeqs="2")) == 9


def test_packing_happens_after_the_cut_and_rows_are_sliced() -> None:
    events = log_with_messages()
    storage = pack_chunk_runs(events)
    assert any(type(r) is not dict and r.type == "text-chunks" for r in storage)
    index = MessageIndex(storage)
    # throughSeq inside the row: the page ends in the middle of the run, sliced without expansion.
    for through in range(-1, 11):
        for before in (None, 0, 4, 6, 8):
            for n in (1, 2, 3):
                assert encode(index.page(through, before, n)) == encode(page_value(events, through, before, n))
    page = decode_page(encode(index.page(5, None, 1)))
    assert [record_range(r) for r in page.records] == [(1, 1), (2, 2), (3, 5)]
    page = decode_page(encode(index.page(4, None, 1)))
    assert [record_range(r) for r in page.records] == [(1, 1), (2, 2), (3, 3), (4, 4)]  # 2 members: events


def test_no_message_limit_pages_the_whole_window() -> None:
    events = log_with_messages()
    index = MessageIndex(pack_chunk_runs(events))
    unlimited = len(events) + 1  # more messages than the log holds: the reference pager cuts at 0
    for through in (None, -1, 4, 10):
        expected = page_value(events, through, None, unlimited)
        assert encode(index.page(through, None, None)) == encode(expected)
        assert expected["hasMore"] is False
    with pytest.raises(PageRequestError):
        index.page(None, None, 0)


def test_cut_inside_a_row_slices_its_head() -> None:
    events = log_with_messages()
    events[9]["sourceEventSeqs"] = [6, 7, 8]
    index = MessageIndex(pack_chunk_runs(events))
    page = index.page(9, None, 1)
    assert encode(page) == encode(page_value(events, 9, None, 1))
    assert [record_range(r) for r in decode_page(encode(page)).records] == [(6, 8), (9, 9)]
    assert page["records"][0]["event"].data.dt == [1, 1]


def test_snapshot_tail_is_cursor() -> None:
    events = log_with_messages()
    header = {"type": "session", "version": 0, "id": "x"}
    frame = MessageIndex(pack_chunk_runs(events)).snapshot(header, 2)
    assert frame == snapshot_value(header, events, 2)
    assert frame["cursor"] == 10 and frame["projections"] == {"asOfSeq": 10, "values": {}}
    assert MessageIndex().snapshot(header)["cursor"] == -1


def test_index_rejects_discontinuous_records() -> None:
    index = MessageIndex([ev(0)])
    with pytest.raises(DiscontinuityError):
        index.extend([ev(2)])
    assert index.event_count == 1


@pytest.mark.parametrize(("through", "before", "max_messages", "field"), [
    (None, None, 50, "throughSeq"), (-2, None, 50, "throughSeq"), (11, None, 50, "throughSeq"),
    (3, -1, 50, "beforeSeq"), (3, None, 0, "maxMessages"), (3, None, True, "maxMessages"),
    (3.0, None, 50, "throughSeq"), (2**53, None, 50, "throughSeq"),
])
def test_request_rules(through: Any, before: Any, max_messages: Any, field: str) -> None:
    with pytest.raises(PageRequestError) as info:
        check_page_request(through, before, max_messages, 10)
    assert info.value.field == field


def test_request_rules_accept_valid() -> None:
    check_page_request(-1, 0, 1, -1)
    check_page_request(10, 100, 50, 10)


def test_page_cli(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    events = log_with_messages()
    path.write_bytes(b'{"type":"session","version":0,"id":"s"}\n' + b"".join(encode(r) + b"\n"
                                                                          for r in pack_chunk_runs(events)))
    run = [sys.executable, "-m", "assembler", "page", str(path)]
    out = subprocess.run(run + ["--max-messages", "2", "--through", "9"], capture_output=True, check=True)
    assert out.stdout.strip() == encode(page_value(events, 9, None, 2))
    bad = subprocess.run(run + ["--through", "11"], capture_output=True)
    assert bad.returncode == 2 and b"throughSeq" in bad.stderr
