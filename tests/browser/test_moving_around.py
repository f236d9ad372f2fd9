"""Moving around (issue 12 item 7): the URL follows the row in view (#session=ID&seq=N, replaceState), each row's
copy buttons put the right text on the clipboard, scrolling up near the top by hand loads older messages (the
page's own scrolling does not), "Load older" keeps the reader's row where it was on screen once the older rows are
rendered and measured, and ``?`` shows the keyboard help."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page
from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer

TURNS = 30  # 60 messages: more than one 50-message page
ARGS = {"path": "src/main.py", "lines": [1, 20]}
RESULT = "def main():\n    return 0\n"


def long_session(sid: str) -> bytes:
    s = Session(sid)
    for n in range(1, TURNS + 1):
        s.user(f"Moving question {n}?")
        calls = [(f"call-{n}", "read_file", json.dumps(ARGS))] if n == TURNS else []
        s.assistant([("text", f"Moving answer {n}, long enough to take some room on the screen.")], calls=calls)
        if calls:
            s.tool_result(f"call-{n}", RESULT)
        s.end_step()
        s.end_turn()
    return s.to_bytes()


def open_fresh(viewer: Viewer, sid: str) -> Page:
    (viewer.served.sessions / f"{sid}.jsonl").write_bytes(long_session(sid))
    page = viewer.page
    page.evaluate("(sid) => { location.hash = 'session=' + sid; }", sid)
    page.wait_for_function(
        "() => document.getElementById('transcript').innerText.includes('Moving answer 30,')"
        " && !document.getElementById('load-older').hidden", timeout=60_000)
    settle(page)
    return page


def settle(page: Page) -> None:
    """Waits until no "Load older" runs and no row is rendering."""
    page.wait_for_function("() => !document.documentElement.dataset.loadingOlder")
    page.evaluate("() => window.transcriptViewer.idle()")


def count_rows(page: Page) -> int:
    return int(page.evaluate("() => window.transcriptViewer.view.shown.length"))  # rows, attached or not


def test_url_follows_the_row_in_view(viewer: Viewer) -> None:
    page = open_fresh(viewer, "moving-url")
    top_seq = """() => {
        // The row at the top of the reading area: of the rows reaching below the header, the highest on screen.
        const header = document.querySelector('.app-header').getBoundingClientRect().bottom;
        const rows = [...document.querySelectorAll('#transcript article[data-key]')]
            .filter((el) => !el.hidden && el.getBoundingClientRect().bottom > header + 1)
            .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
        return rows.length ? Number(rows[0].dataset.seq) : null;
    }"""
    seen = set()
    for fraction in (0.6, 0.25):
        page.evaluate("(f) => window.scrollTo(0, document.scrollingElement.scrollHeight * f)", fraction)
        settle(page)
        # Eventually the hash names the row at the top, whatever late layout moved it there.
        page.wait_for_function(f"() => {{ const seq = ({top_seq})(); "
                               "return seq !== null && location.hash === `#session=moving-url&seq=${seq}`; }")
        seen.add(page.evaluate("() => location.hash"))
    assert len(seen) == 2  # it moved with the scrolling
    length = page.evaluate("() => history.length")
    # Scroll the next row to the top (a fixed distance can stay inside one tall row: no new row, no new hash).
    page.evaluate(f"""() => {{
        const header = document.querySelector('.app-header').getBoundingClientRect().bottom;
        const top = ({top_seq})();
        const rows = [...document.querySelectorAll('#transcript article[data-key]')]
            .filter((el) => !el.hidden && Number(el.dataset.seq) > top)
            .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
        window.scrollBy(0, rows[0].getBoundingClientRect().top - header + 2);
    }}""")
    page.wait_for_function("(old) => location.hash !== old", arg=page.evaluate("() => location.hash"))
    assert page.evaluate("() => history.length") == length  # replaceState: Back is not flooded


def test_copy_buttons_put_the_right_text_on_the_clipboard(viewer: Viewer) -> None:
    page = open_fresh(viewer, "moving-copy")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=viewer.url.rstrip("/"))
    page.evaluate("() => window.transcriptViewer.idle()")

    def copy(selector: str, kind: str) -> str:
        row = page.locator(selector).last
        row.scroll_into_view_if_needed()
        page.evaluate("() => window.transcriptViewer.idle()")
        row.locator(f"button[data-copy='{kind}']").click()
        page.wait_for_function(
            "([sel, kind]) => { const rows = document.querySelectorAll(sel);"
            " return rows[rows.length - 1].querySelector(`button[data-copy='${kind}']`).dataset.copied === 'yes'; }",
            arg=[selector, kind])
        return str(page.evaluate("() => navigator.clipboard.readText()"))

    user_row = "article.kind-input-message[data-role='user']"
    assert copy(user_row, "text") == f"Moving question {TURNS}?"
    tool_row = "article.kind-tool"
    assert json.loads(copy(tool_row, "arguments")) == ARGS
    assert copy(tool_row, "result") == RESULT
    link = copy(user_row, "link")
    seq = page.locator(user_row).last.get_attribute("data-seq")
    page_url = page.evaluate("() => location.href.split('#')[0]")
    assert link == f"{page_url}#session=moving-copy&seq={seq}"


def test_scrolling_up_near_the_top_by_hand_loads_older(viewer: Viewer) -> None:
    page = open_fresh(viewer, "moving-older-scroll")
    before = count_rows(page)
    page.evaluate("() => window.scrollTo(0, 0)")  # the page's own scrolling loads nothing
    settle(page)
    assert count_rows(page) == before
    page.mouse.move(600, 500)
    page.evaluate("() => window.scrollTo(0, 500)")
    page.mouse.wheel(0, -450)  # the reader scrolls up near the top: older messages load by themselves
    page.wait_for_function("(n) => window.transcriptViewer.view.shown.length > n", arg=before)
    settle(page)
    assert "Moving question 1?" in viewer.render_all()


def test_question_mark_shows_the_keyboard_help(viewer: Viewer) -> None:
    page = viewer.page
    page.locator("body").focus()
    page.keyboard.press("?")
    assert page.locator("#key-help").is_visible()
    assert "load older" in page.locator("#key-help").inner_text()
    page.keyboard.press("Escape")
    assert page.locator("#key-help").is_hidden()


def varied_session(sid: str, turns: int = 75) -> bytes:
    """``2 * turns`` messages of varied lengths (one line to several paragraphs), so estimated and measured row
    heights differ, as they do on real logs."""
    s = Session(sid)
    for n in range(1, turns + 1):
        s.user(f"Varied question {n}? " + "Some context for it. " * ((n * 7) % 23))
        paragraphs = [f"Varied answer {n}, part {p}: " + "words that wrap across the line " * ((n * 13 + p * 5) % 17)
                      for p in range(1 + (n * 5) % 4)]
        s.assistant([("text", "\n\n".join(paragraphs))])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


FIRST_ROW = """() => {
    // The reader's row: of the rows reaching below the sticky header, the highest on screen; its key and top.
    const header = document.querySelector('.app-header').getBoundingClientRect().bottom;
    const rows = [...document.querySelectorAll('#transcript article[data-key]')]
        .filter((el) => !el.hidden && el.getBoundingClientRect().bottom > header + 1)
        .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    return rows.length ? { key: rows[0].dataset.key, top: rows[0].getBoundingClientRect().top } : null;
}"""

SETTLE = """async () => {
    // Until the list is still: no load running, no row rendering or waiting for its HTML, and two frames (so the
    // ResizeObserver has reported the rows' measured heights) changed nothing.
    const tv = window.transcriptViewer;
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    for (let i = 0; i < 100; i++) {
        await tv.idle();
        const before = document.scrollingElement.scrollTop;
        await frame();
        const still = !document.documentElement.dataset.loadingOlder && !document.documentElement.dataset.busy
            && !document.querySelector('#transcript article.placeholder');
        if (still && document.scrollingElement.scrollTop === before) return i;
    }
    throw new Error('the list did not settle');
}"""


@pytest.mark.parametrize(("row", "dy"), [(1, 0), (2, -40), (5, 60)])
def test_load_older_keeps_the_readers_row_in_place(viewer: Viewer, row: int, dy: int) -> None:
    result = viewer.open_file(viewer.add_file("varied.jsonl", varied_session("varied")))
    assert result["inputs"] > 0
    page = viewer.page
    assert page.locator("#load-older").is_visible()
    before = count_rows(page)
    # The reader is at some row near the top of what is shown: row `row` scrolled to the top, then by `dy` px.
    page.evaluate("""([row, dy]) => {
        const tv = window.transcriptViewer;
        tv.view.focusKey(tv.view.shownKeys()[row], { block: 'start' });
        window.scrollBy(0, dy);
    }""", [row, dy])
    page.evaluate(SETTLE)
    first = page.evaluate(FIRST_ROW)
    assert first is not None
    # Load older, as the button does (a DOM click: Playwright's click would scroll the button into view first).
    page.evaluate("() => document.getElementById('load-older').click()")
    page.wait_for_function("(n) => window.transcriptViewer.view.shown.length > n", arg=before)
    page.evaluate(SETTLE)
    assert count_rows(page) > before
    after = page.evaluate(FIRST_ROW)
    assert after is not None and after["key"] == first["key"]
    assert abs(after["top"] - first["top"]) <= 2, (first, after)
