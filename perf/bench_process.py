"""Whole-process CPython benchmark: ``transcript-assembler assemble --all --digest`` of the packed
synthetic 416,756-event session, packed against scalar (``--mode scalar``), each run as its own process, start-up
included. Also the bare start-up (``--version``) and the in-process split of a packed run (read, page, fold).

Run ``python -m perf.bench_process [--json OUT] [--repeat N] [--scalar-repeat N]``. Byte-code caching is on for the
child processes (``PYTHONDONTWRITEBYTECODE`` removed, one warm-up run first), as for a user. Medians of repeated runs;
the ratio is measured in the same run. Structural check: both modes print the same digest. No time is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from perf.synthetic import DELTA_EVENTS, DELTA_RUNS, history_transport_events

__all__ = ["main", "run"]

HEADER = {"type": "session", "version": 0, "id": "synthetic-history-transport", "createdAt": 0}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    return env


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "assembler", *args], env=env, capture_output=True, text=True,
                         check=True)
    return time.perf_counter() - t0, out.stdout.strip()


def _series(args: list[str], repeat: int, env: dict[str, str]) -> tuple[list[float], set[str]]:
    times, outputs = [], set()
    for _ in range(repeat):
        seconds, out = _timed(args, env)
        times.append(seconds)
        outputs.add(out)
    return times, outputs


def _split(path: Path) -> dict[str, float]:
    """Milliseconds of the packed path's stages inside one process (after start-up)."""
    from assembler.history import MessageIndex
    from assembler.store.jsonl import read_session
    from assembler.transcript import assemble, canonical_json
    from definitions import default_definitions

    t0 = time.perf_counter()
    records = read_session(path).records
    t1 = time.perf_counter()
    page = MessageIndex(records).session_page(None, None, None)
    t2 = time.perf_counter()
    canonical_json(assemble(page.records, page.hasMore, default_definitions()))
    t3 = time.perf_counter()
    return {"read_ms": round((t1 - t0) * 1e3, 2), "page_ms": round((t2 - t1) * 1e3, 2),
            "fold_ms": round((t3 - t2) * 1e3, 2)}


def run(runs: int = DELTA_RUNS, total_deltas: int = DELTA_EVENTS, repeat: int = 7,
        scalar_repeat: int = 3) -> dict[str, Any]:
    env = _env()
    events = history_transport_events(runs, total_deltas)
    logical = len(events)
    with tempfile.TemporaryDirectory(prefix="bench-process-") as tmp:
        path = Path(tmp) / "synthetic.jsonl"
        from assembler.store.jsonl import write_session

        write_session(path, HEADER, events)
        del events
        base = ["assemble", str(path), "--all", "--digest"]
        _timed(base, env)  # warm-up: byte code written, file in the page cache
        startup, _ = _series(["--version"], repeat, env)
        packed, packed_out = _series(base, repeat, env)
        scalar, scalar_out = _series([*base, "--mode", "scalar"], scalar_repeat, env)
        split = _split(path)
        size = path.stat().st_size
    med = {name: statistics.median(ts) for name, ts in (("startup", startup), ("packed", packed),
                                                         ("scalar", scalar))}
    return {
        "scenario": f"assemble-all-{logical}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "logical_events": logical,
        "file_bytes": size,
        "repeat": {"packed": repeat, "scalar": scalar_repeat, "startup": repeat},
        "startup_s": round(med["startup"], 4),
        "packed_s": round(med["packed"], 4),
        "scalar_s": round(med["scalar"], 4),
        "packed_runs_s": [round(t, 4) for t in packed],
        "scalar_runs_s": [round(t, 4) for t in scalar],
        "ratio": round(med["scalar"] / med["packed"], 2),
        "packed_split_ms": split,
        "same_digest": len(packed_out | scalar_out) == 1,
        "goal_ratio": 20.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--repeat", type=int, default=7, help="runs of the packed path and of start-up")
    parser.add_argument("--scalar-repeat", type=int, default=3, help="runs of the scalar path")
    parser.add_argument("--runs", type=int, default=DELTA_RUNS, help="delta runs (smaller for a smoke run)")
    parser.add_argument("--deltas", type=int, default=DELTA_EVENTS, help="total deltas (smaller for a smoke run)")
    args = parser.parse_args(argv)
    report = run(args.runs, args.deltas, args.repeat, args.scalar_repeat)
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0 if report["same_digest"] else 1


if __name__ == "__main__":
    sys.exit(main())
