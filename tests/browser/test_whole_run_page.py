"""The trajectory overview covers the whole run (issue 22): a served session opens with its newest page, and the
overview still draws every step and tool call of the session (the server's GET .../timeline, the same value the
page's Python makes), says so, and a bar of a step not loaded yet loads its page (as a deep link does) and shows
its row. A local file opened from its newest page gets the same from the worker's pager."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Page

from perf.turns import many_turns_bytes

if TYPE_CHECKING:
    from conftest import Viewer

TURNS = 200  # 200 steps and 200 tool calls; the first page holds a few turns


def open_served(viewer: Viewer, sid: str, data: bytes) -> Page:
    page = viewer.page
    (viewer.served.sessions / f"{sid}.jsonl").write_bytes(data)
    page.evaluate("() => window.transcriptViewer.showView('chat')")
    page.fill("#session-filter", "")
    page.click("#refresh-sessions")
    page.wait_for_selector(f"#session-list button[data-id='{sid}']")
    page.click(f"#session-list button[data-id='{sid}']")
    page.wait_for_function("(sid) => window.transcriptViewer.state.sessionId === sid"
                           " && window.transcriptViewer.state.liveOpened", arg=sid, timeout=60_000)
    return page


def overview(page: Page) -> Any:
    return page.evaluate("() => { const o = window.transcriptViewer.overview;"
                         " return {data: o.data, loaded: o.loaded, scope: o.root.dataset.scope}; }")


def show_trajectory_whole(page: Page) -> Any:
    page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    page.wait_for_selector("#traj-overview[data-scope='run']", timeout=60_000)
    return overview(page)


def test_a_served_session_shows_its_whole_run_and_a_bar_not_loaded_yet_lands_on_its_step(viewer: Viewer) -> None:
    page = open_served(viewer, "whole-run", many_turns_bytes(TURNS))
    assert page.locator("#load-older").is_visible()  # only the newest page is loaded
    value = show_trajectory_whole(page)
    whole, loaded = value["data"], value["loaded"]
    assert loaded["scope"] == "loaded" and whole["scope"] == "run"
    assert whole["total"] == 2 * TURNS and loaded["total"] < whole["total"]
    asked = [u for u in viewer.requests if "/api/sessions/whole-run/timeline" in u]
    assert len(asked) == 1, asked
    note = page.inner_text("#traj-overview .tl-note")
    assert note.startswith(f"The whole run: {TURNS} steps and {TURNS} tool calls in {TURNS} turns."), note
    assert "The shaded part is loaded; a bar of a step not loaded yet loads it." in note
    # The server's value is the one the page's own Python makes of the whole session.
    served = json.loads(page.evaluate("async () => (await fetch('api/sessions/whole-run/timeline')).text()"))
    assert served == whole
    # Click the bar of step 3 of the run, far before the loaded rows: its page loads and its row is shown.
    first_loaded = min(s["seq"] for s in loaded["spans"])
    i = next(k for k, s in enumerate(whole["spans"]) if s["lane"] == "step" and s["turn"] == 3)
    target = whole["spans"][i]
    assert target["seq"] < first_loaded
    rows_before = int(page.get_attribute("#trajectory", "data-rows") or 0)
    page.evaluate("(slot) => window.transcriptViewer.overview._setRange(slot - 6, slot + 6)", target["slot"])
    page.locator("#traj-overview canvas").scroll_into_view_if_needed()
    x, y = page.evaluate("(i) => [window.transcriptViewer.overview.xOf(i),"
                         " window.transcriptViewer.overview.yOf('step')]", i)
    page.mouse.click(x, y)
    assert page.evaluate("() => window.transcriptViewer.overview.selected") == i
    page.wait_for_selector("#trajectory .traj-row.is-target", timeout=60_000)
    key = page.get_attribute("#trajectory .traj-row.is-target", "data-key")
    row = page.evaluate("(key) => window.transcriptViewer.views.trajectory.rows.find((r) => String(r.key) === key)",
                        key)
    assert row["seq"] == target["seq"] and row["turn"] == 3  # the very step, now loaded
    assert int(page.get_attribute("#trajectory", "data-rows") or 0) > rows_before
    assert page.get_attribute("#view-root", "data-view") == "trajectory"  # it stays in the trajectory
    assert page.locator("#trajectory .traj-row.is-target").is_visible()
    assert "Turn 3 · step 1" in page.inner_text("#traj-overview .tl-picked")
    # "Show in chat" finds the step's chat row by its seq (the whole run's keys come from another fold).
    page.click("#traj-overview .tl-picked button")
    page.wait_for_function("() => document.querySelector('#view-root').dataset.view === 'chat'")
    page.wait_for_selector("#transcript article.is-target", timeout=30_000)
    assert page.evaluate("() => document.querySelector('#transcript article.is-target').dataset.seq") is not None
    assert page.locator("[role=alert]").is_hidden()


def test_a_local_file_opened_at_its_newest_page_gets_the_whole_run_from_the_worker(viewer: Viewer) -> None:
    page = viewer.page
    page.evaluate("() => window.transcriptViewer.showView('chat')")
    opened = viewer.open_file(viewer.add_file("whole-local.jsonl", many_turns_bytes(TURNS)))
    assert opened["error"] is None
    assert page.locator("#load-older").is_visible()
    value = show_trajectory_whole(page)
    assert value["data"]["total"] == 2 * TURNS and value["loaded"]["total"] < 2 * TURNS
    assert not [u for u in viewer.requests if "/timeline" in u and "whole-local" in u]  # the worker's pager
    # Everything loaded: the window's own timeline is the whole run, and says so.
    page.evaluate("() => window.transcriptViewer.showView('chat')")
    everything = viewer.open_file(viewer.add_file("whole-local-all.jsonl", many_turns_bytes(20)), all=True)
    assert everything["error"] is None
    value = show_trajectory_whole(page)
    assert value["data"] is not None and value["data"] == value["loaded"] and value["data"]["total"] == 40
    assert page.inner_text("#traj-overview .tl-note").startswith("The whole run: 20 steps")
    page.evaluate("() => window.transcriptViewer.showView('chat')")


def test_a_followed_session_that_grows_reads_its_whole_run_again(viewer: Viewer) -> None:
    """A live session grows past the whole run's timeline the page read: the note says how far it goes, and the
    page reads it again (at most every whole.againMs, here shortened) even if nothing else changes by then."""
    turns = 120
    page = open_served(viewer, "whole-live", many_turns_bytes(turns))
    page.evaluate("() => { window.transcriptViewer.overview.whole.againMs = 1500; }")
    value = show_trajectory_whole(page)
    assert value["data"]["total"] == 2 * turns
    asked = len([u for u in viewer.requests if "/api/sessions/whole-live/timeline" in u])
    old, new = many_turns_bytes(turns).split(b"\n"), many_turns_bytes(turns + 1).split(b"\n")
    assert old[1:-1] == new[1:len(old) - 1]  # the same records (only the header's id names the turn count)
    with (viewer.served.sessions / "whole-live.jsonl").open("ab") as out:
        out.write(b"\n".join(new[len(old) - 1:]))
    viewer.served.update("whole-live")
    page.wait_for_function(f"() => window.transcriptViewer.overview.data?.total === {2 * (turns + 1)}",
                           timeout=60_000)
    assert len([u for u in viewer.requests if "/api/sessions/whole-live/timeline" in u]) == asked + 1
    assert page.inner_text("#traj-overview .tl-note").startswith(f"The whole run: {turns + 1} steps")
    page.evaluate("() => window.transcriptViewer.showView('chat')")
