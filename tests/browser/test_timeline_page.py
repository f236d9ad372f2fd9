"""Issue 22's panels in the page: search inside the Trajectory view, the trajectory overview (timeline: equal widths
or recorded durations, zoom and pan, a bar shows its row, collapse/expand all), the chat's row filters with live
counts, and the session list's date filter; on our logs (the demo with recorded times, a projected fixture with
rebuilt ones) and a Codex rollout."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from corpus import FIXTURES, require_corpus
from playwright.sync_api import Page
from test_views import COMPACTION, demo_bytes, wait_rows

from assembler.browser import Viewer as PyViewer
from assembler.browser.facets import row_facet
from tests.interop_support import interop_file

if TYPE_CHECKING:
    from conftest import Viewer

CODEX = ("codex/codemie-ai+codemie-code@8e8d4ce/src/agents/plugins/codex/__tests__/fixtures/"
         "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")


def fresh(viewer: Viewer, name: str, data: bytes) -> Page:
    page = viewer.page
    page.evaluate("() => { window.transcriptViewer.filters.set([]); window.transcriptViewer.showView('chat'); }")
    page.evaluate("() => { if (document.activeElement instanceof HTMLElement) document.activeElement.blur(); }")
    page.fill("#search", "")
    result = viewer.open_file(viewer.add_file(name, data), all=True)
    assert result["error"] is None
    return page


def trajectory(viewer: Viewer) -> Page:
    page = viewer.page
    page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    wait_rows(viewer, "trajectory")
    return page


def texts_agree(page: Page) -> int:
    """Search reads each trajectory row's text without building it: it must be exactly what its element shows."""
    differ, rows = page.evaluate("""async () => {
        const { trajectoryText } = await import("./trajsearch.mjs");
        const { trajectoryRow } = await import("./views.mjs");
        const rows = window.transcriptViewer.views.trajectory.rows;
        return [rows.filter((r) => trajectoryText(r) !== trajectoryRow(r, () => {}).textContent).map((r) => r.key),
                rows.length];
    }""")
    assert differ == []
    return int(rows)


def cpython_rows(data: bytes) -> Any:
    v = PyViewer()
    v.file_begin("s.jsonl", len(data))
    v.file_feed(data)
    v.file_finish(True)
    return v, json.loads(v.trajectory_view())


# --- search inside the trajectory ------------------------------------------------------------------------------


def test_a_search_typed_in_trajectory_marks_its_rows_and_stays_there(viewer: Viewer) -> None:
    page = fresh(viewer, "tl-search.jsonl", demo_bytes())
    trajectory(viewer)
    assert texts_agree(page) > 0
    # Every trajectory row attached (the list's overscan unbounded), for this test only: later tests measure the DOM.
    overscan = page.evaluate("() => { const l = window.transcriptViewer.views.trajectory.list; const was = l.overscan; "
                             "l.overscan = 1e9; l.update(); return was; }")
    try:
        search_in_trajectory(page)
    finally:
        page.evaluate("(was) => { const l = window.transcriptViewer.views.trajectory.list; l.overscan = was; "
                      "l.update(); }", overscan)


def search_in_trajectory(page: Page) -> None:
    # Words the chat holds too: main's search moved to the chat's match (and the Chat view) here.
    page.click("#search")
    page.keyboard.type("count them")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /^1 of \\d+$/.test(document.getElementById('search-count').textContent)")
    assert page.get_attribute("#view-root", "data-view") == "trajectory"
    assert page.locator("#trajectory mark.search-hit").count() >= 1
    assert page.evaluate("() => document.activeElement.id") == "search"
    page.fill("#search", "")
    query = "complete"  # every finished step's status badge: several rows match
    page.click("#search")
    page.keyboard.type(query)
    page.keyboard.press("Enter")
    page.wait_for_function("() => /^1 of \\d+$/.test(document.getElementById('search-count').textContent)")
    assert page.get_attribute("#view-root", "data-view") == "trajectory"
    total = int(page.inner_text("#search-count").split(" of ")[1])
    marks = page.evaluate("() => new Set([...document.querySelectorAll('#trajectory mark.search-hit')]"
                          ".map((m) => m.closest('.traj-row').dataset.key + '/' + m.dataset.hit)).size")
    assert total == marks > 1  # the counter counts what is marked
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('2 of')")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('1 of')")
    assert page.evaluate("() => document.activeElement.id") == "search"
    assert page.get_attribute("#view-root", "data-view") == "trajectory"
    assert page.locator("#trajectory mark.search-current").count() >= 1
    # A tool's name (a button in the row) is found too.
    page.fill("#search", "")
    page.click("#search")
    page.keyboard.type("bash")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /of \\d+$/.test(document.getElementById('search-count').textContent)")
    assert page.locator("#trajectory .traj-tool-name mark.search-hit").count() >= 1
    # Back in the chat the same box searches the chat again.
    page.fill("#search", "")
    page.evaluate("() => window.transcriptViewer.showView('chat')")


