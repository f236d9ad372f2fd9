"""The viewer's first minute (issue 12 items 1 and 2): the shell and the session list come up before Python is
ready, a session picked meanwhile waits and opens once it is; every failure shows in the one ``role="alert"``
element, naming the file, line, seq or id, and badges say what is really going on. Order is asserted, never time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Page, Route
from session_builder import Session

from assembler.history import page_value
from assembler.records import encode

if TYPE_CHECKING:
    from conftest import Served, Viewer


def small(session_id: str, turns: int = 3, *, first: str = "First question") -> Session:
    s = Session(session_id)
    for n in range(1, turns + 1):
        s.user(f"{first} {n}?" if n == 1 else f"Question {n}?")
        s.assistant([("text", f"Answer {n}.")])
        s.end_step()
        s.end_turn()
    return s


def alert_text(page: Page) -> str:
    alerts = page.locator("[role=alert]")
    assert alerts.count() == 1  # exactly one alert element, always
    return alerts.inner_text()


def wait_alert(page: Page, needle: str, timeout: float = 30_000) -> str:
    page.wait_for_function(
        "(needle) => { const a = document.querySelector('[role=alert]');"
        " return !a.hidden && a.innerText.includes(needle); }",
        arg=needle, timeout=timeout)
    return alert_text(page)


def open_session(page: Page, sid: str) -> None:
    page.evaluate("(sid) => { location.hash = 'session=' + encodeURIComponent(sid); }", sid)


# --- item 1: the shell first, Python in the background --------------------------------------------------------


def test_list_renders_before_python_is_ready_and_a_pick_waits(browser: Browser, served: Served) -> None:
    """The worker's runtime is held back (its lock.json is not answered) until the list has rendered and a session
    was picked: the list cannot have waited for Python, and the pick opens once Python is ready."""
    (served.sessions / "early.jsonl").write_bytes(small("early").to_bytes())
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    held: list[Route] = []
    context.route("**/pyodide/lock.json", lambda route: held.append(route))
    page = context.new_page()
    try:
        page.goto(f"{served.url}?test=1")
        page.wait_for_selector("#session-list button[data-id='early']")
        page.wait_for_function("() => document.documentElement.dataset.bootStage === 'runtime'")
        assert page.evaluate("() => document.documentElement.dataset.boot") is None  # not ready, not failed
        assert page.locator("#boot-status").inner_text().startswith("Starting Python")
        page.click("#session-list button[data-id='early']")
        page.wait_for_function(
            "() => document.getElementById('boot-status').innerText.includes('session early opens when it is ready')")
        assert page.locator("#progress-text").inner_text() == "Starting Python…"
        assert page.locator("#transcript article").count() == 0
        assert held, "the worker never asked for lock.json"
        for route in held:
            route.continue_()
        context.unroute("**/pyodide/lock.json")
        page.wait_for_function("() => document.getElementById('transcript').innerText.includes('Answer 3.')",
                               timeout=120_000)
        timeline = page.evaluate("() => window.transcriptViewer.timeline")
        assert timeline["listShown"] < timeline["stage:packages"] < timeline["ready"]
        assert page.locator("#boot-status").is_hidden()  # no "Ready (…)" left behind
        stages = [s["stage"] for s in page.evaluate("() => window.transcriptViewer.ready")["stages"]]
        assert stages == ["runtime", "packages", "ready"]
        # The session was waiting when Python became ready: the idle warm-up never ran ahead of it.
        assert page.evaluate("() => window.transcriptViewer.warmUp()") == {"steps": 0, "ms": 0, "done": False}
    finally:
        context.close()


def test_an_idle_worker_warms_up_and_stops_at_the_first_session(browser: Browser, served: Served) -> None:
    """Booted with nothing to show, the worker runs its warm-up (a scratch viewer folding our demo session) to the end
    without a console error; a page loaded afterwards shows as ever and starts no further step."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        page.goto(f"{served.url}?test=1")
        page.evaluate("() => window.transcriptViewer.ready")
        warm = page.evaluate("""async () => {
            for (let i = 0; i < 600; i++) {  // a minute at most
                const warm = await window.transcriptViewer.warmUp();
                if (warm.done) return warm;
                await new Promise((resolve) => setTimeout(resolve, 100));
            }
            return await window.transcriptViewer.warmUp();
        }""")
        events = small("after-warm").events
        assert warm["steps"] == 8 and warm["ms"] > 0, warm
        summary = page.evaluate("(bytes) => window.transcriptViewer.loadPage(new TextEncoder().encode(bytes))",
                                encode(page_value(events, max_messages=len(events) + 1)).decode())
        assert summary["chatNodes"] > 0
        assert "Answer 3." in page.inner_text("#transcript")
        assert page.evaluate("() => window.transcriptViewer.warmUp()")["steps"] == 8
        assert errors == []
    finally:
        context.close()


