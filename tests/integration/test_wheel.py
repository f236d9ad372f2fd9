"""The wheel carries the viewer (issue 21 item 1): built as ``make dist`` builds it (``scripts/build_dist.py``, from
the checkout's ``build/site``), installed by pip into a fresh venv, its ``transcript-assembler serve`` (run outside
the checkout) answers ``/``, the Pyodide runtime, the snapshot and our own Pyodide wheel with the built site's bytes,
and the session API; then Chromium opens a generated session from it and shows its text.

One wheel and one venv for the module (about 25 s: build, then pip install with dependencies from the index).
Prerequisites are never skipped: no built site or no Chromium fails with the command that fixes it. Marked ``slow``:
``make test`` (CI) runs it, ``make test-fast`` does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS
from conftest import ROOT

from perf.bench_wheel import InstalledServer, build_wheel, install_wheel

sys.path.insert(0, str(ROOT / "tests" / "browser"))
from session_builder import Session

pytestmark = pytest.mark.slow

SITE = ROOT / "build" / "site"
MARKER = "The wheel's viewer shows this answer: seventeen lines."
SERVED_FILES = ("index.html", "worker.mjs", "pyodide/pyodide.mjs", "pyodide/pyodide.asm.wasm",
                "pyodide/python_stdlib.zip", "pyodide/lock.json", "pyodide/snapshot.bin.gz")


@dataclass
class Installed:
    wheel: Path
    bin: Path
    venv: Path
    sessions: Path
    cwd: Path


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not (SITE / "index.html").is_file() or not (SITE / "pyodide" / "snapshot.bin.gz").is_file():
        pytest.fail(f"{SITE.relative_to(ROOT)}/ is missing: run `make build`")
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp / "dist")
    bin_dir = install_wheel(tmp / "venv", wheel)
    sessions = tmp / "sessions"
    sessions.mkdir()
    s = Session("wheel-session")
    s.user("How many lines does the file have?")
    s.assistant([("text", MARKER)])
    s.end_step()
    s.end_turn()
    (sessions / "wheel-session.jsonl").write_bytes(s.to_bytes())
    cwd = tmp / "elsewhere"  # not the checkout: nothing relative to it can be found
    cwd.mkdir()
    return Installed(wheel, bin_dir, tmp / "venv", sessions, cwd)


@pytest.fixture(scope="module")
def server(installed: Installed) -> Iterator[InstalledServer]:
    with InstalledServer(installed.bin, installed.sessions, installed.cwd) as running:
        yield running


def test_the_wheel_carries_every_file_of_the_built_site(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as zf:
        carried = {n.removeprefix("assembler/_site/") for n in zf.namelist() if n.startswith("assembler/_site/")}
    built = {p.relative_to(SITE).as_posix() for p in SITE.rglob("*") if p.is_file()}
    assert carried == built
    assert not (ROOT / "assembler" / "_site").exists()  # copied in at dist time, never into the checkout


def test_the_installed_package_is_the_venvs_not_the_checkouts(installed: Installed) -> None:
    done = subprocess.run([str(installed.bin / "python"), "-c", "import assembler; print(assembler.__file__)"],
                          cwd=installed.cwd, capture_output=True, text=True, check=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert Path(done.stdout.strip()).is_relative_to(installed.venv)


def test_installed_serve_answers_with_the_built_sites_bytes(installed: Installed, server: InstalledServer) -> None:
    assert Path(server.viewer).is_relative_to(installed.venv) and Path(server.viewer).name == "_site", server.viewer
    own = [p.relative_to(SITE).as_posix() for p in (SITE / "pyodide").glob("transcript_assembler-*.whl")]
    assert len(own) == 1
    for rel in (*SERVED_FILES, *own):
        status, body = server.get(rel)
        assert status == 200, rel
        assert body == (SITE / rel).read_bytes(), rel
    status, body = server.get("")
    assert status == 200 and body == (SITE / "index.html").read_bytes()


def test_installed_serve_answers_the_session_api(server: InstalledServer) -> None:
    status, body = server.get("api/sessions")
    assert status == 200
    listed = json.loads(body)["sessions"]
    assert [(e["id"], e["status"]) for e in listed] == [("wheel-session", "ended")]
    status, body = server.get("api/sessions/wheel-session/page")
    assert status == 200
    assert MARKER in body.decode()  # the answer's text, in the page's packed rows


def test_chromium_opens_a_session_from_the_installed_serve(server: InstalledServer) -> None:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps` (bash scripts/install_browser.sh)")
    from playwright.sync_api import sync_playwright

    failures: list[str] = []
    # Its own Playwright, closed at the end: a session-wide one would keep an asyncio loop on the main thread
    # for the tests that run after this one (tests/browser/conftest.py runs the browser suite last for that).
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), chromium_sandbox=False, headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("requestfailed", lambda r: failures.append(f"{r.url}: {r.failure}"))
            page.on("response", lambda r: failures.append(f"{r.url}: HTTP {r.status}") if r.status >= 400 else None)
            page.goto(f"{server.url}#session=wheel-session")
            page.wait_for_function("(text) => document.getElementById('transcript').innerText.includes(text)",
                                   arg=MARKER, timeout=120_000)
            assert page.locator("#session-list button[data-id='wheel-session']").count() == 1
        finally:
            browser.close()
    assert failures == []
