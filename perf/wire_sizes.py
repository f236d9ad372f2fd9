"""Wire-size inventory (seed 003 "Measured result", ASSEMBLY 6.4): what packing saves on the wire and on disk.

For each scenario — the synthetic 416,756-event page, the demo session, the real corpus summed over its logs — four
forms are measured: the raw page ``{events: [{type:'event', event}...], hasMore}``, the packed ``SessionPage``
``{records: [...], hasMore}``, and the session file as unpacked and as packed JSONL lines. Each form reports its
top-level record count, compact JSON bytes, gzip bytes and Brotli bytes; reductions are packed against raw.

Rules: sizes are deterministic (gzip with ``mtime=0``); every timing lives under ``timings_s`` and nowhere else.
gzip is level 6 (zlib's and Node's ``gzipSync`` default). Brotli is quality 9 by default (window 22, Node's
default window); ``--reference-brotli`` adds quality 11 — Node's ``brotliCompressSync`` default, the reference's
setting — for the wire forms, which costs about two minutes on the 71 MB raw page. Packed forms are checked to be
lossless (they expand back to the exact logical events). Nothing is asserted about sizes or times.

    .venv/bin/python -m perf.wire_sizes --json build/perf/wire_sizes.json [--quick] [--reference-brotli]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import brotli  # type: ignore[import-untyped]  # no stubs; compress() only
import msgspec

from assembler.chunk_rows import expand_records, is_storage_row, pack_chunk_runs
from assembler.demo import demo_session
from assembler.history import history_records
from assembler.records import ChunksRecord, decode_page, encode, member_count
from assembler.store.jsonl import read_session
from perf.synthetic import DELTA_EVENTS, DELTA_RUNS, history_transport_events

__all__ = ["GZIP_LEVEL", "BROTLI_QUALITY", "REFERENCE", "default_corpus", "measure_log", "run", "render", "main"]

GZIP_LEVEL = 6
BROTLI_QUALITY = 9
BROTLI_LGWIN = 22
REFERENCE_BROTLI_QUALITY = 11
QUICK_RUNS, QUICK_DELTAS = 4, 4_000

REFERENCE: dict[str, Any] = {
    "source": "seed 003 'Measured result': a production-sized private sample; compression settings not stated "
              "(Node's zlib defaults would be gzip level 6, Brotli quality 11)",
    "logical_events": 416_756,
    "raw": {"records": 416_756, "json_bytes": 69_433_638, "gzip_bytes": 4_190_226, "brotli_bytes": 1_972_998},
    "completed_step_projection": {"records": 228_129, "json_bytes": 38_427_209, "gzip_bytes": 2_324_688,
                                  "brotli_bytes": 957_350},
    "packed": {"records": 696, "rows": 116, "json_bytes": 6_362_724, "gzip_bytes": 1_154_206,
               "brotli_bytes": 528_145},
    "reduction_pct": {"json": 90.84, "gzip": 72.45, "brotli": 73.23},
}

SYNTHETIC_HEADER = {"type": "session", "version": 0, "id": "synthetic-history-transport", "createdAt": 0}
_FORMS = (("wire", "raw", "packed"), ("storage", "unpacked", "packed"))


def default_corpus() -> Path:
    """``$TRANSCRIPT_SHARED/fixtures/deepseek-harness``, else ``../shared/...`` beside the repo (as tests do)."""
    repo = Path(__file__).resolve().parents[1]
    shared = Path(os.environ.get("TRANSCRIPT_SHARED", repo.parent / "shared"))
    return shared / "fixtures" / "deepseek-harness"


class _Sizer:
    """Compresses byte strings with the chosen settings and keeps the time it spent (reported, never used)."""

    def __init__(self, brotli_quality: int, reference_brotli: bool) -> None:
        self.brotli_quality = brotli_quality
        self.reference_brotli = reference_brotli
        self.seconds: dict[str, float] = {"gzip": 0.0, "brotli": 0.0, "brotli11": 0.0}

    def sizes(self, data: bytes, *, reference: bool) -> dict[str, int]:
        t0 = time.perf_counter()
        out = {"json_bytes": len(data), "gzip_bytes": len(gzip.compress(data, GZIP_LEVEL, mtime=0))}
        t1 = time.perf_counter()
        out["brotli_bytes"] = len(brotli.compress(data, quality=self.brotli_quality, lgwin=BROTLI_LGWIN))
        t2 = time.perf_counter()
        self.seconds["gzip"] += t1 - t0
        self.seconds["brotli"] += t2 - t1
        if reference and self.reference_brotli:
            out["brotli11_bytes"] = len(brotli.compress(data, quality=REFERENCE_BROTLI_QUALITY, lgwin=BROTLI_LGWIN))
            self.seconds["brotli11"] += time.perf_counter() - t2
        return out


def _lines(header: dict[str, Any] | None, records: Iterable[Any]) -> bytes:
    """A session file's bytes: the header line, then one line per storage record."""
    head = [header] if header is not None else []
    return b"".join(encode(r) + b"\n" for r in chain(head, records))