def test_production_page_has_no_test_hooks(browser: Browser, served: Served) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(served.url)
        page.wait_for_function("() => window.transcriptViewer !== undefined")
        hooks = page.evaluate("() => Object.keys(window.transcriptViewer).sort()")
        assert {"ready", "loadPage", "openFile", "search", "digest", "heapSize", "warmUp"} <= set(hooks)
        assert not {"runPython", "state", "view"} & set(hooks)
    finally:
        context.close()


# --- item 2: every failure visible, in one place ------------------------------------------------------------------


def test_served_file_with_a_malformed_line_names_it_and_shows_the_valid_part(viewer: Viewer) -> None:
    lines = small("served-bad", 3).to_bytes().split(b"\n")
    bad_line = len(lines) - 3
    lines[bad_line - 1] = b'{"type": "turn/end", oops'
    (viewer.served.sessions / "served-bad.jsonl").write_bytes(b"\n".join(lines))
    open_session(viewer.page, "served-bad")
    text = wait_alert(viewer.page, f"line {bad_line}")
    assert text.startswith(f"Session served-bad, line {bad_line}")
    assert "valid part before it is shown" in text
    viewer.page.wait_for_function("() => document.getElementById('transcript').innerText.includes('Answer 2.')")


def test_live_stream_bad_line_names_it_and_says_following_stopped(viewer: Viewer) -> None:
    path = viewer.served.sessions / "live-bad.jsonl"
    path.write_bytes(small("live-bad", 2).to_bytes())
    page = viewer.page
    open_session(page, "live-bad")
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'live'")
    page.wait_for_function("() => document.getElementById('transcript').innerText.includes('Answer 2.')")
    line = path.read_bytes().count(b"\n") + 1
    with path.open("ab") as out:
        out.write(b'{"type": "user/message", broken\n')
    viewer.served.update("live-bad")
    text = wait_alert(page, f"line {line}")
    assert text.startswith(f"Session live-bad, line {line}") and "Following stopped" in text
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'stopped'")


def test_unknown_session_is_an_alert_and_is_not_retried(viewer: Viewer) -> None:
    page = viewer.page
    viewer.expected_failures.append("/api/sessions/no-such-session/")
    before = len([u for u in viewer.requests if "/api/sessions/no-such-session/follow" in u])
    open_session(page, "no-such-session")
    text = wait_alert(page, "no-such-session")
    assert "does not exist" in text
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'missing'")
    assert page.inner_text("#live-state") == "not found"  # never "ended": there is no session to have ended
    page.evaluate("() => new Promise((r) => setTimeout(r, 2500))")  # longer than the first retry would wait
    follows = [u for u in viewer.requests if "/api/sessions/no-such-session/follow" in u]
    assert len(follows) - before == 1


def test_server_gone_shows_offline_with_a_countdown_then_recovers(viewer: Viewer) -> None:
    path = viewer.served.sessions / "flaky.jsonl"
    path.write_bytes(small("flaky", 2).to_bytes())
    viewer.expected_failures.append("/api/sessions/flaky/")
    page = viewer.page
    open_session(page, "flaky")
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'live'")
    context = page.context
    context.route("**/api/sessions/**", lambda route: route.abort("connectionrefused"))
    try:
        fresh = path.with_suffix(".tmp")
        fresh.write_bytes(small("flaky", 3).to_bytes())
        fresh.replace(path)  # a replaced file (new inode): the server closes its followers
        viewer.served.update("flaky")
        page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'offline'")
        assert "retrying in" in page.locator("#live-state").inner_text()
    finally:
        context.unroute("**/api/sessions/**")
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'live'", timeout=60_000)
    page.wait_for_function("() => document.getElementById('transcript').innerText.includes('Answer 3.')")


