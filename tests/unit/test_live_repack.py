"""Live repacking edge cases: a block that never ends, interleaved blocks, a repair and a duplicate over a repacked
row, older pages joining it, and swaps the assembler refuses."""

from __future__ import annotations

import msgspec
from conversation_support import Session
from live_support import HEADER, LiveServer, assert_continuous, nodes_json, row_count, same_view

from assembler.browser import Viewer
from assembler.chunk_rows import expand_row
from assembler.history import page_value, snapshot_value
from assembler.journal import PageRequest, Replace, session_journal
from assembler.live_repack import ANY, LiveRepacker, closed_scope
from assembler.records import (
    ChunksRecord,
    EventRecord,
    SessionEvent,
    SnapshotFrame,
    decode_follow_frame,
    decode_page,
    encode,
    record_range,
)
from assembler.transcript import assemble
from definitions import default_definitions
from perf.kept_window import KeptWindow


def block_end(s: Session, turn: int, step: int, index: int) -> int:
    return s.chunk(turn, step, {"type": "block-end", "index": index, "block": {"type": "text", "text": "done"}})


def follow(s: Session, cut: int = 2, max_messages: int = 50) -> LiveServer:
    """Two viewers (repacking, plain) following ``s`` live from ``cut``, one event per frame."""
    server = LiveServer(s.events, [Viewer(repack_live=True), Viewer(repack_live=False)], max_messages)
    server.snapshot(cut)
    return server


def step_with_text(n: int = 10) -> Session:
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, [f"w{i} " for i in range(n)])
    return s


def run(server: LiveServer, upto: int | None = None) -> None:
    end = len(server.events) if upto is None else upto
    while server.pos < end:
        update = server.send([server.pos])[0]
        assert "error" not in update and "exception" not in update


def test_a_block_end_leaves_one_row_for_the_block() -> None:
    s = step_with_text(10)
    block_end(s, 1, 1, 0)
    server = follow(s)
    run(server)
    packed, plain = server.viewers
    assert [type(e) for e in packed.window.assembler.window] == [EventRecord, EventRecord, ChunksRecord, EventRecord]
    assert plain.window.assembler.entry_count == 13 and packed.window.repacker.saved == 9
    assert_continuous(packed)
    same_view(packed, plain)


def test_a_block_that_never_ends_stays_scalar_until_its_step_ends() -> None:
    s = step_with_text(10)
    s.step_end(1, 1)
    server = follow(s)
    run(server, 12)
    assert row_count(server.viewers[0]) == 0 and server.viewers[0].window.assembler.entry_count == 12
    run(server)
    assert row_count(server.viewers[0]) == 1 and server.viewers[0].window.assembler.entry_count == 4
    same_view(*server.viewers)


def test_interleaved_blocks_pack_only_their_own_runs() -> None:
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["a", "b", "c", "d"])
    for part in ("{", '"x"', "}"):
        s.tool_delta(1, 1, 1, "call", part, name="bash")
    s.texts(1, 1, 0, ["e", "f", "g"])
    for i in range(4):  # alternating deltas: runs of one, never packed
        s.text(1, 1, i % 2, "z", kind="reasoning")
    block_end(s, 1, 1, 0)
    server = follow(s)
    run(server)
    packed, plain = server.viewers
    rows = [e for e in packed.window.assembler.window if type(e) is ChunksRecord]
    assert [(r.event.type, r.event.seq) for r in rows] == [("chunkrow/text-chunks", 2), ("chunkrow/text-chunks", 9)]
    assert (1, 1) in packed.window.repacker.open  # the tool call's block has not ended
    same_view(packed, plain)
    s.step_end(1, 1)
    run(server)
    assert [r.event.type for r in packed.window.assembler.window if type(r) is ChunksRecord] == [
        "chunkrow/text-chunks", "chunkrow/tool-call-chunks", "chunkrow/text-chunks"]
    assert not packed.window.repacker.open
    same_view(packed, plain)


def test_a_repair_and_a_duplicate_over_a_repacked_row() -> None:
    s = step_with_text(10)
    block_end(s, 1, 1, 0)
    s.texts(1, 1, 1, ["p", "q", "r", "s"])
    block_end(s, 1, 1, 1)
    s.step_end(1, 1)
    server = follow(s)
    run(server, 13)
    packed, plain = server.viewers
    assert row_count(packed) == 1
    updates = server.send([5])  # a duplicate of a member inside the row: dropped
    assert updates[0]["last"] == 12 and "error" not in updates[0]
    updates = server.send([16])  # a gap: the repair page overlaps the repacked row
    assert updates[0]["replace"] and updates[0]["last"] == 16
    assert_continuous(packed)
    same_view(packed, plain)
    run(server)
    same_view(packed, plain)
    assert row_count(packed) == 2


def test_older_pages_join_a_repacked_window() -> None:
    s = Session()
    for turn in (1, 2, 3):
        s.turn_start(turn)
        s.user(f"question {turn}")
        s.step_start(turn, 1)
        s.texts(turn, 1, 0, [f"t{turn}-{i} " for i in range(6)])
        block_end(s, turn, 1, 0)
        s.message(turn, 1, [{"type": "text", "text": "".join(f"t{turn}-{i} " for i in range(6))}])
        s.step_end(turn, 1)
        s.turn_end(turn)
    cut = s.events.index(next(e for e in s.events if e["type"] == "turn/start" and e["data"]["turn"] == 3))
    server = follow(s, cut, max_messages=1)
    run(server)
    packed, plain = server.viewers
    while plain.window.journal.has_more:
        server.load_older()
        assert_continuous(packed)
        same_view(packed, plain)
    assert packed.window.assembler.entry_count < plain.window.assembler.entry_count


