"""A hostile transcript renders as text and runs nothing (DESIGN rule 7).

The log carries ``<script>``, ``onerror``/``onload`` attributes, ``javascript:`` and ``data:`` links, images on another
host, raw HTML blocks, a 1 MB single line and pathologically nested markdown, in user text, assistant text,
reasoning, tool arguments and tool results. A sentinel global that any of them would set must stay unset, no
element may carry an event-handler attribute, every link must be http(s)/mailto/#, and nothing may be fetched.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer

SENTINEL = "__transcriptPwned"
PAYLOADS = [
    f"<script>window.{SENTINEL} = 1</script>",
    f'<img src="x" onerror="window.{SENTINEL} = 2">',
    f'<svg onload="window.{SENTINEL} = 3"></svg>',
    f'<iframe src="javascript:window.{SENTINEL} = 4"></iframe>',
    f"[click me](javascript:window.{SENTINEL}=5)",
    "[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX190cmFuc2NyaXB0UHduZWQ9Njwvc2NyaXB0Pg==)",
    f"<javascript:window.{SENTINEL}=7>",
    "![tracking pixel](http://evil.example/pixel.png)",
    "![inline](data:image/png;base64,iVBORw0KGgo=)",
    f'<a href="javascript:window.{SENTINEL}=8">raw anchor</a>',
    f'<div style="background:url(http://evil.example/bg.png)" onclick="window.{SENTINEL}=9">styled</div>',
    f"[ref][r]\n\n[r]: javascript:window.{SENTINEL}=10",
    f"<details open ontoggle=\"window.{SENTINEL}=11\">x</details>",
]
HUGE_LINE = "A" * 400_000 + " " + "<b>bold?</b> " * 20_000 + "B" * 340_000  # ~1 MB, no newline
NESTED = "\n\n".join([
    ">" * 5000 + " deep quote",
    "\n".join("  " * i + "- item" for i in range(2000)),
    "[" * 50_000,
    "*" * 20_000 + "x" + "*" * 20_000,
    "`" * 10_000,
    "<" * 20_000,
])


def hostile_session() -> bytes:
    s = Session("hostile")
    s.user("\n".join(PAYLOADS))
    s.assistant([("reasoning", "\n\n".join(PAYLOADS)), ("text", "\n\n".join(PAYLOADS))],
                calls=[("call-x", "bash<script>",
                        '{"command": "</script><script>window.' + SENTINEL + '=12</script>"}')])
    s.tool_result("call-x", "\n".join(PAYLOADS), is_error=True)
    s.end_step()
    s.end_turn()
    s.user("Nested markdown follows")
    s.assistant([("text", NESTED)])
    s.end_step()
    s.end_turn()
    s.user("A one-megabyte line follows")
    s.assistant([("text", HUGE_LINE)], pieces=[HUGE_LINE[i:i + 50_000] for i in range(0, len(HUGE_LINE), 50_000)])
    s.end_step()
    s.end_turn({"kind": "error", "error": {"message": f"<script>window.{SENTINEL}=13</script>", "code": "X"}})
    return s.to_bytes()


@pytest.fixture(scope="module")
def hostile(viewer: Viewer) -> Iterator[Viewer]:
    assert viewer.page.evaluate(f"() => window.{SENTINEL}") is None
    before = len(viewer.requests)
    result = viewer.open_file(viewer.add_file("hostile.jsonl", hostile_session()), all=True)
    assert result["error"] is None, result["error"]
    viewer.render_all()
    viewer.attach_all()  # a small transcript: every row stays in the DOM while it is checked
    # Open every collapsed row (Think, tool, context) so their bodies render too, then expand long text.
    page = viewer.page
    settled = "() => !document.querySelector('#transcript [data-pending], #transcript .loading')"
    page.evaluate("() => { for (const d of document.querySelectorAll('#transcript details')) d.open = true; }")
    page.wait_for_function(settled)
    for _ in range(3):
        buttons = page.locator("#transcript button.show-more").element_handles()
        for button in buttons:
            button.evaluate("(b) => b.click()")
        for button in buttons:
            page.wait_for_function("(b) => !b.isConnected", arg=button)  # each slice replaced its button
        page.evaluate("() => window.transcriptViewer.idle()")
    page.wait_for_function(settled)
    viewer.hostile_requests = viewer.requests[before:]  # type: ignore[attr-defined]
    yield viewer
    viewer.attach_all(False)


def test_sentinel_global_stays_unset(hostile: Viewer) -> None:
    assert hostile.page.evaluate(f"() => window.{SENTINEL}") is None


def test_payloads_render_as_text(hostile: Viewer) -> None:
    text = hostile.page.inner_text("#transcript")
    assert f"<script>window.{SENTINEL} = 1</script>" in text
    assert "onerror=" in text
    assert "[click me](javascript:" in text


def test_no_active_elements_or_handlers(hostile: Viewer) -> None:
    found = hostile.page.evaluate(
        """() => {
            const root = document.getElementById("transcript");
            const bad = [...root.querySelectorAll("script, iframe, object, embed, svg, img, style, link, form, input")]
                .map((e) => e.tagName);
            for (const el of root.querySelectorAll("*")) {
                for (const attr of el.attributes) {
                    // Our own layout: an article's placeholder height and the virtual list's spacers.
                    const layout = el.tagName === "ARTICLE" || el.classList.contains("vlist-spacer");
                    if (attr.name.startsWith("on") || attr.name === "style" && !layout) {
                        bad.push(`${el.tagName}[${attr.name}]`);
                    }
                }
            }
            const hrefs = [...root.querySelectorAll("[href]")].map((a) => a.getAttribute("href"));
            return { bad, hrefs };
        }"""
    )
    assert found["bad"] == []
    for href in found["hrefs"]:
        assert href.startswith(("http:", "https:", "mailto:", "#")), href


def test_nothing_is_fetched_from_the_transcript(hostile: Viewer) -> None:
    for url in hostile.hostile_requests:  # type: ignore[attr-defined]
        assert url.startswith(hostile.url), url
        assert "evil.example" not in url


def test_huge_line_renders_in_bounded_slices(hostile: Viewer) -> None:
    sizes = hostile.page.evaluate(
        """() => [...document.querySelectorAll("#transcript .assistant-text")].map((e) => e.textContent.length)"""
    )
    assert max(sizes) < 200_000  # a few slices were expanded, never the whole megabyte at once
    assert hostile.page.locator("#transcript button.show-more").count() >= 1


def test_nested_markdown_renders(hostile: Viewer) -> None:
    text = hostile.page.inner_text("#transcript")
    assert "deep quote" in text
    assert hostile.page.evaluate("() => document.querySelectorAll('#transcript blockquote').length") <= 200


def test_turn_error_is_marked(hostile: Viewer) -> None:
    notice = hostile.page.locator("#transcript .notice-error").last
    assert "<script>" in notice.inner_text()
