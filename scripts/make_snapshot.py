"""Make the viewer's Pyodide memory snapshot (build/site/pyodide/snapshot.bin.gz) in headless Chromium.

Called by scripts/build_site.py on the staging site, after the runtime, the wheels and lock.json are in place.
Serves that folder on 127.0.0.1 (an ephemeral port, this process only), opens scripts/snapshot/maker.html in
Debian's Chromium through Playwright; its worker boots Pyodide with the viewer's options (web/boot.mjs), installs
the pure-Python wheels, imports the boot's modules and makes ``pyodide.makeMemorySnapshot()``, which the page
POSTs back to this server. After the snapshot is taken, the maker also compiles our own wheel's sources to
Python 3.14 bytecode (unchecked-hash .pyc), which build_site.py adds to the wheel. The snapshot is made in the
same browser engine that restores it, from the same files, so Pyodide's build-id check passes; the worker falls
back to a normal boot when it does not.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAKER = ROOT / "scripts" / "snapshot"
MAKER_DIR = "_snapshot-maker"  # inside the staging site while the snapshot is made; removed afterwards
SNAPSHOT = Path("pyodide") / "snapshot.bin.gz"  # gzip, mtime 0: the same heap gives the same file
CHROMIUM = "/usr/bin/chromium"
TIMEOUT_MS = 180_000


class SnapshotError(Exception):
    """The snapshot could not be made; the message says why."""


UPLOADS = ("snapshot.bin", "own-pyc.zip")  # what the maker POSTs back, by name


@dataclass(frozen=True)
class Made:
    """What the maker made: the snapshot's size (the file is in place), its report, our wheel's bytecode zip."""

    size: int
    packed: int  # the gzipped file's size
    info: dict[str, Any]
    pyc_zip: bytes


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the staging site; takes the maker's POSTs (UPLOADS) into the folder ``uploads``."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".wasm": "application/wasm"}
    uploads: Path

    def do_POST(self) -> None:
        name = self.path.removeprefix(f"/{MAKER_DIR}/")
        if name not in UPLOADS:
            self.send_error(404)
            return
        length = int(self.headers.get("Content-Length", "0"))
        with (self.uploads / name).open("wb") as f:
            while length > 0:
                block = self.rfile.read(min(length, 1 << 20))
                if not block:
                    break
                f.write(block)
                length -= len(block)
        self.send_response(204 if length == 0 else 400)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _run_maker(site: Path, uploads: Path) -> dict[str, Any]:
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SnapshotError("playwright is not installed: run `make setup`") from None
    if not Path(CHROMIUM).is_file():
        raise SnapshotError(f"{CHROMIUM} is missing: run `make browser-deps`")
    maker = site / MAKER_DIR
    shutil.copytree(MAKER, maker)
    handler = functools.partial(type("Handler", (_Handler,), {"uploads": uploads}), directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                         args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            try:
                page = browser.new_context().new_page()
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/{MAKER_DIR}/maker.html")
                page.wait_for_function("() => window.snapshotMaker !== undefined", timeout=TIMEOUT_MS)
                outcome: dict[str, Any] = page.evaluate("() => window.snapshotMaker")
            finally:
                browser.close()
    except PlaywrightError as exc:
        raise SnapshotError(f"Chromium could not make the snapshot: {exc}") from None
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(maker, ignore_errors=True)
    if "error" in outcome:
        raise SnapshotError(f"the maker failed in Chromium: {outcome['error']}")
    return outcome


def initial_memory(wasm: Path) -> int:
    """The initial size in bytes of the memory a wasm module defines (its memory section): a restored heap must fit
    in it, because Pyodide restores a snapshot by copying it over that memory before anything can grow it."""
    data = wasm.read_bytes()

    def leb(at: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value, at

    at = 8  # magic and version
    while at < len(data):
        section = data[at]
        size, body = leb(at + 1)
        if section == 5:  # memory
            count, at = leb(body)
            if count != 1:
                break
            pages, _ = leb(at + 1)  # after the limits' flags byte
            return pages * 65536
        at = body + size
    raise SnapshotError(f"{wasm.name} defines no single memory: cannot check the snapshot's size")


def make_snapshot(site: Path) -> Made:
    """Writes ``site/pyodide/snapshot.bin.gz``; returns the heap's size, the maker's report and our wheel's bytecode."""
    with tempfile.TemporaryDirectory(dir=site.parent, prefix=".snapshot-maker-") as tmp:
        uploads = Path(tmp)
        outcome = _run_maker(site, uploads)
        got = {name: (uploads / name).stat().st_size if (uploads / name).is_file() else 0 for name in UPLOADS}
        if got["snapshot.bin"] != outcome.get("size") or got["own-pyc.zip"] != outcome.get("pycSize"):
            raise SnapshotError(f"the uploads have {got} bytes, the maker made {outcome.get('size')} and"
                                f" {outcome.get('pycSize')}")
        partial = uploads / "snapshot.bin.gz"
        with (uploads / "snapshot.bin").open("rb") as raw, partial.open("wb") as out:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=out, mtime=0) as packed:
                shutil.copyfileobj(raw, packed, 1 << 20)
        packed = partial.stat().st_size
        partial.replace(site / SNAPSHOT)
        heap, limit = int(outcome["info"]["heapBytes"]), initial_memory(site / "pyodide" / "pyodide.asm.wasm")
        if heap > limit:
            raise SnapshotError(
                f"the heap grew to {heap / 2**20:.1f} MiB before the snapshot, more than the runtime's initial"
                f" {limit / 2**20:.1f} MiB: a restore would fail. Import less before the snapshot (web/boot.mjs)"
            )
        pyc_zip = (uploads / "own-pyc.zip").read_bytes()
        return Made(got["snapshot.bin"], packed, dict(outcome.get("info") or {}), pyc_zip)
