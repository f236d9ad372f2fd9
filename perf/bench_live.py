"""Live repacking benchmark: a viewer following a long live session, with and without repacking.

    .venv/bin/python -m perf.bench_live [--json OUT] [--deltas N] [--block B] [--batch K] [--no-tracemalloc]
                                        [--browser]

A deterministic live session (``live_events``: one turn, steps of four blocks of ``B`` text or reasoning deltas,
each block closed by ``block-end`` and each step by ``step/end``) is followed through ``Viewer.apply_frames`` from
an empty snapshot, ``K`` frames per call, as the worker does. Each mode runs in its own subprocess (a clean heap):
``repack`` (the default viewer) and ``scalar`` (``Viewer(repack_live=False)``). Reported per mode: the window's
entries and rows, the follow time, the heap the window holds (``tracemalloc`` current bytes after following, traced
from before the snapshot; tracing slows the follow) and the resident set growth (``/proc/self/statm``). The
structural check ``same_view`` holds when both modes end with the same chat nodes (sha256 of their JSON). With
``--browser`` the same follow also runs in Chromium's worker (Pyodide, a fresh page per mode; needs ``make build``)
and the wasm heap growth is reported. Times are reported, never asserted (STYLE 15).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from assembler.browser import Viewer
from assembler.records import encode
from assembler.transcript import by_anchor
from perf.synthetic import TIME_ZERO, fragment

__all__ = ["live_events", "follow", "run", "main"]

HEADER = {"type": "session", "version": 0, "id": "live-bench", "createdAt": TIME_ZERO}
MODES = ("repack", "scalar")


def live_events(deltas: int, block: int = 200, blocks_per_step: int = 4) -> Iterator[dict[str, Any]]:
    """The logical events of the live session, ``seq = index``, generated lazily (never held as a list)."""
    seq = 0

    def ev(etype: str, data: Any) -> dict[str, Any]:
        nonlocal seq
        value = {"type": etype, "seq": seq, "time": TIME_ZERO + seq, "data": data}
        seq += 1
        return value

    yield ev("turn/start", {"turn": 1})
    sent = step = 0
    while sent < deltas:
        step += 1
        yield ev("step/start", {"turn": 1, "step": step})
        for index in range(blocks_per_step):
            n = min(block, deltas - sent)
            if n <= 0:
                break
            kind = "reasoning" if index % 2 == 0 else "text"
            parts = [fragment(step * blocks_per_step + index, i) for i in range(n)]
            for text in parts:
                yield ev("assistant/chunk", {"turn": 1, "step": step,
                                             "chunk": {"type": f"{kind}-delta", "index": index, "text": text}})
            sent += n
            yield ev("assistant/chunk", {"turn": 1, "step": step, "chunk": {
                "type": "block-end", "index": index, "block": {"type": kind, "text": "".join(parts)}}})
        yield ev("step/end", {"turn": 1, "step": step})
    yield ev("turn/end", {"turn": 1, "reason": {"kind": "completed"}})


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def follow_viewer(viewer: Viewer, deltas: int, block: int, batch: int) -> dict[str, Any]:
    """Follow the live session with ``viewer`` from an empty snapshot: the figures that need no OS (this function
    also runs in Chromium's worker, see ``browser_modes``)."""
    snapshot = {"type": "snapshot", "header": HEADER, "cursor": -1, "records": [], "hasMore": False,
                "projections": {"asOfSeq": -1, "values": {}}}
    viewer.apply_frames([encode(snapshot)])
    events = 0
    frames: list[bytes] = []
    t0 = time.perf_counter()
    for value in live_events(deltas, block):
        frames.append(encode({"type": "event", "event": value}))
        if len(frames) == batch:
            viewer.apply_frames(frames)
            events += len(frames)
            frames = []
    if frames:
        viewer.apply_frames(frames)
        events += len(frames)
    follow_s = time.perf_counter() - t0
    asm = viewer.window.assembler
    nodes = msgspec.json.encode(by_anchor(viewer.window.chat.values()))
    return {"events": events, "entries": asm.entry_count,
            "rows": sum(1 for e in asm.window if type(e).__name__ == "ChunksRecord"),
            "follow_s": round(follow_s, 3), "view_sha256": hashlib.sha256(nodes).hexdigest(),
            "chat_nodes": len(viewer.window.chat), "last": viewer.window.journal.last_cursor}


def follow(mode: str, deltas: int, block: int, batch: int, trace: bool) -> dict[str, Any]:
    """Follow the live session in this process; returns the mode's figures, heap and RSS included."""
    viewer = Viewer(repack_live=mode == "repack")
    rss0 = _rss()
    if trace:
        tracemalloc.start()
    result = follow_viewer(viewer, deltas, block, batch)
    heap = tracemalloc.get_traced_memory()[0] if trace else None
    if trace:
        tracemalloc.stop()
    return {"mode": mode, **result, "heap_bytes": heap, "rss_growth_bytes": _rss() - rss0}


# In Chromium: the same follow in the viewer's worker (Pyodide), one fresh page per mode; the wasm heap is read
# before and after with ``transcriptViewer.heapSize()``.
BROWSER_JS = """async (code) => {
    const tv = window.transcriptViewer;
    await tv.ready;
    const heapBefore = await tv.heapSize();
    const t0 = performance.now();
    const out = JSON.parse(await tv.runPython(code));
    out.wallMs = Math.round(performance.now() - t0);
    out.heapBefore = heapBefore;
    out.heapAfter = await tv.heapSize();
    return out;
}"""


def _worker_code(mode: str, deltas: int, block: int, batch: int) -> str:
    """Python for the worker: this module's generator and follow, run on a fresh ``Viewer``."""
    from perf import synthetic

    sources = [inspect.getsource(f) for f in (synthetic._imul32, synthetic.fragment, live_events, follow_viewer)]
    return "\n".join([
        "import hashlib, json, time", "from collections.abc import Iterator", "from typing import Any",
        "import msgspec", "from assembler.browser import Viewer", "from assembler.records import encode",
        "from assembler.transcript import by_anchor",
        f"TIME_ZERO = {TIME_ZERO!r}", f"_BASE36 = {synthetic._BASE36!r}", f"HEADER = {HEADER!r}", *sources,
        f"json.dumps(follow_viewer(Viewer(repack_live={mode == 'repack'}), {deltas}, {block}, {batch}))",
    ])


def browser_modes(deltas: int, block: int, batch: int) -> dict[str, Any]:
    """Both modes in Chromium over the built site (needs ``make build``), each in a fresh page."""
    from playwright.sync_api import sync_playwright

    from perf.bench_browser import CHROMIUM, CHROMIUM_ARGS, SITE, _serve

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp, _serve(Path(tmp)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            for mode in MODES:
                context = browser.new_context()
                page = context.new_page()
                page.goto(f"{url}?test=1")  # the runPython hook exists only in a page opened with ?test=1
                result = page.evaluate(BROWSER_JS, _worker_code(mode, deltas, block, batch))
                result["wasm_heap_growth_bytes"] = result["heapAfter"] - result["heapBefore"]
                out[mode] = result
                context.close()
        finally:
            browser.close()
    return out


def run(deltas: int, block: int, batch: int, trace: bool, browser: bool = False) -> dict[str, Any]:
    """Each mode in its own subprocess; the comparison."""
    modes: dict[str, Any] = {}
    for mode in MODES:
        args = [sys.executable, "-m", "perf.bench_live", "--mode", mode, "--deltas", str(deltas), "--block",
                str(block), "--batch", str(batch), *([] if trace else ["--no-tracemalloc"])]
        out = subprocess.run(args, capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1])
        modes[mode] = json.loads(out.stdout)
    rp, sc = modes["repack"], modes["scalar"]

    def ratio(a: Any, b: Any) -> float | None:
        return round(a / b, 2) if a and b else None

    report: dict[str, Any] = {
        "deltas": deltas, "block": block, "batch": batch, "modes": modes,
        "entries_ratio": ratio(sc["entries"], rp["entries"]),
        "heap_ratio": ratio(sc["heap_bytes"], rp["heap_bytes"]),
        "rss_ratio": ratio(sc["rss_growth_bytes"], rp["rss_growth_bytes"]),
        "same_view": rp["view_sha256"] == sc["view_sha256"] and rp["last"] == sc["last"],
    }
    if browser:
        bm = report["browser"] = browser_modes(deltas, block, batch)
        report["browser_wasm_heap_ratio"] = ratio(bm["scalar"]["wasm_heap_growth_bytes"],
                                                  bm["repack"]["wasm_heap_growth_bytes"])
        report["same_view"] = report["same_view"] and all(
            bm[m]["view_sha256"] == rp["view_sha256"] for m in MODES)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="perf.bench_live", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the result here")
    parser.add_argument("--deltas", type=int, default=400_000)
    parser.add_argument("--block", type=int, default=200, help="deltas per block")
    parser.add_argument("--batch", type=int, default=64, help="frames per apply_frames call")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the traced heap (faster)")
    parser.add_argument("--browser", action="store_true",
                        help="also follow in Chromium's worker (Pyodide) and report the wasm heap growth")
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # one mode, in this process
    args = parser.parse_args(argv)
    trace = not args.no_tracemalloc
    if args.mode:
        print(json.dumps(follow(args.mode, args.deltas, args.block, args.batch, trace)))
        return 0
    result = run(args.deltas, args.block, args.batch, trace, args.browser)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.json.with_name(f".{args.json.name}.tmp")
        tmp.write_text(text + "\n")
        tmp.replace(args.json)
    for mode in MODES:
        m = result["modes"][mode]
        heap = "n/a" if m["heap_bytes"] is None else f"{m['heap_bytes'] / 1e6:.1f} MB"
        print(f"{mode:>7}: {m['events']} events -> {m['entries']} window entries ({m['rows']} rows), heap {heap}, "
              f"RSS +{m['rss_growth_bytes'] / 1e6:.1f} MB, follow {m['follow_s']:.1f} s", file=sys.stderr)
    for mode, m in result.get("browser", {}).items():
        print(f"{mode:>7} in Chromium: {m['entries']} window entries, "
              f"wasm heap +{m['wasm_heap_growth_bytes'] / 1e6:.1f} MB, follow {m['follow_s']:.1f} s", file=sys.stderr)
    print(f"entries x{result['entries_ratio']}, heap x{result['heap_ratio']}, RSS x{result['rss_ratio']}, "
          f"same view: {result['same_view']}", file=sys.stderr)
    return 0 if result["same_view"] else 1


if __name__ == "__main__":
    sys.exit(main())
