"""Crash repair: closers for orphaned tool calls, an open step and an open turn; deterministic and idempotent."""

from __future__ import annotations

from typing import Any

from assembler.chunk_rows import pack_chunk_runs
from assembler.invariants import check_events
from assembler.records import encode
from assembler.repair import (
    OUTCOME_UNKNOWN_TEXT,
    TOOL_NOT_STARTED,
    TOOL_OUTCOME_UNKNOWN,
    interrupted_turn_closers,
    repair_events,
)
from assembler.session import Session


class Log:
    """Builds a contiguous log with times 100, 110, ..."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, data: Any, **extra: Any) -> int:
        seq = len(self.events)
        self.events.append({"type": type_, "seq": seq, "time": 100 + 10 * seq, "data": data, **extra})
        return seq

    def open_turn_with_calls(self, *call_ids: str, flat: bool = False) -> None:
        self.add("turn/start", {"turn": 1})
        self.add("user/message", {"role": "user", "content": [{"type": "text", "text": "go"}]}, surfaceOp="append")
        self.add("step/start", {"turn": 1, "step": 1})
        blocks = [{"type": "tool-call", "id": c, "name": "bash", "arguments": "{}"} for c in call_ids]
        if flat:
            self.add("assistant/message", {"turn": 1, "step": 1, "content": blocks, "provenance": {}},
                     sourceEventSeqs=[], surfaceOp="append")
        else:
            self.add("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": blocks}},
                     sourceEventSeqs=[], surfaceOp="append")


def test_a_recorded_call_without_result_gets_an_outcome_unknown_closer_citing_the_call() -> None:
    log = Log()
    log.open_turn_with_calls("c1")
    call_seq = log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
    closers = interrupted_turn_closers(log.events)
    assert [c["type"] for c in closers] == ["tool/result", "step/end", "turn/end"]
    result = closers[0]
    assert result["seq"] == call_seq + 1 and result["time"] == log.events[-1]["time"]
    assert result["surfaceOp"] == "append" and result["sourceEventSeqs"] == [call_seq]
    assert list(result) == ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"]  # as the reference
    message = result["data"]["message"]
    assert message["id"] == f"interrupted-tool-result-c1-{call_seq + 1}"
    assert message["source"] == {"kind": "tool", "callId": "c1"}
    assert message["content"][0]["toolCallId"] == "c1" and message["content"][0]["isError"] is True
    assert message["content"][0]["content"][0]["text"] == OUTCOME_UNKNOWN_TEXT
    assert result["data"]["error"]["code"] == TOOL_OUTCOME_UNKNOWN
    assert closers[1]["data"] == {"turn": 1, "step": 1}
    assert closers[2]["data"] == {"turn": 1, "reason": {"kind": "interrupted"}}
    assert [c["seq"] for c in closers] == [call_seq + 1, call_seq + 2, call_seq + 3]


def test_a_requested_call_that_never_started_gets_a_not_started_closer() -> None:
    log = Log()
    log.open_turn_with_calls("c1", "c2")
    log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
    closers = interrupted_turn_closers(log.events)
    by_call = {c["data"]["message"]["source"]["callId"]: c for c in closers if c["type"] == "tool/result"}
    assert by_call["c1"]["data"]["error"]["code"] == TOOL_OUTCOME_UNKNOWN
    assert by_call["c2"]["data"]["error"]["code"] == TOOL_NOT_STARTED
    assert "sourceEventSeqs" not in by_call["c2"]  # nothing recorded to cite


def test_an_orphaned_tool_call_no_message_announced_is_still_closed() -> None:
    log = Log()
    log.add("turn/start", {"turn": 3})
    seq = log.add("tool/call", {"turn": 3, "step": 2, "callId": "x", "name": "bash", "arguments": "{}"})
    closers = interrupted_turn_closers(log.events)
    assert closers[0]["sourceEventSeqs"] == [seq] and closers[0]["data"]["step"] == 2
    assert closers[-1]["data"]["turn"] == 3


def test_answered_calls_get_no_closer_in_either_payload_generation() -> None:
    for flat in (False, True):
        log = Log()
        log.open_turn_with_calls("c1", "c2", flat=flat)
        c1 = log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
        if flat:
            log.add("tool/result", {"turn": 1, "step": 1, "callId": "c1", "content": [], "isError": False},
                    sourceEventSeqs=[c1], surfaceOp="append")
        else:
            log.add("tool/result", {"turn": 1, "step": 1, "message": {
                "role": "user", "source": {"kind": "tool", "callId": "c1"},
                "content": [{"type": "tool-result", "toolCallId": "c1", "content": []}]}},
                sourceEventSeqs=[c1], surfaceOp="append")
        closers = interrupted_turn_closers(log.events)
        assert [c["data"]["message"]["source"]["callId"] for c in closers if c["type"] == "tool/result"] == ["c2"]


def test_a_turn_open_without_a_step_gets_only_turn_end() -> None:
    log = Log()
    log.add("request/header", {"header": {}, "reason": "initial"})
    log.add("turn/start", {"turn": 1})
    assert [c["type"] for c in interrupted_turn_closers(log.events)] == ["turn/end"]


def test_a_balanced_or_empty_log_needs_nothing() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert interrupted_turn_closers(log.events) == []
    assert interrupted_turn_closers([]) == []


def test_a_legacy_turn_end_closes_the_turn() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("turn/end", {"error": "model exploded"})
    assert interrupted_turn_closers(log.events) == []


def test_repair_is_idempotent_and_deterministic() -> None:
    log = Log()
    log.open_turn_with_calls("c1")
    log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
    once = repair_events(log.events)
    assert encode(repair_events(log.events)) == encode(once)
    assert repair_events(once) == once
    assert interrupted_turn_closers(once) == []


def test_the_repaired_log_passes_check_and_seeds_a_session() -> None:
    log = Log()
    log.open_turn_with_calls("c1", "c2")
    log.add("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})
    repaired = repair_events(log.events)
    assert check_events(repaired) == []
    session = Session(repaired, end_seed=False)
    assert [m["role"] for m in session.derive_messages()] == ["user", "assistant", "user", "user"]


def test_packed_rows_are_skipped_but_anchor_the_closers() -> None:
    log = Log()
    log.add("turn/start", {"turn": 1})
    log.add("step/start", {"turn": 1, "step": 1})
    for i in range(4):
        log.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": str(i)}})
    records = pack_chunk_runs(log.events)
    assert records[-1].type == "text-chunks"
    closers = interrupted_turn_closers(records)
    assert closers == interrupted_turn_closers(log.events)
    assert closers[0]["seq"] == len(log.events) and closers[0]["time"] == log.events[-1]["time"]
