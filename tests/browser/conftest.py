"""Browser-test fixtures: Debian's /usr/bin/chromium driven by pytest-playwright, the viewer served on 127.0.0.1.

The site is served by the product's own server (``assembler.server.create_app``, uvicorn in a thread), so the page
gets the real CSP headers (the worker script included), a session list and live follow. Two test-only mounts sit
beside it: ``/__test__/`` (files a test writes into ``test_files``) and ``/__fixtures__/`` (the real logs in
``../shared/fixtures/deepseek-harness``). Pyodide boots ONCE per test session, in the session-scoped
``viewer_page``; tests share that page and each load replaces what the last one showed. Every request the page
makes is recorded (``viewer.requests``). Prerequisites are never skipped: a missing browser or site fails the run
with the command that fixes it. The page's CSP forbids eval: pass ``wait_for_function`` an arrow function.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
BOOT_TIMEOUT_MS = 120_000
sys.path.insert(0, str(ROOT / "tests"))
from chromium import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from corpus import FIXTURES  # noqa: E402


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs the browser tests after every other test. Sync Playwright keeps an asyncio loop running on the main
    thread from the first browser test until the session ends, which would break ``asyncio.run`` in later tests."""
    here = Path(__file__).parent
    items.sort(key=lambda item: Path(str(item.path)).is_relative_to(here))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed browser test's report ends with what the shared page was waiting for (``Viewer.diagnosis``)."""
    outcome = yield
    report = outcome.get_result()
    viewer = getattr(item, "funcargs", {}).get("viewer") or _booted.get("viewer")
    if report.failed and call.when == "call" and viewer is not None:
        report.sections.append(("page at the failure", viewer.diagnosis()))
        report.sections.append(("server threads at the failure", _thread_stacks()))


def _thread_stacks() -> str:
    """The innermost frames of every thread but this one (the server's loop and its workers, a reader holding a
    lock): a server that stopped answering shows where it waits."""
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        out.append(f"thread {names.get(ident, ident)}:")
        out.extend("  " + line.rstrip() for line in traceback.format_stack(frame)[-10:])
    return "\n".join(out)


_booted: dict[str, Any] = {}  # the session's Viewer once booted (a test may reach it through another fixture)


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


@dataclass
class Served:
    """The running server: its base URL and the folders behind it."""

    url: str
    sessions: Path  # served as sessions by the product server (GET /api/sessions ...)
    files: Path  # served as /__test__/<name>
    server: Any = None  # the perf.load_follow.ServerThread running it

    def update(self, session: str) -> None:
        """Have ``session``'s source read what was written and send it to its followers now (awaited on the
        server's loop): a test waits for this instead of for the poll interval."""
        registry = self.server.app.state.registry

        async def update() -> None:
            await registry.lookup(session).update()

        self.server.call(update())


def _server_app(sessions: Path, files: Path) -> Any:
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from assembler.server import create_app

    # The search index (issue 21 item 4) in a folder of the test's; the indexer is started by ``served`` (the
    # ServerThread runs no lifespan).
    product = create_app([sessions], static_dir=SITE, poll_interval=0.05, index_dir=sessions.parent / "search-index",
                         index_interval=0.3)
    mounts = [Mount("/__test__", StaticFiles(directory=files))]
    if FIXTURES.is_dir():
        mounts.append(Mount("/__fixtures__", StaticFiles(directory=FIXTURES)))
    app = Starlette(routes=[*mounts, Mount("/", product)])
    app.state.registry = product.state.registry
    app.state.indexer = product.state.indexer
    return app


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """build/site/, a sessions folder and a test-files folder, served on 127.0.0.1 at an ephemeral port."""
    if not (SITE / "index.html").is_file() or not (SITE / "worker.mjs").is_file():
        pytest.fail(f"{SITE.relative_to(ROOT)}/ is missing or stale: run `make build`")
    sessions = tmp_path_factory.mktemp("sessions")
    files = tmp_path_factory.mktemp("files")
    from perf.demo import write_demo

    write_demo(str(sessions / "demo-session.jsonl"))
    from perf.load_follow import ServerThread

    app = _server_app(sessions, files)
    try:
        server = ServerThread(app).__enter__()  # waits for uvicorn's startup, no polling
    except RuntimeError:
        pytest.fail("the viewer server did not start")
    app.state.indexer.start()
    try:
        yield Served(f"{server.base_url}/", sessions, files, server)
    finally:
        app.state.indexer.stop()
        server.__exit__()


@pytest.fixture(scope="session")
def site_url(served: Served) -> str:
    return served.url