def test_closed_scopes() -> None:
    def ev(etype: str, data: object) -> SessionEvent:
        return SessionEvent(etype, 1, 0, data)

    assert closed_scope(ev("assistant/chunk", {"turn": 1, "step": 2, "chunk": {"type": "block-end", "index": 0}})) \
        == (1, 2, 0)
    assert closed_scope(ev("step/end", {"turn": 1, "step": 2})) == (1, 2, ANY)
    assert closed_scope(ev("turn/end", {"turn": 1})) == (1, ANY, ANY)
    assert closed_scope(ev("turn/end", {"turn": True})) is None
    assert closed_scope(ev("assistant/chunk", {"turn": 1, "step": 2, "chunk": {"type": "text-delta"}})) is None


def test_the_assembler_refuses_a_swap_that_does_not_match_its_window() -> None:
    s = step_with_text(6)
    block_end(s, 1, 1, 0)
    viewer = Viewer(repack_live=False)
    server = LiveServer(s.events, [viewer])
    server.snapshot(2)
    run(server)
    asm = viewer.window.assembler
    deltas = list(asm.window[2:8])
    packed = Viewer(repack_live=True)
    LiveServer(s.events, [packed]).snapshot(len(s.events))  # the snapshot page packs the run
    (row,) = [e for e in packed.window.assembler.window if type(e) is ChunksRecord]
    assert isinstance(row, ChunksRecord)
    before = list(asm.window)
    assert not asm.repack(deltas[:5], row)  # does not cover the row's seqs
    assert not asm.repack(list(packed.window.assembler.window[:1]), row)  # not this window's entries
    assert list(asm.window) == before
    assert asm.repack(deltas, row)
    assert asm.entry_count == len(before) - 5 and asm.has_seq(5)


def test_a_kept_journal_window_is_repacked_too() -> None:
    """A client without an assembler: the window it keeps beside its journal gets the rows, stays continuous, still
    holds exactly the log (expanded), and a gap is still repaired from a page."""
    s = step_with_text(10)
    block_end(s, 1, 1, 0)
    s.texts(1, 1, 1, ["p", "q", "r", "s"])
    s.step_end(1, 1)
    s.turn_end(1)
    journal = KeptWindow(session_journal(50))
    repacker = LiveRepacker()
    snap = decode_follow_frame(encode(snapshot_value(HEADER, s.events[:2], 50)))
    assert isinstance(snap, SnapshotFrame)
    journal.opened(snap.cursor, snap.records, snap.hasMore)
    repacker.replaced(journal.window)
    for seq in [*range(2, 16), 17, 18]:  # seq 16 is lost: 17 opens a repair
        for out in journal.entry(EventRecord(SessionEvent(**s.events[seq]))):
            if isinstance(out, PageRequest):
                page = decode_page(encode(page_value(s.events, out.through, None, 50)))
                for done in journal.page(out, page.records, page.hasMore):
                    assert isinstance(done, Replace)
                    repacker.replaced(done.entries)
            else:
                repacker.appended(journal, out.entry)
    ranges = [record_range(e) for e in journal.window]
    assert all(b[0] == a[1] + 1 for a, b in zip(ranges, ranges[1:], strict=False))
    assert ranges[0][0] == journal.first_cursor == 0 and ranges[-1][1] == journal.last_cursor == len(s.events) - 1
    assert repacker.rows >= 1 and len(journal.window) < len(s.events)
    logical = [e for r in journal.window for e in (
        expand_row(r.event.to_storage()) if type(r) is ChunksRecord else [msgspec.to_builtins(r.event)])]
    assert logical == s.events


def test_malformed_chunks_are_never_packed_and_never_raise() -> None:
    s = step_with_text(4)
    s.chunk(1, 1, {"type": [], "index": 0})  # unhashable chunk type
    s.chunk(1, 1, {"type": "block-end", "index": [0]})  # unhashable index
    s.chunk(1, 1, {"type": "block-end", "index": 0, "block": {"type": "text", "text": "done"}})
    server = follow(s)
    for seq in range(2, len(s.events)):
        packed, plain = ({k: v for k, v in u.items() if k != "stats"} for u in server.send([seq]))
        assert packed == plain and "exception" not in packed
    assert row_count(server.viewers[0]) == 1
    same_view(*server.viewers)


def test_a_running_step_whose_only_visible_block_empties_keeps_a_hidden_node() -> None:
    """A visible block replaced by an empty reasoning block: the published node stays, hidden (the Definition
    must never return None after a node), and a fresh fold of the same window builds that same hidden node."""
    s = step_with_text(2)
    s.chunk(1, 1, {"type": "block-start", "index": 0, "blockType": "reasoning"})
    server = follow(s)
    run(server)
    packed, plain = server.viewers
    (node,) = plain.window.chat.values()
    assert node.kind == "assistant-step" and node.visibility == "hidden" and node.data.status == "running"
    assert node.data.firstVisibleSeq == 2
    same_view(packed, plain)
    fresh = assemble(list(plain.window.assembler.window), plain.window.assembler.has_more, default_definitions())
    assert msgspec.json.encode(fresh.chat) == nodes_json(plain)