# --- the overview ----------------------------------------------------------------------------------------------


def timeline(page: Page) -> Any:
    return page.evaluate("() => window.transcriptViewer.overview.data")


def test_the_overview_draws_recorded_durations_zooms_pans_and_picks_a_bar(viewer: Viewer) -> None:
    data = demo_bytes()
    page = fresh(viewer, "tl-demo.jsonl", data)
    trajectory(viewer)
    _, expected = cpython_rows(data)
    value = timeline(page)
    assert value == expected["timeline"]  # the worker's value is CPython's
    assert value["timed"] == value["total"] > 0
    assert page.locator("#traj-overview canvas").count() == 1
    assert page.locator("#traj-overview *").count() < 30  # one canvas, not a node per bar
    actual = page.locator("#traj-overview button", has_text="Actual durations")
    assert actual.is_enabled()
    actual.click()
    assert page.get_attribute("#traj-overview", "data-mode") == "actual"
    whole = page.get_attribute("#traj-overview", "data-range")
    page.click("#traj-overview button[aria-label='Zoom in']")
    zoomed = page.get_attribute("#traj-overview", "data-range")
    assert zoomed != whole
    page.focus("#traj-overview canvas")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#traj-overview", "data-range") != zoomed
    page.keyboard.press("0")
    assert page.get_attribute("#traj-overview", "data-range") == whole
    assert page.get_attribute("#view-root", "data-view") == "trajectory"  # "0" was the canvas's, not a view key
    page.mouse.move(*page.evaluate("() => [0, 0]"))
    page.mouse.wheel(0, -400)  # outside the canvas: the page scrolls, nothing zooms
    assert page.get_attribute("#traj-overview", "data-range") == whole
    # Where the canvas is once that scroll has happened (it moves with the page).
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.locator("#traj-overview canvas").scroll_into_view_if_needed()
    box = page.locator("#traj-overview canvas").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -300)
    assert page.get_attribute("#traj-overview", "data-range") != whole
    page.keyboard.press("0")
    # Click the last tool call's bar: its trajectory row is shown and marked, then "Show in chat" opens its chat row.
    i = max(k for k, s in enumerate(value["spans"]) if s["lane"] == "tool")
    x, y = page.evaluate("(i) => [window.transcriptViewer.overview.xOf(i),"
                         " window.transcriptViewer.overview.yOf('tool')]", i)
    page.mouse.click(x, y)
    span = value["spans"][page.evaluate("() => window.transcriptViewer.overview.selected")]
    assert span["lane"] == "tool"
    page.wait_for_selector(f"#trajectory .traj-row.is-target[data-key='{span['row']}']")
    page.click("#traj-overview .tl-picked button")
    page.wait_for_function("() => document.querySelector('#view-root').dataset.view === 'chat'")
    page.wait_for_selector(f"#transcript article.is-target[data-key='{span['chat']}']")


def test_collapse_all_folds_every_trajectory_row_to_its_first_line(viewer: Viewer) -> None:
    page = fresh(viewer, "tl-fold.jsonl", demo_bytes())
    trajectory(viewer)
    shown = "() => [...document.querySelectorAll('#trajectory .traj-tools')].filter((e) => e.offsetParent).length"
    assert page.evaluate(shown) > 0
    page.click("#traj-overview button:has-text('Collapse all')")
    assert page.evaluate(shown) == 0
    assert page.locator("#trajectory .traj-head").first.is_visible()
    page.click("#traj-overview button:has-text('Expand all')")
    assert page.evaluate(shown) > 0


def test_a_projected_log_offers_equal_widths_only_and_says_why(viewer: Viewer) -> None:
    require_corpus()
    page = fresh(viewer, "tl-projected.jsonl", (FIXTURES / COMPACTION).read_bytes())
    trajectory(viewer)
    value = timeline(page)
    assert value["total"] > 0 and value["timed"] == 0
    assert page.locator("#traj-overview button", has_text="Actual durations").is_disabled()
    assert page.get_attribute("#traj-overview", "data-mode") == "equal"
    assert "Actual durations are unavailable" in page.inner_text("#traj-overview .tl-note")
    assert "rebuilt" in page.inner_text("#traj-overview .tl-note")
    assert texts_agree(page) > 0
    assert page.inner_text("#traj-overview .tl-note").count("unavailable") == 1  # said once


