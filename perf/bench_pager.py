"""Benchmark: the tail page (50 messages) of the 416,756-event synthetic session (ASSEMBLY 6) read from a packed
JSONL file — the no-expansion pager (``MessageIndex``) against expand → paginate → pack (the reference path).

Both paths are timed in one run on CPython, medians of repeated runs, and their outputs must be byte-identical.
Two scopes are reported: *page* (the file is already parsed into storage records) and *cold* (read the file too).
Reported, never asserted (the goal is >= 5x).

    .venv/bin/python -m perf.bench_pager --json build/perf/bench_pager.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assembler.chunk_rows import expand_records
from assembler.history import MessageIndex, page_value
from assembler.records import encode
from assembler.store.jsonl import read_session, write_session
from perf.synthetic import DELTA_EVENTS, DELTA_RUNS, LOGICAL_EVENTS, history_transport_events

__all__ = ["run", "main"]

MAX_MESSAGES = 50


def _median_ms(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times = []
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), out


def run(repeat: int = 5, runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS) -> dict[str, Any]:
    """Write the synthetic session packed, then time both pagers. Returns a JSON-ready report.

    ``runs``/``total_deltas`` shrink the synthetic session for a smoke run (the defaults are the 416,756 events).
    """
    events = history_transport_events(runs, total_deltas)
    logical_events = len(events)
    if runs == DELTA_RUNS and total_deltas == DELTA_EVENTS:
        assert logical_events == LOGICAL_EVENTS
    header = {"type": "session", "version": 0, "id": "synthetic-history-transport", "createdAt": 0}
    with tempfile.TemporaryDirectory(prefix="bench-pager-") as tmp:
        path = Path(tmp) / "synthetic.jsonl"
        write_session(path, header, events)
        del events
        size = path.stat().st_size
        loaded = read_session(path)
        records = loaded.records

        def no_expansion() -> dict[str, Any]:
            return MessageIndex(records).page(None, None, MAX_MESSAGES)

        def reference() -> dict[str, Any]:
            return page_value(list(expand_records(records)), None, None, MAX_MESSAGES)

        def cold_no_expansion() -> dict[str, Any]:
            return MessageIndex(read_session(path).records).page(None, None, MAX_MESSAGES)

        def cold_reference() -> dict[str, Any]:
            return page_value(list(expand_records(read_session(path).records)), None, None, MAX_MESSAGES)

        fast_ms, fast = _median_ms(no_expansion, repeat)
        slow_ms, slow = _median_ms(reference, repeat)
        identical = encode(fast) == encode(slow)
        body = encode(fast)
        cold_fast_ms, cold_fast = _median_ms(cold_no_expansion, max(3, repeat // 2))
        cold_slow_ms, cold_slow = _median_ms(cold_reference, max(3, repeat // 2))
        identical = identical and encode(cold_fast) == encode(cold_slow) == body
        index = MessageIndex(records)
        tail_ms, _ = _median_ms(lambda: index.page(None, None, MAX_MESSAGES), repeat)
    return {
        "scenario": f"tail-page-{logical_events}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "file_bytes": size,
        "storage_records": len(records),
        "logical_events": logical_events,
        "max_messages": MAX_MESSAGES,
        "page_records": len(fast["records"]),
        "page_has_more": fast["hasMore"],
        "page_json_bytes": len(body),
        "repeat": repeat,
        "byte_identical": identical,
        "page": {"no_expansion_ms": round(fast_ms, 2), "expand_paginate_pack_ms": round(slow_ms, 2),
                 "ratio": round(slow_ms / fast_ms, 2)},
        "cold": {"no_expansion_ms": round(cold_fast_ms, 2), "expand_paginate_pack_ms": round(cold_slow_ms, 2),
                 "ratio": round(cold_slow_ms / cold_fast_ms, 2)},
        "page_from_built_index_ms": round(tail_ms, 2),
        "goal_ratio": 5.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=DELTA_RUNS, help="delta runs (smaller for a smoke run)")
    parser.add_argument("--deltas", type=int, default=DELTA_EVENTS, help="total deltas (smaller for a smoke run)")
    args = parser.parse_args(argv)
    report = run(args.repeat, args.runs, args.deltas)
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0 if report["byte_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
