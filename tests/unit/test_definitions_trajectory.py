"""Trajectory Assistant and turn end (ASSEMBLY 5.5): summed usage, retry, request status, partial, turn errors."""

from __future__ import annotations

import msgspec
import pytest
from conversation_support import Session, both, fold

from definitions.trajectory_assistant import add_usage


def traj(events, kind="trajectory-assistant-step"):
    return [n for n in fold(events, "packed").trajectory if n.kind == kind]


def test_add_usage_sums_and_keeps_optional_fields():
    assert add_usage(None, {"inputTokens": 1, "outputTokens": 2}) == {"inputTokens": 1, "outputTokens": 2}
    assert add_usage({"inputTokens": 1, "outputTokens": 2, "cacheReadTokens": 3},
                     {"inputTokens": 1, "outputTokens": 1, "reasoningTokens": 4}) == {
        "inputTokens": 2, "outputTokens": 3, "cacheReadTokens": 3, "reasoningTokens": 4}


def test_running_partial_then_complete_request():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["a", "b", "c"])
    s.usage(1, 1, {"inputTokens": 1, "outputTokens": 1})
    s.usage(1, 1, {"inputTokens": 2, "outputTokens": 2})
    (node,) = traj(s.events)
    assert node.data.partial.blocks[0].text == "abc"
    assert node.data.request.status == "running"
    assert node.data.request.usage == {"inputTokens": 3, "outputTokens": 3}
    s.message(1, 1, [{"type": "text", "text": "abc"}], usage={"inputTokens": 9, "outputTokens": 9})
    (node,) = traj(s.events)
    assert node.data.partial is None
    assert node.data.request.status == "complete"
    assert node.data.request.resultSeq == node.data.node.seq
    assert node.data.node.provenance.model == "m"
    assert node.data.request.usage == {"inputTokens": 3, "outputTokens": 3}  # summed usage wins
    assert both(s.events)[0] == both(s.events)[1]


def test_retry_records_failure_and_keeps_usage():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.usage(1, 1, {"inputTokens": 1, "outputTokens": 1})
    s.texts(1, 1, 0, ["a", "b", "c"])
    s.retry(1, 1, code="AUTH", message="secret")
    (node,) = traj(s.events)
    req = node.data.request
    assert (req.status, req.error, req.errorCode, req.retry, req.maxRetries, req.retryDelayMs) == (
        "error", "", "AUTH", 1, 3, 100)
    assert req.usage == {"inputTokens": 1, "outputTokens": 1}
    assert node.data.partial is None  # no chunk since the retry


def test_closed_without_message_is_a_synthetic_interrupted_error():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["a", "b", "c"])
    end = s.step_end(1, 1)
    (node,) = traj(s.events)
    assert node.data.node.seq == pytest.approx(end - 0.9)
    assert node.data.node.interrupted is True
    assert node.data.request.status == "error"
    assert node.data.request.completedAt == s.events[end]["time"]
    assert node.data.request.resultSeq is msgspec.UNSET


def test_turn_end_node_carries_the_error():
    s = Session()
    s.turn_start(1)
    end = s.turn_end(1, {"kind": "error", "error": {"message": "boom", "code": "E"}})
    (node,) = traj(s.events, "trajectory-turn-end")
    assert node.id == str(end) and node.anchorSeq == end
    assert (node.data.error, node.data.errorCode) == ("boom", "E")
