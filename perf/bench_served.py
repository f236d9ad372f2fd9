"""A served big session opened in Chromium, as a reader opens it: the synthetic 416,756-event session written as a
packed log, served by the product server over build/site; in a freshly booted viewer the reader clicks its entry in
the session list, and the time runs from the click to the first row on screen (the page's ``viewer:first-row``
mark: the follow snapshot fetched, decoded and folded in the worker, its first screen laid out). Beside it, in the
same pages, ``transcriptViewer.loadPage`` of the same page (``GET /api/sessions/ID/page``, the records the snapshot
carries) to its first screen: the served open path against ``load_page``.

    .venv/bin/python -m perf.bench_served [--json OUT] [--boots N]

Each measurement is the first thing a freshly booted viewer does (a new browser context each, the two paths
alternating, ``--boots`` of each): what a reader opening a session meets. The click's time includes fetching the
snapshot from the server; ``loadPage``'s starts with the page's bytes already fetched. Reports the medians
(``clickFirstRowMs``, ``loadPageMs``; ``fetchAndLoadPageMs`` times ``loadPage`` from the page's GET, as the click
path includes its fetch) and the split of the click (``clickSplitMs``, the page's marks
``viewer:follow-response``, ``viewer:snapshot-received``, ``viewer:snapshot-folded``); nothing is asserted
(STYLE 15). Needs ``make build``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from perf.synthetic import DELTA_EVENTS, DELTA_RUNS, history_transport_events

__all__ = ["SESSION", "write_session", "measure", "run", "main"]

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "build" / "site"
SESSION = "bench-served"

_READY = f"""async () => {{
    await window.transcriptViewer.ready;
    return document.querySelector("#session-list button[data-id='{SESSION}']") !== null;
}}"""

# One click on the session's list entry to its first row; the mark is cleared first so each click sets its own.
_CLICK = f"""async () => {{
    for (const name of ["viewer:first-row", "viewer:follow-response", "viewer:snapshot-received",
                        "viewer:snapshot-folded"]) performance.clearMarks(name);
    const button = document.querySelector("#session-list button[data-id='{SESSION}']");
    if (!button) throw new Error("the session list has no entry {SESSION}");
    const t0 = performance.now();
    button.click();
    while (performance.now() - t0 < 120000) {{
        const mark = performance.getEntriesByName("viewer:first-row")[0];
        if (mark) {{
            const at = (name) => {{
                const m = performance.getEntriesByName(name).at(-1);
                return m ? Math.round((m.startTime - t0) * 10) / 10 : null;
            }};
            return {{ ms: mark.startTime - t0, response: at("viewer:follow-response"),
                     received: at("viewer:snapshot-received"), folded: at("viewer:snapshot-folded") }};
        }}
        await new Promise((resolve) => setTimeout(resolve, 1));
    }}
    throw new Error("no first row 120 s after the click");
}}"""

_LOAD = """async ([path]) => {
    const tv = window.transcriptViewer;
    const tFetch = performance.now();
    const bytes = new Uint8Array(await (await fetch(path)).arrayBuffer());
    const t0 = performance.now();
    const r = await tv.loadPage(bytes);
    const end = performance.now();
    return { wall: end - t0, withFetch: end - tFetch, ms: r.ms, bytes: bytes.length, records: r.records };
}"""


def write_session(path: Path, runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS) -> None:
    """The synthetic session as a packed log (one batch: its delta runs become chunk rows), as the recorder writes."""
    from assembler.store.jsonl import SessionWriter

    header = {"type": "session", "version": 0, "id": SESSION, "createdAt": 0, "cwd": "/bench"}
    with SessionWriter(path, header) as writer:
        writer.append(history_transport_events(runs, total_deltas))


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _boot(browser: Any, url: str, step: str) -> dict[str, Any]:
    """A fresh context, booted, then one ``step``: ``click`` (the list entry to its first row) or ``load``."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.goto(url)
        page.wait_for_function(_READY, polling=50)
        if step == "click":
            click = page.evaluate(_CLICK)
            return {"step": step, "ms": click["ms"], "split": click}
        load = page.evaluate(_LOAD, [f"api/sessions/{SESSION}/page?maxMessages=50"])
        return {"step": step, "ms": load["wall"], "load": load}
    finally:
        context.close()


def measure(browser: Any, boots: int = 4, log: Any = print, runs: int = DELTA_RUNS,
            total_deltas: int = DELTA_EVENTS) -> dict[str, Any]:
    """The served session's click → first row and ``loadPage`` of its page, each first after boot, in ``boots``
    fresh contexts apiece (alternating)."""
    from assembler.server import create_app
    from perf.load_follow import ServerThread

    with tempfile.TemporaryDirectory(prefix="bench-served-") as tmp:
        write_session(Path(tmp) / f"{SESSION}.jsonl", runs, total_deltas)
        with ServerThread(create_app([tmp], static_dir=SITE)) as server:
            results = [_boot(browser, f"{server.base_url}/", step) for _ in range(boots) for step in ("click", "load")]
    clicks = [r["ms"] for r in results if r["step"] == "click"]
    loads = [r for r in results if r["step"] == "load"]
    report = {
        "session": SESSION, "boots": boots, "pageBytes": loads[0]["load"]["bytes"],
        "records": loads[0]["load"]["records"],
        "clickFirstRowMs": _median(clicks), "loadPageMs": _median([r["ms"] for r in loads]),
        "fetchAndLoadPageMs": _median([r["load"]["withFetch"] for r in loads]),  # the page's GET, then loadPage
        # The click's path, ms after the click (medians): the server's answer (follow-response), the snapshot read
        # whole and split in the page (received), the worker's answer (folded); the rest is the page's first screen.
        "clickSplitMs": {k: _median([r["split"][k] for r in results
                                     if r["step"] == "click" and r["split"][k] is not None])
                         for k in ("response", "received", "folded")},
        "runs": results,
    }
    log(f"served: click → first row {report['clickFirstRowMs']} ms, loadPage {report['loadPageMs']} ms "
        f"(medians over {boots} fresh boots each)")
    return report


def run(boots: int = 4) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from perf.bench_browser import CHROMIUM, CHROMIUM_ARGS

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            return {"benchmark": "served", "chromium": browser.version, **measure(browser, boots)}
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--boots", type=int, default=4, help="fresh browser contexts per path (default 4)")
    args = parser.parse_args(argv)
    report = run(args.boots)
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(json.dumps(report, indent=2) + "\n")
        tmp.replace(out)
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
