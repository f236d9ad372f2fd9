"""Peak memory of the commands on big logs, and of the server after listing and a page.

The logs are our own deterministic synthetic session (``perf.synthetic``), written unpacked (one event per line):
the 416,756-event page (about 61 MB), and ``--scale`` copies of it one after the other (about 612 MB for 10; seq,
time and turn renumbered, so the log is continuous and folds), generated in a stream. Every command runs as its
own process; its peak RSS is the child's ``ru_maxrss`` (``os.wait4``). The server (``serve --no-static``) is
sampled from ``/proc/PID/status`` (``VmRSS``, ``VmHWM``) after ``GET /api/sessions`` and after one page.

Run ``python -m perf.bench_memory [--json OUT] [--scale 10] [--skip-big] [--repeat N]``. Medians of ``--repeat``
runs. Goals (reported, never asserted): stats/pack/assemble <= 150 MB on the 61 MB log and within 1.5x of that on
the 612 MB one. Structural check (``ok``): every command exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from perf.synthetic import DELTA_EVENTS, history_transport_events

__all__ = ["main", "run", "write_log", "peak_rss"]

HEADER = {"type": "session", "version": 0, "id": "synthetic-memory", "createdAt": 0}
GOAL_MB = 150.0
GOAL_GROWTH = 1.5
COMMANDS: dict[str, list[str]] = {
    "stats": ["stats", "{log}"],
    "pack": ["pack", "{log}", "-o", "{out}"],
    "assemble": ["assemble", "{log}", "--all", "--digest"],
}


def _copies(events: list[dict[str, Any]], scale: int) -> Iterator[dict[str, Any]]:
    count = len(events)
    span = events[-1]["time"] - events[0]["time"] + 1
    for k in range(scale):
        for e in events:
            data = e["data"]
            if k and type(data) is dict and "turn" in data:
                data = {**data, "turn": data["turn"] + k}  # copy k is turn k + 1: a continuous, foldable log
            yield {**e, "seq": e["seq"] + k * count, "time": e["time"] + k * span, "data": data}


def write_log(path: str | Path, scale: int = 1, deltas: int = DELTA_EVENTS) -> int:
    """Write the unpacked synthetic log ``scale`` times over (continuous seqs); returns its size in bytes."""
    from assembler.records import encode

    events = history_transport_events(total_deltas=deltas)
    with open(path, "wb") as out:
        out.write(encode(HEADER) + b"\n")
        batch: list[bytes] = []
        for e in _copies(events, scale):
            batch.append(encode(e))
            if len(batch) >= 8192:
                out.write(b"\n".join(batch) + b"\n")
                batch.clear()
        if batch:
            out.write(b"\n".join(batch) + b"\n")
    return Path(path).stat().st_size


def _write_in_child(path: Path, scale: int = 1, deltas: int = DELTA_EVENTS) -> None:
    """``write_log`` in a child process: this process stays small, so a forked child's peak RSS is its own."""
    code = f"from perf.bench_memory import write_log; write_log({str(path)!r}, {scale}, {deltas})"
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def peak_rss(argv: list[str]) -> tuple[float, float, int, str]:
    """Run ``transcript-assembler ARGV``; returns (peak RSS in MB, seconds, exit status, stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "assembler", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=_env())
    assert proc.stdout is not None
    out = proc.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - t0, proc.returncode, out


def _proc_status(pid: int) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values


def server_rss(folder: Path, session_id: str) -> dict[str, Any]:
    """RSS of ``serve FOLDER`` at start, after listing the sessions and after the default page of ``session_id``."""
    proc = subprocess.Popen([sys.executable, "-m", "assembler", "serve", str(folder), "--port", "0", "--no-static"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(), text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://([^/\s]+)/", line)
        if match is None:
            raise RuntimeError(f"serve did not start: {line!r}")
        base = f"http://{match.group(1)}"
        host, port = match.group(1).rsplit(":", 1)
        deadline = time.monotonic() + 60
        while True:  # the socket is bound before the line is printed; uvicorn listens a moment later
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        out: dict[str, Any] = {"start": _proc_status(proc.pid)}
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"{base}/api/sessions", timeout=600) as response:
            listing = json.loads(response.read())
        out["list_s"] = round(time.perf_counter() - t0, 3)
        out["after_list"] = _proc_status(proc.pid)
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"{base}/api/sessions/{session_id}/page", timeout=600) as response:
            page = json.loads(response.read())
        out["page_s"] = round(time.perf_counter() - t0, 3)
        out["after_page"] = _proc_status(proc.pid)
        out["sessions"] = len(listing["sessions"])
        out["page_records"] = len(page["records"])
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _measure(log: Path, out: Path, repeat: int) -> dict[str, Any]:
    result: dict[str, Any] = {"file_bytes": log.stat().st_size}
    for name, template in COMMANDS.items():
        argv = [a.format(log=log, out=out) for a in template]
        runs = [peak_rss(argv) for _ in range(repeat)]
        result[name] = {"peak_rss_mb": round(statistics.median(r[0] for r in runs), 1),
                        "seconds": round(statistics.median(r[1] for r in runs), 2),
                        "exit_codes": sorted({r[2] for r in runs}), "runs_mb": [round(r[0], 1) for r in runs]}
        if name == "assemble":
            result[name]["digest"] = runs[0][3].strip()
    out.unlink(missing_ok=True)
    return result


def run(scale: int = 10, skip_big: bool = False, repeat: int = 1, deltas: int = DELTA_EVENTS) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        folder = Path(tmp) / "served"
        folder.mkdir()
        small = folder / "small.jsonl"
        _write_in_child(small, 1, deltas)
        logs: dict[str, Any] = {"small": _measure(small, Path(tmp) / "out.jsonl", repeat)}
        server = server_rss(folder, "small")
        if not skip_big:
            big = Path(tmp) / "big.jsonl"
            _write_in_child(big, scale, deltas)
            logs["big"] = _measure(big, Path(tmp) / "out.jsonl", repeat)
            big.unlink()
    small_peak = max(logs["small"][c]["peak_rss_mb"] for c in COMMANDS)
    goals: dict[str, Any] = {"small_max_mb": GOAL_MB, "small_ok": small_peak <= GOAL_MB}
    if "big" in logs:
        big_peak = max(logs["big"][c]["peak_rss_mb"] for c in COMMANDS)
        goals.update({"big_max_mb": round(GOAL_MB * GOAL_GROWTH, 1), "big_ok": big_peak <= GOAL_MB * GOAL_GROWTH,
                      "growth": round(big_peak / small_peak, 2)})
    return {
        "scenario": "memory",
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "repeat": repeat,
        "scale": scale,
        "deltas": deltas,
        "logs": logs,
        "server": server,
        "goals": goals,
        "ok": all(code == 0 for log in logs.values() for c in COMMANDS for code in log[c]["exit_codes"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    parser.add_argument("--scale", type=int, default=10, help="copies of the 61 MB log in the big one (default 10)")
    parser.add_argument("--skip-big", action="store_true", help="measure the 61 MB log only")
    parser.add_argument("--repeat", type=int, default=1, help="runs per command (median)")
    parser.add_argument("--deltas", type=int, default=DELTA_EVENTS, help="deltas in the small log (quick runs)")
    args = parser.parse_args(argv)
    result = run(args.scale, args.skip_big, args.repeat, args.deltas)
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