def test_a_codex_rollout_has_an_overview(viewer: Viewer) -> None:
    data = interop_file(CODEX).read_bytes()
    page = fresh(viewer, "tl-codex.jsonl", data)
    trajectory(viewer)
    _, expected = cpython_rows(data)
    value = timeline(page)
    assert value == expected["timeline"] and value["total"] > 0
    assert texts_agree(page) > 0  # search's row texts, on another harness's rows
    # The whole run is in view (not the range the last session's overview showed).
    assert page.get_attribute("#traj-overview", "data-range") == f"0.0-{value['slots']}.0"
    note = page.inner_text("#traj-overview .tl-note")
    assert "step" in note and ("unavailable" in note) == (value["timed"] == 0)


# --- filters ---------------------------------------------------------------------------------------------------


def facet_counts(page: Page) -> dict[str, int]:
    return dict(page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#row-filters input[data-facet]')]"
        ".map((i) => [i.dataset.facet,"
        " Number(i.parentElement.querySelector('.filter-count').textContent.replace(/,/g, ''))]))"))


def test_row_filters_count_hide_and_keep_search_and_keys_honest(viewer: Viewer) -> None:
    data = demo_bytes()
    page = fresh(viewer, "tl-filter.jsonl", data)
    py, _ = cpython_rows(data)
    expected: dict[str, int] = {}
    for node in py.window.chat.values():
        if node.kind != "event":
            expected[row_facet(node)] = expected.get(row_facet(node), 0) + 1
    counts = facet_counts(page)
    for facet, n in expected.items():
        if facet != "thinking":
            assert counts[facet] == n, facet
    tool = max((f for f in expected if f.startswith("tool:")), key=lambda f: expected[f])
    before = viewer.row_count()
    total_before = page.evaluate("async () => (await window.transcriptViewer.search('the')).matches")
    page.click("#row-filters summary")
    page.uncheck(f"#row-filters input[data-facet='{tool}']")
    assert viewer.row_count() == before - expected[tool]
    assert page.evaluate("(t) => window.transcriptViewer.view.shownKeys()"
                         ".every((k) => window.transcriptViewer.view.metas.get(k).facet !== t)", tool)
    assert json.loads(page.evaluate("() => localStorage.getItem('transcript-viewer.hidden-rows')")) == [tool]
    assert "hidden" in page.inner_text("#row-filters .filter-note")
    # Search counts only the rows shown.
    hidden_hits = sum(h[1] for h in json.loads(py.search("the"))["hits"] if row_facet(py.window.chat[h[0]]) == tool)
    total_after = page.evaluate("async () => (await window.transcriptViewer.search('the')).matches")
    assert total_after == total_before - hidden_hits
    page.evaluate("() => window.transcriptViewer.search('')")
    # j moves over shown rows only.
    page.keyboard.press("Escape")
    page.evaluate("() => document.activeElement instanceof HTMLElement && document.activeElement.blur()")
    page.keyboard.press("g")
    for _ in range(6):
        page.keyboard.press("j")
        focused = page.evaluate("() => document.activeElement.dataset.key")
        assert page.evaluate("(k) => window.transcriptViewer.view.metas.get(k).facet", focused) != tool
    # A link to a hidden row shows it anyway, and says so.
    hidden_key, seq = next((n.key, n.anchorSeq) for n in py.window.chat.values() if row_facet(n) == tool)
    page.evaluate("(s) => { location.hash = `#seq=${s}`; }", seq)
    page.wait_for_function("(k) => window.transcriptViewer.view.shownKeys().includes(k)", arg=hidden_key)
    assert "shown anyway" in page.inner_text("#row-filters .filter-note")
    # Hiding thinking hides the Think sections of rows with text.
    page.evaluate("() => window.transcriptViewer.filters.set(['thinking'])")
    assert page.evaluate("() => document.getElementById('transcript').classList.contains('hide-thinking')")
    think = page.locator("#transcript details.think")
    assert think.count() == 0 or not think.first.is_visible()
    page.evaluate("() => window.transcriptViewer.filters.set([])")
    assert viewer.row_count() == before


