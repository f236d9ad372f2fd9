"""What a reader meets first (issue 22 items 1, 2 and 3): the search box keeps the focus, so Enter and Shift+Enter
move through the matches and letters never fire the page's shortcuts; the one alert stays in view wherever the page
is scrolled (a file or a served session opens at its end) until it is dismissed, and a new message shows it again; a
deep link into old history lands (one page request reaching back to its seq) or says why it cannot (past the end, past
the page limit), and the URL keeps the link. All fail on the main of 2026-12-03 before the fixes (the match row took
the focus; the alert sat above the transcript's top; the URL followed the scroll); the one-request and page-limit tests
also fail on the main with the first item-3 fix (it walked 11 pages one by one, and 50 without a word past them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.browser.test_row_truths import long_session

if TYPE_CHECKING:
    from conftest import Viewer


def test_the_search_box_keeps_the_focus(viewer: Viewer) -> None:
    page = viewer.page
    assert viewer.open_file(viewer.add_file("forty.jsonl", long_session("forty", 40)), all=True)["error"] is None
    theme = page.get_attribute("html", "data-theme")
    page.fill("#search", "")  # an earlier test's query would prefix ours
    page.click("#search")
    page.keyboard.type("Answer")
    page.wait_for_function("() => /of \\d+/.test(document.getElementById('search-count').textContent)")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('2 of')")
    assert page.evaluate("() => document.activeElement?.id") == "search"
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('1 of')")
    assert page.evaluate("() => document.activeElement?.id") == "search"
    assert page.locator("#transcript mark.search-current").first.is_visible()
    page.keyboard.type(" te")  # "t" switches the theme and "e" the events, but not while typing in the box
    assert page.get_attribute("html", "data-theme") == theme
    assert not page.is_checked("#show-events")
    assert page.input_value("#search") == "Answer te"
    page.keyboard.press("Escape")
    assert page.input_value("#search") == ""


def test_the_alert_stays_in_view_until_dismissed(viewer: Viewer) -> None:
    page = viewer.page
    data = long_session("damaged-end", 60) + b'{"type": "user/message", broken\n'
    result = viewer.open_file(viewer.add_file("damaged-end.jsonl", data))
    assert result["error"] is not None
    alert = page.locator("[role=alert]")
    assert page.evaluate("() => document.scrollingElement.scrollTop") > 0  # opened at its end
    for width in (390, 1024, 1440):
        page.set_viewport_size({"width": width, "height": 800})
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        box = alert.bounding_box()
        assert box is not None and 0 <= box["y"] < 800 and box["y"] + box["height"] > 0, (width, box)
        header = page.locator(".app-header").bounding_box()
        assert header is not None and box["y"] >= header["y"] + header["height"] - 1  # under the header, not behind
        page.screenshot(path=f"build/screenshots/alert-{width}.png")
    page.set_viewport_size({"width": 1200, "height": 900})  # the fixture's size
    line = data.count(b"\n")  # the broken last line
    assert alert.inner_text().startswith(f"damaged-end.jsonl, line {line}: invalid JSON")
    page.click("[role=alert] .alert-dismiss")
    assert alert.is_hidden()
    viewer.open_file(viewer.add_file("damaged-again.jsonl", b'{"type": "session", broken\n'))
    assert alert.is_visible()  # a new message shows it again


def test_a_deep_link_keeps_its_url_and_says_why_it_cannot_land(viewer: Viewer) -> None:
    """Item 3: a deep link into old history lands on its row and the URL keeps its seq until the reader scrolls;
    a seq past the end says so in the alert instead of landing elsewhere silently."""
    page = viewer.page
    path = viewer.served.sessions / "deep-link.jsonl"
    path.write_bytes(long_session("deep-link", 120))
    page.fill("#session-filter", "")
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='deep-link']")
    from assembler.logfile import parse_session_bytes

    seqs = [r["seq"] for r in parse_session_bytes(path.read_bytes()).records
            if type(r) is dict and r.get("type") == "user/message"]
    target = seqs[3]  # the fourth prompt: several pages back from the end
    page.evaluate("(seq) => { location.hash = `session=deep-link&seq=${seq}`; }", target)
    page.wait_for_function("(seq) => document.querySelector(`#transcript article.is-target`)?.dataset.seq"
                           " == String(seq)", arg=target, timeout=60_000)
    page.wait_for_timeout(600)  # longer than the URL's follow delay: the page's own scrolling did not rewrite it
    assert page.evaluate("() => location.hash") == f"#session=deep-link&seq={target}"
    page.evaluate("(seq) => { location.hash = `session=deep-link&seq=${seq}`; }", seqs[-1] + 10_000)
    page.wait_for_function("() => document.querySelector('[role=alert]')?.innerText.includes('past the end')")


def _serve_long(viewer: Viewer, sid: str, turns: int) -> list[int]:
    """Writes a long session into the served folder, shows it in the list; returns its prompts' seqs."""
    from assembler.logfile import parse_session_bytes

    data = long_session(sid, turns)
    (viewer.served.sessions / f"{sid}.jsonl").write_bytes(data)
    viewer.page.fill("#session-filter", "")
    viewer.page.click("#refresh-sessions")
    viewer.page.wait_for_selector(f"#session-list button[data-id='{sid}']")
    return [r["seq"] for r in parse_session_bytes(data).records if type(r) is dict and r.get("type") == "user/message"]