def _wire_is_lossless(packed: bytes, storage: Sequence[Any], events: Sequence[Any]) -> bool:
    """The packed page decodes strictly, covers every event once, and its rows are the storage rows renamed;
    the storage records expand back to exactly the logical events."""
    page = decode_page(packed)
    if sum(member_count(r.event) for r in page.records) != len(events):
        return False
    back = [r.event.to_storage() if type(r) is ChunksRecord else v["event"]
            for r, v in zip(page.records, msgspec.json.decode(packed)["records"], strict=True)]
    return encode(back) == encode(list(storage)) and encode(list(expand_records(storage))) == encode(list(events))


def measure_log(events: Sequence[Any], storage: Sequence[Any], header: dict[str, Any] | None, sizer: _Sizer,
                *, reference: bool = True) -> dict[str, Any]:
    """The four forms of one log. ``storage`` is the packed storage records as written (per append batch)."""
    wire_records = history_records(pack_chunk_runs(events))  # a page packs its selected slice as one run
    raw = encode({"events": [{"type": "event", "event": e} for e in events], "hasMore": False})
    packed = encode({"records": wire_records, "hasMore": False})
    unpacked_file = _lines(header, events)
    packed_file = _lines(header, storage)
    wire_rows = sum(1 for r in wire_records if r["type"] == "chunks")
    storage_rows = sum(1 for r in storage if is_storage_row(r))
    return {
        "logical_events": len(events),
        "lossless": _wire_is_lossless(packed, storage, events),
        "wire": {"raw": {"records": len(events), "rows": 0, **sizer.sizes(raw, reference=reference)},
                 "packed": {"records": len(wire_records), "rows": wire_rows,
                            **sizer.sizes(packed, reference=reference)}},
        "storage": {"unpacked": {"records": len(events), "rows": 0, **sizer.sizes(unpacked_file, reference=False)},
                    "packed": {"records": len(storage), "rows": storage_rows,
                               **sizer.sizes(packed_file, reference=False)}},
    }


