"""The three views by URL (chat, trajectory, context), search, a row's raw records and export from the page, each
checked against what CPython computes from the same log."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from corpus import FIXTURES, require_corpus

from assembler import render
from assembler.browser import Viewer as PyViewer
from assembler.chunk_rows import expand_records, pack_chunk_runs
from assembler.demo import demo_session
from assembler.logfile import parse_session_bytes
from assembler.records import encode
from assembler.surface import SurfaceManager

if TYPE_CHECKING:
    from conftest import Viewer

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"


def require_fixture(rel: str) -> bytes:
    require_corpus()
    return (FIXTURES / rel).read_bytes()


def demo_bytes() -> bytes:
    header, batches = demo_session()
    records = [r for batch in batches for r in pack_chunk_runs(batch)]
    return b"\n".join([encode(header), *(encode(r) for r in records)]) + b"\n"


def cpython_viewer(data: bytes) -> PyViewer:
    v = PyViewer()
    v.file_begin("s.jsonl", len(data))
    v.file_feed(data)
    v.file_finish(True)
    return v


def cpython_count(data: bytes, query: str) -> int:
    v = cpython_viewer(data)
    q = query.lower()
    return sum(text.lower().count(q) for node in v.window.chat.values() if node.kind != "event"
               for _, text in render.node_text_blocks(node))


def wait_rows(viewer: Viewer, view: str) -> int:
    viewer.page.wait_for_function(
        "(v) => document.querySelector(`[data-view='${v}']`) && document.getElementById(v).dataset.rows !== undefined",
        arg=view)
    viewer.page.evaluate("() => window.transcriptViewer.views.ready()")
    return int(viewer.page.evaluate("(v) => document.getElementById(v).dataset.rows", view))


@pytest.fixture
def demo(viewer: Viewer) -> tuple[Viewer, bytes]:
    data = demo_bytes()
    viewer.page.evaluate("() => window.transcriptViewer.showView('chat')")
    # Keys typed into a field are left alone: an earlier test may have left focus in one (the page is shared).
    viewer.page.evaluate("() => { if (document.activeElement instanceof HTMLElement) document.activeElement.blur(); }")
    result = viewer.open_file(viewer.add_file("views-demo.jsonl", data), all=True)
    assert result["error"] is None
    return viewer, data


# --- views -------------------------------------------------------------------------------------------------------


def test_tabs_keys_and_hash_switch_views(demo: tuple[Viewer, bytes]) -> None:
    viewer, data = demo
    page = viewer.page
    assert page.get_attribute("#view-root", "data-view") == "chat"
    page.locator("body").press("2")
    rows = wait_rows(viewer, "trajectory")
    assert page.get_attribute("#view-root", "data-view") == "trajectory"
    assert "view=trajectory" in page.evaluate("() => location.hash")
    assert page.is_hidden("#transcript") and page.is_visible("#trajectory")
    expected = json.loads(cpython_viewer(data).trajectory_view())["rows"]
    assert rows == len(expected)
    page.locator("body").press("3")
    assert wait_rows(viewer, "context") > 0
    assert page.get_attribute("#view-root", "data-view") == "context"
    page.locator("body").press("1")
    assert page.get_attribute("#view-root", "data-view") == "chat"
    page.evaluate("() => { location.hash = 'view=trajectory'; }")
    page.wait_for_function("() => document.getElementById('view-root').dataset.view === 'trajectory'")
    page.evaluate("() => window.transcriptViewer.showView('chat')")


def test_trajectory_rows_show_status_model_times_bars_and_tools(demo: tuple[Viewer, bytes]) -> None:
    viewer, data = demo
    page = viewer.page
    page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    wait_rows(viewer, "trajectory")
    expected = [r for r in json.loads(cpython_viewer(data).trajectory_view())["rows"] if r["kind"] == "step"]
    rows = page.locator("#trajectory .traj-row.traj-step")
    assert rows.count() == len(expected)
    texts = [rows.nth(i).inner_text() for i in range(rows.count())]
    for row, text in zip(expected, texts, strict=True):
        assert row["status"] in text and f"step {row['step']}" in text and row["model"] in text
        assert "TTFT" in text  # the demo's times are recorded
        for tool in row["tools"]:
            assert tool["name"] in text
    assert page.locator("#trajectory .traj-bar-fill").count() == len(expected)
    # Clicking a step shows it in the chat.
    rows.nth(1).click()
    page.wait_for_function("() => document.getElementById('view-root').dataset.view === 'chat'")
    key = expected[1]["chatKey"]
    box = page.locator(f'#transcript article[data-key="{key}"]').bounding_box()
    assert box is not None and 0 <= box["y"] < page.evaluate("() => innerHeight")


def test_trajectory_hides_bars_for_rebuilt_times(viewer: Viewer) -> None:
    data = require_fixture(COMPACTION)
    viewer.open_file(viewer.add_file("views-compaction.jsonl", data), all=True)
    viewer.page.evaluate("() => window.transcriptViewer.showView('trajectory')")
    assert wait_rows(viewer, "trajectory") > 0
    assert viewer.page.locator("#trajectory .traj-bar").count() == 0
    assert "TTFT" not in viewer.page.inner_text("#trajectory")
    viewer.page.evaluate("() => window.transcriptViewer.showView('chat')")


def test_context_view_is_the_surface_with_shadowed_messages_and_links(viewer: Viewer) -> None:
    data = require_fixture(COMPACTION)
    page = viewer.page
    viewer.open_file(viewer.add_file("views-compaction.jsonl", data), all=True)
    page.evaluate("() => window.transcriptViewer.showView('context')")
    rows = wait_rows(viewer, "context")
    events = list(expand_records(parse_session_bytes(data).records))
    surface = [n.seq for n in SurfaceManager(events)]
    assert rows == len(surface)
    summary = page.locator("#context .ctx-msg.is-summary").first
    summary.scroll_into_view_if_needed()
    details = summary.locator("details.ctx-shadowed")
    assert details.locator(".ctx-msg").count() == 0  # built only when opened
    details.locator("summary").click()
    details.locator(".ctx-msg").first.wait_for()
    first = next(m for m in json.loads(cpython_viewer(data).context_view())["messages"] if m["shadowed"])
    assert details.locator(":scope > .ctx-msg").count() == len(first["shadowed"])
    # Issue 22 item 9: the compaction is explained, counts read as words, the links say where they go.
    note = page.inner_text("#context-note")
    assert "compaction" in note and "out of order" in note
    assert "messages it replaced (seq" in details.locator("summary").inner_text() or \
        "message it replaced (seq" in details.locator("summary").inner_text()
    assert "–" not in details.locator("summary").inner_text()  # "seq 4 to 9", never "seq 4–4"
    badge = summary.locator(".badge").first.inner_text()
    assert badge.endswith(" message") if len(first["shadowed"]) == 1 else badge.endswith(" messages")
    link = page.locator("#context .ctx-link").first
    assert link.inner_text().startswith("Show in chat")
    link.click()
    page.wait_for_function("() => document.getElementById('view-root').dataset.view === 'chat'")
    page.evaluate("() => window.transcriptViewer.showView('chat')")


# --- search ------------------------------------------------------------------------------------------------------


def test_search_counts_like_cpython_and_spans_fragments_of_a_packed_row(demo: tuple[Viewer, bytes]) -> None:
    viewer, data = demo
    page = viewer.page
    rows = [r for r in parse_session_bytes(data).records if not isinstance(r, dict) and r.type == "reasoning-chunks"]
    fragments = rows[0].data.texts
    cut = len(fragments[0]) + len(fragments[1])
    query = "".join(fragments)[cut - 3:cut + 3].upper()
    assert not any(query.lower() in f.lower() for f in fragments)
    result = page.evaluate("(q) => window.transcriptViewer.search(q)", query)
    assert result["matches"] == cpython_count(data, query) >= 1
    assert page.inner_text("#search-count") == f"1 of {result['matches']}"
    current = page.locator("mark.search-current").first
    assert current.is_visible()  # the Think row holding it was opened
    assert current.inner_text().lower() in query.lower()


def test_search_keys_next_previous_and_clear(demo: tuple[Viewer, bytes]) -> None:
    viewer, data = demo
    page = viewer.page
    page.locator("body").press("/")
    assert page.evaluate("() => document.activeElement.id") == "search"
    query = "the"
    total = cpython_count(data, query)
    assert total >= 3
    page.fill("#search", query)
    page.press("#search", "Enter")
    page.wait_for_function("(t) => document.getElementById('search-count').textContent === `1 of ${t}`", arg=total)
    page.press("#search", "Enter")
    page.wait_for_function("(t) => document.getElementById('search-count').textContent === `2 of ${t}`", arg=total)
    page.press("#search", "Shift+Enter")
    page.wait_for_function("(t) => document.getElementById('search-count').textContent === `1 of ${t}`", arg=total)
    assert page.locator("#transcript mark.search-hit").count() >= 1
    page.press("#search", "Escape")
    assert page.input_value("#search") == "" and page.inner_text("#search-count") == ""
    assert page.locator("#transcript mark").count() == 0


def test_search_never_injects_html(viewer: Viewer) -> None:
    from session_builder import Session

    s = Session("hostile-search")
    s.user("look: <img src=x onerror=alert(1)> and <b>bold</b>")
    s.end_turn()
    viewer.open_file(viewer.add_file("views-hostile.jsonl", s.to_bytes()), all=True)
    result = viewer.page.evaluate("() => window.transcriptViewer.search('<img src=x')")
    assert result["matches"] == 1
    assert viewer.page.locator("#transcript img").count() == 0
    assert viewer.page.locator("#transcript mark.search-current").inner_text() == "<img src=x"
    viewer.page.evaluate("() => window.transcriptViewer.search('')")


# --- raw records ---------------------------------------------------------------------------------------------------


def test_raw_records_of_a_packed_row_expand_on_demand(demo: tuple[Viewer, bytes]) -> None:
    viewer, data = demo
    page = viewer.page
    v = cpython_viewer(data)
    key = next(k for k in v.window.chat if any(r["packed"] for r in json.loads(v.records(k))["records"]))
    expected = json.loads(v.records(key))["records"]
    page.evaluate("(k) => window.transcriptViewer.view.focusKey(k, {block: 'center'})", key)
    page.evaluate("() => window.transcriptViewer.idle()")
    row = page.locator(f'#transcript article[data-key="{key}"]')
    row.locator("button.show-records").click()
    panel = row.locator(".records")
    panel.wait_for()
    assert int(panel.get_attribute("data-records") or 0) == len(expected)
    packed = [r for r in expected if r["packed"]]
    summaries = panel.locator(".record-packed .record-summary")
    assert summaries.count() == len(packed)
    first = packed[0]
    assert f"{first['members']} members" in summaries.first.inner_text()
    assert f"seq {first['seq']}–{first['lastSeq']}" in summaries.first.inner_text()
    assert panel.locator(".record-members").count() == 0  # members only when asked
    panel.locator("button.record-expand").first.click()
    members = panel.locator(".record-members").first
    members.wait_for()
    assert int(members.get_attribute("data-members") or 0) == first["members"]
    lines = members.inner_text().split("\n")
    assert [json.loads(line)["seq"] for line in lines] == list(range(first["seq"], first["lastSeq"] + 1))
    scalar = [r for r in expected if not r["packed"]]
    if scalar:
        stored = {json.loads(line).get("seq"): json.loads(line) for line in data.splitlines()[1:]}
        shown = panel.locator("li.record:not(.record-packed) pre.record-json").first.inner_text()
        assert json.loads(shown) == stored[scalar[0]["seq"]]


# --- export --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["html", "md"])
@pytest.mark.parametrize("scope", ["session", "view"])
def test_export_downloads_a_file(demo: tuple[Viewer, bytes], scope: str, fmt: str) -> None:
    viewer, data = demo
    page = viewer.page
    page.click("#export-menu > summary")
    with page.expect_download() as info:
        page.click(f'#export-menu button[data-format="{fmt}"][data-scope="{scope}"]')
    download = info.value
    assert download.suggested_filename.endswith(f".{fmt}")
    path = download.path()
    assert path is not None
    text = open(path, encoding="utf-8").read()
    header, batches = demo_session()
    prompts = [e["data"]["content"][0]["text"] for b in batches for e in b if e["type"] == "user/message"]
    if fmt == "html":
        assert text.startswith("<!doctype html>") and "<script" not in text
        for prompt in prompts:
            assert render.escape(prompt.split("`")[0]) in text
    else:
        assert text.startswith("# ") and "### User" in text and "### Assistant" in text
        for prompt in prompts:
            assert prompt.split("`")[0].strip() in text


@pytest.mark.parametrize("view", ["trajectory", "context"])
def test_export_of_the_current_view(demo: tuple[Viewer, bytes], view: str) -> None:
    viewer, data = demo
    page = viewer.page
    page.evaluate("(v) => window.transcriptViewer.showView(v)", view)
    page.click("#export-menu > summary")
    with page.expect_download() as info:
        page.click('#export-menu button[data-format="md"][data-scope="view"]')
    assert info.value.suggested_filename.endswith(f"-{view}.md")
    path = info.value.path()
    assert path is not None
    text = open(path, encoding="utf-8").read()
    expected = json.loads(cpython_viewer(data).export("md", view, ""))["text"]  # titled as the CLI titles it
    assert text == expected
    page.evaluate("() => window.transcriptViewer.showView('chat')")
