"""Live follow through the real server's SSE stream: a growing session file shows new rows as they are written, a
reader at the end stays there (and one who scrolled away is offered "Latest"), opening a section keeps it in place,
"Load older" prepends the server's older page through the journal, and a dropped connection reconnects (sending the
last event's seq as Last-Event-ID) and resumes from a fresh snapshot."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from session_builder import Session, jsonl

from assembler.chunk_rows import pack_chunk_runs

if TYPE_CHECKING:
    from conftest import Viewer

TURNS = 30  # 60 messages: more than one 50-message page
MORE = 6  # turns the tests append, a few at a time


def build(turns: int) -> Session:
    s = Session("live")
    for n in range(1, turns + 1):
        s.user(f"Live question number {n}?")
        s.assistant([("reasoning", f"Thinking about question {n}.\n\n" + "One more line of thought.\n\n" * 8),
                      ("text", f"Live answer number {n}, streamed as many small deltas for the follow test.")])
        s.end_step()
        s.end_turn()
    return s


def records_of(session: Session) -> list[dict[str, object]]:
    return pack_chunk_runs(session.events)


@pytest.fixture(scope="module")
def live(viewer: Viewer) -> Viewer:
    full = build(TURNS + MORE)
    records = records_of(full)
    head = len(records_of(build(TURNS)))
    path = viewer.served.sessions / "live.jsonl"
    path.write_bytes(jsonl(full.header, records[:head]))
    page = viewer.page
    page.evaluate("() => { location.hash = 'session=live'; }")
    page.wait_for_function(
        """() => window.transcriptViewer.view.order
                       .filter((k) => window.transcriptViewer.view.metas.get(k).kind === 'turn-tail').length >= 25
                 && document.getElementById('live-state').dataset.state === 'live'""",
        timeout=60_000,
    )
    viewer.live_path = path  # type: ignore[attr-defined]
    viewer.live_records = records  # type: ignore[attr-defined]
    viewer.live_written = head  # type: ignore[attr-defined]
    viewer.live_header = full.header  # type: ignore[attr-defined]
    return viewer


def _shown(viewer: Viewer) -> str:
    return viewer.page.inner_text("#transcript")


def test_snapshot_shows_the_newest_page(live: Viewer) -> None:
    assert live.page.locator("#load-older").is_visible()
    live.page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 30,')")


def _append_through(live: Viewer, turns: int) -> None:
    """Appends the session's records through turn ``turns``, one record read and sent at a time, as a writer's
    appends are."""
    from assembler.records import encode

    end = len(records_of(build(turns)))
    with live.live_path.open("ab") as out:  # type: ignore[attr-defined]
        for record in live.live_records[live.live_written:end]:  # type: ignore[attr-defined]
            out.write(encode(record) + b"\n")
            out.flush()
            live.served.update("live")
    live.live_written = end  # type: ignore[attr-defined]


# Resolves after `frames` animation frames and says whether the list is pinned and the page at its end.
SETTLED_AT_END = """async (frames) => {
    for (let i = 0; i < frames; i++) await new Promise((done) => requestAnimationFrame(done));
    const doc = document.scrollingElement || document.documentElement;
    return {pinned: window.transcriptViewer.view.list.pinned,
            atEnd: doc.scrollHeight - window.scrollY - window.innerHeight <= 2};
}"""


def test_appended_events_appear_live(live: Viewer) -> None:
    _append_through(live, TURNS + 2)
    live.page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 32,')", timeout=30_000)
    text = _shown(live)
    assert "Live question number 31?" in text
    assert text.count("Live answer number 32,") == 1  # no duplicate rows from the live stream


def test_opening_a_section_at_the_end_keeps_it_in_place(live: Viewer) -> None:
    """A reader at the end who opens a Think block near the bottom reads it where it is: the page does not jump to
    the new end, and following stops until the reader is back at the end."""
    page = live.page
    page.evaluate("() => window.transcriptViewer.view.scrollToEnd()")
    assert page.evaluate(SETTLED_AT_END, 5) == {"pinned": True, "atEnd": True}
    summary = page.locator("#transcript details.think:not([open]) > summary").last.element_handle()
    before = summary.bounding_box()
    # on screen, so the click scrolls nothing itself
    assert before is not None and 0 < before["y"] < page.evaluate("() => window.innerHeight") - before["height"]
    summary.click()
    page.wait_for_function("""() => [...document.querySelectorAll('#transcript details.think[open]')]
        .some((d) => d.querySelector('.think-body') && !d.querySelector('[data-pending], .loading'))""")
    settled = page.evaluate(SETTLED_AT_END, 10)
    after = summary.bounding_box()
    assert after is not None and abs(after["y"] - before["y"]) <= 2, (before, after)
    assert settled["pinned"] is False
    assert page.evaluate("() => document.getElementById('to-latest').hidden")


def test_a_reader_at_the_end_stays_there_when_rows_change_height(live: Viewer) -> None:
    page = live.page
    page.evaluate("() => window.scrollTo(0, 0)")  # the reader scrolls away: no longer following
    assert page.evaluate(SETTLED_AT_END, 3) == {"pinned": False, "atEnd": False}
    # Back to the end, and before that scroll's event is dispatched rows grow, the last one too: as Think blocks the
    # browser skipped while off screen do when they are first laid out. The reader must stay at the end.
    page.evaluate("""() => {
        window.transcriptViewer.view.scrollToEnd();
        for (const d of document.querySelectorAll('#transcript details.think')) d.open = true;
        const rows = document.querySelectorAll('#transcript > article[data-key]');
        rows[rows.length - 1].style.paddingBottom = '900px';
    }""")
    assert page.evaluate(SETTLED_AT_END, 10) == {"pinned": True, "atEnd": True}
    _append_through(live, TURNS + 4)
    page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 34,')", timeout=30_000)
    assert page.evaluate(SETTLED_AT_END, 10) == {"pinned": True, "atEnd": True}
    page.evaluate("() => { for (const e of document.querySelectorAll('#transcript > article')) e.style.padding = ''; }")


def test_rows_arriving_below_a_reader_offer_latest(live: Viewer) -> None:
    page = live.page
    page.evaluate("() => window.scrollTo(0, 0)")  # the reader scrolls away from the end
    assert page.evaluate(SETTLED_AT_END, 3) == {"pinned": False, "atEnd": False}
    assert page.evaluate("() => document.getElementById('to-latest').hidden")
    _append_through(live, TURNS + 5)
    page.wait_for_function("() => !document.getElementById('to-latest').hidden", timeout=30_000)
    assert page.evaluate("() => window.scrollY") < 50  # the reader was left where they were
    page.locator("#to-latest").click()
    assert page.evaluate(SETTLED_AT_END, 10) == {"pinned": True, "atEnd": True}
    assert page.evaluate("() => document.getElementById('to-latest').hidden")
    assert "Live answer number 35," in _shown(live)
    _append_through(live, TURNS + 6)  # followed again: the new turn comes into view at the end
    page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 36,')", timeout=30_000)
    assert page.evaluate(SETTLED_AT_END, 10) == {"pinned": True, "atEnd": True}


def test_load_older_prepends_the_servers_older_page(live: Viewer) -> None:
    page = live.page
    # A click event without Playwright's scroll-into-view (scrolling up near the top loads older pages by itself).
    page.locator("#load-older").dispatch_event("click")
    page.wait_for_function("() => document.getElementById('load-older').hidden")
    text = live.render_all()
    assert "Live question number 1?" in text
    assert text.count("Live question number 5?") == 1
    assert page.locator("[role=alert]").is_hidden()


def test_reconnects_after_the_server_drops_the_stream(live: Viewer) -> None:
    page = live.page
    opens = page.evaluate("() => window.transcriptViewer.state.follow.opens")
    # Replacing the file makes the server close its followers; the page reconnects and gets a new snapshot.
    full = build(TURNS + MORE + 1)
    path = live.live_path  # type: ignore[attr-defined]
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(jsonl(full.header, records_of(full)))
    with page.expect_request(lambda r: "/follow?" in r.url, timeout=60_000) as asked:
        os.replace(tmp, path)
    # Read with fetch as bytes (no EventSource), resuming from the seq of the last event the stream gave.
    assert asked.value.resource_type == "fetch"
    assert asked.value.all_headers().get("last-event-id") == str(build(TURNS + MORE).events[-1]["seq"])
    page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 37,')", timeout=60_000)
    assert page.locator("[role=alert]").is_hidden()
    text = _shown(live)
    assert text.count("Live answer number 37,") == 1
    assert page.evaluate("() => window.transcriptViewer.state.follow.opens") > opens  # a new connection was opened
    page.evaluate("() => { history.replaceState(null, '', location.pathname); }")
