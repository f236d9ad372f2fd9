"""The viewer's first seconds in Chromium : when the session list shows, each boot stage of the
Python worker (runtime, packages, import: ``transcriptViewer.ready``), and a cold ``#session=ID`` load to its first
rendered row. Each run is a fresh browser context (no cache), served by the product server over build/site.

``snapshotFetchMs`` is when the worker had the memory snapshot's bytes (web/boot.mjs); ``runtimeMs`` includes
restoring it (or, without a usable snapshot, initialising Python from scratch); ``started`` says which happened
in every run (``snapshot`` or ``scratch (why)``). ``--no-snapshot`` answers the snapshot request with a 404, to
measure the fallback boot.

    .venv/bin/python -m perf.bench_boot [--json OUT] [--repeat N] [--no-snapshot]

Times are ms since navigation start (``performance.now()`` and the page's User Timing marks ``viewer:listShown``,
``viewer:ready`` and ``viewer:first-row``); the worker's stage times are ms since the worker started, which is also
reported (``workerStartMs``). Medians over ``--repeat`` runs; nothing is asserted (STYLE 15). Needs ``make build``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["measure", "run", "main"]

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "build" / "site"
SESSION = "demo-session"

_READ_MARKS = """async () => {
    const boot = await window.transcriptViewer.ready;
    const at = (name) => performance.getEntriesByName(`viewer:${name}`)[0]?.startTime ?? null;
    return { boot, listShown: at("listShown"), ready: at("ready"), firstRow: at("first-row"),
             workerStart: boot.startedAt - performance.timeOrigin };
}"""

_WAIT_FIRST_ROW = "() => performance.getEntriesByName('viewer:first-row').length > 0"


def _context(browser: Any, snapshot: bool) -> Any:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    if not snapshot:
        context.route("**/pyodide/snapshot.bin.gz", lambda route: route.fulfill(status=404, body="measuring without"))
    return context


def _one(browser: Any, url: str, snapshot: bool = True) -> dict[str, Any]:
    context = _context(browser, snapshot)
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("() => performance.getEntriesByName('viewer:listShown').length > 0", timeout=120_000)
        marks = page.evaluate(_READ_MARKS)
    finally:
        context.close()
    context = _context(browser, snapshot)
    try:
        page = context.new_page()
        page.goto(f"{url}#session={SESSION}")
        page.wait_for_function(_WAIT_FIRST_ROW, timeout=120_000)
        session = page.evaluate(_READ_MARKS)
    finally:
        context.close()
    boot = marks["boot"]
    return {
        "listVisibleMs": marks["listShown"],
        "workerStartMs": marks["workerStart"],
        "snapshotFetchMs": boot.get("snapshotFetchMs"),
        "runtimeMs": boot.get("runtimeMs"),
        "packagesMs": boot.get("packagesMs"),
        "importMs": boot.get("importMs"),
        "bootMs": boot.get("bootMs"),
        "readyMs": marks["ready"],
        "coldSessionFirstRowMs": session["firstRow"],
        "coldSessionReadyMs": session["ready"],
        "started": boot.get("started"),
    }


def measure(browser: Any, repeat: int = 3, log: Any = print, snapshot: bool = True) -> dict[str, Any]:
    """Boot figures over ``repeat`` runs (medians, and every run) in an open Playwright ``browser``."""
    from assembler.server import create_app
    from perf.demo import write_demo
    from perf.load_follow import ServerThread

    with tempfile.TemporaryDirectory(prefix="bench-boot-") as tmp:
        write_demo(str(Path(tmp) / f"{SESSION}.jsonl"))
        with ServerThread(create_app([tmp], static_dir=SITE)) as server:
            url = f"{server.base_url}/"
            runs = [_one(browser, url, snapshot) for _ in range(repeat)]
    keys = [k for k in runs[0] if k != "started"]
    medians = {k: round(statistics.median(r[k] for r in runs if r[k] is not None), 1)
               for k in keys if any(r[k] is not None for r in runs)}
    started = sorted({str(r["started"]) for r in runs})
    log("boot: " + ", ".join(f"{k} {v:.0f}" for k, v in medians.items()) + f" (ms, medians); started: {started}")
    return {"session": SESSION, "repeat": repeat, "started": started, "median": medians, "runs": runs}


def run(repeat: int = 3, snapshot: bool = True) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from perf.bench_browser import CHROMIUM, CHROMIUM_ARGS

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            return {"benchmark": "boot", "chromium": browser.version, **measure(browser, repeat, snapshot=snapshot)}
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--repeat", type=int, default=3, help="cold loads (median reported; default 3)")
    parser.add_argument("--no-snapshot", action="store_true",
                        help="answer the snapshot request with a 404: measure the scratch boot")
    args = parser.parse_args(argv)
    report = run(args.repeat, snapshot=not args.no_snapshot)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({**report["median"], "started": report["started"]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
