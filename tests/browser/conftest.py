"""Browser-test fixtures: Debian's /usr/bin/chromium driven by pytest-playwright, build/site/ served on 127.0.0.1.

Pyodide boots ONCE per test session, in the session-scoped `viewer_page`; tests share that page, so a test must
leave it as it found it. Every request the page makes is recorded (`viewer.requests`). Prerequisites are never
skipped: a missing browser or site fails the run with the command that fixes it.
The page's CSP forbids eval: pass `wait_for_function` an arrow function ("() => ..."), never a bare expression.
"""

from __future__ import annotations

import http.server
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-precise-memory-info",
]
BOOT_TIMEOUT_MS = 60_000
MIME_TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".whl": "application/octet-stream",
    ".zip": "application/zip",
    ".map": "application/json",
    ".css": "text/css",
    ".html": "text/html",
}


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launches Debian's chromium (never a Playwright-downloaded one) headless and without a sandbox."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps` (bash scripts/install_browser.sh)")
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "chromium_sandbox": False,
        "headless": True,
        "args": CHROMIUM_ARGS,
    }


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return MIME_TYPES.get(Path(path).suffix) or super().guess_type(path)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


@pytest.fixture(scope="session")
def site_url() -> Iterator[str]:
    """Serves build/site/ on 127.0.0.1 at an ephemeral port; yields the base URL (ending in '/')."""
    if not (SITE / "index.html").is_file():
        pytest.fail(f"{SITE.relative_to(ROOT)}/index.html is missing: run `make build`")
    handler = partial(_SiteHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class Viewer:
    """The booted viewer page and what happened while loading it."""

    page: Page
    url: str
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, in order
    failures: list[str] = field(default_factory=list)  # failed requests and HTTP errors (>= 400)
    console: list[str] = field(default_factory=list)  # "type: text" of every console message
    page_errors: list[str] = field(default_factory=list)  # uncaught exceptions
    boot_console_errors: list[str] = field(default_factory=list)  # console errors up to `ready`
    boot: dict[str, Any] = field(default_factory=dict)  # timings from boot.mjs, plus wall-clock wallMs


@pytest.fixture(scope="session")
def viewer(browser: Browser, site_url: str) -> Iterator[Viewer]:
    """Opens the site once in its own context and waits for `window.transcriptViewer.ready`."""
    context = browser.new_context()
    page = context.new_page()
    v = Viewer(page=page, url=site_url)

    def on_request(request: Request) -> None:
        v.requests.append(request.url)

    def on_request_failed(request: Request) -> None:
        v.failures.append(f"{request.url}: {request.failure}")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            v.failures.append(f"{response.url}: HTTP {response.status}")

    def on_console(msg: ConsoleMessage) -> None:
        v.console.append(f"{msg.type}: {msg.text}")

    context.on("request", on_request)
    context.on("requestfailed", on_request_failed)
    context.on("response", on_response)
    page.on("console", on_console)
    page.on("pageerror", lambda exc: v.page_errors.append(str(exc)))

    started = time.perf_counter()
    page.goto(site_url)
    result = page.evaluate(
        """async (ms) => {
            const timeout = new Promise((_, reject) =>
                setTimeout(() => reject(new Error(`boot did not finish within ${ms} ms`)), ms));
            try {
                if (!window.transcriptViewer) throw new Error("window.transcriptViewer is not defined");
                return { ok: true, timings: await Promise.race([window.transcriptViewer.ready, timeout]) };
            } catch (err) {
                return { ok: false, error: String(err && err.stack || err) };
            }
        }""",
        BOOT_TIMEOUT_MS,
    )
    if not result["ok"]:
        context.close()
        pytest.fail(
            f"viewer did not boot: {result['error']}\nfailed requests: {v.failures}\n"
            f"page errors: {v.page_errors}\nconsole:\n" + "\n".join(v.console)
        )
    v.boot = {**result["timings"], "wallMs": round((time.perf_counter() - started) * 1000)}
    v.boot_console_errors = [line for line in v.console if line.startswith("error:")]
    yield v
    context.close()


@pytest.fixture(scope="session")
def viewer_page(viewer: Viewer) -> Page:
    """The booted viewer page, shared by the whole session (Pyodide is ready in it)."""
    return viewer.page
