"""Replay performance inventory in Chromium (ASSEMBLY 6): the synthetic 416,756-event page, packed and scalar,
through the viewer's own hook ``window.transcriptViewer.loadPage`` (Pyodide in the viewer's Web Worker).

    .venv/bin/python -m perf.bench_browser [--json OUT] [--repeat N] [--quick]

Two pages of the same logical events: *packed* (``history.page_value``: the 116 delta runs as chunk rows) and
*scalar* (every event its own ``event`` record). Each mode runs in a fresh page (a fresh Pyodide, so the wasm heap
of one mode is not inherited by the other); each load reports ``ms`` ``{decode, journal, fold, html, render}`` (decode:
msgspec over the page bytes; journal: opening the journal on the page; fold: ``replace_window`` + ``flush`` through
the default Definitions; html: the worker rendering the first screen's rows with the page; render: the page laying
them out), the worker's wasm heap
(``pyodide._module.HEAP8.length``) at boot and after each load, and the digest asked for afterwards
(``transcriptViewer.digest()``, off the timed path). Before each load the page times ``TextDecoder`` +
``JSON.parse`` of the same bytes (the floor), each timed step after a full collection of the page's heap (Chromium
runs with ``--js-flags=--expose-gc``), so neither pays for the other's garbage; ``floor`` reports packed wall /
parse, scalar wall / packed wall and the heap growth of the first packed load after boot. The first load after
boot runs while V8 is still compiling the hot wasm (Liftoff, then TurboFan in the background) and Blink lays out its
first rows; it is reported on its own (``firstLoad``: its wall over the run's median parse, and the steps of the
worker's idle warm-up that ran before it) and the medians are over the ``--repeat`` loads after it. Reports medians
and the scalar/packed ratios; checks that both modes give the same digest and counts; never asserts a time (STYLE
15). Each mode is also measured by ``transcriptViewer.replayPage`` (``replay``: the measurement the viewer's "Replay
benchmark" panel shows, one function in ``assembler/browser/replay.py``), with its own scalar/packed ratios
(``replayRatios``). Needs ``make build``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assembler.history import page_value
from assembler.records import encode
from perf.synthetic import DELTA_EVENTS, DELTA_RUNS, history_transport_events

__all__ = ["pages", "measure_mode", "measure_replay", "run", "main"]

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "build" / "site"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--enable-precise-memory-info", "--js-flags=--expose-gc"]
MODES = ("packed", "scalar")
_STAGES = ("decode", "journal", "fold", "render")
_LOAD_STAGES = ("decode", "journal", "fold", "html", "render")  # loadPage's split: html, the first screen's rows

LOAD_JS = """async ([path, repeat]) => {
    const tv = window.transcriptViewer;
    await tv.ready;
    const heapBoot = await tv.heapSize();
    const response = await fetch(path);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const clean = () => { if (typeof gc === "function") gc(); };  // --js-flags=--expose-gc (CHROMIUM_ARGS)
    const load = async () => {
        // The floor, in the same page and run: V8 decoding and parsing the same bytes (interleaved with the loads).
        // Each timed step starts after a full collection of the page's heap, so neither pays for the other's garbage
        // (the parse leaves a few tens of MB of strings behind).
        clean();
        let t0 = performance.now();
        JSON.parse(new TextDecoder().decode(bytes));
        const parseMs = performance.now() - t0;
        clean();
        t0 = performance.now();
        const r = await tv.loadPage(bytes);
        r.wallMs = performance.now() - t0;
        r.parseMs = parseMs;
        r.heapBytes = await tv.heapSize();
        return r;
    };
    // The first load after boot runs while V8 still compiles the hot wasm (the interpreter, msgspec) and Blink lays
    // out its first rows: reported on its own (firstLoad), then ``repeat`` loads give the medians.
    const warmBefore = tv.warmUp ? await tv.warmUp() : null;  // the worker's idle warm-up so far (steps, ms)
    const first = await load();
    const runs = [];
    for (let i = 0; i < repeat; i++) runs.push(await load());
    const t0 = performance.now();
    const digest = await tv.digest();  // on request, off the timed path
    digest.wallMs = performance.now() - t0;
    return { bytes: bytes.length, first, runs, heapBoot, digest, warmBefore,
             jsHeap: performance.memory ? performance.memory.usedJSHeapSize : null };
}"""

# The replay measurement the viewer's "Replay benchmark" panel shows (assembler/browser/replay.py via the worker's
# replayPage op): the same page folded in a scratch window, stage by stage, decode/journal/fold/render in Python.
REPLAY_JS = """async ([path, repeat]) => {
    const tv = window.transcriptViewer;
    await tv.ready;
    const bytes = new Uint8Array(await (await fetch(path)).arrayBuffer());
    const runs = [];
    for (let i = 0; i < repeat; i++) runs.push(await tv.replayPage(bytes));
    return runs;
}"""


def measure_replay(page: Any, path: str, repeat: int) -> dict[str, Any]:
    """``transcriptViewer.replayPage`` (the panel's measurement) ``repeat`` times on the page at ``path``; medians."""
    runs = page.evaluate(REPLAY_JS, [path, repeat])
    first = runs[0]
    if "error" in first:
        raise RuntimeError(f"replayPage failed: {first['error']}")
    return {"ms": {stage: round(statistics.median(r["ms"][stage] for r in runs), 2) for stage in _STAGES},
            "records": first["records"], "inputs": first["inputs"], "digest": first["digest"],
            "rendered": first["rendered"], "wasmHeapBytes": max(r["wasmHeapBytes"] for r in runs)}


FILE_JS = """async ([path]) => {
    const tv = window.transcriptViewer;
    await tv.ready;
    // The page's live JS heap (after a full collection where the page may ask for one).
    const jsHeap = () => { globalThis.gc?.(); return performance.memory ? performance.memory.usedJSHeapSize : null; };
    const heapBoot = await tv.heapSize();
    const jsBoot = jsHeap();
    // A Blob, as a file the reader picks is: its bytes are the browser's, not an ArrayBuffer in the page's heap.
    const file = new File([await (await fetch(path)).blob()], path.split("/").pop());
    const t0 = performance.now();
    const r = await tv.openFile(file, {});
    r.wallMs = performance.now() - t0;
    r.heapBoot = heapBoot;
    r.heapAfter = await tv.heapSize();
    r.jsBoot = jsBoot;
    r.jsAfter = jsHeap();
    return r;
}"""


def unpacked_log(runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS) -> bytes:
    """The synthetic session as a local log written one event per line (no rows): the "60 MB unpacked log"."""
    header = {"type": "session", "version": 0, "id": "bench-unpacked", "createdAt": 0, "cwd": "/bench"}
    return b"".join(encode(v) + b"\n" for v in [header, *history_transport_events(runs, total_deltas)])


def measure_file(page: Any, path: str) -> dict[str, Any]:
    """Opens the unpacked log at ``path`` as a local file (``openFile``, 4 MB slices, the newest 50 messages) in a
    freshly booted page: the wasm heap (it never shrinks, so this is its peak) and the page's live JS heap before and
    after (each after a full collection). The file is a Blob fetched as one, as a picked file is, so the page's heap
    holds no copy of it that a reader's tab would not."""
    r = page.evaluate(FILE_JS, [path])
    return {"fileBytes": r["file"]["bytes"], "events": r["file"]["events"], "records": r["file"]["records"],
            "error": r["error"], "msWall": round(r["wallMs"], 1), "ms": r["ms"], "previewed": r.get("previewed"),
            "wasmHeapBootBytes": r["heapBoot"], "wasmHeapAfterBytes": r["heapAfter"],
            "jsHeapBootBytes": r["jsBoot"], "jsHeapAfterBytes": r["jsAfter"],
            "tabBytes": r["heapAfter"] + (r["jsAfter"] or 0)}


def pages(runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS) -> dict[str, bytes]:
    """The synthetic page in both modes, as the JSON bytes of a ``SessionPage``."""
    events = history_transport_events(runs, total_deltas)
    packed = page_value(events, None, None, max_messages=len(events) + 1)
    scalar = {"records": [{"type": "event", "event": e} for e in events], "hasMore": False}
    return {"packed": encode(packed), "scalar": encode(scalar)}


def measure_mode(page: Any, path: str, repeat: int) -> dict[str, Any]:
    """Loads the page served at ``path`` once, then ``repeat`` times, in a freshly booted viewer ``page`` (each load
    after a ``TextDecoder`` + ``JSON.parse`` of the same bytes); medians per stage over the ``repeat`` loads, the
    parse floor, the first load after boot on its own (``firstLoad``) and its wasm heap growth, and the digest asked
    for afterwards (``transcriptViewer.digest()``)."""
    raw = page.evaluate(LOAD_JS, [path, repeat])
    loads = raw["runs"]
    first = raw["first"]
    return {
        "pageBytes": raw["bytes"],
        "records": first["records"],
        "inputs": first["inputs"],
        "chatNodes": first["chatNodes"],
        "trajectoryNodes": first["trajectoryNodes"],
        "digest": raw["digest"]["digest"],
        "digestMs": round(raw["digest"]["ms"], 2),
        "ms": {stage: round(statistics.median(r["ms"][stage] for r in loads), 2) for stage in _LOAD_STAGES},
        "msWall": round(statistics.median(r["wallMs"] for r in loads), 2),
        "parseMs": round(statistics.median(r["parseMs"] for r in loads), 2),
        "wallOverParse": round(statistics.median(r["wallMs"] / max(1e-9, r["parseMs"]) for r in loads), 2),
        "msAll": [_load_ms(r) for r in loads],
        # The first load over the run's median parse: its own parse ran while the worker's idle warm-up used the
        # other core, so it is no floor (it came out up to twice the others).
        "firstLoad": _load_ms(first) | {
            "wallOverParse": round(first["wallMs"] / max(1e-9, statistics.median(r["parseMs"] for r in loads)), 2),
            "warmUpBefore": raw["warmBefore"]},
        "wasmHeapBootBytes": raw["heapBoot"],
        "wasmHeapGrowthBytes": first["heapBytes"] - raw["heapBoot"],
        "wasmHeapBytes": max(r["heapBytes"] for r in loads),
        "jsHeapBytes": raw["jsHeap"],
    }


def _load_ms(r: dict[str, Any]) -> dict[str, float]:
    ms = {k: round(v, 2) for k, v in r["ms"].items()}
    return ms | {"wall": round(r["wallMs"], 2), "parse": round(r["parseMs"], 2)}


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn in a thread on 127.0.0.1 (an ephemeral port, the product's listening socket:
    ``server.hosts.listening_socket``); yields its base URL."""
    import uvicorn

    from assembler.server.hosts import listening_socket

    sock = listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def _serve(files: Path) -> Iterator[str]:
    """build/site at / and ``files`` at /__bench__/, on 127.0.0.1 (uvicorn in a thread)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    app = Starlette(routes=[Mount("/__bench__", StaticFiles(directory=files)),
                            Mount("/", StaticFiles(directory=SITE, html=True))])
    with serve_app(app) as url:
        yield url


def run(runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS, repeat: int = 5,
        log: Any = print, local_file: bool = True) -> dict[str, Any]:
    """The whole inventory: both modes, each in a fresh page. Returns the JSON-ready report."""
    from playwright.sync_api import sync_playwright

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    t0 = time.perf_counter()
    data = pages(runs, total_deltas)
    log(f"pages built in {time.perf_counter() - t0:.1f} s: "
        + ", ".join(f"{m} {len(b) / 1e6:.1f} MB" for m, b in data.items()))
    report: dict[str, Any] = {"benchmark": "browser", "events": total_deltas + 580 if runs == DELTA_RUNS else None,
                              "runs": runs, "deltas": total_deltas, "repeat": repeat, "modes": {}}
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp, _serve(Path(tmp)) as url, \
            sync_playwright() as pw:
        for mode, payload in data.items():
            (Path(tmp) / f"{mode}.json").write_bytes(payload)
        if local_file:
            (Path(tmp) / "unpacked.jsonl").write_bytes(unpacked_log(runs, total_deltas))
        browser = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                     args=CHROMIUM_ARGS)
        report["chromium"] = browser.version
        try:
            for mode in MODES:
                context = browser.new_context()
                page = context.new_page()
                started = time.perf_counter()
                page.goto(url)
                boot = page.evaluate("() => window.transcriptViewer.ready")
                boot_wall = (time.perf_counter() - started) * 1000
                result = measure_mode(page, f"/__bench__/{mode}.json", repeat)
                result["bootMs"] = boot.get("bootMs")
                result["bootWallMs"] = round(boot_wall)
                result["replay"] = measure_replay(page, f"/__bench__/{mode}.json", repeat)
                report["modes"][mode] = result
                log(f"{mode:>6}: {result['records']:,} records, ms {result['ms']}, wall {result['msWall']:.0f} ms, "
                    f"wasm heap {result['wasmHeapBytes'] / 1e6:.0f} MB")
                context.close()
            if local_file:
                context = browser.new_context()
                page = context.new_page()
                page.set_default_timeout(600_000)
                page.goto(url)
                report["localFile"] = measure_file(page, "/__bench__/unpacked.jsonl")
                log(f"local unpacked file: {report['localFile']}")
                context.close()
            from perf.bench_boot import measure as measure_boot

            report["boot"] = measure_boot(browser, repeat, log)  # list visible, worker stages, cold #session=ID
        finally:
            browser.close()
    packed, scalar = report["modes"]["packed"], report["modes"]["scalar"]
    report["ratios"] = {stage: round(scalar["ms"][stage] / packed["ms"][stage], 2) if packed["ms"][stage] else None
                        for stage in _STAGES}
    report["ratios"]["decodeJournalFold"] = round(
        sum(scalar["ms"][s] for s in ("decode", "journal", "fold"))
        / max(1e-9, sum(packed["ms"][s] for s in ("decode", "journal", "fold"))), 2)
    report["ratios"]["wasmHeap"] = round(scalar["wasmHeapBytes"] / packed["wasmHeapBytes"], 2)
    report["ratios"]["pageBytes"] = round(scalar["pageBytes"] / packed["pageBytes"], 2)
    # Issue 11 items 2-4: packed loadPage against the parse floor, scalar against packed end to end (wall), heap.
    report["floor"] = {
        "parseMs": packed["parseMs"], "packedWallMs": packed["msWall"], "packedSplitMs": packed["ms"],
        "scalarWallMs": scalar["msWall"], "packedOverParse": packed["wallOverParse"],
        "scalarOverPacked": round(scalar["msWall"] / max(1e-9, packed["msWall"]), 2),
        "packedHeapGrowthBytes": packed["wasmHeapGrowthBytes"], "digestMs": packed["digestMs"],
        "firstLoad": packed["firstLoad"],
    }
    rp, rs = packed["replay"], scalar["replay"]
    report["replayRatios"] = {stage: round(rs["ms"][stage] / rp["ms"][stage], 2) if rp["ms"][stage] else None
                              for stage in _STAGES}
    report["checks"] = {
        "replaySameDigest": rp["digest"] == rs["digest"] == packed["digest"],
        "sameDigest": packed["digest"] == scalar["digest"],
        "sameNodes": (packed["chatNodes"], packed["trajectoryNodes"]) == (scalar["chatNodes"],
                                                                            scalar["trajectoryNodes"]),
        "oneInputPerRecord": all(m["records"] == m["inputs"] for m in report["modes"].values()),
    }
    report["machine"] = {"python": sys.version.split()[0], "platform": platform.platform(),
                         "cpus": __import__("os").cpu_count()}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--repeat", type=int, default=5,
                        help="loads per mode after the first (median reported; default 5)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 4 runs of 1,000 deltas, one load each")
    args = parser.parse_args(argv)
    if args.quick:
        report = run(4, 1_000, 1)
    else:
        report = run(repeat=args.repeat)
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(json.dumps({"ms": {m: r["ms"] for m, r in report["modes"].items()}, "floor": report["floor"],
                      "ratios": report["ratios"],
                      "replayRatios": report["replayRatios"],
                      "checks": report["checks"]}, indent=2))
    return 0 if all(report["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
