"""Chat Assistant (ASSEMBLY 5.3): scalar and packed folds, visibility, first token, retry, interruption."""

from __future__ import annotations

import msgspec
import pytest
from conversation_support import T0, Session, both, fold, page, row_count

from assembler.conversation import ConversationAssembler
from assembler.records import decode_page
from assembler.text import JS_WHITESPACE, is_blank
from definitions import ChatAssistant, TrajectoryAssistant
from perf.synthetic import whitespace_prefix_page


def chat_state(events, mode):
    asm = ConversationAssembler([ChatAssistant()])
    asm.replace_window(page(events, mode).records, False)
    return asm


def chat_nodes(events, mode="packed"):
    return [n for n in fold(events, mode).chat if n.kind == "assistant-step"]


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_whitespace_prefix_row_first_visible_is_last_member(n):
    # ASSEMBLY 5.7: N-1 fragments ' ' then 'x' in one row.
    p = decode_page(msgspec.json.encode(whitespace_prefix_page(n)))
    for definition in (ChatAssistant(), TrajectoryAssistant()):
        asm = ConversationAssembler([definition])
        asm.replace_window(p.records, False)
        (ctx,) = asm.contexts.values()
        stream = ctx.state.stream
        row = p.records[1].event
        assert stream.first_visible_seq == row.seq + n - 1
        assert stream.first_visible_time == row.time + sum(row.data.dt[: n - 1])
        assert stream.first_token_time == row.time
        assert stream.visible_blocks == 1


def test_whitespace_prefix_row_equals_member_by_member_fold():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, [" "] * 40 + ["x"], kind="reasoning")
    packed, scalar = both(s.events)
    assert packed == scalar
    assert row_count(page(s.events, "packed")) == 1
    (node,) = chat_nodes(s.events)
    assert node.data.firstVisibleSeq == 41
    assert node.data.firstTokenTime == T0 + 2


def test_blank_uses_the_js_trim_set():
    assert is_blank("\ufeff \u3000\u2028")
    assert not is_blank("\u0085")  # Python strips NEL, JS does not
    assert not is_blank("\x1c")
    assert "\ufeff" in JS_WHITESPACE and "\u0085" not in JS_WHITESPACE


def test_feff_prefix_is_not_visible_but_nel_is():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["\ufeff", "\ufeff", "\ufeff", "\u0085"])
    packed, scalar = both(s.events)
    assert packed == scalar
    (node,) = chat_nodes(s.events)
    assert node.data.firstVisibleSeq == 4


def test_empty_fragment_is_not_a_token_but_space_is():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["", "", " ", "a"])
    packed, scalar = both(s.events)
    assert packed == scalar
    (node,) = chat_nodes(s.events)
    assert node.data.firstTokenTime == s.events[3]["time"]
    assert node.data.firstVisibleSeq == 4


def test_tool_call_fields_and_name_mid_run():
    s = Session()
    s.step_start(1, 1)
    s.tool_delta(1, 1, 0, "", "{")
    s.tool_delta(1, 1, 0, "call_1", "\"a\"")
    s.tool_delta(1, 1, 0, "call_2", ":1")
    for part in ["", ",", "\"b\":2", "}"]:
        s.tool_delta(1, 1, 0, "call_1", part, name="bash")
    packed, scalar = both(s.events)
    assert packed == scalar
    assert row_count(page(s.events, "packed")) >= 1
    for mode in ("packed", "scalar"):
        (ctx,) = chat_state(s.events, mode).contexts.values()
        (block,) = ctx.state.stream.views()
        assert (block.callId, block.name, block.argsRaw) == ("call_1", "bash", "{\"a\":1,\"b\":2}")
        assert ctx.state.stream.first_token_time == s.events[1]["time"]  # the first non-empty argumentsDelta
        assert ctx.state.stream.visible_blocks == 0


def test_tool_only_running_step_has_no_chat_node():
    s = Session()
    s.step_start(1, 1)
    for part in ["{", "}", " "]:
        s.tool_delta(1, 1, 0, "c", part, name="x")
    assert chat_nodes(s.events) == []


def test_retry_resets_but_keeps_first_token_time():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["he", "ll", "o"])
    s.retry(1, 1)
    asm = chat_state(s.events, "packed")
    (ctx,) = asm.contexts.values()
    assert ctx.state.hidden is True
    assert ctx.state.stream.blocks == {}
    assert ctx.state.stream.first_visible_seq is None
    assert ctx.state.stream.first_token_time == s.events[1]["time"]
    # fresh replace: hidden and no node yet -> no node
    assert chat_nodes(s.events) == []
    s.texts(1, 1, 0, ["  ", "again", "!"])
    packed, scalar = both(s.events)
    assert packed == scalar
    (node,) = chat_nodes(s.events)
    assert node.data.firstTokenTime == s.events[1]["time"]
    assert node.data.firstVisibleSeq == 6
    assert node.visibility == "visible"


