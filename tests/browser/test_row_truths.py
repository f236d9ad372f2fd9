"""What a reader sees at a glance (issue 22 items 5 and 12): a command that failed is a failed row in the chat and
the trajectory; the chrome stays quiet: a row's "Show records" sits with its copy buttons (revealed on hover or
focus), not on a line of its own under every row; the replay benchmark lives in the "More tools" menu, not in the
main toolbar; the Export control reads like the buttons beside it. Each check fails on the main of 2026-12-03."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.corpus import log_id, require_corpus, session_logs

if TYPE_CHECKING:
    from conftest import Viewer


def failed_command_log() -> str:
    require_corpus()
    logs = [p for p in session_logs() if p.name == "session.jsonl" and b"[exit code: 1]" in p.read_bytes()]
    assert logs, "no shared session log with a failed command"
    return f"/__fixtures__/{log_id(logs[0])}"


def test_a_failed_command_is_a_failed_row_in_chat_and_trajectory(viewer: Viewer) -> None:
    opened = viewer.open_file(failed_command_log(), all=True)
    assert opened["error"] is None
    viewer.attach_all()
    page = viewer.page
    try:
        page.wait_for_selector("#transcript article.kind-tool .dot-error", timeout=30_000)
        row = page.locator("#transcript article.kind-tool:has(.dot-error)").first
        assert "Failed" in row.inner_text()
        page.click("[data-view-tab=trajectory]")
        page.wait_for_selector("#trajectory .traj-tool .status-error, #trajectory .traj-tool.status-error",
                               timeout=30_000)
    finally:
        page.click("[data-view-tab=chat]")
        viewer.attach_all(False)


def test_the_chrome_stays_quiet(viewer: Viewer) -> None:
    opened = viewer.open_file(failed_command_log(), all=True)
    assert opened["error"] is None
    page = viewer.page
    page.wait_for_selector("#transcript article[data-key] .show-records")
    assert page.locator("#transcript .records-bar").count() == 0  # no line of its own under each row
    assert page.locator("#transcript article[data-key] > .row-tools .show-records").count() >= 1
    assert page.locator(".toolbar > #replay-open").count() == 0
    assert page.locator("#more-menu #replay-open").count() == 1
    colours = page.evaluate("""() => [getComputedStyle(document.querySelector('#export-menu > summary')).color,
                                     getComputedStyle(document.getElementById('open-file')).color]""")
    assert colours[0] == colours[1]
    border = page.evaluate("() => getComputedStyle(document.getElementById('export-menu')).borderTopWidth")
    assert border == "0px"  # one box, not a box in a box


def long_session(sid: str, turns: int) -> bytes:
    from session_builder import Session

    s = Session(sid, start_time=1_767_225_600_000)
    for n in range(1, turns + 1):
        s.user(f"{sid} question {n}")
        s.assistant([("text", f"Answer {n}.")])
        s.end_step()
        s.end_turn()
    return s.to_bytes()


def test_the_header_counts_the_whole_file_not_the_loaded_page(viewer: Viewer) -> None:
    opened = viewer.open_file(viewer.add_file("eighty-turns.jsonl", long_session("eighty", 80)))
    assert opened["error"] is None
    page = viewer.page
    page.wait_for_function("() => document.getElementById('session-summary').textContent.startsWith('80 turns')",
                           timeout=30_000)
    header = page.inner_text("#session-summary")
    assert "newest" in header and "loaded" in header  # the loaded part's steps are named as such
    assert "older history available" in page.inner_text("#stats")


def test_a_served_session_is_titled_and_same_named_files_are_told_apart(viewer: Viewer) -> None:
    root = viewer.served.sessions
    for folder in ("run-alpha", "run-beta"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "session.jsonl").write_bytes(long_session(f"{folder}-sid", 2))
    page = viewer.page
    page.fill("#session-filter", "")  # another test may have left a filter
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list .session-file:text-is('run-alpha/session.jsonl')", timeout=30_000)
    assert page.locator("#session-list .session-file:text-is('run-beta/session.jsonl')").count() == 1
    button = page.locator("#session-list button.session-button:has(.session-file:text-is('run-beta/session.jsonl'))")
    button.click()
    page.wait_for_function("() => document.getElementById('session-title').textContent"
                           " === 'run-beta-sid question 1'", timeout=30_000)
    assert "run-beta" in (page.get_attribute("#session-title", "title") or "")


def test_status_tells_the_truth(viewer: Viewer) -> None:
    """Item 10: a header-only session says it has no events; a cancelled turn reads cancelled in the trajectory; an
    ended served session's connected stream reads "following", not "live"; a failed open clears the last counts."""
    import json as _json

    from session_builder import Session

    page = viewer.page
    header_only = _json.dumps({"type": "session", "version": 0, "id": "bare", "createdAt": 1}).encode() + b"\n"
    assert viewer.open_file(viewer.add_file("bare.jsonl", header_only))["error"] is None
    assert page.locator("#empty-session").is_visible()
    assert "no events" in page.inner_text("#empty-session")

    s = Session("cancelled-turn")
    s.user("please stop halfway")
    s.assistant([("text", "Starting.")])
    s.end_step()
    s.end_turn({"kind": "aborted", "reason": {"kind": "user"}})
    assert viewer.open_file(viewer.add_file("cancelled.jsonl", s.to_bytes()))["error"] is None
    assert page.locator("#empty-session").is_hidden()
    assert page.inner_text("#stats")  # counts shown
    page.click("[data-view-tab=trajectory]")
    try:
        page.wait_for_selector("#trajectory .traj-turn-end .traj-status")
        assert page.inner_text("#trajectory .traj-turn-end .traj-status") == "cancelled"
    finally:
        page.click("[data-view-tab=chat]")

    bad = viewer.open_file(viewer.add_file("not-a-log.jsonl", b"\x00\x01 nothing\n"))
    assert bad["error"] is not None
    assert page.inner_text("#stats") == ""  # the cancelled session's counts are gone

    (viewer.served.sessions / "done-long-ago.jsonl").write_bytes(long_session("done-long-ago", 1))
    page.fill("#session-filter", "")  # another test may have left a filter
    page.click("#refresh-sessions")
    page.wait_for_selector("#session-list button[data-id='done-long-ago']")
    page.evaluate("() => { location.hash = 'session=done-long-ago'; }")
    page.wait_for_function("() => document.getElementById('live-state').dataset.state === 'live'")
    assert page.inner_text("#live-state") == "following"


