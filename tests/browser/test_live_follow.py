"""Live follow through the real server's SSE stream: a growing session file shows new rows as they are written,
"Load older" prepends the server's older page through the journal, and a dropped connection reconnects and resumes
from a fresh snapshot."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from session_builder import Session, jsonl

from assembler.chunk_rows import pack_chunk_runs

if TYPE_CHECKING:
    from conftest import Viewer

TURNS = 30  # 60 messages: more than one 50-message page


def build(turns: int) -> Session:
    s = Session("live")
    for n in range(1, turns + 1):
        s.user(f"Live question number {n}?")
        s.assistant([("reasoning", f"Thinking about question {n}."),
                      ("text", f"Live answer number {n}, streamed as many small deltas for the follow test.")])
        s.end_step()
        s.end_turn()
    return s


def records_of(session: Session) -> list[dict[str, object]]:
    return pack_chunk_runs(session.events)


@pytest.fixture(scope="module")
def live(viewer: Viewer) -> Viewer:
    full = build(TURNS + 4)
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
    viewer.live_head = head  # type: ignore[attr-defined]
    viewer.live_mid = len(records_of(build(TURNS + 2)))  # type: ignore[attr-defined]
    viewer.live_header = full.header  # type: ignore[attr-defined]
    return viewer


def _shown(viewer: Viewer) -> str:
    return viewer.page.inner_text("#transcript")


def test_snapshot_shows_the_newest_page(live: Viewer) -> None:
    assert live.page.locator("#load-older").is_visible()
    live.page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 30,')")


def _append(live: Viewer, records: list[dict[str, object]]) -> None:
    from assembler.records import encode

    with live.live_path.open("ab") as out:  # type: ignore[attr-defined]
        for record in records:
            out.write(encode(record) + b"\n")
            out.flush()
            live.served.update("live")  # one record read and sent at a time, as a writer's appends are


# Resolves after `frames` animation frames and says whether the list is pinned and the page at its end.
SETTLED_AT_END = """async (frames) => {
    for (let i = 0; i < frames; i++) await new Promise((done) => requestAnimationFrame(done));
    const doc = document.scrollingElement || document.documentElement;
    return {pinned: window.transcriptViewer.view.list.pinned,
            atEnd: doc.scrollHeight - window.scrollY - window.innerHeight <= 2};
}"""


def test_appended_events_appear_live(live: Viewer) -> None:
    records = live.live_records  # type: ignore[attr-defined]
    _append(live, records[live.live_head:live.live_mid])  # type: ignore[attr-defined]
    live.page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 32,')", timeout=30_000)
    text = _shown(live)
    assert "Live question number 31?" in text
    assert text.count("Live answer number 32,") == 1  # no duplicate rows from the live stream


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
    records = live.live_records  # type: ignore[attr-defined]
    _append(live, records[live.live_mid:])  # type: ignore[attr-defined]
    page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 34,')", timeout=30_000)
    assert page.evaluate(SETTLED_AT_END, 10) == {"pinned": True, "atEnd": True}
    page.evaluate("() => { for (const e of document.querySelectorAll('#transcript > article')) e.style.padding = ''; }")


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
    # Replacing the file makes the server close its followers; EventSource reconnects and gets a new snapshot.
    full = build(TURNS + 5)
    path = live.live_path  # type: ignore[attr-defined]
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(jsonl(full.header, records_of(full)))
    os.replace(tmp, path)
    page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Live answer number 35,')", timeout=60_000)
    assert page.locator("[role=alert]").is_hidden()
    text = _shown(live)
    assert text.count("Live answer number 35,") == 1
    assert page.evaluate("() => window.transcriptViewer.state.follow.opens") > opens  # a new connection was opened
    page.evaluate("() => { history.replaceState(null, '', location.pathname); }")
