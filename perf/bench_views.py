"""The viewer's views at scale: search time, scroll frame times and the DOM bound, on the synthetic 416,756-event
session (packed) and a 5,000-turn session (``perf.turns``).

    .venv/bin/python -m perf.bench_views [--json OUT] [--repeat N] [--quick] [--no-browser]

CPython: ``Viewer.search`` over the whole window (medians of ``--repeat``), the Trajectory and Context views, and the
request inspector's fold, the context meter and one inspector answer.
Chromium (the built site, Pyodide in the viewer's worker): ``transcriptViewer.search`` (worker time and wall time,
medians), then the page scrolled top to bottom in steps of 80 % of the viewport while ``requestAnimationFrame``
deltas are recorded (median, p95 and max frame time) and the element count is sampled at every step (max). Times
are reported, never asserted (STYLE 15); the check is the DOM bound (< 2,000 elements at every sampled position).
Needs ``make build`` for the browser part.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assembler.browser import Viewer
from assembler.browser.requests import collect_attempts
from assembler.history import page_value
from assembler.records import encode
from perf.synthetic import history_transport_events
from perf.turns import many_turns_bytes

__all__ = ["sessions", "cpython", "browser", "main"]

DOM_BOUND = 2000
QUERIES = {"big": ["synthetic history", "sq", "zz-none"], "turns": ["alpha", "Question 4999", "zz-none"]}

SCROLL_JS = """async ([view, stride]) => {
    const tv = window.transcriptViewer;
    await tv.showView(view);
    await tv.views.ready();
    const doc = document.scrollingElement;
    window.scrollTo(0, 0);
    const frames = [];
    let last = performance.now();
    let running = true;
    const tick = (t) => { frames.push(t - last); last = t; if (running) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    let maxElements = 0;
    let steps = 0;
    for (let i = 0; i < 100000; i++) {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        await tv.idle();
        maxElements = Math.max(maxElements, document.getElementsByTagName("*").length);
        steps += 1;
        if (doc.scrollTop + innerHeight >= doc.scrollHeight - 2) break;
        window.scrollBy(0, innerHeight * stride);
    }
    running = false;
    frames.sort((a, b) => a - b);
    const q = (p) => frames.length ? frames[Math.min(frames.length - 1, Math.floor(p * frames.length))] : null;
    return { steps, maxElements, frames: frames.length, frameMs: { median: q(0.5), p95: q(0.95), max: q(1) },
             scrollHeight: doc.scrollHeight };
}"""

SEARCH_JS = """async ([query, repeat]) => {
    const tv = window.transcriptViewer;
    await tv.showView("chat");
    const runs = [];
    for (let i = 0; i < repeat; i++) {
        await tv.search("");
        const t0 = performance.now();
        const r = await tv.search(query);
        runs.push({ matches: r.matches, wallMs: performance.now() - t0, workerMs: r.workerMs });
    }
    await tv.search("");
    return runs;
}"""


def sessions(quick: bool = False) -> dict[str, tuple[str, bytes]]:
    """``name -> (file name, bytes)``: the big page (SessionPage JSON) and the many-turn session (JSONL)."""
    if quick:
        events = history_transport_events(4, 2000)
        turns = 200
    else:
        events = history_transport_events()
        turns = 5000
    big = encode(page_value(events, None, None, max_messages=len(events) + 1))
    return {"big": ("big.json", big), "turns": ("turns.jsonl", many_turns_bytes(turns))}


def _open(name: str, data: bytes) -> Viewer:
    viewer = Viewer()
    if name.endswith(".json"):
        viewer.load_page(data)
    else:
        viewer.file_begin(name, len(data))
        viewer.file_feed(data)
        viewer.file_finish(True)
    return viewer


def _median_ms(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 2)


def cpython(data: dict[str, tuple[str, bytes]], repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, (name, payload) in data.items():
        viewer = _open(name, payload)
        searches = {}
        for query in QUERIES[key]:
            matches = json.loads(viewer.search(query))["total"]
            searches[query] = {"matches": matches, "ms": _median_ms(lambda q=query, v=viewer: v.search(q), repeat)}
        out[key] = {"chatNodes": len(viewer.window.chat), "search": searches,
                    "trajectoryMs": _median_ms(viewer.trajectory_view, repeat),
                    "contextMs": _median_ms(viewer.context_view, repeat),
                    # The window's model requests, folded once per window (the trajectory above reuses them):
                    # the fold itself, then the meter and one request's inspector over the folded window.
                    "requestsFoldMs": _median_ms(lambda v=viewer: collect_attempts(v.window.assembler.window_entries()),
                                                 repeat),
                    "meterMs": _median_ms(viewer.context_meter, repeat),
                    "inspectorMs": _median_ms(lambda v=viewer: v.request_inspector(-1), repeat)}
    return out


def browser(data: dict[str, tuple[str, bytes]], repeat: int, log: Any = print) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from perf.bench_browser import CHROMIUM, CHROMIUM_ARGS, SITE, _serve

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-views-") as tmp, _serve(Path(tmp)) as url, \
            sync_playwright() as pw:
        for name, payload in data.values():
            (Path(tmp) / name).write_bytes(payload)
        chromium = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                      args=CHROMIUM_ARGS)
        try:
            for key, (name, _) in data.items():
                context = chromium.new_context(viewport={"width": 1200, "height": 900})
                page = context.new_page()
                page.set_default_timeout(600_000)
                page.goto(url)
                page.evaluate("() => window.transcriptViewer.ready")
                if name.endswith(".json"):
                    page.evaluate("async (p) => { const b = new Uint8Array(await (await fetch(p)).arrayBuffer());"
                                  " await window.transcriptViewer.loadPage(b); }", f"/__bench__/{name}")
                else:
                    page.evaluate("async (p) => { const b = await (await fetch(p)).arrayBuffer();"
                                  " await window.transcriptViewer.openFile(new File([b], p.split('/').pop()),"
                                  " {all: true}); }", f"/__bench__/{name}")
                result: dict[str, Any] = {"search": {}, "scroll": {}}
                for query in QUERIES[key]:
                    runs = page.evaluate(SEARCH_JS, [query, repeat])
                    result["search"][query] = {
                        "matches": runs[0]["matches"],
                        "wallMs": round(statistics.median(r["wallMs"] for r in runs), 2),
                        "workerMs": round(statistics.median(r["workerMs"] or 0 for r in runs), 2)}
                for view in ("chat", "trajectory", "context"):
                    result["scroll"][view] = page.evaluate(SCROLL_JS, [view, 0.8])
                log(f"{key}: {json.dumps(result)}")
                out[key] = result
                context.close()
        finally:
            chromium.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sessions, one repeat")
    parser.add_argument("--no-browser", action="store_true", help="CPython only")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    data = sessions(args.quick)
    report: dict[str, Any] = {"benchmark": "views", "repeat": repeat, "cpython": cpython(data, repeat)}
    print(json.dumps(report["cpython"], indent=2))
    if not args.no_browser:
        report["browser"] = browser(data, repeat)
        bounded = all(s["maxElements"] < DOM_BOUND for r in report["browser"].values() for s in r["scroll"].values())
        report["checks"] = {"domBounded": bounded}
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    return 0 if all(report.get("checks", {}).values()) else 1


if __name__ == "__main__":
    sys.exit(main())
