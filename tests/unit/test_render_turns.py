"""Turn structure and honest numbers in the rendered chat: tail figures only from recorded times, usage as recorded,
one "Interrupted", the turn divider, plurals, Think bodies without their title, the turn error's own message."""

from __future__ import annotations

from conversation_support import Session, fold, view_node

from assembler.display import displays_of
from assembler.render import render_node, render_section
from assembler.views import (
    CompactionData,
    NodeDisplay,
    NoticeData,
    ReasoningBlockView,
    RecordedUsage,
    TurnTailData,
    is_recorded_time,
)


def html_of(t, kind: str) -> list[str]:
    shown = displays_of(t.chat, {})
    return [render_node(n, display=shown.get(n.key)) for n in t.chat if n.kind == kind]


def one_turn(t0: int) -> Session:
    s = Session(t0=t0)
    s.turn_start(1)
    s.user("hi")
    s.step_start(1, 1)
    s.text(1, 1, 0, "hello", dt=40)
    s.message(1, 1, [{"type": "text", "text": "hello"}], usage={"inputTokens": 1200, "outputTokens": 30})
    s.step_end(1, 1)
    s.turn_end(1)
    return s


def test_is_recorded_time_separates_clocks_from_counters() -> None:
    assert is_recorded_time(1_700_000_000_000)
    assert not is_recorded_time(0) and not is_recorded_time(4_000) and not is_recorded_time(None)
    assert not is_recorded_time("1700000000000")


def test_rebuilt_times_show_counts_and_usage_but_no_durations() -> None:
    t = fold(one_turn(0).events, "packed")
    [tail] = html_of(t, "turn-tail")
    assert "Ran for" not in tail and "TTFT" not in tail and "tok/s" not in tail and "tail-clock" not in tail
    assert "1 step" in tail and "Input 1,200 tok" in tail and "Output 30 tok" in tail and ">m<" in tail


def test_recorded_times_show_duration_and_ttft() -> None:
    s = one_turn(1_700_000_000_000)
    t = fold(s.events, "packed")
    shown = NodeDisplay(turnStart=s.events[0]["time"])
    tail = next(render_node(n, display=shown) for n in t.chat if n.kind == "turn-tail")
    assert "Ran for" in tail and "TTFT 40 ms" in tail


def test_rebuilt_start_time_gives_no_ran_for_even_with_a_recorded_end() -> None:
    data = TurnTailData(turn=1, seq=5, time=1_700_000_000_000, closing=None, branchUnavailable=True)
    out = render_node(view_node("turn-tail", data), display=NodeDisplay(turnStart=0))
    assert "Ran for" not in out


def test_usage_subset_shows_every_recorded_field() -> None:
    usage = RecordedUsage(messages=2, inputTokens=10, outputTokens=5, cacheReadTokens=3, reasoningTokens=2)
    data = TurnTailData(turn=1, seq=5, time=0, closing=None, branchUnavailable=True, usage=usage)
    out = render_node(view_node("turn-tail", data))
    assert "Input 10 tok" in out and "Cache read 3 tok" in out and "Reasoning 2 tok" in out
    assert "Cache write" not in out


def test_one_interrupted_per_interruption() -> None:
    s = Session()
    s.turn_start(1)
    s.user("go")
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["par", "tial", "!"])
    s.step_end(1, 1)
    s.turn_end(1, {"kind": "aborted", "reason": {"kind": "user"}})
    t = fold(s.events, "packed")
    displays = displays_of(t.chat, {})
    shown = "".join(render_node(n, display=displays.get(n.key)) for n in t.chat)
    assert shown.count("Interrupted") == 1
    assert t.chat[-1].kind == "turn-tail"  # after the notice


def test_turn_divider_on_the_first_row_of_each_turn() -> None:
    s = one_turn(0)
    s.turn_start(2)
    s.user("again")
    s.turn_end(2)
    t = fold(s.events, "packed")
    displays = displays_of(t.chat, {})
    shown = [render_node(n, display=displays.get(n.key)) for n in t.chat]
    dividers = [h for h in shown if "turn-divider" in h]
    assert len(dividers) == 2 and "Turn 1" in dividers[0] and "Turn 2" in dividers[1]
    assert shown[0].startswith('<div class="turn-divider"')


def test_compaction_count_is_pluralised() -> None:
    def line(start: int, end: int) -> str:
        data = CompactionData(kind="compaction", seq=1, time=0, status="done",
                              shadowedRange={"start": start, "end": end})
        return render_node(view_node("compaction", data))

    assert "Compacted 1 history item<" in line(3, 3) or "Compacted 1 history item " in line(3, 3)
    assert "Compacted 2 history items" in line(3, 4)


def test_think_body_does_not_repeat_its_title() -> None:
    from test_render import step

    node = step(ReasoningBlockView("Plan the change\nFirst read the file.\nThen edit it."))
    head = render_node(node)
    assert "Plan the change" in head
    body = render_section(node, 0)
    assert "Plan the change" not in body and "First read the file." in body
    full = render_node(node, lazy=False, limit=None)
    assert full.count("Plan the change") == 1


def test_turn_error_shows_the_errors_own_message() -> None:
    s = Session()
    s.turn_start(1)
    s.user("go")
    s.turn_end(1, {"kind": "error", "error": {"message": "API key is invalid", "code": "AUTH"}})
    t = fold(s.events, "packed")
    [notice] = [n for n in t.chat if n.kind == "turn-notice"]
    assert type(notice.data) is NoticeData and notice.data.errorMessage == "API key is invalid"
    assert "API key is invalid" in render_node(notice) and "AUTH" in render_node(notice)


def test_a_long_first_paragraph_is_shown_once_title_then_body() -> None:
    """The title shows the first line up to a word boundary; the body goes on from there (never the whole line
    again, never a word lost)."""
    from test_render import step

    words = [f"word{i}" for i in range(60)]
    node = step(ReasoningBlockView(" ".join(words) + "\nSecond paragraph."))
    full = render_node(node, lazy=False, limit=None)
    import re

    for w in words:
        assert len(re.findall(rf"\b{w}\b", full)) == 1, w
    assert "think-continued" in full and "Second paragraph." in full
    body = render_section(node, 0)
    assert "word0 " not in body and "word59" in body