@contextmanager
def raising_in_python(viewer: Viewer, owner: str, attr: str, message: str) -> Iterator[None]:
    """Replaces ``owner.attr`` in the worker's Python (``owner`` an expression) by a function raising ``message``;
    puts it back afterwards."""
    viewer.run_python(
        f"import json, assembler.browser.viewer, assembler.render\nowner = {owner}\n"
        f"def _boom(*args, **kwargs):\n    raise ValueError({message!r})\n"
        f"owner._saved_{attr} = owner.{attr}\nowner.{attr} = _boom\njson.dumps(True)")
    try:
        yield
    finally:
        viewer.run_python(f"import json, assembler.browser.viewer, assembler.render\nowner = {owner}\n"
                          f"owner.{attr} = owner._saved_{attr}\njson.dumps(True)")


def test_python_error_is_an_alert_and_the_page_stays_usable(viewer: Viewer) -> None:
    with raising_in_python(viewer, "assembler.browser.viewer.VIEWER", "render", "render exploded on purpose"):
        viewer.open_file(viewer.add_file("py-error.jsonl", small("py-error").to_bytes()))
        text = wait_alert(viewer.page, "render exploded on purpose")
        assert "The rows already shown stay" in text
    fixed = small("after", first="Recovered question").to_bytes()
    result = viewer.open_file(viewer.add_file("after-error.jsonl", fixed))
    assert result["error"] is None
    assert "Recovered question 1?" in viewer.render_all()
    assert viewer.page.locator("[role=alert]").is_hidden()


def test_an_internal_error_answering_render_is_an_alert(viewer: Viewer) -> None:
    # Deeper than the test above: the guarded entry point answers {"error": {..., "internal": true}} instead of rows.
    uncaught = len(viewer.page_errors)
    with raising_in_python(viewer, "assembler.render", "render_node", "render_node exploded on purpose"):
        viewer.open_file(viewer.add_file("internal-error.jsonl", small("internal-error").to_bytes()))
        wait_alert(viewer.page, "render_node exploded on purpose")
        assert viewer.page.locator("[role=alert]").count() == 1
        assert viewer.page_errors[uncaught:] == []  # the page did not throw on the answer
    again = small("after2", first="Again question").to_bytes()
    result = viewer.open_file(viewer.add_file("after-internal.jsonl", again))
    assert result["error"] is None
    assert "Again question 1?" in viewer.render_all()


@pytest.mark.parametrize("name, data", [("picture.png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
                                        ("notes.jsonl", b"these are my notes\n"),
                                        ("package.json", b'{"name": "x", "version": "1.0.0"}')])
def test_unsupported_local_file_is_an_alert_naming_it(viewer: Viewer, name: str, data: bytes) -> None:
    # Any name: the worker's loader decides from the content (the page has no list of suffixes of its own).
    result = viewer.open_file(viewer.add_file(name, data))
    assert result["error"] is not None
    text = alert_text(viewer.page)
    assert text.startswith(f"{name}: not a known session log (")
    assert "; tried: Transcript Assembler session (JSONL), " in text and "Claude Code session (JSONL)" in text
    assert text.endswith("Nothing was read.")


def test_a_big_file_that_is_no_log_is_not_read_past_its_first_slice(viewer: Viewer) -> None:
    size = 24 << 20  # a big file: its first slice is the preview's 1 MiB (config.PREVIEW_BYTES), then 4 MiB ones
    result = viewer.page.evaluate(
        """async (size) => {
            const file = new File([new Uint8Array(size).fill(7)], "huge.bin");
            return await window.transcriptViewer.openFile(file);
        }""", size)
    assert result["error"] is not None and result["file"]["bytes"] == 1 << 20  # one slice read, then it stopped
    assert alert_text(viewer.page).startswith("huge.bin: not a known session log (not JSON)")


def test_truncated_zstd_alert_names_the_file(viewer: Viewer) -> None:
    import zstandard

    data = zstandard.ZstdCompressor().compress(small("cut").to_bytes())
    result = viewer.open_file(viewer.add_file("cut-short.jsonl.zst", data[: len(data) // 2]))
    assert result["error"] is not None
    assert alert_text(viewer.page).startswith("cut-short.jsonl.zst")
