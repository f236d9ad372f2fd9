"""Tool-aware rows and activity rows in the page, on real logs that use them: the collapsed line is a human summary,
an opened row renders by tool kind (terminal, diff, program with nested calls, checklist, question); approvals, goal
changes, hook blocks and the context overflow before a compaction show as rows of their own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from test_goldens import corpus_present
from test_turns_and_usage import shown_rows

if TYPE_CHECKING:
    from conftest import Viewer

SNAP = "examples/acp-agent/tests/snapshots"


def open_tool(viewer: Viewer, name: str) -> str:
    """Opens the first tool row named ``name`` and returns its body's HTML once rendered."""
    page = viewer.page
    row = page.locator(f'#transcript article.kind-tool:has(.tool-name:text-is("{name}"))').first
    row.scroll_into_view_if_needed()
    details = row.locator("details.tool")
    details.locator("summary").click()
    body = details.locator(".tool-body")
    page.wait_for_function("(el) => !el.hasAttribute('data-pending') && el.innerHTML.length > 0",
                           arg=body.element_handle())
    return body.inner_html()


def test_run_code_row_shows_program_and_nested_calls(viewer: Viewer) -> None:
    corpus_present()
    rows = shown_rows(viewer, "apps/web/tests/snapshots/code-mode-round/session.jsonl")
    tool = next(r for r in rows if r["kind"] == "tool")
    assert tool["text"].startswith("λ") or "run_code:" in tool["text"]
    assert "{" not in tool["text"].split("\n")[0]  # a summary, not JSON
    body = open_tool(viewer, "run_code")
    assert "code highlight" in body and 'class="subcalls"' in body
    assert "bash: echo CODE_ROUND_OK" in body and "read: missing.txt" in body


def test_bash_row_is_a_terminal_block(viewer: Viewer) -> None:
    corpus_present()
    shown_rows(viewer, "apps/web/tests/snapshots/fresh-round-trip/session.jsonl")
    body = open_tool(viewer, "bash")
    assert 'class="terminal"' in body and "echo WEB_E2E_OK" in body


def test_editor_row_is_a_diff(viewer: Viewer) -> None:
    corpus_present()
    rows = shown_rows(viewer, "examples/jsonrpc-agent/tests/snapshots/persistent-tools/session.jsonl")
    assert any("str_replace_editor:" in r["text"] and "note.txt" in r["text"] for r in rows)
    body = open_tool(viewer, "str_replace_editor")
    assert 'class="diff"' in body and 'class="add"' in body


def test_activity_rows(viewer: Viewer) -> None:
    corpus_present()
    rows = shown_rows(viewer, f"{SNAP}/escalation-approved/session.jsonl")
    approval = [r for r in rows if r["kind"] == "approval"]
    assert approval and "Approval for bash" in approval[0]["text"] and "allowed-once" in approval[0]["text"]
    rows = shown_rows(viewer, f"{SNAP}/hook-codex-posttool-block/session.jsonl")
    assert any(r["kind"] == "hook-block" and "tool output rejected" in r["text"] for r in rows)
    rows = shown_rows(viewer, "examples/acp-agent/tests/goal-snapshots/goal-round-driver/session.expected.jsonl")
    assert [r["text"].count("Goal create") for r in rows if r["kind"] == "goal"][:1] == [1]
    rows = shown_rows(viewer, "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl")
    kinds = [r["kind"] for r in rows]
    assert kinds.index("overflow-notice") < kinds.index("compaction")
    assert "Context overflow" in rows[kinds.index("overflow-notice")]["text"]


def test_question_row_shows_the_question(viewer: Viewer) -> None:
    corpus_present()
    rows = shown_rows(viewer, f"{SNAP}/subagent-child-question-rejection/session.1.jsonl")
    assert any("Should deployment use the CUDA fallback?" in r["text"] for r in rows if r["kind"] == "tool")
    body = open_tool(viewer, "ask_user_question")
    assert "Asked" in body