@dataclass
class Viewer:
    """The booted viewer page and what happened while loading it."""

    page: Page
    url: str
    served: Served
    requests: list[str] = field(default_factory=list)  # every URL the page (and its worker) asked for, in order
    failures: list[str] = field(default_factory=list)  # failed requests and HTTP errors (>= 400)
    console: list[str] = field(default_factory=list)  # "type: text" of every console message
    page_errors: list[str] = field(default_factory=list)  # uncaught exceptions
    boot_console_errors: list[str] = field(default_factory=list)  # console errors up to `ready`
    boot: dict[str, Any] = field(default_factory=dict)  # timings from the worker, plus wall-clock wallMs

    expected_failures: list[str] = field(default_factory=list)  # URL parts of requests a test makes fail on purpose
    in_flight: dict[Request, float] = field(default_factory=dict)  # requests not finished yet, and when they started

    def diagnosis(self) -> str:
        """What the page is waiting for (requests not finished, oldest first) and its last console lines: the
        report of a failed browser test ends with it, so a page that stopped answering says why."""
        now = time.perf_counter()
        waiting = [f"  {now - t:6.1f} s  {r.method} {r.url}" for r, t in sorted(self.in_flight.items(),
                                                                             key=lambda kv: kv[1])]
        return "\n".join([f"requests in flight: {len(waiting)}", *waiting, "last console lines:",
                          *(f"  {line[:300]}" for line in self.console[-25:]), f"page errors: {self.page_errors[-5:]}"])

    def real_failures(self) -> list[str]:
        """``failures`` without the follow streams the page closed on purpose (switching sessions or files) and the
        requests a test made fail on purpose (``expected_failures``: an unknown session, a server made to vanish)."""
        return [f for f in self.failures if not ("/follow?" in f and f.endswith("net::ERR_ABORTED"))
                and not any(part in f for part in self.expected_failures)]

    def add_file(self, name: str, data: bytes) -> str:
        """Serves ``data`` at ``/__test__/<name>``; returns that path."""
        (self.served.files / name).write_bytes(data)
        return f"/__test__/{name}"

    def open_file(self, path: str, **options: Any) -> dict[str, Any]:
        """``transcriptViewer.openFile`` on the file served at ``path`` (fetched into a File in the page)."""
        return self.page.evaluate(
            """async ([path, options]) => {
                const bytes = await (await fetch(path)).arrayBuffer();
                const file = new File([bytes], path.split("/").pop());
                return await window.transcriptViewer.openFile(file, options);
            }""",
            [path, options],
        )

    def run_python(self, code: str) -> Any:
        """Runs ``code`` in the worker's Python; its last expression must be a JSON string."""
        return json.loads(self.page.evaluate("(code) => window.transcriptViewer.runPython(code)", code))

    def render_all(self) -> str:
        """Scrolls the transcript top to bottom so every row renders; returns the text of every shown row, in order.
        The list is virtual (rows far from the viewport leave the DOM), so each row's text is collected while it is
        attached and rendered."""
        return str(self.page.evaluate(
            """async () => {
                const tv = window.transcriptViewer;
                const doc = document.scrollingElement;
                const texts = new Map();
                // A view that never settles fails here, saying what it waits for, instead of stalling the run.
                const settle = () => Promise.race([tv.idle(), new Promise((_, fail) => setTimeout(() => fail(new Error(
                    `render_all: the view did not settle in 60 s (rows wanted ${tv.view.wanted.size}, `
                    + `a render in flight: ${Boolean(tv.view.inflight)})`)), 60000))]);
                const collect = () => {
                    for (const el of document.querySelectorAll("#transcript > article[data-key]")) {
                        if (el.classList.contains("placeholder")) continue;
                        // Off-screen Think blocks skip layout (content-visibility), and innerText leaves skipped
                        // content out: lay them out so a row read just off screen has its whole text.
                        for (const d of el.querySelectorAll("details.think")) d.style.contentVisibility = "visible";
                        texts.set(el.dataset.key, el.innerText);
                    }
                };
                window.scrollTo(0, 0);
                for (let i = 0; i < 5000; i++) {
                    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
                    await settle();
                    collect();
                    if (doc.scrollTop + innerHeight >= doc.scrollHeight - 2) break;
                    window.scrollBy(0, innerHeight * 0.9);
                }
                await settle();
                collect();
                return tv.view.shownKeys().map((k) => texts.get(k) ?? "").join("\\n");
            }"""
        ))

    def attach_all(self, on: bool = True) -> None:
        """Test aid for small sessions: keep every shown row in the DOM (the virtual list's overscan made unbounded),
        or with ``on=False`` go back to the normal overscan. Structural checks on a whole small transcript use it."""
        self.page.evaluate(
            """async (on) => {
                const tv = window.transcriptViewer;
                tv.view.list.overscan = on ? 1e9 : 1200;
                tv.view.list.update();
                await tv.idle();
            }""",
            on,
        )

    def row_count(self, kind: str | None = None, *, shown: bool = True) -> int:
        """How many chat rows the list lays out (all of them, in or out of the DOM), optionally of one kind."""
        return int(self.page.evaluate(
            """([kind, shown]) => {
                const view = window.transcriptViewer.view;
                const keys = shown ? view.shownKeys() : view.order;
                return keys.filter((k) => !kind || view.metas.get(k).kind === kind).length;
            }""",
            [kind, shown],
        ))


@pytest.fixture(scope="session")
def viewer(browser: Browser, served: Served) -> Iterator[Viewer]:
    """Opens the site once in its own context and waits for `window.transcriptViewer.ready`."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    v = Viewer(page=page, url=served.url, served=served)

    def on_request(request: Request) -> None:
        v.requests.append(request.url)
        v.in_flight[request] = time.perf_counter()

    def on_request_failed(request: Request) -> None:
        v.in_flight.pop(request, None)
        v.failures.append(f"{request.url}: {request.failure}")

    def on_response(response: Any) -> None:
        if response.status >= 400:
            v.failures.append(f"{response.url}: HTTP {response.status}")

    def on_console(msg: ConsoleMessage) -> None:
        v.console.append(f"{msg.type}: {msg.text}")

    context.on("request", on_request)
    context.on("requestfailed", on_request_failed)
    context.on("requestfinished", lambda request: v.in_flight.pop(request, None))
    context.on("response", on_response)
    page.on("console", on_console)
    page.on("pageerror", lambda exc: v.page_errors.append(str(exc)))

    started = time.perf_counter()
    page.goto(f"{served.url}?test=1")  # ?test=1: the test hooks (runPython, state, view) exist only then
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
    _booted["viewer"] = v
    yield v
    _booted.clear()
    context.close()


@pytest.fixture(scope="session")
def viewer_page(viewer: Viewer) -> Page:
    """The booted viewer page, shared by the whole session (Pyodide is ready in its worker)."""
    return viewer.page
