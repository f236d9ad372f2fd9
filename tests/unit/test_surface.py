"""SurfaceManager: append/replace rules (seeds/001, 000), delta processing, and derive_messages."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from assembler.surface import (
    SurfaceError,
    SurfaceManager,
    derive_messages,
    is_append_surface_event,
    message_of,
    replace_op,
)


def ev(seq: int, type_: str = "user/message", op: Any = "append", sources: list[int] | None = None,
       data: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": type_, "seq": seq, "time": 0,
                             "data": data if data is not None else {"role": "user", "content": [
                                 {"type": "text", "text": f"m{seq}"}]}}
    if sources is not None:
        event["sourceEventSeqs"] = sources
    if op is not None:
        event["surfaceOp"] = op
    return event


def log_of(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return list(events)


def test_append_adds_nodes_at_the_tail_in_order() -> None:
    log = [ev(0), ev(1, "step/start", op=None, data={}), ev(2), ev(3)]
    assert SurfaceManager(log).seqs() == [0, 2, 3]


def test_replace_is_inclusive_and_takes_the_range_place() -> None:
    log = [ev(0), ev(1), ev(2), ev(3), ev(4, op=replace_op(1, 2), sources=[1, 2])]
    surface = SurfaceManager(log)
    assert surface.seqs() == [0, 4, 3]
    assert 1 not in surface and 2 not in surface
    assert [n.seq for n in reversed(list(surface))] == [3, 4, 0]  # prev links agree


def test_replace_with_start_equal_end_replaces_one_node() -> None:
    log = [ev(0), ev(1), ev(2, op=replace_op(0, 0), sources=[0])]
    assert SurfaceManager(log).seqs() == [2, 1]


def test_replace_of_the_whole_surface_and_of_the_tail() -> None:
    log = [ev(0), ev(1), ev(2, op=replace_op(0, 1), sources=[0, 1])]
    surface = SurfaceManager(log)
    assert surface.seqs() == [2]
    assert surface.head is surface.tail and surface.head is not None and surface.head.seq == 2
    log.append(ev(3))
    log.append(ev(4, op=replace_op(3, 3), sources=[3]))
    assert surface.seqs() == [2, 4]
    assert surface.tail is not None and surface.tail.seq == 4


def test_a_replacement_node_can_be_an_endpoint_later() -> None:
    log = [ev(0), ev(1), ev(2), ev(3, op=replace_op(0, 1), sources=[0, 1]), ev(4, op=replace_op(3, 2), sources=[3, 2])]
    # 3 sits before 2 on the surface, so 3..2 is a forward range although start > end in seq.
    with pytest.raises(SurfaceError) as info:
        SurfaceManager(log).sync()
    assert info.value.rule == "replace-order" and info.value.seq == 4
    log[4] = ev(4, op=replace_op(2, 3), sources=[2, 3])
    with pytest.raises(SurfaceError) as info:
        SurfaceManager(log).sync()
    assert info.value.rule == "replace-reversed"


def test_replace_chain_cites_the_replacement_node() -> None:
    log = [ev(0), ev(1), ev(2, op=replace_op(1, 1), sources=[1]), ev(3, op=replace_op(0, 2), sources=[0, 2])]
    assert SurfaceManager(log).seqs() == [3]


@pytest.mark.parametrize("start,end,where", [(7, 7, "start 7"), (0, 7, "end 7")])
def test_rejects_endpoint_that_never_existed(start: int, end: int, where: str) -> None:
    log = [ev(0), ev(1, op=replace_op(start, end), sources=[0, 7])]
    with pytest.raises(SurfaceError, match=where) as info:
        SurfaceManager(log).sync()
    assert info.value.seq == 1 and info.value.rule == "replace-endpoint"


def test_rejects_endpoint_that_is_a_non_surface_event() -> None:
    log = [ev(0), ev(1, "step/start", op=None, data={}), ev(2, op=replace_op(0, 1), sources=[0, 1])]
    with pytest.raises(SurfaceError, match="end 1 is not on the surface"):
        SurfaceManager(log).sync()


def test_rejects_endpoint_already_shadowed() -> None:
    log = [ev(0), ev(1), ev(2, op=replace_op(0, 0), sources=[0]), ev(3, op=replace_op(0, 1), sources=[0, 1])]
    with pytest.raises(SurfaceError, match="start 0 is not on the surface") as info:
        SurfaceManager(log).sync()
    assert info.value.seq == 3


def test_rejects_reversed_seq_range() -> None:
    log = [ev(0), ev(1), ev(2, op=replace_op(1, 0), sources=[0, 1])]
    with pytest.raises(SurfaceError, match="start 1 > end 0") as info:
        SurfaceManager(log).sync()
    assert info.value.rule == "replace-order"


def test_rejects_missing_provenance_and_names_the_uncited_nodes() -> None:
    log = [ev(0), ev(1), ev(2), ev(3, op=replace_op(0, 2), sources=[0, 2])]
    with pytest.raises(SurfaceError, match=r"\[1\]") as info:
        SurfaceManager(log).sync()
    assert info.value.rule == "replace-provenance" and info.value.seq == 3


def test_rejects_replace_without_any_provenance() -> None:
    log = [ev(0), ev(1, op=replace_op(0, 0))]
    with pytest.raises(SurfaceError, match="does not cite"):
        SurfaceManager(log).sync()


def test_rejects_surface_type_without_surface_op() -> None:
    with pytest.raises(SurfaceError, match="no surfaceOp") as info:
        SurfaceManager([ev(0, op=None)]).sync()
    assert info.value.rule == "surface-missing"


@pytest.mark.parametrize("op", ["Append", {"op": "replace", "start": 0}, {"op": "splice", "start": 0, "end": 0},
                                {"op": "replace", "start": -1, "end": 0}, {"op": "replace", "start": 0.0, "end": 0},
                                {"op": "replace", "start": True, "end": 0}, None.__class__])
def test_rejects_malformed_surface_op(op: Any) -> None:
    with pytest.raises(SurfaceError) as info:
        SurfaceManager([ev(0), ev(1, op=op, sources=[0])]).sync()
    assert info.value.rule == "surface-malformed"


@pytest.mark.parametrize("legacy", ["context/message", "steering/message", "compaction/summary"])
def test_surface_op_on_a_non_surface_type_is_refused(legacy: str) -> None:
    # PROTOCOL 1.3: the legacy types are unknown types, never surface nodes.
    with pytest.raises(SurfaceError) as info:
        SurfaceManager([ev(0, legacy)]).sync()
    assert info.value.rule == "surface-not-eligible"


def test_invalid_events_are_reported_and_left_off_with_on_invalid() -> None:
    seen: list[SurfaceError] = []
    log = [ev(0), ev(1, op=None), ev(2, op=replace_op(5, 5), sources=[5]), ev(3)]
    surface = SurfaceManager(log, on_invalid=seen.append)
    assert surface.seqs() == [0, 3]
    assert [(e.seq, e.rule) for e in seen] == [(1, "surface-missing"), (2, "replace-endpoint")]


def test_check_validates_without_changing_the_surface() -> None:
    log = [ev(0), ev(1)]
    surface = SurfaceManager(log)
    shadowed = surface.check(ev(2, op=replace_op(0, 1), sources=[0, 1]))
    assert [n.seq for n in shadowed] == [0, 1]
    assert surface.seqs() == [0, 1]


# -- delta processing ---------------------------------------------------------------------------------------


def test_reads_process_only_the_delta() -> None:
    log = [ev(0), ev(1)]
    surface = SurfaceManager(log)
    assert surface.sync() == 2
    assert surface.sync() == 0  # O(1) with nothing new
    log.append(ev(2))
    assert surface.sync() == 1
    assert surface.last_processed_seq == 2
    assert surface.rebuilds == 1


def test_many_appends_never_rebuild() -> None:
    log: list[dict[str, Any]] = []
    surface = SurfaceManager(log)
    for i in range(200):
        log.append(ev(i))
        assert len(surface) == i + 1
    assert surface.rebuilds == 1


def test_reset_with_a_new_log_rebuilds_once() -> None:
    surface = SurfaceManager([ev(0), ev(1)])
    assert surface.seqs() == [0, 1]
    surface.reset([ev(0, "assistant/message", data={"turn": 1, "step": 1, "content": []})])
    assert surface.rebuilds == 2
    assert surface.seqs() == [0]


def test_a_shorter_log_triggers_a_rebuild() -> None:
    log = [ev(0), ev(1), ev(2)]
    surface = SurfaceManager(log)
    assert len(surface) == 3
    del log[1:]
    assert surface.seqs() == [0]
    assert surface.rebuilds == 2


# -- messages -----------------------------------------------------------------------------------------------


def test_derive_messages_accepts_both_payload_generations() -> None:
    call = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}
    log = [
        ev(0, data={"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}),  # no role (older)
        ev(1, "assistant/message", data={"turn": 1, "step": 1, "content": [call],
                                         "provenance": {"provider": "p", "model": "m"}}),
        ev(2, "tool/result", data={"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "ok"}],
                                   "isError": False}, sources=[1]),
        ev(3, "assistant/message", data={"turn": 1, "step": 2, "message": {
            "role": "assistant", "content": [{"type": "text", "text": "done"}], "source": {"kind": "model"},
            "id": "a2"}}),
        ev(4, "tool/result", data={"turn": 1, "step": 2, "message": {
            "role": "user", "source": {"kind": "tool", "callId": "c2"},
            "content": [{"type": "tool-result", "toolCallId": "c2", "content": [], "isError": True}]}}),
    ]
    messages = derive_messages(SurfaceManager(log))
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"] == [{"type": "text", "text": "hi"}]
    assert messages[1] == {"role": "assistant", "content": [call],
                           "source": {"kind": "model", "provider": "p", "model": "m"}}
    assert messages[2] == {"role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [
        {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}], "isError": False}]}
    assert messages[3]["id"] == "a2"
    assert messages[4]["content"][0]["isError"] is True


def test_derive_messages_after_compaction_shows_the_summary_in_place() -> None:
    log = [ev(0), ev(1), ev(2), ev(3, "compaction/start", op=None, data={}),
           ev(4, op=replace_op(0, 1), sources=[3, 0, 1], data={"role": "user", "content": [
               {"type": "text", "text": "summary"}]})]
    texts = [m["content"][0]["text"] for m in derive_messages(SurfaceManager(log))]
    assert texts == ["summary", "m2"]


def test_unknown_content_blocks_pass_through() -> None:
    block = {"type": "future-block", "x": [1, 2]}
    assert message_of(ev(0, data={"role": "user", "content": [block]}))["content"] == [block]


def test_is_append_surface_event() -> None:
    assert is_append_surface_event(ev(0))
    assert not is_append_surface_event(ev(1, op=replace_op(0, 0)))
    assert not is_append_surface_event(ev(2, "turn/start"))


def test_surface_error_pickles() -> None:
    err = SurfaceError(7, "replace end 9 is not on the surface", "replace-endpoint")
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.seq, copy.reason, copy.rule, str(copy)) == (7, err.reason, "replace-endpoint", str(err))
