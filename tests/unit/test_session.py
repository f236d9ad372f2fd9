"""Session: seed validation, append with an injected clock and surface intents, end-seed, first_live_seq."""

from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import pytest

from assembler.chunk_rows import pack_chunk_runs
from assembler.session import END_SEED, AppendError, SeedError, Session, json_problem
from assembler.surface import SurfaceError, replace_op

ROOT = Path(__file__).resolve().parents[2]


class FakeClock:
    """Deterministic injected clock: 1000, 1001, ... and a call counter."""

    def __init__(self, start: int = 1000) -> None:
        self.now = start
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        self.now += 1
        return self.now - 1


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def seed_event(seq: int, type_: str = "user/message", **extra: Any) -> dict[str, Any]:
    data = user(f"m{seq}") if type_ == "user/message" else {}
    event: dict[str, Any] = {"type": type_, "seq": seq, "time": 0, "data": data}
    if type_ == "user/message":
        event["surfaceOp"] = "append"
    event.update(extra)
    return event


# -- seed validation ----------------------------------------------------------------------------------------


def test_seed_with_a_seq_gap_names_the_seq() -> None:
    seed = [seed_event(0), seed_event(1, "turn/start"), seed_event(3, "turn/end")]
    with pytest.raises(SeedError, match="expected seq 2, got 3") as info:
        Session(seed, end_seed=False)
    assert info.value.seq == 2


def test_seed_must_start_at_zero() -> None:
    with pytest.raises(SeedError) as info:
        Session([seed_event(1)], end_seed=False)
    assert info.value.seq == 0


def test_seed_surface_event_without_surface_op_is_rejected() -> None:
    bad = seed_event(1)
    del bad["surfaceOp"]
    with pytest.raises(SeedError, match="user/message has no surfaceOp") as info:
        Session([seed_event(0), bad], end_seed=False)
    assert info.value.seq == 1


@pytest.mark.parametrize("data,where", [
    ({"x": {1, 2}}, "$.data.x"),
    ({"x": [1, math.nan]}, "$.data.x[1]"),
    ({"x": {3: "a"}}, "$.data.x"),
    ({"x": (1, 2)}, "$.data.x"),
    (b"raw", "$.data"),
])
def test_seed_data_must_be_json(data: Any, where: str) -> None:
    bad = {"type": "turn/start", "seq": 1, "time": 0, "data": data}
    with pytest.raises(SeedError, match="not JSON-serialisable") as info:
        Session([seed_event(0), bad], end_seed=False)
    assert info.value.seq == 1 and where in info.value.reason


def test_seed_cyclic_data_is_rejected_not_looped() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(SeedError, match="nested too deeply"):
        Session([{"type": "x/y", "seq": 0, "time": 0, "data": cyclic}], end_seed=False)


def test_seed_time_must_be_integer_ms() -> None:
    with pytest.raises(SeedError, match="time"):
        Session([{"type": "turn/start", "seq": 0, "time": 1.5, "data": {}}], end_seed=False)


def test_seed_with_an_invalid_replace_names_the_seq() -> None:
    seed = [seed_event(0), seed_event(1, surfaceOp=replace_op(0, 5), sourceEventSeqs=[0])]
    with pytest.raises(SeedError, match="end 5 is not on the surface") as info:
        Session(seed, end_seed=False)
    assert info.value.seq == 1
    assert isinstance(info.value.__cause__, SurfaceError)


def test_seed_is_closed_by_end_seed_and_first_live_seq_is_its_length() -> None:
    clock = FakeClock()
    session = Session([seed_event(0), seed_event(1, "turn/start")], clock=clock)
    assert session.first_live_seq == 2
    assert session.events[2] == {"type": END_SEED, "seq": 2, "time": 1000, "data": {}}
    assert session.seed_end_seq == 2
    assert session.seq == 3


def test_empty_seed_writes_no_marker() -> None:
    session = Session(clock=FakeClock())
    assert session.first_live_seq == 0 and len(session) == 0 and session.seed_end_seq is None


