"""Every real log renders in the page with the same transcript digest as CPython's ``assemble --all --digest``.

The page opens each log as a local file (``transcriptViewer.openFile(file, {all: true})``: parsed in the worker in
slices, storage rows renamed to wire rows, never expanded) and reports the sha256 of the canonical view-node JSON.
The CPython side takes the CLI's own path in-process: ``conversation_support.storage_page_bytes`` → ``decode_page``
→ ``assemble_page`` → ``digest``. Pyodide boots once; the whole corpus is replayed in one batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conversation_support import assemble_page, storage_page_bytes
from corpus import FIXTURES, corpus_params, log_id, session_logs
from test_goldens import corpus_present

from assembler.records import decode_page
from assembler.store.jsonl import read_session
from assembler.transcript import digest

if TYPE_CHECKING:
    from conftest import Viewer


def cpython_digest(path: Path) -> str:
    """What ``transcript-assembler assemble PATH --all --digest`` prints."""
    result = read_session(str(path))
    assert result.header is not None and result.ok, f"{path}: {result.error}"
    return digest(assemble_page(decode_page(storage_page_bytes(result.records, "packed", None))))


@pytest.fixture(scope="module")
def browser_digests(viewer: Viewer) -> dict[str, dict[str, Any]]:
    """Opens every log in the page once; ``{log id: openFile summary}``."""
    logs = session_logs()
    if not logs:
        return {}
    paths = [f"/__fixtures__/{log_id(p)}" for p in logs]
    results = viewer.page.evaluate(
        """async (paths) => {
            const out = [];
            for (const path of paths) {
                try {
                    const bytes = await (await fetch(path)).arrayBuffer();
                    const file = new File([bytes], path.split("/").pop());
                    const r = await window.transcriptViewer.openFile(file, { all: true });
                    out.push({ digest: r.digest, error: r.error, chatNodes: r.chatNodes, inputs: r.inputs,
                               records: r.records, rows: window.transcriptViewer.view.order.length,
                               elements: document.querySelectorAll("#transcript > article").length,
                               ms: r.ms });
                } catch (err) {
                    out.push({ exception: String(err && err.message || err) });
                }
            }
            return out;
        }""",
        paths,
    )
    return {log_id(p): r for p, r in zip(logs, results, strict=True)}


@pytest.mark.parametrize("path", corpus_params())
def test_log_renders_with_the_cpython_digest(path: Path | None, browser_digests: dict[str, dict[str, Any]]) -> None:
    corpus_present()
    assert path is not None
    got = browser_digests[log_id(path)]
    assert "exception" not in got, got
    assert got["error"] is None, got["error"]
    assert got["digest"] == cpython_digest(path)
    assert got["rows"] == got["chatNodes"]  # every chat node has its row in the list (in the DOM or not)
    assert got["elements"] <= got["rows"]  # only rows near the viewport are in the DOM
    assert got["inputs"] == got["records"]  # one record is one input: rows were not expanded


def test_corpus_was_found() -> None:
    corpus_present()
    assert FIXTURES.is_dir() and len(session_logs()) >= 100
