"""invariants.check_events: one test per rule of seeds/001 "Invariants", each reporting the seq."""

from __future__ import annotations

from typing import Any

import pytest

from assembler.invariants import RULES, Violation, check_events, provenance_problems
from assembler.surface import replace_op


def ev(seq: int, type_: str = "user/message", op: Any = "append", sources: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": type_, "seq": seq, "time": 0, "data": {}}
    if sources is not None:
        event["sourceEventSeqs"] = sources
    if op is not None:
        event["surfaceOp"] = op
    return event


def rules(events: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(v.seq, v.rule) for v in check_events(events)]


def test_a_clean_log_has_no_violations() -> None:
    log = [ev(0), ev(1, "tool/call", op=None), ev(2, "tool/result", sources=[1]),
           ev(3, "assistant/message", sources=[]), ev(4, op=replace_op(0, 2), sources=[0, 2])]
    assert check_events(log) == []


def test_provenance_must_be_non_empty() -> None:
    assert rules([ev(0), ev(1, "tool/result", sources=[])]) == [(1, "provenance-empty")]


def test_empty_provenance_is_the_known_empty_stream_of_an_assistant_message() -> None:
    assert rules([ev(0, "assistant/message", sources=[])]) == []


def test_provenance_must_have_no_duplicates() -> None:
    assert rules([ev(0), ev(1, "tool/result", sources=[0, 0])]) == [(1, "provenance-duplicate")]


def test_provenance_must_reference_earlier_events() -> None:
    log = [ev(0), ev(1, "tool/result", sources=[1]), ev(2, "tool/call", op=None)]
    log[1]["sourceEventSeqs"] = [1, 2]
    assert rules(log) == [(1, "provenance-not-earlier")]


def test_provenance_must_reference_known_seqs() -> None:
    assert rules([ev(0), ev(1, "tool/result", sources=[42, -3])]) == [(1, "provenance-unknown")]


@pytest.mark.parametrize("bad", ["0", [0.5], [True], None, {"a": 1}])
def test_provenance_must_be_a_list_of_integers(bad: Any) -> None:
    event = ev(1, "tool/result")
    event["sourceEventSeqs"] = bad
    assert rules([ev(0), event]) == [(1, "provenance-shape")]


def test_provenance_is_checked_on_non_surface_events_too() -> None:
    assert rules([ev(0, "compaction/summary", op=None, sources=[5])]) == [(0, "provenance-unknown")]


def test_surface_eligible_events_must_carry_surface_op() -> None:
    assert rules([ev(0, op=None), ev(1, "assistant/message", op=None), ev(2, "tool/result", op=None)]) == [
        (0, "surface-missing"), (1, "surface-missing"), (2, "surface-missing")]


def test_surface_op_only_on_surface_types() -> None:
    assert rules([ev(0, "steering/message")]) == [(0, "surface-not-eligible")]


def test_surface_op_must_be_well_formed() -> None:
    assert rules([ev(0, op={"op": "replace", "start": 0})]) == [(0, "surface-malformed")]


def test_replace_start_must_not_exceed_end() -> None:
    assert rules([ev(0), ev(1), ev(2, op=replace_op(1, 0), sources=[0, 1])]) == [(2, "replace-order")]


def test_replace_endpoints_must_be_on_the_surface() -> None:
    log = [ev(0), ev(1, "turn/start", op=None), ev(2, op=replace_op(0, 1), sources=[0, 1])]
    assert rules(log) == [(2, "replace-endpoint")]


def test_replace_range_must_not_be_reversed_in_surface_position() -> None:
    log = [ev(0), ev(1), ev(2), ev(3, op=replace_op(0, 1), sources=[0, 1]), ev(4, op=replace_op(2, 3), sources=[2, 3])]
    assert rules(log) == [(4, "replace-reversed")]


def test_replace_provenance_must_cover_every_shadowed_node() -> None:
    log = [ev(0), ev(1), ev(2), ev(3, op=replace_op(0, 2), sources=[0, 2])]
    violations = check_events(log)
    assert [(v.seq, v.rule) for v in violations] == [(3, "replace-provenance")]
    assert "[1]" in violations[0].message


def test_seqs_must_be_contiguous() -> None:
    assert rules([ev(0), ev(2)]) == [(2, "seq-order")]


def test_every_violation_is_reported_in_log_order_and_checking_continues() -> None:
    log = [ev(0, op=None), ev(1), ev(2, "tool/result", sources=[9]), ev(3, op=replace_op(0, 0), sources=[0])]
    assert rules(log) == [(0, "surface-missing"), (2, "provenance-unknown"), (3, "replace-endpoint")]


def test_the_checker_never_raises_on_garbage() -> None:
    garbage: list[Any] = [{"type": None, "seq": "x"}, {"type": "user/message", "surfaceOp": {"op": "replace",
                                                                                           "start": [], "end": {}}}]
    assert all(isinstance(v, Violation) for v in check_events(garbage))


def test_every_rule_is_documented() -> None:
    assert {"provenance-empty", "provenance-duplicate", "provenance-not-earlier", "provenance-unknown",
            "surface-missing", "replace-order", "replace-endpoint", "replace-reversed",
            "replace-provenance"} <= RULES.keys()


def test_provenance_problems_for_an_append_in_progress() -> None:
    assert provenance_problems(3, "tool/result", [2]) == []
    assert provenance_problems(3, "tool/result", [3])[0][0] == "provenance-unknown"


def test_violation_str_names_the_seq() -> None:
    text = str(Violation(4, "replace-order", "replace start 2 > end 1"))
    assert text == "seq 4: replace-order: replace start 2 > end 1"
