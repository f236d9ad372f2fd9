"""Comparing two sessions (issue 24): the turn alignment and the per-turn summary (``assembler.compare``), the word
diff (``assembler.textdiff``), and ``transcript-assembler compare`` on real fixtures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.commands.exporting import fold_page
from assembler.compare import compare
from assembler.comparison import Comparison
from assembler.history import MessageIndex
from assembler.logfile import parse_session_bytes
from assembler.textdiff import word_diff
from assembler.views import ViewNode
from tests.browser.session_builder import Session
from tests.corpus import FIXTURES, require_corpus
from tests.inspect_samples import agent_sample, log_doc
from tests.interop_support import interop_file


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


def test_turns_without_a_prompt_match_each_other_never_a_prompt() -> None:
    def build(first: str) -> list[ViewNode]:
        s = Session()
        turn(s, first, "ok")
        s.user("the background task finished", source={"kind": "plugin", "plugin": "tasks", "form": "notice"})
        s.assistant([("text", "noted")])
        s.end_step()
        s.end_turn()
        return nodes_of(s)

    nodes = build("start")
    c = compare(nodes, nodes)
    assert matches(c) == ["same-prompt", "same-prompt"] and c.session.differences == []
    assert c.turns[1].a is not None and c.turns[1].a.prompt is None
    c = compare(nodes, session(("start", "ok"), ("noted", "noted")))
    assert matches(c) == ["same-prompt", "position"]


def test_word_diff_runs_rebuild_both_texts() -> None:
    a, b = "the quick brown fox jumps over the lazy dog", "the slow brown cat jumps over a lazy dog today"
    runs = word_diff(a, b)
    assert "".join(t for op, t in runs if op != "insert") == a
    assert "".join(t for op, t in runs if op != "delete") == b
    assert ("delete", "quick") in runs and ("insert", "slow") in runs
    # A whitespace-only run between two changes joins them into one change.
    assert word_diff("a b", "x y") == [("delete", "a b"), ("insert", "x y")]
    assert word_diff("", "") == []


def test_every_aspect_has_words() -> None:
    from assembler.comparison import DIFFERENCE_ASPECTS
    from assembler.render.compare import ASPECT_LABELS, aspect_labels

    assert set(ASPECT_LABELS) == set(DIFFERENCE_ASPECTS)
    assert aspect_labels(["toolSequence", "finalText"]) == ["call order", "final text"]


def test_a_deletion_and_the_insertion_after_it_are_rendered_apart() -> None:
    from assembler.render.compare import _diff_html, _diff_md

    runs = word_diff("the cat sat", "the dog sat")
    assert runs == [("equal", "the "), ("delete", "cat"), ("insert", "dog"), ("equal", " sat")]
    assert _diff_html(runs).endswith(">the <del>cat</del> <ins>dog</ins> sat</div>")
    assert _diff_md(runs) == "the ~~cat~~ **dog** sat"
    # Joined changes (whitespace folded in) and a change at the very start are spaced the same way.
    assert _diff_md(word_diff("a b", "x y")) == "~~a b~~ **x y**"
    # No space where one side already has whitespace at the join, nor between an insertion and a deletion.
    assert _diff_md([("delete", "one "), ("insert", "two")]) == "~~one~~ **two**"
    assert _diff_md([("delete", "one"), ("insert", "\ntwo")]) == "~~one~~\n**two**"
    assert _diff_md([("insert", "new"), ("equal", " "), ("delete", "old")]) == "**new** ~~old~~"
    assert "<ins>x</ins><del>y</del>" in _diff_html([("insert", "x"), ("delete", "y")])


# ---- the command


SNAPSHOTS = "examples/acp-agent/tests/snapshots/"
CLAUDE = ("claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data/real_projects/"
          "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl")
TURN_KEYS = ["index", "match", "a", "b", "tools", "sequences", "reordered", "argumentDiffs", "finalTextDiff",
             "differences"]
SIDE_KEYS = ["turn", "prompt", "steps", "toolCalls", "toolErrors", "retries", "tokens", "durationMs", "finalText"]
TOTAL_KEYS = ["turns", "steps", "toolCalls", "toolErrors", "retries", "tokens", "durationMs", "turnsWithUsage",
              "turnsWithDuration"]
TOKEN_KEYS = ["input", "output", "cacheRead", "cacheWrite"]


def ours(relative: str) -> Path:
    require_corpus()
    path = FIXTURES / relative
    assert path.is_file(), path
    return path


def run_json(tmp_path: Path, *args: str, code: int = 0) -> dict[str, Any]:
    out = tmp_path / "cmp.json"
    assert main(["compare", *args, "-o", str(out)]) == code
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    check_structure(doc)
    return doc


def check_structure(doc: dict[str, Any]) -> None:
    """Every key present, in the documented order; the counts agree with the turns."""
    assert list(doc) == ["a", "b", "session", "turns"]
    for source in (doc["a"], doc["b"]):
        assert list(source) == ["file", "session", "title"]
    s = doc["session"]
    assert list(s) == ["turns", "a", "b", "tools", "finalText", "finalTextDiff", "differences"]
    assert list(s["turns"]) == ["a", "b", "samePrompt", "position", "onlyA", "onlyB", "differing"]
    for side in ("a", "b"):
        assert list(s[side]) == TOTAL_KEYS and list(s[side]["tokens"]) == TOKEN_KEYS
    turns = doc["turns"]
    assert [t["index"] for t in turns] == list(range(len(turns)))
    for t in turns:
        assert list(t) == TURN_KEYS
        for side in ("a", "b"):
            if t[side] is not None:
                assert list(t[side]) == SIDE_KEYS and list(t[side]["tokens"]) == TOKEN_KEYS
        assert (t["a"] is None) == (t["match"] == "only-b") and (t["b"] is None) == (t["match"] == "only-a")
        for op, text in t["finalTextDiff"] or []:
            assert op in ("equal", "insert", "delete") and type(text) is str
    counts = s["turns"]
    matches = [t["match"] for t in turns]
    assert counts["a"] == sum(1 for t in turns if t["a"] is not None) == s["a"]["turns"]
    assert counts["b"] == sum(1 for t in turns if t["b"] is not None) == s["b"]["turns"]
    assert [counts["samePrompt"], counts["position"], counts["onlyA"], counts["onlyB"]] == [
        matches.count("same-prompt"), matches.count("position"), matches.count("only-a"), matches.count("only-b")]
    for side in ("a", "b"):
        present = [t[side] for t in turns if t[side] is not None]
        assert s[side]["steps"] == sum(x["steps"] for x in present)
        assert s[side]["toolCalls"] == sum(x["toolCalls"] for x in present) == sum(x[side] for x in s["tools"])
        # A side's turns keep their order.
        assert [x["turn"] for x in present] == sorted(x["turn"] for x in present)


def test_cli_a_fixture_against_itself_reports_no_difference(tmp_path: Path) -> None:
    log = ours(SNAPSHOTS + "subagent-report/session.jsonl")
    doc = run_json(tmp_path, str(log), str(log))
    assert len(doc["turns"]) == 3 and all(t["match"] == "same-prompt" for t in doc["turns"])
    assert all(t["differences"] == [] and t["argumentDiffs"] == [] and t["sequences"] is None for t in doc["turns"])
    assert doc["session"]["differences"] == [] and doc["session"]["turns"]["differing"] == 0
    assert doc["session"]["a"] == doc["session"]["b"]
    assert doc["session"]["a"]["toolCalls"] >= 1 and doc["session"]["a"]["tokens"]["input"] is not None


def test_cli_two_fixtures_in_json_markdown_and_html(tmp_path: Path) -> None:
    a, b = ours(SNAPSHOTS + "subagent-report/session.jsonl"), ours(SNAPSHOTS + "multi-turn/session.jsonl")
    doc = run_json(tmp_path, str(a), str(b))
    assert doc["session"]["turns"]["a"] == 3 and doc["session"]["turns"]["b"] == 2
    assert "turns" in doc["session"]["differences"] and doc["session"]["turns"]["differing"] >= 1
    assert [(t["name"], t["a"], t["b"]) for t in doc["session"]["tools"]] == [("subagent", 1, 0)]
    prompt_b = doc["turns"][0]["b"]["prompt"]
    md, html = tmp_path / "cmp.md", tmp_path / "cmp.html"
    assert main(["compare", str(a), str(b), "-o", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# ") and "| Session | A | B |" in text and "| Turns | 3 | 2 |" in text
    assert text.count("\n## ") == len(doc["turns"]) and "### Final text A" in text
    assert main(["compare", str(a), str(b), "-o", str(html)]) == 0
    page = html.read_text(encoding="utf-8")
    assert "script-src" not in page and "default-src 'none'" in page and "<script" not in page
    assert page.count('<section class="compare-turn"') == len(doc["turns"])
    assert page.count('<div class="compare-columns">') == len(doc["turns"])
    assert 'class="node kind-input-message"' in page and 'class="node kind-assistant-step"' in page
    assert prompt_b.split()[0] in page


def test_cli_claude_code_against_ours(tmp_path: Path) -> None:
    claude = interop_file(CLAUDE)
    log = ours(SNAPSHOTS + "multi-turn/session.jsonl")
    doc = run_json(tmp_path, str(claude), str(log))
    first = doc["turns"][0]
    assert first["match"] == "position" and first["a"]["prompt"].startswith("Use the Explore task")
    assert ("Task", 1, 0) in [(t["name"], t["a"], t["b"]) for t in doc["session"]["tools"]]
    assert doc["session"]["finalText"]["a"] and doc["session"]["finalTextDiff"][0][0] == "delete"
    html = tmp_path / "cc.html"
    assert main(["compare", str(claude), str(log), "-o", str(html)]) == 0
    assert 'class="node kind-tool"' in html.read_text(encoding="utf-8")


def test_cli_json_on_stdout_by_default(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    log = ours(SNAPSHOTS + "multi-turn/session.jsonl")
    assert main(["compare", str(log), str(log)]) == 0
    doc = json.loads(capsysbinary.readouterr().out)
    check_structure(doc)
    assert doc["session"]["differences"] == []


def test_cli_picks_sessions_of_a_file_holding_several(tmp_path: Path) -> None:
    src = tmp_path / "run.json"
    src.write_text(json.dumps(log_doc([agent_sample(1, 1), agent_sample(2, 1)])), encoding="utf-8")
    doc = run_json(tmp_path, str(src), str(src), "--session-a", "1_epoch_1", "--session-b", "2_epoch_1")
    assert (doc["a"]["session"], doc["b"]["session"]) == ("1_epoch_1", "2_epoch_1")
    assert doc["session"]["a"]["toolCalls"] == 2 and doc["session"]["a"]["toolErrors"] == 1


def test_cli_bad_input_names_the_line_and_still_compares(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    for spec in BASE:
        turn(s, *spec)
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_bytes(s.to_bytes())
    lines = s.to_bytes().split(b"\n")
    cut = next(i for i, line in enumerate(lines) if b"read the first" in line)
    bad.write_bytes(b"\n".join([*lines[:cut], b"{broken", *lines[cut + 1:]]))
    doc = run_json(tmp_path, str(good), str(bad), code=1)
    assert f"{bad}:{cut + 1}: error:" in capsys.readouterr().err
    assert doc["session"]["turns"]["b"] == 1 and doc["turns"][0]["match"] == "same-prompt"
    assert main(["compare", str(good), str(good), "-o", str(tmp_path / "x.txt")]) == 2
    assert main(["compare", str(good), str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "y.json")]) == 1
    assert not (tmp_path / "y.json").exists()


def test_renderings_escape_what_the_logs_say() -> None:
    from assembler.render.compare import render_comparison_html, render_comparison_markdown

    a = session(("<b>bold</b> & *stars*", "<img src=x onerror=alert(1)> one", [("c1", "<tool>", '{"q": "<i>"}')]))
    b = session(("<b>bold</b> & *stars*", "<img src=x onerror=alert(1)> two", [("c1", "<tool>", '{"q": "<u>"}')]))
    c = compare(a, b)
    assert c.turns[0].differences == ["arguments", "finalText"]
    page = render_comparison_html(c, title="<t>", label_a="<a>", label_b="<b2>", nodes_a=a, nodes_b=b)
    for raw in ("<img", "<b>bold", "<tool>", "<i>", "<t>", "<a>", "<b2>"):
        assert raw not in page, raw
    assert "&lt;img src=x onerror=alert(1)&gt; " in page and "<del>one</del> <ins>two</ins>" in page
    md = render_comparison_markdown(c, title="<t>", label_a="<a>", label_b="<b2>")
    assert re.search(r"(?<!\\)<(img|b>|t>|a>)", md) is None  # escaped as \< or &lt; everywhere
    assert "~~one~~ **two**" in md and r"\*stars\*" in md
