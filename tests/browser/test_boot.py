"""The built site boots Pyodide offline, in the viewer's Web Worker, with our wheel and its pinned dependencies."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from playwright.sync_api import Page

if TYPE_CHECKING:  # conftest is not importable as a module at run time; fixtures arrive by name
    from conftest import Viewer

PROBE = """
import importlib.metadata, json, sys
import msgspec, markdown_it, mdurl, pygments, assembler, definitions
json.dumps({
    "python": sys.version,
    "msgspec": msgspec.__version__,
    "markdown_it": markdown_it.__version__,
    "pygments": pygments.__version__,
    "transcript_assembler": importlib.metadata.version("transcript-assembler"),
    "markdown": markdown_it.MarkdownIt().render("*hi*"),
    "assembler_path": list(assembler.__path__),
    "definitions_path": list(definitions.__path__),
})
"""


def run_python(page: Page, code: str) -> object:
    """Runs `code` in the worker's Pyodide; its last expression must be a JSON string."""
    return json.loads(page.evaluate("(code) => window.transcriptViewer.runPython(code)", code))


def test_pyodide_boots_and_reports_ready(viewer: Viewer) -> None:
    page = viewer.page
    assert page.evaluate("document.documentElement.dataset.boot") == "ready"
    assert page.locator("#boot-status").is_hidden()  # the status line goes once Python is ready
    assert page.evaluate("document.documentElement.dataset.bootStage") == "ready"
    assert page.locator("[role=alert]").count() == 1
    assert page.locator("[role=alert]").is_hidden()
    assert viewer.boot["bootMs"] > 0


def test_python_runs_in_a_worker_not_on_the_main_thread(viewer_page: Page) -> None:
    assert viewer_page.evaluate("() => typeof window.loadPyodide === 'undefined' && !('pyodide' in window)")
    probe = run_python(viewer_page, "import json, js\njson.dumps(str(type(js.self)))")
    assert "Worker" in str(probe) or "JsProxy" in str(probe)
    assert run_python(viewer_page, "import json, js\njson.dumps(hasattr(js, 'document'))") is False


def test_python_has_the_pinned_packages_and_our_wheel(viewer_page: Page) -> None:
    probe = run_python(viewer_page, PROBE)
    assert isinstance(probe, dict)
    assert probe["python"].startswith("3.14")
    assert probe["msgspec"] == "0.23.0"
    assert probe["markdown_it"] == "4.3.0"
    assert probe["pygments"] == "2.21.0"
    assert probe["transcript_assembler"] == "0.1.0"
    assert probe["markdown"] == "<p><em>hi</em></p>\n"
    for path in probe["assembler_path"] + probe["definitions_path"]:
        assert "site-packages" in path, path


def test_every_request_stays_on_127_0_0_1(viewer: Viewer) -> None:
    assert viewer.requests, "no requests were recorded"
    offsite = [
        url
        for url in viewer.requests
        if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).hostname != "127.0.0.1"
    ]
    assert offsite == []
    assert viewer.real_failures() == []
    loaded = {urlsplit(url).path.rsplit("/", 1)[-1] for url in viewer.requests}
    assert {"lock.json", "pyodide.asm.wasm", "transcript_assembler-0.1.0-py3-none-any.whl"} <= loaded


def test_boot_logs_no_errors(viewer: Viewer) -> None:
    assert viewer.page_errors == []
    assert viewer.boot_console_errors == []


def test_csp_meta_forbids_inline_script(viewer_page: Page) -> None:
    csp = viewer_page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert csp, "index.html has no Content-Security-Policy meta"
    directives = {parts[0]: parts[1:] for parts in (d.split() for d in csp.split(";")) if parts}
    script_src = directives.get("script-src", directives.get("default-src"))
    assert script_src is not None, csp
    assert "'unsafe-inline'" not in script_src
    assert "'unsafe-eval'" not in script_src
    assert "'self'" in script_src


def test_csp_blocks_an_injected_inline_script(viewer_page: Page) -> None:
    ran = viewer_page.evaluate(
        """() => {
            const s = document.createElement("script");
            s.textContent = "window.__inlineRan = true;";
            document.body.append(s);
            s.remove();
            const ran = window.__inlineRan === true;
            delete window.__inlineRan;
            return ran;
        }"""
    )
    assert ran is False