def _page_requests(viewer: Viewer, sid: str) -> list[str]:
    return [url for url in viewer.requests if f"/api/sessions/{sid}/page?" in url]


def test_a_deep_link_into_old_history_asks_once_for_the_page_that_holds_it(viewer: Viewer) -> None:
    """Item 3, made fast: a link to turn 5 of 300 loads the older history in one answer (fromSeq), not ten pages
    one by one; it lands on its row and the URL keeps its seq."""
    page = viewer.page
    seqs = _serve_long(viewer, "three-hundred", 300)
    target = seqs[4]
    asked = len(_page_requests(viewer, "three-hundred"))
    page.evaluate("(seq) => { location.hash = `session=three-hundred&seq=${seq}`; }", target)
    page.wait_for_function("(seq) => document.querySelector('#transcript article.is-target')?.dataset.seq"
                           " == String(seq)", arg=target, timeout=60_000)
    older = _page_requests(viewer, "three-hundred")[asked:]
    assert len(older) == 1 and f"fromSeq={target}" in older[0], older  # one page reaching back to the row
    box = page.locator("#transcript article.is-target").bounding_box()
    assert box is not None and 0 <= box["y"] < 900, box  # in view
    page.wait_for_timeout(600)  # longer than the URL's follow delay
    assert page.evaluate("() => location.hash") == f"#session=three-hundred&seq={target}"
    assert page.locator("[role=alert]").is_hidden()  # nothing to say: it landed
    # A seq between two rows (the URL the page writes while scrolling can be 35.5) lands on the row before it.
    asked = len(_page_requests(viewer, "three-hundred"))
    page.evaluate("(seq) => { location.hash = `session=three-hundred&seq=${seq}`; }", seqs[1] + 0.5)
    page.wait_for_function("(seq) => document.querySelector('#transcript article.is-target')?.dataset.seq"
                           " == String(seq)", arg=seqs[1], timeout=60_000)
    older = _page_requests(viewer, "three-hundred")[asked:]
    assert len(older) == 1 and f"fromSeq={seqs[1]}&" in older[0] + "&", older
    assert page.locator("[role=alert]").is_hidden()


def test_a_deep_link_past_the_page_limit_says_how_far_it_got(viewer: Viewer) -> None:
    """Item 3: a row more than SEQ_SEARCH_PAGES pages (2,500 messages) back is not reached; the alert names the
    seq, the limit and the oldest row loaded, and the URL keeps the link."""
    page = viewer.page
    seqs = _serve_long(viewer, "thirteen-hundred", 1300)  # 2,600 messages
    target = seqs[1]
    page.evaluate("(seq) => { location.hash = `session=thirteen-hundred&seq=${seq}`; }", target)
    alert = page.locator("[role=alert]")
    page.wait_for_function("() => document.querySelector('[role=alert]')?.innerText.includes('messages (50 pages)')",
                           timeout=90_000)
    text = alert.inner_text()
    assert f"seq {target} lies more than 2,500 messages (50 pages) back" in text, text
    assert alert.is_visible()
    oldest = page.evaluate("() => document.activeElement?.closest('article[data-key]')?.dataset.seq")
    assert f"the oldest loaded row is seq {oldest}" in text  # the page shows it, Load older just above
    assert page.locator("#load-older").is_visible()
    assert page.evaluate("() => location.hash") == f"#session=thirteen-hundred&seq={target}"


