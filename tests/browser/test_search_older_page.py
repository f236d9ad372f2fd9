"""Search covers the whole session (issue 22 item 7): a served session or a local file opens with its newest page,
and the in-page search counts only what is loaded. The counter says so ("… · older not searched"), and "Search older"
(or Shift+Enter / the previous button at the oldest loaded match) loads older pages one at a time until a match
older than the loaded ones turns up, then lands on it (marked, in view, the focus still in the box); with the whole
session loaded the counter is the plain "N of M" (or "no matches"). Fails on the main of 2026-12-07 (8d2acd2): the
counter said "no matches" for a word only in old turns, with no way to search further than the loaded page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page
from test_whole_run_page import open_served as open_served_session

if TYPE_CHECKING:
    from conftest import Viewer

TURNS = 150  # several pages of 50 messages: the newest page holds only the last few turns


@pytest.fixture(autouse=True)
def _clear_search(viewer: Viewer) -> Iterator[None]:
    """Each test leaves the search box empty (the page is shared: a later test's first count must be its own)."""
    yield
    viewer.page.fill("#search", "")
    viewer.page.press("#search", "Escape")


def words_session(sid: str, words: dict[int, str]) -> bytes:
    """A session of TURNS turns; turn n's prompt carries ``words[n]`` when given."""
    from session_builder import Session

    s = Session(sid, start_time=1_767_225_600_000)
    for n in range(1, TURNS + 1):
        s.user(f"{sid} question {n} {words.get(n, '')}".strip())
        s.assistant([("text", f"Answer {n}.")])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


def open_served(viewer: Viewer, sid: str, data: bytes) -> Page:
    page = open_served_session(viewer, sid, data)
    assert page.locator("#load-older").is_visible()  # only the newest page is loaded
    return page


def count(page: Page) -> str:
    return str(page.text_content("#search-count"))


def type_query(page: Page, text: str) -> None:
    page.fill("#search", "")
    page.click("#search")
    page.keyboard.type(text)


def watch_counter(page: Page) -> None:
    """Records every text the counter shows from now on (window.counterTexts)."""
    page.evaluate("""() => {
        const el = document.getElementById('search-count');
        window.counterTexts = [];
        new MutationObserver(() => window.counterTexts.push(el.textContent))
            .observe(el, {childList: true, characterData: true, subtree: true});
    }""")


def assert_lands_on(page: Page, prompt: str) -> None:
    """The current match is marked in the row of ``prompt``, in view, and the focus stayed in the box."""
    current = page.locator("#transcript mark.search-current").first
    current.wait_for(state="attached")
    row_text = current.evaluate("(m) => m.closest('article[data-key]').innerText")
    assert prompt in row_text, row_text
    box = current.bounding_box()
    header = page.locator(".app-header").bounding_box()
    assert box is not None and header is not None
    assert header["y"] + header["height"] <= box["y"] and box["y"] + box["height"] <= 900, (box, header)
    assert page.evaluate("() => document.activeElement?.id") == "search"


def test_search_older_finds_a_word_only_in_an_old_turn(viewer: Viewer) -> None:
    page = open_served(viewer, "older-word", words_session("older-word", {2: "xylophone"}))
    type_query(page, "xylophone")
    page.wait_for_function("() => document.getElementById('search-count').textContent"
                           " === 'no matches · older not searched'")
    button = page.locator("#search-older")
    assert button.is_visible() and button.inner_text() == "Search older"
    watch_counter(page)
    button.click()
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('1 of 1')",
                           timeout=90_000)
    texts = page.evaluate("() => window.counterTexts")
    assert any(t.startswith("Searching older… page ") for t in texts), texts  # it said what it was doing
    assert_lands_on(page, "older-word question 2 xylophone")
    # The records before turn 2 (turn 1's page) are not loaded yet: the counter still says so, and searching on
    # finds nothing more; then the whole session is loaded and the counter is the plain count, on the same match.
    if count(page) != "1 of 1":
        assert count(page) == "1 of 1 · older not searched"
        button.click()
        page.wait_for_function("() => document.getElementById('search-count').textContent === '1 of 1'",
                               timeout=90_000)
        assert_lands_on(page, "older-word question 2 xylophone")
    assert button.is_hidden()  # the whole session is loaded: nothing older to search
    assert page.evaluate("() => window.transcriptViewer.state.canLoadOlder") is False
    assert page.locator("[role=alert]").is_hidden()


def test_search_older_says_no_matches_over_the_whole_session(viewer: Viewer) -> None:
    page = open_served(viewer, "older-none", words_session("older-none", {}))
    type_query(page, "quokka")
    page.wait_for_function("() => document.getElementById('search-count').textContent"
                           " === 'no matches · older not searched'")
    page.keyboard.press("Enter")  # Enter with nothing loaded matching searches older history too
    page.wait_for_function("() => document.getElementById('search-count').textContent === 'no matches'",
                           timeout=90_000)
    assert page.locator("#search-older").is_hidden()
    assert page.locator("#progress").is_hidden()  # nothing spins
    assert page.evaluate("() => document.documentElement.dataset.loadingOlder") is None
    assert page.evaluate("() => window.transcriptViewer.state.canLoadOlder") is False
    assert page.evaluate("() => document.activeElement?.id") == "search"
    assert page.locator("[role=alert]").is_hidden()  # nothing failed


