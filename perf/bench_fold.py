"""CPython fold benchmark (ASSEMBLY 6): packed against scalar folding through Chat Assistant, Turn Tail and
Trajectory Assistant, plus the whitespace-prefix row (ASSEMBLY 5.7).

Run ``python -m perf.bench_fold [--json OUT]``. Reports medians over repeated runs and ratios measured in the same
run; ``decode`` is the msgspec decode of the page bytes, ``fold`` is ``replace_window`` + ``flush``. It asserts the
structural equalities (record counts, identical digests both ways, the 5.7 boundary), never a time.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from assembler.chunk_rows import pack_chunk_runs
from assembler.conversation import ConversationAssembler
from assembler.history import history_records
from assembler.records import SessionPage, decode_page, encode
from assembler.transcript import Transcript, canonical_json, digest, transcript
from definitions import core_definitions
from perf.synthetic import DELTA_EVENTS, DELTA_RUNS, LOGICAL_EVENTS, history_transport_events, whitespace_prefix_page

__all__ = ["main", "run"]


def _times(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times = []
    result = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def _median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = _times(fn, repeat)
    return statistics.median(times), result


def fold(page: SessionPage) -> tuple[Transcript, ConversationAssembler]:
    asm = ConversationAssembler(core_definitions())
    asm.replace_window(page.records, page.hasMore)
    result = asm.flush()
    assert result is not None
    return transcript(result), asm


def run(runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS, repeat: int = 3,
        ws_sizes: tuple[int, ...] = (10_000, 20_000, 40_000), ws_repeat: int = 15) -> dict[str, Any]:
    events = history_transport_events(runs, total_deltas)
    scalar_bytes = encode({"records": [{"type": "event", "event": e} for e in events], "hasMore": False})
    packed_bytes = encode({"records": history_records(pack_chunk_runs(events)), "hasMore": False})
    del events
    out: dict[str, Any] = {"python": platform.python_version(), "implementation": platform.python_implementation(),
                           "repeat": repeat}
    digests = {}
    for mode, data in (("scalar", scalar_bytes), ("packed", packed_bytes)):
        decode_s, page = _median_time(lambda data=data: decode_page(data), repeat)
        fold_s, (folded, asm) = _median_time(lambda page=page: fold(page), repeat)
        digests[mode] = digest(canonical_json(folded))
        out[mode] = {"records": len(page.records), "json_bytes": len(data), "decode_ms": decode_s * 1e3,
                     "fold_ms": fold_s * 1e3, "total_ms": (decode_s + fold_s) * 1e3,
                     "inputs": asm.entry_count, "digest": digests[mode]}
        del page, folded, asm
    if runs == DELTA_RUNS and total_deltas == DELTA_EVENTS:
        assert out["scalar"]["records"] == LOGICAL_EVENTS
        assert out["packed"]["records"] == 696
    assert digests["scalar"] == digests["packed"], "packed and scalar folds differ"
    out["same_digest"] = True
    for key in ("decode_ms", "fold_ms", "total_ms"):
        out[f"ratio_{key[:-3]}"] = out["scalar"][key] / out["packed"][key]
    ws: dict[str, Any] = {}
    for n in ws_sizes:
        page = decode_page(encode(whitespace_prefix_page(n)))
        times, (folded, asm) = _times(lambda page=page: fold(page), ws_repeat)
        median = statistics.median(times)
        stream = asm.context("assistant-step", "1:1").state.stream  # type: ignore[union-attr]
        row = page.records[1].event
        assert stream.first_visible_seq == n, stream.first_visible_seq
        assert stream.first_visible_time == row.time + n - 1
        assert stream.first_token_time == row.time
        ws[str(n)] = {"median_ms": median * 1e3, "min_ms": min(times) * 1e3,
                      "firstVisibleSeq": stream.first_visible_seq}
    out["whitespace_prefix"] = ws
    if len(ws_sizes) >= 2:
        first, last = ws[str(ws_sizes[0])], ws[str(ws_sizes[-1])]
        out["whitespace_ratio_last_first"] = last["median_ms"] / first["median_ms"]
        out["whitespace_ratio_last_first_min"] = last["min_ms"] / first["min_ms"]
    return out


def render(r: dict[str, Any]) -> str:
    lines = [f"{r['implementation']} {r['python']}, medians of {r['repeat']}"]
    for mode in ("scalar", "packed"):
        m = r[mode]
        lines.append(f"  {mode:<7} {m['records']:>8,} records {m['json_bytes']:>11,} B  decode {m['decode_ms']:9.1f} ms"
                     f"  fold {m['fold_ms']:9.1f} ms  total {m['total_ms']:9.1f} ms")
    lines.append(f"  packed vs scalar: decode {r['ratio_decode']:.1f}x  fold {r['ratio_fold']:.1f}x  "
                 f"total {r['ratio_total']:.1f}x  (same digest: {r['same_digest']})")
    for n, w in r["whitespace_prefix"].items():
        lines.append(f"  whitespace prefix {int(n):>6,}: median {w['median_ms']:8.2f} ms, min {w['min_ms']:8.2f} ms"
                     f" (firstVisibleSeq {w['firstVisibleSeq']})")
    if "whitespace_ratio_last_first" in r:
        lines.append(f"  whitespace largest/smallest: median {r['whitespace_ratio_last_first']:.2f}x, "
                     f"min {r['whitespace_ratio_last_first_min']:.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.bench_fold", description=__doc__.splitlines()[0])
    p.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT ('-' for stdout)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--runs", type=int, default=DELTA_RUNS, help="delta runs (smaller for a smoke run)")
    p.add_argument("--deltas", type=int, default=DELTA_EVENTS, help="total deltas (smaller for a smoke run)")
    p.add_argument("--ws-sizes", default="10000,20000,40000")
    p.add_argument("--ws-repeat", type=int, default=15)
    args = p.parse_args(argv)
    sizes = tuple(int(x) for x in args.ws_sizes.split(",") if x)
    result = run(args.runs, args.deltas, args.repeat, sizes, args.ws_repeat)
    if args.json:
        text = json.dumps(result, indent=2)
        if args.json == "-":
            sys.stdout.write(text + "\n")
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    if args.json != "-":
        print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
