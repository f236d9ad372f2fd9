"""Turn Tail (ASSEMBLY 5.4): closing anchor, TTFT and tokens/s, usage that ignores rows, branch availability."""

from __future__ import annotations

import msgspec
import pytest
from conversation_support import Session, both, fold

USAGE = {"inputTokens": 10, "outputTokens": 20, "cacheReadTokens": 1, "cacheWriteTokens": 2}


def tail(events, mode="packed"):
    t = fold(events, mode)
    nodes = [n for n in t.chat if n.kind == "turn-tail"]
    return nodes[0] if nodes else None


def one_turn(text_parts=("Hel", "lo", "!"), final=True) -> Session:
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0,
                                                             "blockType": "text"}}, dt=100)
    for part in text_parts:
        s.text(1, 1, 0, part, dt=10)
    s.usage(1, 1, USAGE)
    if final:
        s.message(1, 1, [{"type": "text", "text": "".join(text_parts)}], usage=USAGE)
    s.step_end(1, 1)
    s.turn_end(1)
    return s


def test_ttft_tokens_per_second_and_usage():
    s = one_turn()
    packed, scalar = both(s.events)
    assert packed == scalar
    node = tail(s.events)
    data = node.data
    step_start = s.events[1]["time"]
    first_token = s.events[3]["time"]
    completed = s.events[7]["time"]
    assert data.ttftMs == first_token - step_start
    assert data.tokensPerSecond == 20 / ((completed - first_token) / 1000)
    assert data.tokenUsage.uncachedInputTokens == 10
    assert data.tokenUsage.totalTokens == 10 + 1 + 2 + 20
    assert data.tokenUsage.routes[0].provider == "p"
    assert data.closing.seq == 7 and data.branchUnavailable is False
    # the tail is the last row of its turn: anchored just after turn/end (deviation from ASSEMBLY 5.4's 7.1)
    assert node.anchorSeq == pytest.approx(s.events[-1]["seq"] + 0.5)
    assert (data.steps, data.toolCalls) == (1, 0)
    assert (data.usage.inputTokens, data.usage.outputTokens, data.usage.messages) == (10, 20, 1)
    assert data.models == ["m"]  # the message's source model


def test_usage_ignores_rows_and_is_the_same_both_ways():
    s = one_turn(text_parts=("a", "b", "c", "d", "e"))
    p, sc = both(s.events)
    assert p == sc
    assert tail(s.events, "packed").data.tokenUsage == tail(s.events, "scalar").data.tokenUsage


def test_missing_turn_end_means_no_tail():
    s = one_turn()
    assert tail(s.events[:-1]) is None


def test_streamed_text_without_message_still_anchors_at_the_turn_end():
    s = one_turn(final=False)
    node = tail(s.events)
    step_end = s.events[-2]["seq"]
    assert node.anchorSeq == pytest.approx(s.events[-1]["seq"] + 0.5)
    # the synthetic interrupted node counts as finalized and closes the turn
    assert node.data.closing.seq == pytest.approx(step_end - 0.9)
    assert node.data.tokenUsage.totalTokens == 33  # the attempt closed at step/end with its usage sample
    assert node.data.tokenUsage.routes is msgspec.UNSET  # no message, no route
    assert both(s.events)[0] == both(s.events)[1]


def test_tool_call_after_closing_makes_branch_unavailable():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.message(1, 1, [{"type": "text", "text": "x"}])
    s.add("tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "n", "arguments": "{}"})
    s.step_end(1, 1)
    s.turn_end(1)
    assert tail(s.events).data.branchUnavailable is True


def test_ttft_comes_from_the_lowest_step():
    s = Session()
    s.turn_start(1)
    for step, gap in ((1, 50), (2, 5)):
        s.step_start(1, step)
        s.text(1, step, 0, "x", dt=gap)
        s.message(1, step, [{"type": "text", "text": "x"}], usage=USAGE)
        s.step_end(1, step)
    s.turn_end(1)
    assert tail(s.events).data.ttftMs == 50


def test_rebuilt_times_give_no_ttft_or_throughput():
    """A projected log's times are rebuilt from 0 (PROTOCOL 2.3): no TTFT or tokens/s from them, counts instead."""
    s = Session(t0=0)
    s.turn_start(1)
    s.step_start(1, 1)
    s.text(1, 1, 0, "x", dt=50)
    s.message(1, 1, [{"type": "text", "text": "x"}], usage={"inputTokens": 7, "outputTokens": 3})
    s.step_end(1, 1)
    s.turn_end(1)
    data = tail(s.events).data
    assert data.ttftMs is msgspec.UNSET and data.tokensPerSecond is msgspec.UNSET
    assert data.steps == 1
    # the strict ASSEMBLY usage needs cache read and write (or a total); the recorded subset still shows
    assert data.tokenUsage is msgspec.UNSET
    assert msgspec.to_builtins(data.usage) == {"messages": 1, "inputTokens": 7, "outputTokens": 3}


def test_recorded_usage_keeps_only_fields_every_message_has():
    s = Session()
    s.turn_start(1)
    for step, usage in ((1, {"inputTokens": 5, "outputTokens": 1, "reasoningTokens": 1}),
                        (2, {"inputTokens": 6, "outputTokens": 2})):
        s.step_start(1, step)
        s.message(1, step, [{"type": "text", "text": "x"}], usage=usage)
        s.step_end(1, step)
    s.turn_end(1)
    usage = tail(s.events).data.usage
    assert msgspec.to_builtins(usage) == {"messages": 2, "inputTokens": 11, "outputTokens": 3}