def _add(total: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part.items():
        if isinstance(value, dict):
            _add(total.setdefault(key, {}), value)
        elif isinstance(value, bool):
            total[key] = total.get(key, True) and value
        else:
            total[key] = total.get(key, 0) + value


def _pct(raw: int, packed: int) -> float:
    return round((1 - packed / raw) * 100, 2) if raw else 0.0


def _with_reductions(scenario: dict[str, Any]) -> dict[str, Any]:
    for part, before, after in _FORMS:
        forms = scenario[part]
        forms["reduction_pct"] = {key[:-6]: _pct(forms[before][key], forms[after][key])
                                  for key in forms[after] if key.endswith("_bytes")}
        forms["reduction_pct"]["records"] = _pct(forms[before]["records"], forms[after]["records"])
    return scenario


def synthetic(sizer: _Sizer, runs: int, total_deltas: int) -> dict[str, Any]:
    events = history_transport_events(runs, total_deltas)
    storage = pack_chunk_runs(events)  # bench_pager writes it as one batch
    out = measure_log(events, storage, SYNTHETIC_HEADER, sizer)
    full = runs == DELTA_RUNS and total_deltas == DELTA_EVENTS
    desc = "the synthetic history-transport page (ASSEMBLY 6)" + ("" if full else f", reduced: {runs} runs")
    return _with_reductions({"description": desc, "delta_runs": runs, "full_size": full, **out})


def demo(sizer: _Sizer) -> dict[str, Any]:
    header, batches = demo_session()
    events = [e for batch in batches for e in batch]
    storage = [r for batch in batches for r in pack_chunk_runs(batch)]  # as SessionWriter writes it
    return _with_reductions({"description": "the built-in demo session (perf.demo), packed per append batch",
                             **measure_log(events, storage, header, sizer)})


def corpus(sizer: _Sizer, root: Path) -> dict[str, Any]:
    """Every ``*.jsonl`` under ``root``, each measured on its own (one page per log), summed."""
    logs = sorted(p for p in root.rglob("*.jsonl") if p.is_file()) if root.is_dir() else []
    if not logs:
        return {"skipped": f"corpus not found at {root}"}
    total: dict[str, Any] = {}
    failed: list[str] = []
    with_rows = 0
    on_disk = 0
    for path in logs:
        result = read_session(path)
        if not result.ok:
            failed.append(f"{path.relative_to(root)}: {result.error}")
            continue
        events = list(expand_records(result.records))
        part = measure_log(events, result.records, result.header, sizer)
        with_rows += part["storage"]["packed"]["rows"] > 0
        on_disk += path.stat().st_size
        _add(total, part)
    return _with_reductions({
        "description": "the real corpus (deepseek-harness logs), each log one page and one file, sums over logs; "
                       "seq/time rebuilt as its README says (the files on disk are projected without them)",
        "source": root.name, "logs": len(logs) - len(failed), "logs_with_rows": with_rows,
        "failed": failed, "on_disk_projected_bytes": on_disk, **total})


def run(*, runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS, brotli_quality: int = BROTLI_QUALITY,
        reference_brotli: bool = False, corpus_root: Path | None = None, with_corpus: bool = True) -> dict[str, Any]:
    """Measure every scenario. Returns a JSON-ready report; only ``timings_s`` varies between runs."""
    sizer = _Sizer(brotli_quality, reference_brotli)
    timings: dict[str, float] = {}
    scenarios: dict[str, Any] = {}
    t0 = time.perf_counter()
    scenarios["synthetic"] = synthetic(sizer, runs, total_deltas)
    timings["synthetic"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    scenarios["demo"] = demo(sizer)
    timings["demo"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    root = corpus_root or default_corpus()
    scenarios["corpus"] = corpus(sizer, root) if with_corpus else {"skipped": "not requested (--no-corpus)"}
    timings["corpus"] = time.perf_counter() - t0
    timings.update({f"compress_{k}": v for k, v in sizer.seconds.items()})
    return {
        "scenario": "wire-sizes",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "compression": {
            "gzip": {"level": GZIP_LEVEL, "mtime": 0, "why": "zlib/Node gzipSync default level"},
            "brotli": {"quality": brotli_quality, "lgwin": BROTLI_LGWIN, "brotli_module": brotli.__version__},
            "brotli11": ({"quality": REFERENCE_BROTLI_QUALITY, "lgwin": BROTLI_LGWIN, "forms": "wire only",
                          "why": "Node brotliCompressSync default, the reference's setting"}
                         if reference_brotli else None),
        },
        "forms": {"wire.raw": "{events: [{type:'event', event}...], hasMore}",
                  "wire.packed": "SessionPage {records: SessionHistoryRecord[], hasMore}",
                  "storage.unpacked": "session JSONL, header + one line per logical event",
                  "storage.packed": "session JSONL, header + one line per storage record (rows packed)"},
        "scenarios": scenarios,
        "reference": REFERENCE,
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
    }


def _table(scenario: dict[str, Any], brotli_quality: int) -> list[str]:
    has11 = "brotli11_bytes" in scenario["wire"]["raw"]
    head = f"  {'form':<18}{'records':>10}{'JSON bytes':>14}{'gzip-6':>12}{f'brotli-{brotli_quality}':>12}"
    lines = [head + (f"{'brotli-11':>12}" if has11 else "")]
    for part, before, after in _FORMS:
        forms = scenario[part]
        for name in (before, after):
            f = forms[name]
            row = (f"  {part + ' ' + name:<18}{f['records']:>10,}{f['json_bytes']:>14,}{f['gzip_bytes']:>12,}"
                   f"{f['brotli_bytes']:>12,}")
            lines.append(row + (f"{f['brotli11_bytes']:>12,}" if "brotli11_bytes" in f else ""))
        r = forms["reduction_pct"]
        row = (f"  {'  reduction':<18}{r['records']:>9.1f}%{r['json']:>13.1f}%{r['gzip']:>11.1f}%"
               f"{r['brotli']:>11.1f}%")
        lines.append(row + (f"{r['brotli11']:>11.1f}%" if "brotli11" in r else ""))
    return lines


def render(report: dict[str, Any]) -> str:
    q = report["compression"]["brotli"]["quality"]
    lines = [f"wire sizes: gzip level {GZIP_LEVEL}, brotli quality {q}"
             + (" (+ quality 11 for the wire forms)" if report["compression"]["brotli11"] else "")]
    for name, scenario in report["scenarios"].items():
        if "skipped" in scenario:
            lines.append(f"{name}: skipped ({scenario['skipped']})")
            continue
        extra = f", {scenario['logs']} logs" if "logs" in scenario else ""
        lines.append(f"{name}: {scenario['logical_events']:,} logical events{extra}, "
                     f"lossless: {scenario['lossless']}")
        lines.extend(_table(scenario, q))
    ref = report["reference"]
    lines.append(f"reference (private sample): raw {ref['raw']['json_bytes']:,} -> packed "
                 f"{ref['packed']['json_bytes']:,} JSON bytes (-{ref['reduction_pct']['json']}%), brotli "
                 f"{ref['raw']['brotli_bytes']:,} -> {ref['packed']['brotli_bytes']:,} "
                 f"(-{ref['reduction_pct']['brotli']}%)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.wire_sizes", description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here ('-' for stdout)")
    parser.add_argument("--quick", action="store_true",
                        help=f"reduced synthetic page ({QUICK_RUNS} runs, {QUICK_DELTAS} deltas) for a smoke run")
    parser.add_argument("--runs", type=int, default=None, help=f"delta runs (default {DELTA_RUNS})")
    parser.add_argument("--deltas", type=int, default=None, help=f"total deltas (default {DELTA_EVENTS})")
    parser.add_argument("--brotli-quality", type=int, default=BROTLI_QUALITY, choices=range(0, 12),
                        metavar="Q", help=f"Brotli quality for every form (default {BROTLI_QUALITY})")
    parser.add_argument("--reference-brotli", action="store_true",
                        help="also Brotli quality 11 for the wire forms (slow: ~2 min on the full raw page)")
    parser.add_argument("--corpus", type=Path, default=None, help=f"corpus folder (default {default_corpus()})")
    parser.add_argument("--no-corpus", action="store_true", help="skip the real corpus")
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (QUICK_RUNS if args.quick else DELTA_RUNS)
    deltas = args.deltas if args.deltas is not None else (QUICK_DELTAS if args.quick else DELTA_EVENTS)
    report = run(runs=runs, total_deltas=deltas, brotli_quality=args.brotli_quality,
                 reference_brotli=args.reference_brotli, corpus_root=args.corpus, with_corpus=not args.no_corpus)
    if args.json:
        text = json.dumps(report, indent=2) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(text)
    if args.json != "-":
        print(render(report))
    ok = all(s.get("lossless", True) for s in report["scenarios"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