def test_shift_enter_at_the_oldest_loaded_match_goes_on_into_older_history_of_a_local_file(viewer: Viewer) -> None:
    page = viewer.page
    data = words_session("older-local", {1: "cello", TURNS - 1: "cello"})
    opened = viewer.open_file(viewer.add_file("older-local.jsonl", data))
    assert opened["error"] is None
    assert page.locator("#load-older").is_visible()
    type_query(page, "cello")
    page.wait_for_function("() => document.getElementById('search-count').textContent"
                           " === '1 of 1 · older not searched'")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('1 of 2')",
                           timeout=90_000)
    assert_lands_on(page, "older-local question 1 cello")
    page.keyboard.press("Enter")  # on to the newer match
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('2 of 2')")
    assert_lands_on(page, f"older-local question {TURNS - 1} cello")


def test_escape_stops_a_search_of_older_history(viewer: Viewer) -> None:
    page = open_served(viewer, "older-stop", words_session("older-stop", {}))
    type_query(page, "quokka")
    page.wait_for_function("() => document.getElementById('search-count').textContent"
                           " === 'no matches · older not searched'")
    page.click("#search-older")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('Searching older')")
    page.keyboard.press("Escape")
    assert count(page) == ""
    page.wait_for_function("() => !document.documentElement.dataset.loadingOlder")
    rows = page.evaluate("() => window.transcriptViewer.view.order.length")
    page.wait_for_timeout(800)  # a walk still going would have loaded another page by now
    assert page.evaluate("() => window.transcriptViewer.view.order.length") == rows
    assert page.evaluate("() => window.transcriptViewer.state.canLoadOlder") is True  # it stopped short


def test_the_counter_and_search_older_fit_the_header(viewer: Viewer) -> None:
    """The longer counter and the "Search older" button keep the header's size (one band at 1440 px, two rows at
    1024, three on a phone: test_reader_basics) with nothing spilling sideways; screenshots for a look."""
    page = viewer.page
    data = words_session("older-header-with-a-long-session-title-that-goes-on", {TURNS: "Answer"})
    assert viewer.open_file(viewer.add_file("older-header.jsonl", data))["error"] is None
    type_query(page, "question")
    page.wait_for_function("() => /^1 of \\d+ · older not searched$/.test("
                           "document.getElementById('search-count').textContent)")
    try:
        for width, most in ((1440, 70), (1024, 110), (390, 140)):
            page.set_viewport_size({"width": width, "height": 844})
            page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            height = page.evaluate("() => document.querySelector('.app-header').getBoundingClientRect().height")
            page.screenshot(path=f"build/screenshots/search-older-{width}.png", clip={
                "x": 0, "y": 0, "width": width, "height": min(844, height + 120)})
            assert height <= most, (width, height)
            assert page.is_visible("#search-older") and page.is_visible("#search-count")
            assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth + 1")
            box = page.locator(".search-box").bounding_box()
            assert box is not None and box["x"] + box["width"] <= width + 1, (width, box)
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})  # the fixture's size


def test_a_failed_older_page_is_said_not_swallowed(viewer: Viewer) -> None:
    page = open_served(viewer, "older-fail", words_session("older-fail", {2: "xylophone"}))
    type_query(page, "xylophone")
    page.wait_for_function("() => document.getElementById('search-count').textContent"
                           " === 'no matches · older not searched'")
    pattern = "**/api/sessions/older-fail/page?**"
    viewer.expected_failures.append("/api/sessions/older-fail/page?")
    page.context.route(pattern, lambda route: route.abort())
    try:
        page.click("#search-older")
        page.wait_for_function("() => document.getElementById('search-count').textContent"
                               " === 'no matches · older could not load'", timeout=60_000)
        alert = page.locator("[role=alert]")
        assert alert.is_visible() and "could not load older messages" in alert.inner_text(), alert.inner_text()
        assert page.locator("#search-older").is_visible()  # it can be tried again
        assert page.evaluate("() => document.activeElement?.id") == "search"
    finally:
        page.context.unroute(pattern)
    page.click("#search-older")  # the network is back: on it goes, and finds it
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('1 of 1')",
                           timeout=90_000)
    assert_lands_on(page, "older-fail question 2 xylophone")
    assert page.locator("[role=alert]").is_hidden()  # the older page loaded: its failure's message went


def test_search_older_in_the_trajectory_view_stays_there(viewer: Viewer) -> None:
    page = open_served(viewer, "older-traj", words_session("older-traj", {}))
    page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    type_query(page, "turn 2 · step")  # only turn 2's step row says so, pages back
    page.wait_for_function("() => document.getElementById('search-count').textContent"
                           " === 'no matches · older not searched'")
    page.click("#search-older")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('1 of 1')",
                           timeout=90_000)
    assert page.get_attribute("#view-root", "data-view") == "trajectory"
    current = page.locator("#trajectory mark.search-current").first
    current.wait_for(state="attached")
    assert "Turn 2 · step 1" in current.evaluate("(m) => m.closest('.traj-row').innerText")
    assert current.is_visible()
    page.evaluate("() => window.transcriptViewer.showView('chat')")
