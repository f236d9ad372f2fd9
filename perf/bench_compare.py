"""Compare two runs at scale: the synthetic 416,756-event session against a generated copy with its one
turn changed, and a many-turn session (``perf.turns``) against a copy with one turn's prompt changed.

    .venv/bin/python -m perf.bench_compare [--json OUT] [--repeat N] [--turns N] [--quick] [--no-browser]

Each pair is written as two packed JSONL logs (``pack_chunk_runs``: the reasoning deltas as chunk rows, as our
harness writes them) into a folder served by the real server (``assembler.server.create_app``, uvicorn). Only the
copy's changes are generated (``changed_big_events``, ``changed_turn_records``): the big copy's prompt text and the
fragments of one reasoning run, the many-turn copy's prompt of its middle turn; both copies have as many events as
their original.

``cli``: whole processes, ``transcript-assembler compare A B -o OUT.json`` (median wall time of ``--repeat``).
``expandedRows``: the same fold and comparison in CPython with ``chunk_rows.expand_row`` counting its calls (it must
stay 0: packed rows are never expanded on this path). ``page``: per ``--repeat`` a fresh Chromium context opens
``#compare=A,B`` after the viewer is ready; the time to the summary (``summaryMs``), to the first turn's rows in
(``firstScreenMs``, after two animation frames) and the page's own figure (``pageMs``: fetch, fold and compare,
as the status line says it; of it ``workerMs``, the worker's fold and compare, ``foldMs`` its two folds, and
``fetchMs`` the two whole-history requests), the element count after the first screen and the most seen while
the page is scrolled to the end (steps of 80 % of the viewport, at most ``STEPS``, then a jump to the end), and
the worker's wasm heap and the page's JS heap after the first screen. Medians; nothing is asserted (STYLE 15).
Needs ``make build``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assembler.chunk_rows import pack_chunk_runs
from assembler.records import encode
from perf.synthetic import history_transport_events
from perf.turns import many_turns

__all__ = ["changed_big_events", "changed_turn_records", "pairs", "cli", "expanded_rows", "page", "main"]

ROOT = Path(__file__).resolve().parents[1]
STEPS = 60  # scroll steps of 80 % of the viewport before the jump to the end
CHANGED_RUN = 57  # the reasoning run whose fragments the big copy changes

OPEN_JS = """async ([hash, steps]) => {
    const tv = window.transcriptViewer;
    await tv.ready;
    const root = document.getElementById("compare");
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const count = () => document.getElementsByTagName("*").length;
    const t0 = performance.now();
    location.hash = hash;
    while (root.dataset.state !== "shown" && root.dataset.state !== "error") await sleep(5);
    const summaryMs = performance.now() - t0;
    if (root.dataset.state === "error") return { error: document.getElementById("alert").innerText };
    while (!document.querySelector("#compare-turn-1 .compare-side")) await sleep(5);
    await frames();
    const firstScreenMs = performance.now() - t0;
    const split = JSON.parse(root.dataset.ms || "{}"); // the worker's fold and total, the page's shown
    const fetchMs = performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/sessions/"))
        .map((e) => Math.round(e.duration));
    const firstElements = count();
    const heap = await tv.heapSize();
    const jsHeap = performance.memory ? performance.memory.usedJSHeapSize : null;
    // Scrolled to the end: settled after every step (the blocks near the viewport asked for and drawn).
    const settle = async () => {
        await frames();
        for (let i = 0; i < 400; i++) {
            const before = root.dataset.filled;
            await sleep(25);
            await frames();
            if (root.dataset.filled === before) break;
        }
    };
    const doc = document.scrollingElement;
    let maxElements = firstElements;
    let stepped = 0;
    for (; stepped < steps; stepped++) {
        if (doc.scrollTop + innerHeight >= doc.scrollHeight - 2) break;
        window.scrollBy(0, innerHeight * 0.8);
        await settle();
        maxElements = Math.max(maxElements, count());
    }
    window.scrollTo(0, doc.scrollHeight);
    await settle();
    window.scrollTo(0, doc.scrollHeight);
    await settle();
    maxElements = Math.max(maxElements, count());
    return { summaryMs, firstScreenMs, pageMs: split.shown, foldMs: split.fold, workerMs: split.total, fetchMs,
             firstElements, endElements: count(), maxElements, stepped,
             turns: Number(root.dataset.turns), blocksInDom: root.querySelectorAll(".compare-turn").length,
             filledAtEnd: Number(root.dataset.filled || 0), differs: root.dataset.same === "0",
             wasmHeapBytes: heap, jsHeapBytes: jsHeap, scrollHeight: doc.scrollHeight };
}"""


def changed_big_events(runs: int | None = None, deltas: int | None = None) -> tuple[list[dict[str, Any]],
                                                                                     list[dict[str, Any]]]:
    """The synthetic session's events and its copy: the prompt's text changed and the fragments of reasoning run
    ``CHANGED_RUN`` (or the last run of a smaller session) reversed; the same number of events, the same seqs."""
    args = () if runs is None or deltas is None else (runs, deltas)
    events = history_transport_events(*args)
    copy = history_transport_events(*args)
    changed_run = min(CHANGED_RUN, max(e["data"]["chunk"]["index"] for e in copy if e["type"] == "assistant/chunk"))
    for event in copy:
        if event["type"] == "user/message":
            event["data"]["content"] = [{"type": "text", "text": "synthetic history transport benchmark, changed"}]
        elif event["type"] == "assistant/chunk" and event["data"]["chunk"]["index"] == changed_run:
            chunk = event["data"]["chunk"]
            chunk["text"] = chunk["text"][::-1]
    return events, copy


def _log(session_id: str, events: list[dict[str, Any]]) -> bytes:
    header = {"type": "session", "version": 0, "id": session_id, "createdAt": 0, "cwd": "/bench"}
    return b"".join(encode(v) + b"\n" for v in [header, *pack_chunk_runs(events)])


def changed_turn_records(turns: int, changed: int) -> tuple[bytes, bytes]:
    """``perf.turns``'s session of ``turns`` turns and its copy with turn ``changed``'s prompt text changed."""
    header, batches = many_turns(turns)
    copy = json.loads(json.dumps(batches))
    for batch in copy:
        for event in batch:
            if event["type"] == "user/message" and event["data"].get("id") == f"user-{changed}":
                event["data"]["content"] = [{"type": "text", "text": f"Question {changed}: changed for the benchmark."}]
    records = [r for batch in batches for r in pack_chunk_runs(batch)]
    copy = [r for batch in copy for r in pack_chunk_runs(batch)]

    def log(session_id: str, recs: list[Any]) -> bytes:
        return b"".join(encode(v) + b"\n" for v in [{**header, "id": session_id}, *recs])

    return log(f"turns-{turns}-a", records), log(f"turns-{turns}-b", copy)


def pairs(folder: Path, quick: bool, turns: int) -> dict[str, dict[str, Any]]:
    """Writes each pair's two logs into ``folder``: ``name -> {a, b, bytes, events}``."""
    small = (4, 2000) if quick else (None, None)
    a_events, b_events = changed_big_events(*small)
    out: dict[str, dict[str, Any]] = {}
    (folder / "big-a.jsonl").write_bytes(_log("big-a", a_events))
    (folder / "big-b.jsonl").write_bytes(_log("big-b", b_events))
    out["big"] = {"a": "big-a", "b": "big-b", "events": [len(a_events), len(b_events)]}
    n = 40 if quick else turns
    ta, tb = changed_turn_records(n, n // 2)
    (folder / f"turns-{n}-a.jsonl").write_bytes(ta)
    (folder / f"turns-{n}-b.jsonl").write_bytes(tb)
    out["turns"] = {"a": f"turns-{n}-a", "b": f"turns-{n}-b", "turns": n}
    for pair in out.values():
        pair["bytes"] = [(folder / f"{pair[side]}.jsonl").stat().st_size for side in ("a", "b")]
    return out


def cli(folder: Path, pair: dict[str, Any], repeat: int) -> dict[str, Any]:
    """``transcript-assembler compare A B -o OUT.json``, whole processes: median wall time, and what it reported."""
    exe = ROOT / ".venv" / "bin" / "transcript-assembler"
    out = folder / "compare-out.json"
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([str(exe), "compare", str(folder / f"{pair['a']}.jsonl"), str(folder / f"{pair['b']}.jsonl"),
                        "-o", str(out)], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    report = json.loads(out.read_text())
    out.unlink()
    return {"wallS": round(statistics.median(times), 2), "runsS": [round(t, 2) for t in times],
            "turns": report["session"]["turns"], "differences": report["session"]["differences"]}


def expanded_rows(folder: Path, pair: dict[str, Any]) -> int:
    """Calls of ``expand_row``/``expand_records`` (wherever the reading, history and session modules reach them)
    while the pair is read as the CLI and the server read a log, paged whole, then folded, compared and every
    turn rendered by the page's own entry points (``browser.Viewer``'s ``compare_*``)."""
    import importlib

    from assembler.browser import Viewer
    from assembler.commands._common import load
    from assembler.history import MessageIndex

    calls = 0
    patched: list[tuple[Any, str, Any]] = []

    def counting(fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            return fn(*args, **kwargs)
        return wrapper

    for name in ("assembler.chunk_rows", "assembler.history", "assembler.session", "assembler.server.source"):
        module = importlib.import_module(name)
        for attr in ("expand_row", "expand_records"):
            if hasattr(module, attr):
                patched.append((module, attr, getattr(module, attr)))
                setattr(module, attr, counting(getattr(module, attr)))
    try:
        pages = []
        for side in ("a", "b"):
            result = load(str(folder / f"{pair[side]}.jsonl"), strict=True, pack_deltas=True, session=None)
            if result is None:
                raise RuntimeError(f"{pair[side]}.jsonl could not be read")
            pages.append(encode(MessageIndex(result.records).session_page(None, None, None)))
        viewer = Viewer()
        opened = json.loads(viewer.compare_open(pages[0], pages[1], pair["a"], pair["b"]))
        if "error" in opened:
            raise RuntimeError(f"compare_open failed: {opened['error']}")
        viewer.compare_turns(range(len(opened["turns"])))
    finally:
        for module, attr, original in patched:
            setattr(module, attr, original)
    return calls


def page(folder: Path, data: dict[str, dict[str, Any]], repeat: int, log: Any = print) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from perf.bench_browser import CHROMIUM, CHROMIUM_ARGS, SITE
    from perf.bench_interop import _serve

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    out: dict[str, Any] = {}
    with _serve(folder) as url, sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                      args=CHROMIUM_ARGS)
        out["chromium"] = chromium.version
        try:
            for name, pair in data.items():
                runs = []
                for _ in range(repeat):
                    context = chromium.new_context(viewport={"width": 1440, "height": 900})
                    tab = context.new_page()
                    tab.set_default_timeout(900_000)
                    tab.goto(url)
                    tab.evaluate("() => window.transcriptViewer.ready")
                    runs.append(tab.evaluate(OPEN_JS, [f"#compare={pair['a']},{pair['b']}", STEPS]))
                    context.close()
                    log(f"{name}: {json.dumps(runs[-1])}")
                    if "error" in runs[-1]:
                        break
                if "error" in runs[-1]:
                    out[name] = {"error": runs[-1]["error"]}
                    continue

                def med(key: str, rs: list[dict[str, Any]] = runs) -> float:
                    return round(statistics.median(r[key] for r in rs), 1)

                out[name] = {"summaryMs": med("summaryMs"), "firstScreenMs": med("firstScreenMs"),
                             "pageMs": med("pageMs"), "workerMs": med("workerMs"), "foldMs": med("foldMs"),
                             "fetchMs": [r["fetchMs"] for r in runs],
                             "firstScreenRunsMs": [round(r["firstScreenMs"]) for r in runs],
                             "firstElements": max(r["firstElements"] for r in runs),
                             "endElements": max(r["endElements"] for r in runs),
                             "maxElements": max(r["maxElements"] for r in runs),
                             "scrollSteps": runs[0]["stepped"], "turns": runs[0]["turns"],
                             "differs": runs[0]["differs"], "blocksInDom": max(r["blocksInDom"] for r in runs),
                             "wasmHeapBytes": max(r["wasmHeapBytes"] for r in runs),
                             "jsHeapBytes": max(r["jsHeapBytes"] or 0 for r in runs)}
        finally:
            chromium.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--turns", type=int, default=1000, help="turns of the many-turn pair (default 1000)")
    parser.add_argument("--quick", action="store_true", help="small sessions, one repeat")
    parser.add_argument("--no-browser", action="store_true", help="the CLI and the CPython check only")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    report: dict[str, Any] = {"benchmark": "compare", "repeat": repeat, "loadAverage": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        folder = Path(tmp)
        data = pairs(folder, args.quick, args.turns)
        report["pairs"] = data
        report["cli"] = {name: cli(folder, pair, repeat) for name, pair in data.items()}
        print(json.dumps(report["cli"]), flush=True)
        expanded = {name: expanded_rows(folder, pair) for name, pair in data.items()}
        report["expandedRows"] = expanded
        report["checks"] = {"noRowExpanded": not any(expanded.values())}
        if not args.no_browser:
            report["page"] = page(folder, data, repeat)
            report["checks"]["pageShown"] = all("error" not in r for name, r in report["page"].items()
                                                if name != "chromium")
    report["loadAverageEnd"] = list(os.getloadavg())  # the machine is shared: the figures mean little without it
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0 if all(report["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
