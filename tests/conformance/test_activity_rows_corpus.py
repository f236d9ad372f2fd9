"""Events users care about, as read-only chat rows, each on a real log that contains it: approvals asked and decided,
goals, hook blocks, the context overflow that triggered a compaction, subagents (with what links a parent's call to
its child session), and questions asked to the user with their answer."""

from __future__ import annotations

import json

import pytest
from conversation_support import assemble_page, page
from corpus import FIXTURES, require_corpus
from msgspec import UNSET

from assembler.display import displays_of
from assembler.render import render_markdown, render_node, render_section
from assembler.store.jsonl import read_session

SNAP = "examples/acp-agent/tests/snapshots"


def chat(rel: str):
    path = FIXTURES / rel
    if not path.exists():
        pytest.fail(f"{rel} is missing from the corpus")
    t = assemble_page(page(read_session(path).records, "packed"))
    return t, displays_of(t.chat, {})


def rows(rel: str, kind: str):
    t, ctx = chat(rel)
    return [(n, render_node(n, display=ctx.get(n.key))) for n in t.chat if n.kind == kind]


def test_approval_asked_and_decided() -> None:
    require_corpus()
    [(node, html)] = rows(f"{SNAP}/escalation-approved/session.jsonl", "approval")
    assert node.data.status == "allowed-once" and "Approval for bash" in html and "allowed-once" in html
    assert "escalate sandbox to danger-full-access" in html
    outcomes = set()
    for path in FIXTURES.rglob("*.jsonl"):
        if b"approval/asked" in path.read_bytes():
            t, _ = chat(str(path.relative_to(FIXTURES)))
            outcomes.update(n.data.status for n in t.chat if n.kind == "approval")
    assert "rejected" in outcomes  # a refusal shows as such too


def test_a_call_that_waited_for_approval_says_so_on_its_row() -> None:
    """The tool row of a call an ``approval/asked`` names (``callId``) is marked and says why, in HTML and Markdown;
    every approval with a call id in the corpus marks its call's row, and no row is made of an approval alone."""
    require_corpus()
    [(node, html)] = rows(f"{SNAP}/escalation-approved/session.jsonl", "tool")
    assert node.data.approval is not UNSET and node.data.approval.seq < (node.data.result.seq)
    summary = html.split("<summary>", 1)[1].split("</summary>", 1)[0]
    assert "needed approval" in summary
    assert "Asked for approval" in html and "escalate sandbox to danger-full-access" in html
    t, _ = chat(f"{SNAP}/escalation-approved/session.jsonl")
    assert "(needed approval)" in render_markdown(t.chat, title="x")
    checked = 0
    for path in FIXTURES.rglob("*.jsonl"):
        raw = path.read_bytes()
        if b"approval/asked" not in raw:
            continue
        asked = {json.loads(line)["data"].get("callId") for line in raw.splitlines()
                 if b'"approval/asked"' in line}
        t, _ = chat(str(path.relative_to(FIXTURES)))
        marked = {n.data.callId for n in t.chat if n.kind == "tool" and n.data.approval is not UNSET}
        calls = {n.data.callId for n in t.chat if n.kind == "tool"}
        assert marked == {c for c in asked if type(c) is str} & calls, path
        checked += 1
    assert checked >= 3


def test_goal_rows_follow_the_goal() -> None:
    require_corpus()
    found = rows("examples/acp-agent/tests/goal-snapshots/goal-round-driver/session.expected.jsonl", "goal")
    assert [n.data.status for n, _ in found][:2] == ["active", "paused"]
    assert "Finish the ACP goal-round-driver snapshot proof" in found[0][1]


def test_hook_block_shows_the_hooks_message() -> None:
    require_corpus()
    [(node, html)] = rows(f"{SNAP}/hook-codex-posttool-block/session.jsonl", "hook-block")
    assert "PostToolUse hook blocked" in html and "tool output rejected by codex policy" in html


def test_context_overflow_precedes_its_compaction() -> None:
    require_corpus()
    t, ctx = chat("examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl")
    kinds = [n.kind for n in t.chat]
    i = kinds.index("overflow-notice")
    assert kinds.index("compaction") > i
    html = render_node(t.chat[i], display=ctx.get(t.chat[i].key))
    assert "Context overflow (CONTEXT_WINDOW_EXCEEDED)" in html and "exceeded the model context window" in html
    assert "Compacted 1 history item " in render_node(t.chat[kinds.index("compaction")])


def test_subagent_rows_name_their_child_sessions() -> None:
    require_corpus()
    base = f"{SNAP}/advanced-toolchain"
    headers = {name: json.loads((FIXTURES / base / name).read_text(encoding="utf-8").split("\n", 1)[0])
               for name in ("session.jsonl", "session.1.jsonl", "session.2.jsonl")}
    # the workflow's child: named by id in the parent's log
    [(node, html)] = rows(f"{base}/session.jsonl", "subagent")
    assert node.data.childSession == headers["session.2.jsonl"]["id"]
    assert f'data-child-session="{headers["session.2.jsonl"]["id"]}"' in html
    # the direct child: the parent's subagent call carries the label the child's descriptor gives itself
    tools = rows(f"{base}/session.jsonl", "tool")
    direct = [h for n, h in tools if n.data.name == "subagent"]
    assert direct and 'data-subagent-label="Check direct child"' in direct[0]
    [(child, child_html)] = rows(f"{base}/session.1.jsonl", "subagent")
    assert child.data.label == "Check direct child" and "This session is a subagent" in child_html
    assert headers["session.1.jsonl"]["parentSession"] == headers["session.jsonl"]["id"]


def test_question_to_the_user_and_its_answer() -> None:
    require_corpus()
    t, _ = chat(f"{SNAP}/subagent-child-question-rejection/session.1.jsonl")
    [node] = [n for n in t.chat if n.kind == "tool" and n.data.name == "ask_user_question"]
    head = render_node(node)
    assert "ask_user_question</span>:" in head and "Should deployment use the CUDA fallback?" in head
    body = render_section(node, 0)
    assert "Asked" in body and "human interaction is unavailable" in body


def test_activity_rows_in_markdown() -> None:
    require_corpus()
    t, ctx = chat(f"{SNAP}/escalation-approved/session.jsonl")
    md = render_markdown(t.chat, title="x", displays=ctx)
    assert "> **Approval** Approval for bash (allowed-once)" in md
