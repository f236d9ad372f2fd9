"""The "Replay benchmark" panel on a real log: it replays the open window scalar and packed in the worker, draws the
bar chart in the page, and its packed digest equals CPython's digest of the same log; "Copy as JSON" puts the
results on the clipboard as valid JSON with every field."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from corpus import log_id, session_logs
from test_corpus_digest import corpus_present, cpython_digest

from perf.bench_browser import measure_mode, measure_replay, pages

if TYPE_CHECKING:
    from conftest import Viewer

STAGES = ["decode", "journal", "fold", "render"]


def test_replay_panel_on_a_real_log(viewer: Viewer) -> None:
    corpus_present()
    path = max(session_logs(), key=lambda p: p.stat().st_size)  # the largest log: the most rows to pack
    page = viewer.page
    console_start = len(viewer.console)  # test_boot injects an inline script on purpose: only this test's lines
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=viewer.url.rstrip("/"))
    opened = viewer.open_file(f"/__fixtures__/{log_id(path)}", all=True)
    assert opened["error"] is None
    page.click("#more-menu > summary")  # the replay benchmark lives in the "More tools" menu
    page.click("#replay-open")
    page.wait_for_selector("#replay-copy:not([disabled])", timeout=120_000)
    panel = page.locator("#replay-panel")
    assert panel.is_visible()
    cells = {mode: page.locator(f'#replay-panel td[data-mode="{mode}"][data-field="digest"]').inner_text()
             for mode in ("scalar", "packed")}
    expected = cpython_digest(path)
    assert cells["packed"] == expected == cells["scalar"]
    assert page.locator("#replay-panel svg.replay-chart rect.replay-bar").count() == 2 * (len(STAGES) + 1) + 2
    assert page.locator('[role="alert"]:not([hidden])').count() == 0

    page.click("#replay-copy")
    page.wait_for_function("() => document.querySelector('.replay-status').textContent.startsWith('Copied')")
    copied = json.loads(page.evaluate("() => navigator.clipboard.readText()"))
    assert copied["benchmark"] == "replay" and copied["stages"] == STAGES
    assert copied["sameDigest"] is True
    scalar, packed = copied["modes"]["scalar"], copied["modes"]["packed"]
    assert packed["digest"] == expected
    for mode in (scalar, packed):
        assert set(mode["ms"]) == set(STAGES) and all(isinstance(v, (int, float)) for v in mode["ms"].values())
        assert mode["wasmHeapBytes"] > 0 and mode["records"] > 0 and mode["rendered"] > 0
    assert packed["records"] < scalar["records"] == scalar["inputs"]  # rows were replayed as rows
    assert packed["records"] == opened["records"]
    assert set(copied["ratios"]) == {*STAGES, "total"}
    assert not [line for line in viewer.console[console_start:] if "Content Security Policy" in line]


def test_the_benchmark_measures_with_the_panels_function(viewer: Viewer) -> None:
    """``perf.bench_browser.measure_replay`` goes through ``transcriptViewer.replayPage`` (the worker's replay_page,
    which the panel's replayWindow also calls): both modes agree with each other and with ``loadPage``."""
    results = {}
    for mode, payload in pages(runs=3, total_deltas=600).items():
        path = viewer.add_file(f"replay-{mode}.json", payload)
        results[mode] = (measure_replay(viewer.page, path, repeat=2), measure_mode(viewer.page, path, repeat=1))
    (packed, packed_load), (scalar, scalar_load) = results["packed"], results["scalar"]
    assert packed["digest"] == scalar["digest"] == packed_load["digest"] == scalar_load["digest"]
    assert packed["records"] == packed_load["records"] < scalar["records"] == scalar_load["records"]
    for result in (packed, scalar):
        assert set(result["ms"]) == set(STAGES) and result["wasmHeapBytes"] > 0 and result["rendered"] > 0
