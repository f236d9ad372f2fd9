"""The request inspector and the context meter in the page (issue 22), on real logs (ours and Claude Code's) and on
the demo session (recorded times): a step's "Request" button or the key i opens the inspector, Escape closes it and
gives the focus back; the meter sits above the Trajectory and Model-context views only, one bar per request, with
the compaction marked; the overflowed request is a failed trajectory row. Everything shown is what CPython computes
from the same log."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from corpus import FIXTURES, require_corpus
from interop_support import interop_file

from assembler.browser import Viewer as PyViewer
from assembler.chunk_rows import pack_chunk_runs
from assembler.demo import demo_session
from assembler.records import encode

if TYPE_CHECKING:
    from conftest import Viewer

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
CLAUDE = ("claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data/real_projects/"
          "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl")


def cpython(data: bytes) -> PyViewer:
    v = PyViewer()
    v.file_begin("s.jsonl", len(data))
    v.file_feed(data)
    v.file_finish(True)
    return v


def open_trajectory(viewer: Viewer, name: str, data: bytes) -> None:
    page = viewer.page
    page.evaluate("() => { window.transcriptViewer.inspector.close(); window.transcriptViewer.showView('chat'); }")
    page.evaluate("() => { if (document.activeElement instanceof HTMLElement) document.activeElement.blur(); }")
    result = viewer.open_file(viewer.add_file(name, data), all=True)
    assert result["error"] is None
    page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    page.wait_for_function("() => document.getElementById('trajectory').dataset.rows !== undefined")
    page.evaluate("async () => { const tv = window.transcriptViewer; await tv.views.ready(); await tv.meter.ready(); }")
    page.wait_for_function("() => !document.getElementById('context-meter').hidden")


def inspector_text(viewer: Viewer) -> str:
    viewer.page.wait_for_function("() => document.getElementById('request-inspector').open")
    return viewer.page.inner_text("#request-inspector")


@pytest.fixture
def compaction(viewer: Viewer) -> tuple[Viewer, bytes]:
    require_corpus()
    data = (FIXTURES / COMPACTION).read_bytes()
    open_trajectory(viewer, "inspector-compaction.jsonl", data)
    return viewer, data


def test_the_overflowed_request_is_a_failed_row_and_the_inspector_shows_the_compaction(
        compaction: tuple[Viewer, bytes]) -> None:
    viewer, data = compaction
    page = viewer.page
    steps = page.locator("#trajectory .traj-row.traj-step")
    assert steps.count() == 3
    failed = steps.nth(1)
    assert "status-error" in (failed.get_attribute("class") or "")
    assert "CONTEXT_WINDOW_EXCEEDED" in failed.inner_text() and "after a compaction" in failed.inner_text()
    button = steps.nth(2).locator(".traj-inspect")
    button.click()
    text = inspector_text(viewer)
    py = cpython(data)
    expected = json.loads(py.request_inspector(json.loads(py.trajectory_view())["rows"][2]["request"]))
    assert expected["number"] == 3
    assert "Request 3 of 3 in this session" in text
    assert "sent again for the same step after its previous request failed" in text
    assert "3 messages (the previous request had 3): 0 added, 1 replaced by a compaction summary." in text
    assert "This is an automatically generated checkpoint" in text
    assert "Unavailable: the log records no times (they were rebuilt from a counter)." in text
    assert page.locator("#request-inspector .ri-timing dd").all_inner_texts() == ["unavailable"] * 5
    assert "deepseek-v4-flash" in text and "128000 tokens" in text
    # The step's two requests: the failed one is a click away.
    page.locator("#request-inspector .ri-attempt", has_text="request 2").click()
    page.wait_for_function("() => document.querySelector('#request-inspector .ri-attempt[aria-current]')"
                           "?.textContent.startsWith('request 2')")
    text = page.inner_text("#request-inspector")
    assert "snapshot request exceeded the model context window (CONTEXT_WINDOW_EXCEEDED)" in text
    # Escape closes it and gives the focus back to the button that opened it.
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('request-inspector').open")
    assert page.evaluate("() => document.activeElement.classList.contains('traj-inspect')")


def test_the_key_i_on_a_step_opens_its_request_and_tools_expand(compaction: tuple[Viewer, bytes]) -> None:
    viewer, _ = compaction
    page = viewer.page
    page.locator("#trajectory .traj-row.traj-step").first.focus()
    page.keyboard.press("i")
    text = inspector_text(viewer)
    assert "Request 1 of 3" in text and "The session's first request: all 1 message are new." in text
    tool = page.locator("#request-inspector .ri-tools details").filter(has_text="bash").first
    tool.locator("summary").click()
    assert "Execute a bash command" in tool.inner_text()
    page.locator("#request-inspector .ri-close").click()
    page.wait_for_function("() => !document.getElementById('request-inspector').open")
    assert page.evaluate("() => document.getElementById('view-root').dataset.view") == "trajectory"


def test_the_meter_has_a_bar_per_request_marks_the_compaction_and_only_shows_beside_its_views(
        compaction: tuple[Viewer, bytes]) -> None:
    viewer, data = compaction
    page = viewer.page
    expected = json.loads(cpython(data).context_meter())
    assert page.locator("#context-meter .cm-bar").count() == len(expected["bars"]) == 3
    assert page.locator("#context-meter .cm-compaction").count() == 1
    assert page.locator("#context-meter .cm-bar.is-estimate").count() == 1
    assert page.locator("#context-meter .cm-bar.is-failed").count() == 1
    assert page.locator("#context-meter .cm-window").count() == 1
    note = page.inner_text("#context-meter .cm-note")
    assert "for 2 of 3 requests; the others are estimates (dashed outline)" in note
    assert "is an estimate (4 characters per token)" in note and "context window (128,000 tokens)" in note
    title = page.locator("#context-meter .cm-bar").nth(2).locator("title").text_content() or ""
    assert title.startswith("Request 3, turn 1 step 2: 20 tokens recorded") and "after a compaction" in title
    # A bar opens its request.
    page.locator("#context-meter .cm-bar .cm-hit").nth(1).click()
    assert "Request 2 of 3" in inspector_text(viewer)
    page.keyboard.press("Escape")
    page.evaluate("() => window.transcriptViewer.showView('context')")
    assert page.is_visible("#context-meter")
    page.evaluate("() => window.transcriptViewer.showView('chat')")
    assert page.is_hidden("#context-meter")


def test_a_claude_code_log_shows_recorded_usage_and_says_what_the_log_lacks(viewer: Viewer) -> None:
    data = interop_file(CLAUDE).read_bytes()
    open_trajectory(viewer, "inspector-claude.jsonl", data)
    page = viewer.page
    expected = json.loads(cpython(data).context_meter())
    assert page.locator("#context-meter .cm-bar").count() == len(expected["bars"]) >= 2
    note = page.inner_text("#context-meter .cm-note")
    assert f"for all {expected['requests']} requests" in note
    assert "The log records no system prompt or tool list" in note
    assert page.is_visible("#context-meter li[data-part=unknown]")
    page.locator("#trajectory .traj-row.traj-step .traj-inspect").last.click()
    text = inspector_text(viewer)
    assert "claude-opus-4-5" in text and "anthropic" in text and "Cache read" in text
    assert "The log records no system prompt for this request." in text
    assert "not in the log (no request header)" in text
    page.keyboard.press("Escape")


def test_recorded_times_show_in_the_timing_panel(viewer: Viewer) -> None:
    header, batches = demo_session()
    records = [r for batch in batches for r in pack_chunk_runs(batch)]
    data = b"\n".join([encode(header), *(encode(r) for r in records)]) + b"\n"
    open_trajectory(viewer, "inspector-demo.jsonl", data)
    py = cpython(data)
    row = [r for r in json.loads(py.trajectory_view())["rows"] if r["kind"] == "step"][0]
    timing = json.loads(py.request_inspector(row["seq"], True))["timing"]
    assert timing["ttft"]["value"] is not None and timing["total"]["value"] is not None
    viewer.page.locator("#trajectory .traj-row.traj-step .traj-inspect").first.click()
    text = inspector_text(viewer)
    assert "Time to first token" in text and " UTC" in text
    figures = viewer.page.locator("#request-inspector .ri-timing dd").all_inner_texts()
    assert figures[2] == f"{timing['ttft']['value']} ms" or figures[2].endswith(" s")  # durationText's form
    assert "unavailable" not in figures[1] and "unavailable" not in figures[2]
    viewer.page.keyboard.press("Escape")


@pytest.mark.parametrize("width", [390, 1024, 1440])
def test_the_meter_and_the_inspector_fit_the_screen(compaction: tuple[Viewer, bytes], width: int) -> None:
    viewer, _ = compaction
    page = viewer.page
    page.set_viewport_size({"width": width, "height": 844 if width == 390 else 900})
    try:
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        meter = page.locator("#context-meter").bounding_box()
        assert meter is not None and meter["x"] >= 0 and meter["x"] + meter["width"] <= width
        page.screenshot(path=f"build/screenshots/meter-{width}.png")
        page.locator("#trajectory .traj-row.traj-step .traj-inspect").last.click()
        inspector_text(viewer)
        panel = page.locator("#request-inspector").bounding_box()
        assert panel is not None and panel["x"] >= 0 and panel["x"] + panel["width"] <= width + 0.5
        assert panel["height"] <= page.viewport_size["height"] + 0.5  # type: ignore[index]
        # The body scrolls inside the panel; its sections are all there.
        assert page.locator("#request-inspector .ri-section h3").all_inner_texts()[:3] == [
            "Request", "Timing", "Usage"]
        page.screenshot(path=f"build/screenshots/inspector-{width}.png")
        page.keyboard.press("Escape")
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})  # the fixture's size
