"""Each chat row's display (``display.DisplayTracker``): decided by the assembler at each flush, so a row's HTML is a
function of that row and what the flush published for it. Followed live one event at a time, the displays the page
holds always equal those of a whole fold of the same events; a row whose display changed because of another one is
published again."""

from __future__ import annotations

from conversation_support import Session, page

from assembler.conversation import ConversationAssembler
from assembler.display import displays_of
from assembler.render import render_node
from assembler.transcript import transcript
from assembler.views import NodeDisplay
from definitions import default_definitions


def two_turns() -> Session:
    s = Session(t0=1_700_000_000_000)
    s.turn_start(1)
    s.user("first")
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["par", "tial", "!"])
    for part in ["{", "\"command\":\"ls\"", "}"]:
        s.tool_delta(1, 1, 1, "call_1", part, name="bash")
    s.message(1, 1, [{"type": "text", "text": "partial!"},
                     {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"}])
    s.add("tool/call", {"turn": 1, "step": 1, "callId": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"})
    s.add("tool/result", {"turn": 1, "step": 1, "message": {"role": "user", "content": [
        {"type": "tool-result", "toolCallId": "call_1", "content": [{"type": "text", "text": "a"}],
         "isError": False}]}}, surfaceOp="append")
    s.step_end(1, 1)
    s.turn_end(1, {"kind": "aborted", "reason": {"kind": "user"}})
    s.turn_start(2)
    s.user("second")
    s.step_start(2, 1)
    s.texts(2, 1, 0, ["do", "ne"])
    s.message(2, 1, [{"type": "text", "text": "done"}])
    s.step_end(2, 1)
    s.turn_end(2)
    return s


def test_live_displays_equal_a_whole_fold_at_every_event() -> None:
    records = page(two_turns().events, "scalar").records
    live = ConversationAssembler(default_definitions())
    live.replace_window([], False)
    live.flush()
    held: dict[str, NodeDisplay] = {}
    for i, record in enumerate(records):
        live.append(record)
        result = live.flush()
        if result is not None and "chat" in result.views:
            update = result.views["chat"]
            assert set(update.display) == {n.key for n in update.nodes}  # every published row has its display
            held.update(update.display)
        whole = ConversationAssembler(default_definitions())
        whole.replace_window(records[:i + 1], False)
        full = whole.flush()
        assert full is not None
        expected = full.views["chat"].display
        assert {k: v for k, v in held.items() if k in expected} == expected, f"after record {i}"


def test_the_turn_heading_opens_the_first_shown_row_and_tails_know_their_start() -> None:
    s = two_turns()
    whole = ConversationAssembler(default_definitions())
    whole.replace_window(page(s.events, "packed").records, False)
    result = whole.flush()
    assert result is not None
    chat, display = transcript(result).chat, result.views["chat"].display
    headings = [(n.kind, display[n.key].turnHeading) for n in chat if display.get(n.key, NodeDisplay()).turnHeading]
    assert headings == [("input-message", 1), ("input-message", 2)]
    [step] = [n for n in chat if n.kind == "assistant-step" and n.location.turn == 1]
    assert display[step.key].hiddenCalls == ["call_1"] and display[step.key].quietInterruption is True
    html = render_node(step, display=display[step.key])
    assert "Interrupted" not in html and "tool-streaming" not in html  # the notice and the tool row say them
    tails = [n for n in chat if n.kind == "turn-tail"]
    starts = [e["time"] for e in s.events if e["type"] == "turn/start"]
    assert [display[n.key].turnStart for n in tails] == starts
    assert displays_of(chat, whole.index.turns) == display  # a scratch decision of the same window agrees


def test_a_row_whose_display_changed_is_published_again() -> None:
    """When the tool row appears, the assistant step it came from is published again: it stops drawing the
    streamed call itself (the page re-renders it because the assembler said so)."""
    records = page(two_turns().events, "scalar").records
    asm = ConversationAssembler(default_definitions())
    cut = next(i for i, r in enumerate(records) if r.event.type == "tool/call")
    asm.replace_window(records[:cut], False)
    asm.flush()
    asm.append(records[cut])
    result = asm.flush()
    assert result is not None
    update = result.views["chat"]
    kinds = {n.kind for n in update.nodes}
    assert {"tool", "assistant-step"} <= kinds
    [step] = [n for n in update.nodes if n.kind == "assistant-step"]
    assert update.display[step.key].hiddenCalls == ["call_1"]


def test_an_earlier_row_takes_the_heading_and_the_old_first_row_is_republished() -> None:
    from assembler.display import DisplayTracker
    from assembler.views import NodeLocation, NoticeData, ViewNode

    def node(key: str, anchor: int) -> ViewNode:
        return ViewNode(key=key, kind="turn-notice", id=key, target="chat", anchorSeq=anchor,
                        location=NodeLocation("turn", turn=1), data=NoticeData(kind="retry", seq=anchor, time=0))

    tracker = DisplayTracker()
    later, earlier = node("b", 10), node("a", 5)
    out, display = tracker.publish([later], True, {})
    assert display["b"].turnHeading == 1
    out, display = tracker.publish([earlier], False, {})
    assert [n.key for n in out] == ["a", "b"]  # b is published again: it no longer opens the turn
    assert display["a"].turnHeading == 1 and display["b"] == NodeDisplay()
