"""Search across sessions from the session list's filter box (issue 21 item 4): a word typed there lists a hit from
another session under the entries; picking it opens that session at the hit's row, in view, with the word marked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer
    from playwright.sync_api import Page

WORD = "quixotically"
TURNS = 40
AT = 12  # the turn whose answer holds the word: older than the first page, so "Load older" runs to reach it


def current_mark(page: Page) -> dict[str, Any]:
    """The in-page search's current mark: its text, its chat row's text and seq, whether it is in view, the query."""
    return dict(page.evaluate("""() => {
        const mark = document.querySelector('mark.search-hit.search-current');
        const row = mark.closest('article[data-key]');
        const box = mark.getBoundingClientRect();
        return { text: mark.textContent, rowText: row.innerText, seq: Number(row.dataset.seq),
                 inView: box.top >= 0 && box.bottom <= window.innerHeight && box.height > 0,
                 query: document.getElementById('search').value };
    }"""))


def long_session(sid: str, word_at: int | None) -> bytes:
    s = Session(sid)
    for n in range(1, TURNS + 1):
        s.user(f"{sid} question {n}?")
        extra = f" It ends {WORD} here." if n == word_at else ""
        s.assistant([("text", f"{sid} answer {n}, long enough to take some room on the screen.{extra}")])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


def test_a_text_hit_opens_its_session_at_the_row_marked(viewer: Viewer) -> None:
    served = viewer.served
    (served.sessions / "textsearch-a.jsonl").write_bytes(long_session("textsearch-a", None))
    (served.sessions / "textsearch-b.jsonl").write_bytes(long_session("textsearch-b", AT))
    page = viewer.page
    page.fill("#session-filter", "")  # an earlier test's filter would hide the new files
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='textsearch-b']")
    page.evaluate("() => { location.hash = 'session=textsearch-a'; }")
    page.wait_for_function("() => document.getElementById('transcript').innerText.includes('textsearch-a answer 40,')",
                           timeout=60_000)
    # The indexer (a thread beside the server) has the new files within a pass or two.
    page.wait_for_function("async (w) => (await (await fetch('api/search?q=' + w)).json()).results.length > 0",
                           arg=WORD, timeout=30_000, polling=300)

    page.fill("#session-filter", WORD)
    hit = page.locator("#session-hits button.hit-button[data-session='textsearch-b']")
    hit.wait_for(timeout=10_000)
    assert hit.locator(".session-name").inner_text() == "textsearch-b question 1?"
    assert hit.locator("mark.hit-mark").inner_text() == WORD
    assert "textsearch-b answer 12," in hit.locator(".hit-snippet").inner_text()
    assert page.locator("#session-list button[data-id='textsearch-b']").count() == 0  # no title matched: text did
    seq = int(hit.get_attribute("data-seq") or "-1")

    hit.click()
    page.wait_for_function("(seq) => location.hash.startsWith(`#session=textsearch-b&seq=`) "
                           "&& document.querySelector('mark.search-hit.search-current')", arg=seq, timeout=60_000)
    page.evaluate("() => window.transcriptViewer.idle()")
    where = current_mark(page)
    assert where["text"].lower() == WORD and where["inView"], where
    assert "textsearch-b answer 12," in where["rowText"] and where["query"] == WORD
    assert where["seq"] <= seq
    page.fill("#session-filter", "")
    page.fill("#search", "")
