"""A tiny smoke run of the browser benchmark (``perf/bench_browser.py``) in the session's viewer page: both modes
load through ``transcriptViewer.loadPage`` and agree. Times are reported by the benchmark, never asserted here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assembler.records import decode_page
from assembler.transcript import assemble, digest
from definitions import default_definitions
from perf.bench_browser import measure_mode, pages

if TYPE_CHECKING:
    from conftest import Viewer


def cpython_digest(page: bytes) -> str:
    return digest(assemble(decode_page(page).records, False, default_definitions()))


def test_benchmark_modes_load_and_agree(viewer: Viewer) -> None:
    results = {}
    for mode, payload in pages(runs=3, total_deltas=600).items():
        results[mode] = measure_mode(viewer.page, viewer.add_file(f"bench-{mode}.json", payload), repeat=1)
    packed, scalar = results["packed"], results["scalar"]
    assert packed["digest"] == scalar["digest"] == cpython_digest(pages(runs=3, total_deltas=600)["packed"])
    assert (packed["chatNodes"], packed["trajectoryNodes"]) == (scalar["chatNodes"], scalar["trajectoryNodes"])
    assert packed["records"] == packed["inputs"] < scalar["records"] == scalar["inputs"]
    assert scalar["records"] == 600 + 3 + 4 * 3  # deltas, the three opening events, the separators
    for result in results.values():
        assert set(result["ms"]) == {"decode", "journal", "fold", "html", "render"}
        assert result["wasmHeapBytes"] > 0 and result["parseMs"] >= 0
