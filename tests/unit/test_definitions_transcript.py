"""The transcript Definitions (ASSEMBLY 5.6): input messages, tools, notices, compaction, fallback."""

from __future__ import annotations

from conversation_support import Session, fold


def chat(events, kind):
    return [n for n in fold(events, "packed").chat if n.kind == kind]


def test_input_message_kinds():
    s = Session()
    s.user("hi")
    s.user("ctx", source={"kind": "plugin", "plugin": "hooks", "form": "reminder"})
    user, context = chat(s.events, "input-message")
    assert user.data.kind == "user" and user.data.blocks[0].text == "hi"
    assert context.data.kind == "context" and context.data.source["form"] == "reminder"


def test_tool_call_and_result_pair_and_errors():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.add("tool/call", {"turn": 1, "step": 1, "callId": "a", "name": "bash", "arguments": "{}"})
    s.add("tool/call", {"turn": 1, "step": 1, "callId": "b", "name": "read", "arguments": "{}"})
    s.add("tool/result", {"turn": 1, "step": 1, "callId": "a", "content": [{"type": "text", "text": "no"}],
                          "isError": True}, surfaceOp="append")
    s.step_end(1, 1)
    s.turn_end(1)
    a, b = chat(s.events, "tool")
    assert (a.data.status, a.data.result.isError, a.data.result.blocks[0].text) == ("error", True, "no")
    assert b.data.status == "interrupted"


def test_notices_for_turn_errors_max_tokens_retry_and_compaction():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.retry(1, 1)
    s.add("compaction/start", {"compactionId": "c1", "turn": 1})
    s.add("compaction/summary", {"compactionId": "c1", "summary": [{"type": "text", "text": "sum"}],
                                 "shadowedRange": {"start": 0, "end": 2}, "shadowedSeqs": [0, 1, 2],
                                 "shadowedTokenCount": 42})
    s.add("compaction/end", {"compactionId": "c1", "turn": 1})
    s.step_end(1, 1)
    s.turn_end(1, {"kind": "max-tokens"})
    s.turn_start(2)
    s.add("turn/end", {"error": "model exploded"})
    notices = chat(s.events, "turn-notice")
    assert [n.data.kind for n in notices] == ["max-tokens", "turn-error"]
    assert notices[1].data.message == "model exploded"
    (retry,) = chat(s.events, "retry-notice")
    assert retry.data.message == "slow down" and retry.data.code == "RATE"
    (comp,) = chat(s.events, "compaction")
    assert comp.data.status == "done" and comp.data.shadowedRange == {"start": 0, "end": 2}
    assert comp.data.summary[0].text == "sum"


def test_unknown_events_are_shown_not_dropped():
    s = Session()
    s.add("plugin/new-thing", {"payload": "x" * 500})
    (node,) = chat(s.events, "event")
    assert node.data.type == "plugin/new-thing" and node.data.truncated is True
    assert len(node.data.summary) == 161