def test_running_step_whose_visible_block_empties_is_hidden_in_a_fresh_fold():
    # Nothing visible any more, but something was (firstVisibleSeq set): the node stays, hidden, in any fold.
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["he", "llo"])
    s.chunk(1, 1, {"type": "block-start", "index": 0, "blockType": "reasoning"})
    packed, scalar = both(s.events)
    assert packed == scalar
    (node,) = chat_nodes(s.events)
    assert (node.visibility, node.data.status, node.anchorSeq, node.data.firstVisibleSeq) == ("hidden", "running", 1, 1)
    # a retry clears firstVisibleSeq: a fresh fold has no node (the reference's rule)
    s.retry(1, 1)
    assert chat_nodes(s.events) == []


def test_interrupted_by_turn_end_gives_synthetic_node():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["par", "tial", " text"])
    end = s.turn_end(1, {"kind": "aborted", "reason": {"kind": "user"}})
    packed, scalar = both(s.events)
    assert packed == scalar
    (node,) = chat_nodes(s.events)
    assert node.data.status == "interrupted"
    assert node.anchorSeq == pytest.approx(end - 0.9)
    assert node.data.finalNode.seq == pytest.approx(end - 0.9)
    assert node.data.finalNode.time == s.events[end]["time"]
    assert node.data.finalNode.messageId is msgspec.UNSET
    assert node.visibility == "visible"


def test_step_end_boundary_wins_over_turn_end():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["a", "b", "c"])
    end = s.step_end(1, 1)
    s.turn_end(1)
    (node,) = chat_nodes(s.events)
    assert node.data.finalNode.seq == pytest.approx(end - 0.9)


def test_blank_only_text_is_no_interruption_evidence():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.texts(1, 1, 0, [" ", "\n", " "])
    s.turn_end(1)
    assert chat_nodes(s.events) == []


def test_settled_message_replaces_blocks_and_tool_only_message_is_hidden():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["x", "y", "z"])
    s.message(1, 1, [{"type": "tool-call", "id": "c", "name": "n", "arguments": "{}"}],
              usage={"inputTokens": 1, "outputTokens": 2})
    (node,) = chat_nodes(s.events)
    assert node.data.status == "settled"
    assert node.visibility == "hidden"
    assert node.data.finalNode.timing.stepStartTime == s.events[0]["time"]
    assert node.data.finalNode.timing.firstTokenTime == s.events[1]["time"]
    assert node.data.usage == {"inputTokens": 1, "outputTokens": 2}


def test_usage_chunk_replaces_usage():
    s = Session()
    s.step_start(1, 1)
    s.text(1, 1, 0, "a")
    s.usage(1, 1, {"inputTokens": 1, "outputTokens": 1})
    s.usage(1, 1, {"inputTokens": 5, "outputTokens": 7})
    (node,) = chat_nodes(s.events)
    assert node.data.usage == {"inputTokens": 5, "outputTokens": 7}


def test_block_kind_change_restarts_text():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["a", "b", "c"], kind="reasoning")
    s.texts(1, 1, 0, [" ", " ", "d"], kind="text")
    packed, scalar = both(s.events)
    assert packed == scalar
    (node,) = chat_nodes(s.events)
    assert [(b.kind if hasattr(b, "kind") else type(b).__name__) for b in node.data.blocks]
    assert node.data.blocks[0].text == "  d"
    assert node.data.firstVisibleSeq == 1


def test_other_block_start_is_visible_at_once():
    s = Session()
    s.step_start(1, 1)
    s.chunk(1, 1, {"type": "block-start", "index": 0, "blockType": "image"})
    (node,) = chat_nodes(s.events)
    assert node.data.firstVisibleSeq == 1
    assert type(node.data.blocks[0]).__name__ == "OtherBlockView"


def test_orphan_chunks_use_the_fallback_fold():
    s = Session()
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["a", "b", "c"])
    events = s.events[1:]  # the step/start is outside the window
    p_packed = decode_page(msgspec.json.encode({"records": [
        {"type": "event", "event": e} for e in events], "hasMore": True}))
    asm = ConversationAssembler([ChatAssistant()])
    asm.replace_window(p_packed.records, True)
    (ctx,) = asm.contexts.values()
    assert ctx.state is None and ctx.start is None and len(ctx.matches) == 3
    result = asm.flush()
    (node,) = result.views["chat"].nodes
    assert node.data.blocks[0].text == "abc"
    assert node.data.finalNode is msgspec.UNSET
