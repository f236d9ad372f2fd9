"""Python starts from the build's memory snapshot (build/site/pyodide/snapshot.bin.gz, web/boot.mjs), and falls back to
a scratch boot, saying so in the runtime stage, when the snapshot is missing or does not restore. Both paths reach a
working viewer that folds a real log to the same digest as CPython."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from conversation_support import assemble_page, storage_page_bytes
from corpus import FIXTURES, log_id, require_corpus, session_logs
from playwright.sync_api import Browser, Route

from assembler.records import decode_page
from assembler.store.jsonl import read_session
from assembler.transcript import digest

if TYPE_CHECKING:
    from conftest import Served, Viewer

SNAPSHOT_URL = "**/pyodide/snapshot.bin.gz"

OPEN_AND_DIGEST = """async (path) => {
    await window.transcriptViewer.ready;
    const bytes = await (await fetch(path)).arrayBuffer();
    const result = await window.transcriptViewer.openFile(new File([bytes], path.split("/").pop()), { all: true });
    return { digest: result.digest, error: result.error, rows: window.transcriptViewer.view.order.length };
}"""

PROBE = """
import json, sys, random
import assembler.browser, msgspec, pygments.lexers
json.dumps({
    "imported": sorted(m for m in ("msgspec", "assembler.browser", "markdown_it", "pygments") if m in sys.modules),
    "lexer": pygments.lexers.get_lexer_by_name("python").name,
    "random": random.random(),
})
"""


def a_real_log() -> str:
    require_corpus()  # fails in CI, skips for a user without ../shared
    logs = session_logs()
    return log_id(max(logs, key=lambda p: p.stat().st_size))  # the largest: the most row kinds


def cpython_digest(log: str) -> str:
    result = read_session(str(FIXTURES / log))
    assert result.header is not None and result.ok, f"{log}: {result.error}"
    return digest(assemble_page(decode_page(storage_page_bytes(result.records, "packed", None))))


@pytest.fixture
def boot_with(browser: Browser, served: Served) -> Iterator[Callable[[Callable[[Route], None] | None], Any]]:
    """Opens the site in a fresh context whose snapshot request is answered by ``handler`` (None: left alone);
    returns ``(page, boot timings)``."""
    contexts = []

    def boot(handler: Callable[[Route], None] | None) -> Any:
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        contexts.append(context)
        if handler is not None:
            context.route(SNAPSHOT_URL, handler)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{served.url}?test=1")
        timings = page.evaluate("() => window.transcriptViewer.ready")
        assert errors == []
        return page, timings

    yield boot
    for context in contexts:
        context.close()


def test_the_build_made_a_snapshot_and_the_viewer_started_from_it(viewer: Viewer) -> None:
    assert viewer.boot["started"] == "snapshot"
    assert any(url.endswith("/pyodide/snapshot.bin.gz") for url in viewer.requests)
    runtime = [s["text"] for s in viewer.boot["stages"] if s["stage"] == "runtime"]
    assert runtime == ["loading the Python runtime"]
    probe = viewer.run_python(PROBE)
    assert probe["imported"] == ["assembler.browser", "markdown_it", "msgspec", "pygments"]
    assert probe["lexer"] == "Python"  # a lexer module the snapshot never imported loads from the reinstalled wheel


def test_each_page_reseeds_random_after_a_restore(boot_with: Any, viewer: Viewer) -> None:
    page, timings = boot_with(None)
    assert timings["started"] == "snapshot"
    first = viewer.run_python(PROBE)["random"]
    second = page.evaluate("(code) => window.transcriptViewer.runPython(code)", PROBE)
    assert first != json.loads(second)["random"]


def _missing(route: Route) -> None:
    route.fulfill(status=404, body="not here")


def _damaged(route: Route) -> None:
    route.fulfill(status=200, body=gzip.compress(b"\0" * 4096), content_type="application/gzip")


@pytest.mark.parametrize(
    ("handler", "why"),
    [
        (_missing, "no snapshot: HTTP 404"),
        (_damaged, "the snapshot did not restore: Snapshot has invalid magic number"),
    ],
    ids=["missing", "damaged"],
)
def test_without_a_usable_snapshot_python_starts_from_scratch_and_folds_the_same(
    boot_with: Any, viewer: Viewer, handler: Callable[[Route], None], why: str
) -> None:
    log = a_real_log()
    page, timings = boot_with(handler)
    assert timings["started"] == f"scratch ({why})"
    runtime = [s["text"] for s in timings["stages"] if s["stage"] == "runtime"]
    assert runtime == ["loading the Python runtime", f"initialising Python from scratch, {why}"]
    assert [s["stage"] for s in timings["stages"]][-2:] == ["packages", "ready"]
    scratch = page.evaluate(OPEN_AND_DIGEST, f"/__fixtures__/{log}")
    restored = viewer.page.evaluate(OPEN_AND_DIGEST, f"/__fixtures__/{log}")
    assert scratch["error"] is None and restored["error"] is None
    assert scratch["rows"] > 0
    assert scratch == restored
    assert scratch["digest"] == cpython_digest(log)


BYTECODE = """
import importlib.util, json, marshal, os
import assembler, definitions
checked, mismatched, missing = 0, [], []
for package in (assembler, definitions):
    root = os.path.dirname(package.__file__)
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            source = os.path.join(dirpath, name)
            cached = importlib.util.cache_from_source(source)
            if not os.path.exists(cached):
                missing.append(source)
                continue
            with open(cached, "rb") as f:
                data = f.read()
            flags = int.from_bytes(data[4:8], "little")
            with open(source, "rb") as f:
                fresh = compile(f.read(), source, "exec", dont_inherit=True)
            if flags != 0b01 or marshal.loads(data[16:]) != fresh:
                mismatched.append(source)
            checked += 1
json.dumps({"checked": checked, "mismatched": mismatched, "missing": missing,
            "viewer": assembler.browser.viewer.__spec__.cached})
"""


def test_our_wheel_carries_bytecode_that_matches_its_sources(viewer: Viewer) -> None:
    """The build adds unchecked-hash .pyc files (compiled by Pyodide's own Python) so the import skips compiling."""
    result = viewer.run_python(BYTECODE)
    assert result["missing"] == [] and result["mismatched"] == []
    assert result["checked"] > 50
    assert "__pycache__" in result["viewer"] and result["viewer"].endswith(".cpython-314.pyc")
