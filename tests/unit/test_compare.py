"""Comparing two sessions (issue 24): the turn alignment and the per-turn summary (``assembler.compare``), the word
diff (``assembler.textdiff``), and ``transcript-assembler compare`` on real fixtures."""

from __future__ import annotations

from typing import Any

from assembler.commands.exporting import fold_page
from assembler.compare import Comparison, compare
from assembler.history import MessageIndex
from assembler.logfile import parse_session_bytes
from assembler.textdiff import word_diff
from assembler.views import ViewNode
from tests.browser.session_builder import Session


def nodes_of(session: Session) -> list[ViewNode]:
    result = parse_session_bytes(session.to_bytes())
    assert result.ok
    page = MessageIndex(result.records).session_page(None, None, None)
    nodes, _ = fold_page(page.records, page.hasMore)
    return nodes


def turn(s: Session, prompt: str, answer: str, calls: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
         errors: tuple[str, ...] = ()) -> None:
    s.user(prompt)
    if calls:
        s.assistant([("text", "working")], calls=calls)
        for call_id, _name, _args in calls:
            s.tool_result(call_id, "out", is_error=call_id in errors)
        s.end_step()
    s.assistant([("text", answer)])
    s.end_step()
    s.end_turn()


def session(*turns: tuple[Any, ...]) -> list[ViewNode]:
    s = Session()
    for spec in turns:
        turn(s, *spec)
    return nodes_of(s)


BASE = (("list the files", "two files", [("c1", "ls", '{"path": "."}')]),
        ("read the first", "it says hello", [("c2", "read", '{"file": "a"}'), ("c3", "grep", '{"q": "x"}')]),
        ("thanks", "you are welcome"))


def matches(c: Comparison) -> list[str]:
    return [t.match for t in c.turns]


def test_a_session_against_itself_has_no_difference() -> None:
    nodes = session(*BASE)
    c = compare(nodes, nodes)
    assert matches(c) == ["same-prompt"] * 3
    assert all(t.differences == [] for t in c.turns)
    assert c.session.differences == [] and c.session.turns.differing == 0
    assert c.session.a == c.session.b
    assert c.session.a.steps == 5 and c.session.a.toolCalls == 3
    assert c.session.a.tokens.input == 500 and c.session.a.tokens.output == 100  # 5 steps of 100 in, 20 out
    assert c.session.a.durationMs is None and c.session.a.turnsWithDuration == 0  # our test logs record none
    assert [(x.name, x.a, x.b) for x in c.session.tools] == [("ls", 1, 1), ("read", 1, 1), ("grep", 1, 1)]
    assert c.turns[1].finalTextDiff == [("equal", "it says hello")]


def test_an_inserted_turn_is_only_b_and_the_rest_still_match_by_prompt() -> None:
    a = session(*BASE)
    b = session(BASE[0], ("and the hidden ones?", "none"), BASE[1], BASE[2])
    c = compare(a, b)
    assert matches(c) == ["same-prompt", "only-b", "same-prompt", "same-prompt"]
    inserted = c.turns[1]
    assert inserted.a is None and inserted.b is not None and inserted.b.prompt == "and the hidden ones?"
    assert inserted.differences == ["turns"] and inserted.finalTextDiff is None
    assert [t.differences for t in c.turns if t.match == "same-prompt"] == [[], [], []]
    assert c.session.turns.onlyB == 1 and c.session.turns.a == 3 and c.session.turns.b == 4
    assert "turns" in c.session.differences


def test_a_removed_turn_is_only_a() -> None:
    c = compare(session(*BASE), session(BASE[0], BASE[2]))
    assert matches(c) == ["same-prompt", "only-a", "same-prompt"]
    assert c.turns[1].a is not None and c.turns[1].a.prompt == "read the first" and c.turns[1].b is None
    assert c.session.turns.onlyA == 1 and c.session.a.toolCalls == 3 and c.session.b.toolCalls == 1


