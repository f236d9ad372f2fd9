"""The DOM stays bounded (< 2,000 elements) at every sampled scroll position of every view, on a 5,000-turn session
and on the synthetic 416,756-event session; deep links and search still land on the right row afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from assembler.history import page_value
from assembler.records import encode
from perf.bench_views import DOM_BOUND, SCROLL_JS
from perf.synthetic import history_transport_events
from perf.turns import many_turns_bytes

if TYPE_CHECKING:
    from conftest import Viewer

TURNS = 5000
STRIDE = 4.0  # viewports per scroll step: a few hundred sampled positions across the whole list


@pytest.fixture(scope="module")
def turns(viewer: Viewer) -> Viewer:
    viewer.page.set_default_timeout(600_000)
    viewer.page.evaluate("() => window.transcriptViewer.showView('chat')")
    result = viewer.open_file(viewer.add_file("turns-5000.jsonl", many_turns_bytes(TURNS)), all=True)
    assert result["error"] is None and result["chatNodes"] == 4 * TURNS
    return viewer


@pytest.mark.parametrize("view", ["chat", "trajectory", "context"])
def test_dom_bounded_while_scrolling_a_5000_turn_session(turns: Viewer, view: str) -> None:
    result = turns.page.evaluate(SCROLL_JS, [view, STRIDE])
    assert result["steps"] > 20  # the list is far taller than a screen, and was scrolled to its end
    assert result["maxElements"] < DOM_BOUND, result
    # The end of the list is in the DOM: its last row is the session's last.
    last = turns.page.evaluate("(v) => [...document.getElementById(v === 'chat' ? 'transcript' : v)"
                               ".querySelectorAll('[data-key]')].pop()?.textContent || ''", view)
    assert str(TURNS) in last or view == "chat"
    turns.page.evaluate("() => window.transcriptViewer.showView('chat')")


def test_search_and_deep_links_land_on_the_right_row_after_scrolling(turns: Viewer) -> None:
    page = turns.page
    page.evaluate("() => window.scrollTo(0, 0)")
    result = page.evaluate("() => window.transcriptViewer.search('Question 2500:')")
    assert result["matches"] == 1
    mark = page.locator("#transcript mark.search-current")
    assert "Question 2500:".lower() == mark.inner_text().lower()
    box = mark.bounding_box()
    assert box is not None and 0 <= box["y"] <= page.evaluate("() => innerHeight")
    page.evaluate("() => window.transcriptViewer.search('')")
    # A deep link to the middle of the session.
    target = page.evaluate("""async () => {
        const tv = window.transcriptViewer;
        const keys = tv.view.shownKeys();
        const key = keys[Math.floor(keys.length / 3)];
        const seq = tv.view.metas.get(key).seq;
        await tv.scrollToSeq(seq);
        const el = document.querySelector('#transcript .is-target');
        const r = el.getBoundingClientRect();
        return { key, got: el.dataset.key, top: r.top, bottom: r.bottom, height: innerHeight,
                 elements: document.getElementsByTagName('*').length };
    }""")
    assert target["got"] == target["key"] and target["bottom"] > 0 and target["top"] < target["height"]
    assert target["elements"] < DOM_BOUND


def test_dom_bounded_on_the_416756_event_session(viewer: Viewer) -> None:
    page = viewer.page
    page.set_default_timeout(600_000)
    events = history_transport_events()
    path = viewer.add_file("big-page.json", encode(page_value(events, None, None, max_messages=len(events) + 1)))
    page.evaluate("async (p) => { const b = new Uint8Array(await (await fetch(p)).arrayBuffer());"
                  " await window.transcriptViewer.loadPage(b); }", path)
    page.evaluate("() => { document.getElementById('show-events').click(); }")  # every hidden event row too
    try:
        for view in ("chat", "trajectory", "context"):
            result = page.evaluate(SCROLL_JS, [view, 1.0])
            assert result["maxElements"] < DOM_BOUND, (view, result)
        found = page.evaluate("() => window.transcriptViewer.search('synthetic history transport')")
        assert found["matches"] == 1
    finally:
        page.evaluate("() => { document.getElementById('show-events').click(); }")
        page.evaluate("() => window.transcriptViewer.showView('chat')")