def settled_counts(page: Page) -> dict[str, int]:
    """The filter menu's counts once they were recounted for the rows now loaded (counts are redone on the next
    frame: read before that, they are the previous window's). Thinking aside: it counts Think sections too."""
    page.wait_for_function("""() => {
        const v = window.transcriptViewer.view;
        const loaded = v.order.filter((k) => !v.metas.get(k).hidden).length;
        const counted = [...document.querySelectorAll('#row-filters input[data-facet]')]
          .filter((i) => i.dataset.facet !== 'thinking' && !i.parentElement.hidden)
          .reduce((n, i) => n + Number(i.parentElement.querySelector('.filter-count').textContent), 0);
        return loaded > 0 && counted === loaded;
    }""")
    return facet_counts(page)


def test_filter_counts_follow_the_rows_as_they_arrive(viewer: Viewer) -> None:
    data = demo_bytes()
    page = fresh(viewer, "tl-count.jsonl", data)
    whole = settled_counts(page)
    # The newest page only (as a served session's first page): the counts add up to the rows loaded (settled_counts
    # waits for that), whatever older page a page near its top has loaded by itself meanwhile (navigation.mjs).
    result = viewer.open_file(viewer.add_file("tl-count-part.jsonl", data), maxMessages=2)
    assert result["error"] is None
    settled_counts(page)
    # Every older page in: the counts are the whole file's again.
    for _ in range(10):
        if page.locator("#load-older").is_hidden():
            break
        page.evaluate("document.getElementById('load-older').click()")
        page.wait_for_function("() => !document.documentElement.dataset.busy")
    assert page.locator("#load-older").is_hidden()
    assert settled_counts(page) == whole


# --- the session list's date filter ----------------------------------------------------------------------------


def test_the_session_list_date_filter_keeps_recent_entries(viewer: Viewer) -> None:
    page = viewer.page
    kept = page.evaluate("""async () => {
        const { grouped } = await import("./sessiongroups.mjs");
        const now = Date.now();
        const entries = [
          { id: "new", file: "a.jsonl", lastActivity: now - 3_600_000 },
          { id: "week", file: "b.jsonl", lastActivity: now - 5 * 86_400_000 },
          { id: "old", file: "c.jsonl", lastActivity: now - 90 * 86_400_000 },
          { id: "none", file: "d.jsonl" },
        ];
        const ids = (since) => grouped({ kind: "served", name: "x", entries }, { sort: "newest", filter: "",
          warmups: true, expanded: new Set(), seen: new Map(), since }).flatMap((g) => g.rows.map((r) => r.entry.id));
        const { sinceFor } = await import("./filters.mjs");
        return { all: ids(null), week: ids(sinceFor("7d")), month: ids(sinceFor("30d")) };
    }""")
    assert kept == {"all": ["new", "week", "old", "none"], "week": ["new", "week"], "month": ["new", "week"]}
    import time

    from session_builder import Session

    fresh = Session("dates-today", start_time=int(time.time() * 1000))  # active now: the "today" filter keeps it
    fresh.user("asked today")
    fresh.assistant([("text", "answered today")])
    fresh.end_step()
    fresh.end_turn()
    (viewer.served.sessions / "dates-today.jsonl").write_bytes(fresh.to_bytes())
    page.fill("#session-filter", "")
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='dates-today']")
    select = page.locator("#session-dates")
    assert select.count() == 1
    select.select_option("today")
    try:
        assert json.loads(page.evaluate("() => localStorage.getItem('transcript-viewer.session-dates')")) == ["today"]
        # The served entries shown (a folder an earlier test opened in the page is listed too, as folder:…).
        shown = page.evaluate("() => [...document.querySelectorAll('#session-list button[data-id]')]"
                              ".map((b) => b.dataset.id).filter((id) => !/^(folder|file):/.test(id))")
        since = page.evaluate("async () => (await import('./filters.mjs')).sinceFor('today')")
        listed = {e["id"]: e
                  for e in page.evaluate("async () => (await (await fetch('api/sessions')).json()).sessions")}
        assert "dates-today" in shown
        recent = {sid for sid, e in listed.items() if e.get("lastActivity", 0) >= since}
        assert set(shown) <= recent and len(listed) > len(recent)  # older entries are hidden (a child shows nested)
    finally:
        select.select_option("all")  # the page is shared: later tests list sessions of any date


@pytest.fixture(autouse=True)
def _clear_filters(viewer: Viewer) -> Any:
    yield
    viewer.page.evaluate("() => window.transcriptViewer.filters && window.transcriptViewer.filters.set([])")
