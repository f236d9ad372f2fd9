"""Tool-aware rows: a one-line human summary per call (never raw JSON) and a body by tool kind."""

from __future__ import annotations

import json

import pytest
from conversation_support import view_node

from assembler.render import render_node, render_section
from assembler.render.tools import diff_counts, tool_kind, tool_summary
from assembler.views import TextBlockView, ToolData, ToolResultView, ToolSubcall


def tool(name: str, args: object, result: str | None = None, *, error: bool = False, subcalls=None):
    rv = None if result is None else ToolResultView(seq=2, time=0, isError=error, blocks=[TextBlockView(result)])
    kw = {} if rv is None else {"result": rv}
    if subcalls:
        kw["subcalls"] = subcalls
    data = ToolData(kind="tool", callId="c", name=name, arguments=args if isinstance(args, str) else json.dumps(args),
                    turn=1, step=1, status="error" if error else ("done" if rv else "running"), callSeq=1, **kw)
    return view_node("tool", data, key="1:toolc")


@pytest.mark.parametrize(("name", "args", "expected"), [
    ("bash", {"command": "grep -rn 'x' src/\necho more"}, "bash: grep -rn 'x' src/"),
    ("read_file", {"path": "src/a.py", "start_line": 10, "end_line": 80}, "read_file: src/a.py (lines 10–80)"),
    ("read", {"file_path": "a.py", "offset": 10, "limit": 71}, "read: a.py (lines 10–80)"),
    ("str_replace_editor", {"command": "str_replace", "path": "src/a.py", "old_str": "a\nb", "new_str": "a\nc\nd\ne"},
     "str_replace_editor: src/a.py +3 −1"),
    ("write", {"file_path": "n.txt", "content": "x\ny"}, "write: n.txt +2 −0"),
    ("todo_write", {"todos": [{"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}]},
     "todo_write: 2 items, 1 done"),
    ("web_search", {"queries": ["one", "two"]}, "web_search: one; two"),
    ("glob", {"pattern": "*", "path": "tree"}, "glob: * in tree"),
    ("mystery", {"alpha": "beta", "n": 3, "nested": {"a": 1}}, "mystery: alpha=beta, n=3, nested={…}"),
    ("mystery", '{"cut', "mystery"),
])
def test_summaries_are_human_one_liners(name: str, args: object, expected: str) -> None:
    raw = args if isinstance(args, str) else json.dumps(args)
    assert tool_summary(name, raw) == expected
    row = render_node(tool(name, args))
    assert "{&quot;" not in row and '{"' not in row  # never raw JSON in the collapsed row


def test_kinds_and_diff_counts() -> None:
    assert tool_kind("bash") == "shell" and tool_kind("Read") == "read" and tool_kind("nope") == "generic"
    assert diff_counts("a\nb\n", "a\nc\n") == (1, 1)


def test_edit_renders_a_coloured_unified_diff() -> None:
    body = render_section(tool("str_replace_editor", {"command": "str_replace", "path": "a.py", "old_str": "old",
                                                      "new_str": "new"}, "ok"), 0)
    assert '<span class="del">-old</span>' in body and '<span class="add">+new</span>' in body
    assert 'class="hunk"' in body


def test_read_shows_line_numbers() -> None:
    result = "<path>/w/a.py</path>\n<type>file</type>\n<content>\n10: first\n11: <second>\n</content>"
    body = render_section(tool("read", {"file_path": "a.py"}, result), 0)
    assert '<td class="ln">10</td><td>first</td>' in body and "&lt;second&gt;" in body


def test_shell_is_a_terminal_block_with_exit_status() -> None:
    body = render_section(tool("bash", {"command": "false"}, "oops\n[exit code: 1]", error=True), 0)
    assert 'class="terminal"' in body and "$ </span>false" in body and "exit status 1" in body


def test_run_code_highlights_the_program_and_lists_subcalls() -> None:
    sub = [ToolSubcall(id="c:1", name="bash", arguments={"command": "echo hi"}, status="done",
                       blocks=[TextBlockView("hi")]),
           ToolSubcall(id="c:2", name="read", arguments={"file_path": "m.txt"}, status="error")]
    body = render_section(tool("run_code", {"code": "const x = await tools.bash({})"}, '{"a": 1}', subcalls=sub), 0)
    assert 'class="code highlight"' in body and "bash: echo hi" in body and "read: m.txt" in body
    assert "dot-error" in body and '<span class="p">{</span>' in body or '"a"' in body


def test_todo_is_a_checklist() -> None:
    body = render_section(tool("todo_write", {"todos": [{"content": "boil <kettle>", "status": "completed"},
                                                        {"content": "pour", "status": "in_progress"}]}, "ok"), 0)
    assert 'class="checklist"' in body and 'class="done"' in body and "boil &lt;kettle&gt;" in body


@pytest.mark.parametrize(("url", "linked"), [("https://example.com/a?b=1", True), ("javascript:alert(1)", False),
                                             ("data:text/html,x", False)])
def test_web_card_links_only_safe_urls(url: str, linked: bool) -> None:
    body = render_section(tool("web_fetch", {"url": url}, "page"), 0)
    assert 'class="web-card"' in body
    assert ("href=" in body) is linked


def test_unknown_tool_keeps_the_generic_body() -> None:
    body = render_section(tool("mystery", {"alpha": "beta"}, "result text"), 0)
    assert "Arguments" in body and "result text" in body


def test_huge_results_fall_back_to_bounded_slices() -> None:
    body = render_section(tool("bash", {"command": "yes"}, "y\n" * 30_000), 0)
    assert "Show more" in body


def test_generic_json_result_is_pretty_printed() -> None:
    body = render_section(tool("mystery", {"a": 1}, '{"ok":true,"items":[1,2]}'), 0)
    assert "code highlight" in body and "items" in body and '{"ok":true' not in body


def test_question_and_plan_review_rows() -> None:
    q = tool("ask_user_question", {"questions": [{"question": "Use <CUDA>?"}]}, "yes")
    assert tool_summary("ask_user_question", json.dumps({"questions": [{"question": "Use <CUDA>?"}]})) == \
        "ask_user_question: Use <CUDA>?"
    body = render_section(q, 0)
    assert "<p>Use &lt;CUDA&gt;?</p>" in body and "Answer" in body and "yes" in body  # Markdown, escaped
    plan = tool("exit_plan_mode", {"plan": "1. read\n2. edit"}, "User rejected the plan", error=True)
    assert tool_summary("exit_plan_mode", json.dumps({"plan": "1. read\n2. edit"})) == "exit_plan_mode: 1. read"
    assert "1. read</span>" in render_node(plan)
    body = render_section(plan, 0)
    assert "Plan" in body and "Rejected" in body and "User rejected the plan" in body


def test_read_result_numbers_from_claude_code_arrows_keep_indentation() -> None:
    from assembler.render.toolbodies import numbered_html as _numbered_html

    html = _numbered_html("    95\u2192  }\n    96\u2192x")
    assert '<td class="ln">95</td><td>  }</td>' in html and '<td class="ln">96</td><td>x</td>' in html
