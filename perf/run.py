"""The benchmark harness: runs every named scenario, collects one results file, says which goals were met.

    .venv/bin/python -m perf.run --json build/perf/results.json [--quick] [--plots DIR] [--browser]

Each benchmark runs as its own subprocess (``python -m perf.<module> --json OUT``), one after another, so each starts
from a clean heap and none pays for another's garbage; its JSON and log land beside the results file. The results
file holds machine information, every benchmark's report, the structural checks and the goals. Rules (STYLE 15):
medians and ratios are reported and marked against each issue's goal as *met* / *not met* (judged only at the sizes
the goal names); a missed goal never fails the run and no time is asserted. The exit status is 0 when every
benchmark ran and its structural checks (identical digests, byte-identical pages, lossless packing, followers ending
with exactly the log) held, whatever the timings; 1 otherwise. ``--quick`` shrinks every scenario to a smoke run of
seconds. ``--plots DIR`` writes PNGs (matplotlib, Agg). The benchmarks over the built site are optional (the browser
benchmark ``perf/bench_browser.py`` in Chromium, ``interop``, ``wheel``: the installed wheel's size and cold
``serve`` start, and ``compare``: two runs side by side in the page): ``--browser`` runs them when present.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .goals import REFERENCE, field, goals, wire_context
from .report import summary

__all__ = ["BENCHMARKS", "Benchmark", "machine_info", "structure_checks", "run", "main"]

ROOT = Path(__file__).resolve().parents[1]

@dataclass(frozen=True)
class Benchmark:
    """One named scenario: a ``perf`` module run as ``python -m <module> --json OUT <args>``."""

    name: str
    module: str
    full_args: tuple[str, ...] = ()
    quick_args: tuple[str, ...] = ()
    timeout_s: float = 1800.0
    optional: bool = False
    checks: tuple[str, ...] = ()  # dotted paths of fields that must be true


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("fold", "perf.bench_fold", (),
              ("--runs", "4", "--deltas", "4000", "--repeat", "1", "--ws-sizes", "1000,2000,4000",
               "--ws-repeat", "3"), checks=("same_digest",)),
    Benchmark("pager", "perf.bench_pager", (), ("--runs", "4", "--deltas", "4000", "--repeat", "1"),
              checks=("byte_identical",)),
    Benchmark("surface", "perf.bench_surface", (),
              ("--sizes", "500", "5000", "--repeats", "1", "--naive-sizes", "200", "400", "--naive-repeats", "1"),
              checks=("naive_and_delta_surfaces_agree",)),
    Benchmark("wire_sizes", "perf.wire_sizes", ("--reference-brotli",), ("--quick",),
              checks=("scenarios.synthetic.lossless", "scenarios.demo.lossless", "scenarios.corpus.lossless")),
    # Bounded: 50 followers of a log growing by 10,000 events (about 10 s); the quick run is a handful.
    Benchmark("load_follow", "perf.load_follow", ("--followers", "50", "--events", "10000"),
              ("--followers", "3", "--events", "300"), timeout_s=600.0, checks=("ok",)),
    # Whole processes: ``assemble --all`` of the packed page, packed vs scalar (about a minute).
    Benchmark("process", "perf.bench_process", (),
              ("--runs", "4", "--deltas", "4000", "--repeat", "2", "--scalar-repeat", "2"), checks=("same_digest",)),
    # Peak RSS of stats/pack/assemble on the unpacked 61 MB and 612 MB logs, and of serve (several minutes).
    Benchmark("memory", "perf.bench_memory", (), ("--skip-big", "--deltas", "4000"), checks=("ok",)),
    # A viewer following 400,000 live deltas with and without live repacking (two subprocesses, a few minutes).
    Benchmark("live", "perf.bench_live", (), ("--deltas", "4000", "--no-tracemalloc"), checks=("same_view",)),
    # Chromium + Pyodide over the built site (needs ``make build``); its own ``checks`` are collected.
    Benchmark("browser", "perf.bench_browser", (), ("--quick",), optional=True),
    # A 50 MB Claude Code session vs claude-code-log (minutes), in the page, and a 200-session folder.
    Benchmark("interop", "perf.bench_interop", (),
              ("--mb", "2", "--repeat", "1", "--sessions", "10", "--no-ccl"), timeout_s=3600.0, optional=True),
    # The wheel `make dist` builds (needs ``make build``), installed in a fresh venv: its size and the cold
    # start of the installed ``serve`` to the first 200 on ``/``; its own ``checks`` are collected.
    Benchmark("wheel", "perf.bench_wheel", (), ("--runs", "2"), timeout_s=1800.0, optional=True),
    # The 416,756-event session against a copy with its turn changed, and a 1,000-turn pair, compared in
    # the page (served by the real server) and by the CLI; its own ``checks`` (no packed row expanded) are collected.
    Benchmark("compare", "perf.bench_compare", (), ("--quick",), timeout_s=3600.0, optional=True),
    # serve's list of a 10,000-session folder: the first answer after start-up, then complete.
    Benchmark("list", "perf.bench_list", ("--no-index",), ("--sessions", "300", "--no-index"), timeout_s=1800.0,
              optional=True),
)


# ---------------------------------------------------------------------------------------------------------------
# Running


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _meminfo_total() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_info() -> dict[str, Any]:
    """Where and when the numbers were taken (they mean little without it)."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    status = _git("status", "--porcelain")
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "python_build": sys.version,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "memory_bytes": _meminfo_total(),
        "load_average": _loadavg(),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
    }