def test_a_served_session_opened_at_its_end_shows_its_alert(viewer: Viewer) -> None:
    """Item 2 on a served session: a damaged file under the served folder opens at its end, and its one alert (the
    bad line, named) is in view under the header at 390, 1024 and 1440 px until dismissed."""
    page = viewer.page
    path = viewer.served.sessions / "served-damaged.jsonl"
    path.write_bytes(long_session("served-damaged", 60) + b'{"type": "user/message", broken\n')
    _serve_long(viewer, "unrelated", 1)  # refreshes the list, which now holds the damaged file too
    page.evaluate("() => { location.hash = 'session=served-damaged'; }")
    alert = page.locator("[role=alert]")
    page.wait_for_function("() => document.querySelector('[role=alert]')?.innerText.includes('invalid JSON')",
                           timeout=60_000)
    page.wait_for_function("() => document.scrollingElement.scrollTop > 0")  # opened at its end
    for width in (390, 1024, 1440):
        page.set_viewport_size({"width": width, "height": 800})
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        box = alert.bounding_box()
        header = page.locator(".app-header").bounding_box()
        assert box is not None and header is not None, width
        assert header["y"] + header["height"] - 1 <= box["y"] and box["y"] + box["height"] <= 800, (width, box)
        page.screenshot(path=f"build/screenshots/served-alert-{width}.png")
    page.get_by_role("button", name="Dismiss these messages").click()
    assert alert.is_hidden()
    page.set_viewport_size({"width": 1200, "height": 900})  # the fixture's size


def test_the_header_stays_small_and_hides_nothing(viewer: Viewer) -> None:
    """The sticky header (issue 22 item 6) was three rows at 1024 px (166 px) and 305 px on a 390 px phone; it is
    now one band at 1440, two rows at 1024 and three on a phone, whose hidden toolbar controls are in the ⋯ menu."""
    page = viewer.page
    data = long_session("header-height-with-a-long-session-title-that-goes-on", 30)
    assert viewer.open_file(viewer.add_file("header-height.jsonl", data))["error"] is None
    heights = {}
    try:
        for width, most in ((1440, 70), (1024, 110), (390, 140)):
            page.set_viewport_size({"width": width, "height": 844})
            heights[width] = page.evaluate("() => document.querySelector('.app-header').getBoundingClientRect().height")
            assert heights[width] <= most, heights
            assert page.is_visible("#search") and page.is_visible("#export-menu > summary")
            assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth + 1")
            summary = page.locator("#session-summary")
            assert summary.is_visible() and summary.get_attribute("title") == summary.inner_text()
        # On the phone the Open, Events and theme controls are the ⋯ menu's stand-ins, and they work.
        assert not page.is_visible("#open-file") and not page.is_visible("label.toggle:has(#show-events)")
        page.click("#more-menu > summary")
        events = page.locator('#more-items [data-proxy="show-events"]')
        assert page.locator('#more-items [data-proxy="open-file"]').is_visible() and events.is_visible()
        before = page.is_checked("#show-events")
        events.click()
        assert page.is_checked("#show-events") is not before
        assert events.get_attribute("aria-pressed") == str(not before).lower()
        assert page.get_attribute("#more-menu", "open") is None  # the menu closed behind the choice
        page.click("#more-menu > summary")
        events.click()  # back as it was
        assert page.is_checked("#show-events") is before
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})  # the fixture's size


def test_a_cleared_search_stays_cleared_when_the_window_changes(viewer: Viewer) -> None:
    """Clearing the box and opening another session at once: the window's re-search must not bring the old query
    back over the empty box (its count stayed, "1 of 1", and Enter on a new query ran it instead of moving)."""
    page = viewer.page
    opened = viewer.open_file(viewer.add_file("cleared-a.jsonl", long_session("cleared-a", 30)), all=True)
    assert opened["error"] is None
    page.fill("#search", "")
    page.click("#search")
    page.keyboard.type("question 7")
    page.wait_for_function("() => document.getElementById('search-count').textContent === '1 of 1'")
    page.fill("#search", "")  # an input event: its search of "" waits for the typing pause
    opened = viewer.open_file(viewer.add_file("cleared-b.jsonl", long_session("cleared-b", 30)), all=True)
    assert opened["error"] is None
    page.evaluate("() => window.transcriptViewer.idle()")
    page.wait_for_timeout(700)  # past both the typing pause and the window's re-search delay
    assert page.input_value("#search") == ""
    assert page.text_content("#search-count") == ""
    page.click("#search")
    page.keyboard.type("Answer")
    page.wait_for_function("() => /^1 of \\d+$/.test(document.getElementById('search-count').textContent)")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent.startsWith('2 of')")
