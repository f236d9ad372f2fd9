"""Tool-aware rows on the real logs: every tool row's collapsed line is a human summary (never raw JSON), and every
call of a known kind whose arguments have that kind's fields renders its kind's body (diff, terminal, numbered lines,
program with nested calls, checklist)."""

from __future__ import annotations

import pytest
from conversation_support import assemble_page, page
from corpus import corpus_params, require_corpus

from assembler.render import render_node, render_section
from assembler.render.tools import tool_arguments, tool_kind
from assembler.store.jsonl import read_session
from assembler.views import ToolData

_MARKERS = {"shell": 'class="terminal"', "edit": 'class="diff"', "write": 'class="diff"', "code": "code highlight",
            "todo": 'class="checklist"', "read": 'class="lines"'}


@pytest.mark.parametrize("path", corpus_params())
def test_tool_rows_summarise_and_render_by_kind(path):
    require_corpus()
    t = assemble_page(page(read_session(path).records, "packed"))
    for node in t.chat:
        if node.kind != "tool" or type(node.data) is not ToolData:
            continue
        summary = render_node(node).split("<summary>", 1)[1].split("</summary>", 1)[0]
        assert "{&quot;" not in summary and '{"' not in summary, summary
        kind = tool_kind(node.data.name)
        args = tool_arguments(node.data.arguments)
        body = render_section(node, 0)
        if kind == "shell" and args and isinstance(args.get("command"), str):
            assert _MARKERS[kind] in body
        elif kind == "code" and args and isinstance(args.get("code"), str):
            assert _MARKERS[kind] in body
            if node.data.subcalls:
                assert 'class="subcalls"' in body
        elif kind == "todo" and args and isinstance(args.get("todos"), list):
            assert _MARKERS[kind] in body
        elif kind == "read" and node.data.status == "done":
            assert _MARKERS[kind] in body


def test_the_corpus_exercises_each_tool_kind():
    require_corpus()
    from corpus import session_logs

    seen: set[str] = set()
    subcalls = False
    for path in session_logs():
        t = assemble_page(page(read_session(path).records, "packed"))
        for node in t.chat:
            if node.kind == "tool" and type(node.data) is ToolData:
                body = render_section(node, 0)
                seen.update(k for k, m in _MARKERS.items() if m in body)
                subcalls = subcalls or 'class="subcalls"' in body
    assert {"shell", "edit", "code", "todo", "read"} <= seen, seen
    assert subcalls