def test_exporting_with_nothing_open_says_so_and_downloads_nothing(viewer: Viewer) -> None:
    """Item 13: with nothing open the Export menu answers with the alert, not an empty file."""
    page = viewer.page
    page.evaluate("() => window.transcriptViewer.openFile(new File([new Uint8Array(0)], 'empty.jsonl'), {})")
    downloads: list[object] = []
    page.on("download", lambda d: downloads.append(d))
    page.click("#export-menu > summary")
    page.click('#export-menu button[data-format="html"][data-scope="session"]')
    page.wait_for_function("() => document.querySelector('[role=alert]')?.innerText.includes('nothing is open')")
    page.wait_for_timeout(300)
    assert downloads == []


def test_a_plan_review_is_rendered_markdown(viewer: Viewer) -> None:
    """Item 8: a plan put up for review reads as the Markdown it is (a heading, a list), not as its source."""
    from tests.interop_support import interop_file

    path = interop_file("claude-code/claude-code-log-1.7.0/dev-docs/messages/claude-code/tools/"
                        "ExitPlanMode-tool_use.jsonl")
    opened = viewer.open_file(viewer.add_file("plan.jsonl", path.read_bytes()))
    assert opened["error"] is None
    page = viewer.page
    page.click("#transcript details.tool[data-tool-kind=plan] > summary")
    page.wait_for_selector("#transcript .plan h2")
    assert page.inner_text("#transcript .plan h2") == "Plan to Fix Ruby Element Support for Chrome"
    assert page.locator("#transcript .plan ol > li").count() >= 2
    assert "##" not in page.inner_text("#transcript details.tool[data-tool-kind=plan] > summary")


def test_the_trajectory_loads_older_turns(viewer: Viewer) -> None:
    """Item 7: the trajectory view has "Load older" too, and its rows grow with the window."""
    page = viewer.page
    assert viewer.open_file(viewer.add_file("eighty-b.jsonl", long_session("eighty-b", 80)))["error"] is None
    page.click("[data-view-tab=trajectory]")
    try:
        page.wait_for_function("() => Number(document.getElementById('trajectory').dataset.rows) > 0")
        before = int(page.get_attribute("#trajectory", "data-rows") or 0)
        assert page.locator("#load-older").is_visible()
        page.click("#load-older")
        page.wait_for_function("(n) => Number(document.getElementById('trajectory').dataset.rows) > n", arg=before)
    finally:
        page.click("[data-view-tab=chat]")


def test_the_plan_panel_keeps_the_latest_todo_list_in_view(viewer: Viewer) -> None:
    """The todo panel: the session's latest plan beside the chat with each item's state; gone with the next file."""
    require_corpus()
    [log] = [p for p in session_logs() if p.name == "session.jsonl" and "repeat-tool-reminder" in str(p)]
    page = viewer.page
    assert viewer.open_file(f"/__fixtures__/{log_id(log)}")["error"] is None
    page.wait_for_selector("#todo-panel:not([hidden])")
    assert page.inner_text("#todo-panel summary") == "Plan · 0 of 1 done"
    assert page.get_attribute("#todo-panel .todo", "data-status") == "in_progress"
    assert "watch the kettle boil" in page.inner_text("#todo-panel .todo-list")
    assert viewer.open_file(viewer.add_file("no-plan.jsonl", long_session("no-plan", 1)))["error"] is None
    page.wait_for_timeout(400)  # longer than the panel's debounce
    assert page.locator("#todo-panel").is_hidden()
