"""One long token never freezes the tab (issue 23 item 8): an assistant text that is a single million-character
"word" is laid out in bounded pieces that wrap, in the HTML export and in the viewer. Chromium lays a single run out
in time that grows with the square of its length (Arabic letters and combining accents are the slow cases), so the
tests pin the structure the fix gives (no text run between break opportunities longer than ``RUN_CHARS`` plus a
little, nothing wider than the page) and print the layout times they measure; they never assert a time."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import pytest

from assembler.commands.export import export_html
from assembler.logfile import parse_session_bytes
from assembler.records import encode
from assembler.render.slices import RUN_CHARS

if TYPE_CHECKING:
    from conftest import Viewer

SLACK = 16
TOKENS = {
    "arabic": "".join(chr(0x0627 + random.Random(1).randrange(20)) for _ in range(1_000_000)),
    "letters": "abcdefghij" * 100_000,
}

# The longest run of text (no white space) between break opportunities under ``root``, and whether ``root`` is
# wider than the page: a <wbr> (or a tag) ends a text node, so the text nodes' runs are what the line breaker sees.
MEASURE = """(selector) => {
    const root = document.querySelector(selector);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let longest = 0, nodes = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        nodes += 1;
        for (const run of n.data.split(/\\s+/)) longest = Math.max(longest, [...run].length);
    }
    return { longest, nodes, wide: document.documentElement.scrollWidth > innerWidth + 1 };
}"""


def _log(token: str) -> bytes:
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "user/message", "seq": 1, "time": 0, "data": {"id": "u", "role": "user", "content": [
            {"type": "text", "text": "LONG-TOKEN-QUESTION"}], "source": {"kind": "user"}}, "surfaceOp": "append"},
        {"type": "step/start", "seq": 2, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 3, "time": 0, "data": {"turn": 1, "step": 1, "message": {
            "role": "assistant", "content": [{"type": "text", "text": token}],
            "source": {"kind": "model", "provider": "p", "model": "m"}, "id": "a"}}, "surfaceOp": "append"},
        {"type": "step/end", "seq": 4, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": 5, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    return b"".join(encode(v) + b"\n" for v in [{"type": "session", "id": "token"}, *events])


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_the_html_export_lays_a_million_character_token_out_in_bounded_runs(viewer: Viewer, kind: str) -> None:
    result = parse_session_bytes(_log(TOKENS[kind]))
    document = export_html(result.records, title="token")
    path = viewer.served.files / f"token-{kind}.html"
    path.write_text(document, encoding="utf-8")
    page = viewer.page.context.new_page()
    try:
        page.goto(f"{viewer.served.url}__test__/{path.name}")
        timing: Any = page.evaluate("""() => {
            const nav = performance.getEntriesByType("navigation")[0];
            const t0 = performance.now();
            const height = document.body.getBoundingClientRect().height;
            return { loadMs: nav ? nav.loadEventEnd - nav.startTime : null, layoutAgainMs: performance.now() - t0,
                     height };
        }""")
        shape = page.evaluate(MEASURE, ".transcript")
    finally:
        page.close()
    print(f"\nexport, 1M-character {kind} token: load {timing['loadMs']:.0f} ms (parse and first layout), "
          f"{shape['nodes']} text nodes, longest run {shape['longest']}, height {timing['height']:.0f} px")
    assert shape["longest"] <= RUN_CHARS + SLACK
    assert shape["nodes"] >= len(TOKENS[kind]) // (RUN_CHARS + SLACK)
    assert not shape["wide"]  # it wraps: nothing is wider than the page


def test_the_viewer_lays_the_token_out_in_bounded_runs_slice_after_slice(viewer: Viewer) -> None:
    path = viewer.add_file("token.jsonl", _log(TOKENS["arabic"]))
    assert viewer.open_file(path)["error"] is None
    page = viewer.page
    viewer.attach_all()
    try:
        selector = "#transcript article[data-key] .show-more"
        timings = []
        shown = "() => document.querySelector('#transcript').textContent.length"
        for _ in range(3):  # the first slice, then two more behind "Show more"
            page.wait_for_selector(selector)
            before = page.evaluate(shown)
            started = page.evaluate("() => performance.now()")
            page.click(selector)
            # the next slice is in (not merely the click taken): a loaded machine answers late
            page.wait_for_function(f"(n) => ({shown})() > n && !document.documentElement.dataset.busy", arg=before)
            timings.append(page.evaluate("(t0) => { document.body.getBoundingClientRect(); "
                                         "return performance.now() - t0; }", started))
        shape = page.evaluate(MEASURE, "#transcript")
    finally:
        viewer.attach_all(False)
    print(f"\nviewer, 1M-character Arabic token: 'Show more' to layout {[round(t) for t in timings]} ms, "
          f"longest run {shape['longest']}, {shape['nodes']} text nodes")
    assert shape["longest"] <= RUN_CHARS + SLACK
    assert shape["nodes"] >= 4 * 20_000 // (RUN_CHARS + SLACK)  # four slices of 20,000 characters are shown
    assert not shape["wide"]

