"""The session list people can use (issue 12 item 4): each entry's title, one line of facts (harness, model,
recency, turns, usage), file name (full path as tooltip) and status; sorted newest first with a toggle; a filter;
one Tab stop with arrow keys inside; a sidebar that collapses; a page that works 390 px wide."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page
from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer

DAY = 86_400_000
T0 = 1_767_225_600_000


def session(sid: str, start: int, turns: int) -> bytes:
    s = Session(sid, start_time=start)
    for n in range(1, turns + 1):
        s.user(f"{sid} asks question {n}\nwith a second line")
        s.assistant([("text", f"Answer {n}.")])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


@pytest.fixture(scope="module")
def listed(viewer: Viewer) -> Iterator[Page]:
    for sid, start, turns in (("sortcase-a", T0 + 2 * DAY, 1), ("sortcase-b", T0 + 3 * DAY, 2),
                              ("sortcase-c", T0 + 1 * DAY, 3)):
        (viewer.served.sessions / f"{sid}.jsonl").write_bytes(session(sid, start, turns))
    page = viewer.page
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='sortcase-c']")
    page.fill("#session-filter", "sortcase")
    yield page
    page.fill("#session-filter", "")  # the page is shared: a later module's entries must not stay filtered out


def ids(page: Page) -> list[str]:
    return list(page.evaluate("() => [...document.querySelectorAll('#session-list button[data-id]')]"
                              ".map((b) => b.dataset.id)"))


def test_entries_say_title_file_activity_counts_and_status(listed: Page, viewer: Viewer) -> None:
    entry = listed.locator("#session-list button[data-id='sortcase-b']")
    assert entry.locator(".session-name").inner_text() == "sortcase-b asks question 1"  # first user text, line 1
    file = entry.locator(".session-file")
    assert file.inner_text() == "sortcase-b.jsonl"
    assert file.get_attribute("title") == str((viewer.served.sessions / "sortcase-b.jsonl").resolve())
    listing = {s["id"]: s for s in listed.evaluate("async () => (await (await fetch('api/sessions')).json()).sessions")}
    # One line of facts: harness, model, recency, turns, usage (the tokens the log records, summed).
    b = listing["sortcase-b"]
    facts = entry.locator(".session-facts")
    when = listed.evaluate("(ms) => new Intl.DateTimeFormat('en', {dateStyle: 'medium'}).format(new Date(ms))",
                           b["lastActivity"])
    tokens = sum(b["usage"].values())
    assert facts.inner_text() == f"Transcript Assembler · {b['model']} · {when} · 2 turns · {tokens} tokens"
    details = facts.get_attribute("title") or ""
    assert f"{listing['sortcase-b']['eventCount']} events" in details and "file modified" not in details
    assert b["model"] == "m"  # the model its messages record (message.source.model)
    assert entry.locator(".session-status").inner_text() == "ended"


def test_sorted_newest_first_with_a_toggle(listed: Page) -> None:
    assert ids(listed) == ["sortcase-b", "sortcase-a", "sortcase-c"]
    listed.click("#session-sort")
    assert ids(listed) == ["sortcase-c", "sortcase-a", "sortcase-b"]
    listed.click("#session-sort")  # by name
    assert ids(listed) == ["sortcase-a", "sortcase-b", "sortcase-c"]
    listed.click("#session-sort")  # back to newest first
    assert ids(listed) == ["sortcase-b", "sortcase-a", "sortcase-c"]


def test_filter_by_title_or_file_name(listed: Page) -> None:
    listed.fill("#session-filter", "sortcase-c.jsonl")
    assert ids(listed) == ["sortcase-c"]
    listed.fill("#session-filter", "SORTCASE-A ASKS")
    assert ids(listed) == ["sortcase-a"]
    listed.fill("#session-filter", "no session has this")
    assert ids(listed) == []
    assert "No session matches" in listed.locator("#session-list").inner_text()
    listed.fill("#session-filter", "sortcase")
    assert len(ids(listed)) == 3


def test_one_tab_stop_and_arrow_keys_within_the_list(listed: Page) -> None:
    tab_stops = listed.evaluate("() => [...document.querySelectorAll('#session-list button')]"
                                ".filter((b) => b.tabIndex === 0).length")
    assert tab_stops == 1
    listed.focus("#session-filter")
    listed.keyboard.press("Tab")
    focused = "() => document.activeElement.dataset.id || null"
    assert listed.evaluate(focused) == "sortcase-b"
    listed.keyboard.press("ArrowDown")
    assert listed.evaluate(focused) == "sortcase-a"
    listed.keyboard.press("End")
    assert listed.evaluate(focused) == "sortcase-c"
    listed.keyboard.press("ArrowUp")
    assert listed.evaluate(focused) == "sortcase-a"
    listed.keyboard.press("Enter")
    listed.wait_for_function("() => location.hash.startsWith('#session=sortcase-a')")
    listed.wait_for_function("() => document.getElementById('transcript').innerText.includes('Answer 1.')")
    assert listed.locator("#session-list button[data-id='sortcase-a']").get_attribute("aria-current") == "true"


def test_sidebar_collapses_and_the_page_fits_390_px(listed: Page) -> None:
    listed.click("#sessions-toggle")
    assert listed.locator("#sessions").is_hidden()
    assert listed.get_attribute("#sessions-toggle", "aria-expanded") == "false"
    listed.click("#sessions-toggle")
    assert listed.locator("#sessions").is_visible()
    listed.set_viewport_size({"width": 390, "height": 800})
    try:
        assert listed.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert listed.locator("#session-list button[data-id='sortcase-a']").is_visible()
        box = listed.locator("#transcript").bounding_box()
        assert box is not None and box["width"] <= 390
    finally:
        listed.set_viewport_size({"width": 1200, "height": 900})