def _module_path(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def _accepts(module: str, option: str) -> bool:
    """Whether a module's ``--help`` mentions ``option`` (for the optional browser benchmark, whose CLI may vary)."""
    try:
        out = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return option in out.stdout


def run_benchmark(bench: Benchmark, out_dir: Path, quick: bool, log: Callable[[str], None]) -> dict[str, Any]:
    """Run one benchmark in a subprocess. Returns ``{command, exit_code, elapsed_s, log, result | error}``."""
    out = out_dir / f"{bench.name}.json"
    log_path = out_dir / f"{bench.name}.log"
    out.unlink(missing_ok=True)
    args = list(bench.quick_args if quick else bench.full_args)
    if bench.optional and "--quick" in args and not _accepts(bench.module, "--quick"):
        args.remove("--quick")
    command = [sys.executable, "-m", bench.module, "--json", str(out), *args]
    env = {**os.environ, "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}
    log(f"[{bench.name}] {' '.join(['python', *command[1:]])}")
    started = time.perf_counter()
    entry: dict[str, Any] = {"module": bench.module, "args": args, "log": str(log_path)}
    try:
        with open(log_path, "wb") as stream:
            proc = subprocess.run(command, cwd=ROOT, env=env, stdout=stream, stderr=subprocess.STDOUT,
                                  timeout=bench.timeout_s, check=False)
        entry["exit_code"] = proc.returncode
    except subprocess.TimeoutExpired:
        entry["exit_code"] = None
        entry["error"] = f"timed out after {bench.timeout_s:.0f} s"
    entry["elapsed_s"] = round(time.perf_counter() - started, 2)
    if out.exists():
        try:
            entry["result"] = json.loads(out.read_text())
        except ValueError as exc:
            entry["error"] = f"unreadable JSON: {exc}"
    elif "error" not in entry:
        tail = log_path.read_text(errors="replace").strip().splitlines()[-5:] if log_path.exists() else []
        entry["error"] = f"no JSON written (exit {entry['exit_code']}): " + " | ".join(tail)
    log(f"[{bench.name}] exit {entry['exit_code']} in {entry['elapsed_s']:.1f} s"
        + (f" — {entry['error']}" if "error" in entry else ""))
    return entry


def structure_checks(benchmarks: dict[str, Any]) -> dict[str, bool]:
    """``{"bench.field": passed}`` for every structural field of every benchmark that ran.

    A corpus that is absent (skipped) has no ``lossless`` field; that check is left out rather than failed."""
    checks: dict[str, bool] = {}
    for bench in BENCHMARKS:
        entry = benchmarks.get(bench.name, {})
        result = entry.get("result")
        if result is None:
            continue
        for path in bench.checks:
            if path.endswith(".lossless") and "skipped" in (field(result, path.rsplit(".", 1)[0]) or {}):
                continue
            checks[f"{bench.name}.{path}"] = field(result, path) is True
        # A benchmark may also report its own structural checks as ``checks: {name: bool}`` (bench_browser does).
        own = result.get("checks")
        if isinstance(own, dict):
            for key, value in own.items():
                if isinstance(value, bool):
                    checks[f"{bench.name}.checks.{key}"] = value
    return checks


def run(out: Path, *, quick: bool = False, browser: bool = False, skip: tuple[str, ...] = (), note: str = "",
        log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the benchmarks into ``out``'s folder and write ``out``. Returns the results."""
    out_dir = out.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    started = time.perf_counter()
    benchmarks: dict[str, Any] = {}
    for bench in BENCHMARKS:
        if bench.name in skip:
            benchmarks[bench.name] = {"skipped": "--skip"}
        elif bench.optional and not browser:
            benchmarks[bench.name] = {"skipped": "not requested (run with --browser)"}
        elif not _module_path(bench.module).exists():
            benchmarks[bench.name] = {"skipped": f"{_module_path(bench.module).relative_to(ROOT)} not present"}
        else:
            benchmarks[bench.name] = run_benchmark(bench, out_dir, quick, log)
    machine["load_average_end"] = _loadavg()
    checks = structure_checks(benchmarks)
    ran = all("result" in e for name, e in benchmarks.items() if "skipped" not in e)
    results = {
        "harness": "perf.run",
        "mode": "quick" if quick else "full",
        "note": note,
        "machine": machine,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "benchmarks": benchmarks,
        "structure": checks,
        "goals": goals(benchmarks),
        "wire_context": wire_context(benchmarks),
        "reference": REFERENCE,
        "ok": ran and all(checks.values()),
    }
    out.write_text(json.dumps(results, indent=2) + "\n")
    return results


# ---------------------------------------------------------------------------------------------------------------
# CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.run", description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="OUT", type=Path, default=Path("build/perf/results.json"),
                        help="results file; each benchmark's JSON and log go beside it (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of seconds")
    parser.add_argument("--plots", metavar="DIR", type=Path, help="write PNG plots into DIR")
    parser.add_argument("--browser", action="store_true",
                        help="also run the optional benchmarks over the built site (Chromium, interop, the wheel)")
    parser.add_argument("--skip", action="append", default=[], choices=[b.name for b in BENCHMARKS],
                        help="leave a benchmark out (repeatable)")
    parser.add_argument("--note", default="", help="free text stored with the results (e.g. machine load)")
    args = parser.parse_args(argv)
    out: Path = args.json if args.json.is_absolute() else Path.cwd() / args.json
    results = run(out, quick=args.quick, browser=args.browser, skip=tuple(args.skip), note=args.note,
                  log=lambda line: print(line, flush=True))
    if args.plots:
        from .plots import plots  # matplotlib only when plots are asked for

        results["plots"] = plots(results, args.plots)
        out.write_text(json.dumps(results, indent=2) + "\n")
    print()
    print(summary(results))
    if args.plots:
        print(f"  plots: {', '.join(results['plots'])}")
    print(f"  results: {out}")
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