def test_changed_prompts_pair_by_position_and_say_so() -> None:
    b = session(BASE[0], ("read the FIRST file", "it says hello"), BASE[2])
    c = compare(session(*BASE), b)
    assert matches(c) == ["same-prompt", "position", "same-prompt"]
    assert c.turns[1].differences == ["prompt", "steps", "toolCalls", "toolSequence", "tokens"]
    # Two prompts replaced by three: two pairs by position, then one turn only on B.
    c = compare(session(("x", "1"), ("y", "2")), session(("p", "1"), ("q", "2"), ("r", "3")))
    assert matches(c) == ["position", "position", "only-b"]


def test_reordered_tool_calls_are_flagged() -> None:
    b = session(BASE[0], ("read the first", "it says hello", [("c3", "grep", '{"q": "x"}'),
                                                             ("c2", "read", '{"file": "a"}')]), BASE[2])
    c = compare(session(*BASE), b)
    t = c.turns[1]
    assert t.match == "same-prompt" and t.reordered
    assert t.sequences is not None and (t.sequences.a, t.sequences.b) == (["read", "grep"], ["grep", "read"])
    assert [(x.name, x.a, x.b) for x in t.tools] == [("read", 1, 1), ("grep", 1, 1)]
    assert t.differences == ["toolSequence"]
    assert t.argumentDiffs == []  # different names at each position: not an argument difference
    assert c.turns[0].sequences is None and not c.turns[0].reordered


def test_the_same_tool_with_other_arguments_is_flagged_and_key_order_does_not_count() -> None:
    b = session(("list the files", "two files", [("c1", "ls", '{"path": "/tmp"}')]), *BASE[1:])
    c = compare(session(*BASE), b)
    t = c.turns[0]
    assert t.differences == ["arguments"]
    assert [(d.position, d.name, d.a, d.b) for d in t.argumentDiffs] == [(0, "ls", '{"path": "."}',
                                                                          '{"path": "/tmp"}')]
    spaced = session(("list the files", "two files", [("c1", "ls", '{ "path" :  "." }')]), *BASE[1:])
    assert compare(session(*BASE), spaced).turns[0].argumentDiffs == []


def test_tool_errors_and_final_text_differences() -> None:
    b = session(("list the files", "three files", [("c1", "ls", '{"path": "."}')], ("c1",)), *BASE[1:])
    c = compare(session(*BASE), b)
    t = c.turns[0]
    assert t.a is not None and t.b is not None and (t.a.toolErrors, t.b.toolErrors) == (0, 1)
    assert t.differences == ["toolErrors", "finalText"]
    assert t.finalTextDiff == [("delete", "two"), ("insert", "three"), ("equal", " files")]
    assert c.session.a.toolErrors == 0 and c.session.b.toolErrors == 1


def test_one_side_empty() -> None:
    a = session(*BASE)
    c = compare(a, [])
    assert matches(c) == ["only-a"] * 3
    assert c.session.b.turns == 0 and c.session.b.tokens.input is None and c.session.b.turnsWithUsage == 0
    assert c.session.finalText.b is None and c.session.finalText.a == "you are welcome"
    assert c.session.finalTextDiff == [("delete", "you are welcome")]
    assert c.session.differences == ["turns", "finalText"]
    assert matches(compare([], a)) == ["only-b"] * 3
    empty = compare([], [])
    assert empty.turns == [] and empty.session.differences == [] and empty.session.finalTextDiff is None


def test_word_diff_runs_rebuild_both_texts() -> None:
    a, b = "the quick brown fox jumps over the lazy dog", "the slow brown cat jumps over a lazy dog today"
    runs = word_diff(a, b)
    assert "".join(t for op, t in runs if op != "insert") == a
    assert "".join(t for op, t in runs if op != "delete") == b
    assert ("delete", "quick") in runs and ("insert", "slow") in runs
    # A whitespace-only run between two changes joins them into one change.
    assert word_diff("a b", "x y") == [("delete", "a b"), ("insert", "x y")]
    assert word_diff("", "") == []