def test_read_only_open_writes_no_marker() -> None:
    session = Session([seed_event(0)], end_seed=False)
    assert len(session) == 1 and session.first_live_seq == 1


def test_end_seed_needs_a_clock() -> None:
    with pytest.raises(ValueError, match="clock"):
        Session([seed_event(0)])


def test_from_records_expands_packed_rows() -> None:
    events = [seed_event(0)] + [
        {"type": "assistant/chunk", "seq": i, "time": i, "data": {"turn": 1, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": str(i)}}} for i in range(1, 5)]
    records = pack_chunk_runs(events)
    assert len(records) == 2
    session = Session.from_records(records)
    assert list(session.events) == events


# -- append -------------------------------------------------------------------------------------------------


def test_append_assigns_seq_and_time_from_the_injected_clock_in_reference_key_order() -> None:
    clock = FakeClock(5000)
    session = Session(clock=clock)
    a = session.append("user/message", user(), surface="append")
    b = session.append("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": []}},
                       surface="append", source_event_seqs=[], ignorable=True)
    assert list(a) == ["type", "seq", "time", "data", "surfaceOp"]
    assert list(b) == ["type", "seq", "time", "data", "ignorable", "sourceEventSeqs", "surfaceOp"]
    assert (a["seq"], a["time"], b["seq"], b["time"]) == (0, 5000, 1, 5001)


def test_append_of_a_surface_type_without_intent_raises_and_changes_nothing() -> None:
    clock = FakeClock()
    session = Session(clock=clock)
    with pytest.raises(SurfaceError, match="needs a surface intent") as info:
        session.append("user/message", user())
    assert info.value.seq == 0 and info.value.rule == "surface-missing"
    assert len(session) == 0 and clock.calls == 0


def test_append_from_a_loop_over_raw_events_is_caught_at_run_time() -> None:
    raw = [{"type": "turn/start", "data": {"turn": 1}}, {"type": "user/message", "data": user()}]
    session = Session(clock=FakeClock())
    with pytest.raises(SurfaceError) as info:
        for event in raw:
            event_type: str = event["type"]  # a widened str, as a loop over raw events gives
            session.append(event_type, event["data"])
    assert info.value.seq == 1
    assert [e["type"] for e in session.events] == ["turn/start"]


def test_append_of_an_intent_on_a_non_surface_type_is_refused() -> None:
    session = Session(clock=FakeClock())
    with pytest.raises(SurfaceError, match="not a surface type"):
        session.append("context/message", {"text": "legacy"}, surface="append")


@pytest.mark.parametrize("intent", ["replace", {"op": "replace", "start": 0}, {"start": 0, "end": 0}, 3])
def test_append_of_a_malformed_intent_is_refused(intent: Any) -> None:
    session = Session(clock=FakeClock())
    session.append("user/message", user(), surface="append")
    with pytest.raises(SurfaceError) as info:
        session.append("user/message", user(), surface=intent, source_event_seqs=[0])
    assert info.value.rule == "surface-malformed" and len(session) == 1


def test_append_replace_rules_are_enforced_before_commit() -> None:
    session = Session(clock=FakeClock())
    for _ in range(3):
        session.append("user/message", user(), surface="append")
    cases = [
        (replace_op(0, 9), [0], "replace-endpoint"),
        (replace_op(2, 1), [1, 2], "replace-order"),
        (replace_op(0, 2), [0, 2], "replace-provenance"),
    ]
    for op, sources, rule in cases:
        with pytest.raises(SurfaceError) as info:
            session.append("user/message", user("summary"), surface=op, source_event_seqs=sources)
        assert info.value.rule == rule and info.value.seq == 3
    assert len(session) == 3 and session.surface.seqs() == [0, 1, 2]
    session.append("user/message", user("summary"), surface=replace_op(0, 1), source_event_seqs=[0, 1])
    assert session.surface.seqs() == [3, 2]
    # 3 now sits before 2 on the surface: the seq-ordered range 2..3 is reversed in surface position.
    with pytest.raises(SurfaceError) as info:
        session.append("user/message", user(), surface=replace_op(2, 3), source_event_seqs=[2, 3])
    assert info.value.rule == "replace-reversed"


def test_append_replace_stores_a_fresh_op_in_reference_key_order() -> None:
    session = Session(clock=FakeClock())
    session.append("user/message", user(), surface="append")
    intent = {"end": 0, "start": 0, "op": "replace"}
    event = session.append("user/message", user("s"), surface=intent, source_event_seqs=(0,))
    assert list(event["surfaceOp"]) == ["op", "start", "end"] and event["surfaceOp"] is not intent
    assert event["sourceEventSeqs"] == [0]


@pytest.mark.parametrize("type_,sources,rule", [
    ("tool/result", [], "provenance-empty"),
    ("tool/result", [0, 0], "provenance-duplicate"),
    ("tool/result", [1], "provenance-unknown"),
    ("tool/result", [-1], "provenance-unknown"),
    ("tool/result", ["0"], "provenance-shape"),
])
def test_append_provenance_must_be_earlier_known_unique_seqs(type_: str, sources: list[Any], rule: str) -> None:
    session = Session(clock=FakeClock())
    session.append("tool/call", {"callId": "c"})
    with pytest.raises(SurfaceError) as info:
        session.append(type_, {"callId": "c", "content": []}, surface="append", source_event_seqs=sources)
    assert info.value.rule == rule and len(session) == 1


def test_empty_provenance_is_allowed_for_an_assistant_message() -> None:
    session = Session(clock=FakeClock())
    event = session.append("assistant/message", {"content": []}, surface="append", source_event_seqs=[])
    assert event["sourceEventSeqs"] == []


def test_append_non_json_data_is_refused() -> None:
    session = Session(clock=FakeClock())
    with pytest.raises(AppendError, match=r"\$\.when"):
        session.append("turn/start", {"when": object()})
    assert len(session) == 0


@pytest.mark.parametrize("bad", [1.5, "now", None, 2**60])
def test_append_refuses_a_clock_that_is_not_integer_ms(bad: Any) -> None:
    session = Session(clock=lambda: bad)
    with pytest.raises(AppendError, match="clock"):
        session.append("turn/start", {"turn": 1})
    assert len(session) == 0


def test_append_without_a_clock_is_refused() -> None:
    session = Session()
    with pytest.raises(AppendError, match="no clock"):
        session.append("turn/start", {"turn": 1})


@pytest.mark.parametrize("bad", ["", 3, None])
def test_append_type_must_be_a_non_empty_string(bad: Any) -> None:
    with pytest.raises(AppendError):
        Session(clock=FakeClock()).append(bad, {})


def test_events_view_is_read_only() -> None:
    session = Session([seed_event(0)], end_seed=False)
    with pytest.raises(TypeError):
        session.events[0] = {}  # type: ignore[index]
    assert not hasattr(session.events, "append")
    assert session.event_at(0)["seq"] == 0


def test_surface_and_messages_follow_appends() -> None:
    session = Session([seed_event(0)], clock=FakeClock())
    session.append("turn/start", {"turn": 1})
    session.append("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": []}},
                   surface="append", source_event_seqs=[])
    assert session.surface.seqs() == [0, 3]
    assert [m["role"] for m in session.derive_messages()] == ["user", "assistant"]
    assert session.surface.rebuilds == 1


def test_storage_records_pack_the_log() -> None:
    session = Session(clock=FakeClock())
    for i in range(4):
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0,
                                                                          "text": str(i)}})
    records = session.storage_records()
    assert len(records) == 1 and records[0].type == "text-chunks"


def test_errors_pickle() -> None:
    for err in (SeedError(3, "gap"), AppendError(4, "bad")):
        copy = pickle.loads(pickle.dumps(err))
        assert (copy.seq, copy.reason, str(copy)) == (err.seq, err.reason, str(err))


def test_json_problem_accepts_plain_json() -> None:
    assert json_problem({"a": [1, 2.5, "x", True, None, {"b": []}]}) is None
