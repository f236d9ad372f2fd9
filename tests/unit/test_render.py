"""``assembler.render``: untrusted text becomes safe HTML, in bounded slices, for every node kind."""

from __future__ import annotations

import re

import pytest
from conversation_support import view_node

from assembler import render
from assembler.render import markdown_html, render_block_slice, render_node, render_section, slice_text
from assembler.views import (
    AssistantStepData,
    BlockView,
    CompactionData,
    InputMessageData,
    NoticeData,
    ReasoningBlockView,
    TextBlockView,
    ToolData,
    ToolResultView,
    TurnTailData,
    ViewNode,
)


def step(*blocks: BlockView, status: str = "settled") -> ViewNode:
    data = AssistantStepData(status=status, turn=1, step=1, blocks=list(blocks), time=0, firstTokenTime=None,
                             firstVisibleSeq=None, firstVisibleTime=None)
    return view_node("assistant-step", data)


@pytest.mark.parametrize("source", [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=//evil.example></iframe>",
])
def test_raw_html_is_shown_as_text(source: str) -> None:
    out = markdown_html(source)
    assert "<script" not in out and "<img" not in out and "<svg" not in out and "<iframe" not in out
    assert "<a " not in out
    assert "&lt;" in out


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html,x", "vbscript:x",
                                 "//evil.example/x", "file:///etc/passwd", "relative/path"])
def test_unsafe_links_stay_text(url: str) -> None:
    out = markdown_html(f"[label]({url}) <{url}>")
    assert "href" not in out


def test_safe_links_open_in_a_new_tab_without_referrer() -> None:
    out = markdown_html("[a](https://example.com/x) [m](mailto:a@b.c) [f](#seq=4)")
    assert '<a href="https://example.com/x" target="_blank" rel="noopener noreferrer nofollow"' in out
    assert 'href="mailto:a@b.c"' in out
    assert '<a href="#seq=4">f</a>' in out


def test_images_are_never_loaded() -> None:
    out = markdown_html("![alt text](https://evil.example/p.png) ![x](data:image/png;base64,AAAA)")
    assert "<img" not in out
    assert '<a class="md-image" href="https://evil.example/p.png"' in out
    assert 'href="data:' not in out and "![x](data:" in out  # an unsafe source stays literal text


def test_code_is_highlighted_with_classes_only() -> None:
    out = markdown_html("```python\ndef f():\n    return '<b>'\n```")
    assert '<pre class="code highlight" data-lang="python">' in out
    assert '<span class="k">def</span>' in out
    assert "style=" not in out
    assert "&lt;b&gt;" in out


def test_unknown_language_and_huge_code_are_escaped_plainly() -> None:
    assert '<span class="' not in markdown_html("```nosuchlang\nx = 1\n```")
    huge = "x = 1\n" * (render.HIGHLIGHT_LIMIT // 5)
    assert '<span class="' not in render.code_html(huge, "python")


def test_text_nested_past_the_limit_is_kept_as_plain_text() -> None:
    out = markdown_html(">" * 5000 + " deep quote")
    assert "deep quote" in out and "md-too-deep" in out
    assert "<blockquote>" in markdown_html(">>> shallow")


def test_slices_cut_at_paragraphs_and_cover_the_text_exactly() -> None:
    text = "\n\n".join(f"para {i} " + "word " * 50 for i in range(400))
    offset, pieces = 0, []
    while offset is not None:
        piece, offset = slice_text(text, offset, 5000)
        assert len(piece) <= 5000 + 5000 // 4
        pieces.append(piece)
    assert "".join(pieces) == text
    assert all(p.endswith("\n") or p is pieces[-1] for p in pieces)


def test_slices_never_split_inside_a_code_fence_unclosed() -> None:
    code = "```python\n" + "print(1)\n" * 3000 + "```\n"
    html = ""
    node = step(TextBlockView(code))
    first = render_node(node)
    assert "show-more" in first and first.count('<pre class="code highlight"') == 1
    offset = int(re.search(r'data-offset="(\d+)"', first).group(1))  # type: ignore[union-attr]
    html = render_block_slice(node, 0, offset)
    assert html.count('<pre class="code highlight"') == 1  # the fence is reopened in the next slice


def test_every_slice_of_a_one_megabyte_line_is_bounded() -> None:
    line = "A" * 1_000_000
    node = step(TextBlockView(line))
    html = render_node(node)
    assert len(html) < 2 * render.SLICE_CHARS
    assert 'data-offset="20000"' in html


def test_collapsed_rows_are_empty_until_opened() -> None:
    node = step(ReasoningBlockView("Line one\nLine two"), TextBlockView("Answer"))
    html = render_node(node)
    assert "Line two" not in html and "Line one" in html and 'data-pending="1"' in html
    assert "Line two" in render_section(node, 0)
    assert "Line two" in render_node(node, lazy=False, limit=None)


def test_tool_rows_mark_errors_and_show_arguments_and_result() -> None:
    node = view_node("tool", ToolData(
        kind="tool", callId="c", name="read", arguments='{"path": "x"}', turn=1, step=1, status="error", callSeq=None,
        result=ToolResultView(seq=3, time=0, isError=True, blocks=[TextBlockView("not found")])), key="4:toolc")
    html = render_node(node)
    assert "tool-error" in html and "Failed" in html and "read" in html
    body = render_section(node, 0)
    assert "not found" in body and "Arguments" in body and '"path"' in body


@pytest.mark.parametrize(("kind", "data", "expected"), [
    ("turn-notice", NoticeData(kind="max-tokens", seq=0, time=0), "Max tokens"),
    ("turn-notice", NoticeData(kind="turn-error", seq=0, time=0, message="boom", code="X"), "Error (X)"),
    ("turn-notice", NoticeData(kind="interrupted", seq=0, time=0, reason={"kind": "user"}), "by the user"),
    ("retry-notice", NoticeData(kind="retry", seq=0, time=0, retry=2, maxRetries=5, message="slow"), "attempt 2/5"),
    ("compaction", CompactionData(kind="compaction", seq=0, time=0, status="done",
                                  shadowedRange={"start": 1, "end": 5}), "Compacted 5"),
    ("turn-tail", TurnTailData(turn=1, seq=0, time=2000, closing=None, branchUnavailable=False, ttftMs=120,
                               tokensPerSecond=33.3), "TTFT 120 ms"),
    ("input-message", InputMessageData(kind="user", seq=0, time=0, messageId=None,
                                       blocks=[TextBlockView("<b>hi</b>")]), "&lt;b&gt;hi"),
    ("no-such-kind", {"x": "<script>"}, "&lt;script&gt;"),
    ("tool", {"not": "ToolData <b>"}, "&lt;b&gt;"),  # data that is not its kind's Struct shows as data
])
def test_every_node_kind_renders(kind: str, data: object, expected: str) -> None:
    assert expected in render_node(view_node(kind, data))


def test_stylesheet_has_both_themes_and_no_markup() -> None:
    css = render.stylesheet()
    assert ':root[data-theme="dark"] .highlight .k' in css
    assert "@media (prefers-color-scheme: dark)" in css
    assert "<" not in css


def test_document_has_a_csp_without_script() -> None:
    node = view_node("input-message", InputMessageData(kind="user", seq=1, time=0, messageId=None,
                                                       blocks=[TextBlockView("hi")]), anchor=1)
    doc = render.render_document([node], title="<t>")
    assert "default-src 'none'; style-src 'unsafe-inline'; img-src data:" in doc
    assert "<script" not in doc and "&lt;t&gt;" in doc
