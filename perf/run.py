"""The benchmark harness: runs every named scenario, collects one results file, says which goals were met.

    .venv/bin/python -m perf.run --json build/perf/results.json [--quick] [--plots DIR] [--browser]

Each benchmark runs as its own subprocess (``python -m perf.<module> --json OUT``), one after another, so each starts
from a clean heap and none pays for another's garbage; its JSON and log land beside the results file. The results
file holds machine information, every benchmark's report, the structural checks and the goals. Rules (STYLE 15):
medians and ratios are reported and marked against each issue's goal as *met* / *not met* (judged only at the sizes
the goal names); a missed goal never fails the run and no time is asserted. The exit status is 0 when every
benchmark ran and its structural checks (identical digests, byte-identical pages, lossless packing, followers ending
with exactly the log) held, whatever the timings; 1 otherwise. ``--quick`` shrinks every scenario to a smoke run of
seconds. ``--plots DIR`` writes PNGs (matplotlib, Agg). The browser benchmark (``perf/bench_browser.py``, Chromium
over the built site) is optional: ``--browser`` runs it when present.
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

__all__ = ["BENCHMARKS", "Benchmark", "machine_info", "structure_checks", "goals", "run", "summary", "plots", "main"]

ROOT = Path(__file__).resolve().parents[1]
LOGICAL_EVENTS = 416_756  # perf.synthetic.LOGICAL_EVENTS, kept literal so the harness imports nothing heavy

REFERENCE: dict[str, Any] = {
    "fold_ratio": 17.0,
    "fold_ms": {"scalar": 4682.11, "packed": 276.10},
    "fold_note": "seed 003: Chromium parse + validation + retention + two-Definition fold, one local run",
    "wire_json_bytes": {"raw": 69_433_638, "packed": 6_362_724},
    "wire_note": "seed 003: a private 416,756-event sample (not our synthetic page)",
}


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
    # Chromium + Pyodide over the built site (needs ``make build``); its own ``checks`` are collected.
    Benchmark("browser", "perf.bench_browser", (), ("--quick",), optional=True),
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


def _get(value: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


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
            if path.endswith(".lossless") and "skipped" in (_get(result, path.rsplit(".", 1)[0]) or {}):
                continue
            checks[f"{bench.name}.{path}"] = _get(result, path) is True
        # A benchmark may also report its own structural checks as ``checks: {name: bool}`` (bench_browser does).
        own = result.get("checks")
        if isinstance(own, dict):
            for key, value in own.items():
                if isinstance(value, bool):
                    checks[f"{bench.name}.checks.{key}"] = value
    return checks


def _goal(gid: str, bench: str, what: str, measured: float | None, op: str, target: float, *, at_goal_size: bool,
          detail: str = "", reference: str = "") -> dict[str, Any]:
    """A goal is judged only on a measurement at the sizes the issue names; smaller runs are shown, not judged."""
    met = None if measured is None else (measured >= target if op == ">=" else measured <= target)
    if met is None:
        status = "not measured"
    elif not at_goal_size:
        status, met = "not judged (smaller sizes)", None
    else:
        status = "met" if met else "not met"
    return {"id": gid, "benchmark": bench, "metric": what, "measured": measured, "goal": f"{op} {target:g}",
            "met": met, "status": status, "detail": detail, "reference": reference}


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def goals(benchmarks: dict[str, Any]) -> list[dict[str, Any]]:
    """Each issue's goal against the measured numbers (met / not met / not measured). Never raises on a miss."""
    r = {name: entry.get("result") or {} for name, entry in benchmarks.items()}
    out: list[dict[str, Any]] = []

    fold = r.get("fold", {})
    detail = ""
    if fold:
        s, p = fold["scalar"], fold["packed"]
        detail = (f"fold {s['fold_ms']:.1f} / {p['fold_ms']:.2f} ms; decode+fold {s['total_ms']:.1f} / "
                  f"{p['total_ms']:.1f} ms = {fold['ratio_total']:.1f}x ({s['records']:,} vs {p['records']:,} records)")
    out.append(_goal("fold", "fold", "packed vs scalar fold speed-up (median fold ms ratio)",
                     _num(fold.get("ratio_fold")), ">=", 50, detail=detail,
                     at_goal_size=_get(fold, "scalar.records") == LOGICAL_EVENTS,
                     reference=f"{REFERENCE['fold_ratio']:g}x (4,682.11 / 276.10 ms, parse+validate+retain+fold "
                               "in Chromium)"))

    ws = fold.get("whitespace_prefix", {})
    sizes = sorted(int(n) for n in ws)
    ratio = None
    detail = ""
    if len(sizes) >= 2:
        lo, hi = ws[str(sizes[0])], ws[str(sizes[-1])]
        ratio = hi["median_ms"] / lo["median_ms"]
        detail = ", ".join(f"{n:,}: {ws[str(n)]['median_ms']:.2f} ms" for n in sizes)
    label = f"{sizes[-1]:,}" if sizes else "40k"
    first = f"{sizes[0]:,}" if sizes else "10k"
    out.append(_goal("whitespace_prefix", "fold", f"whitespace-prefix median {label} / {first}", ratio, "<=", 5,
                     detail=detail, at_goal_size=sizes[:1] + sizes[-1:] == [10_000, 40_000],
                     reference="linear would be " + (f"{sizes[-1] / sizes[0]:g}x" if sizes else "4x")))

    pager = r.get("pager", {})
    page = pager.get("page", {})
    cold = pager.get("cold", {})
    detail = ""
    if page:
        detail = (f"expand+paginate+pack {page['expand_paginate_pack_ms']:.1f} ms vs no-expansion "
                  f"{page['no_expansion_ms']:.2f} ms; cold (read file too) {cold.get('ratio', float('nan')):.1f}x")
    out.append(_goal("pager", "pager", "no-expansion pager vs expand-then-paginate (median ms ratio)",
                     _num(page.get("ratio")), ">=", 5, detail=detail,
                     at_goal_size=pager.get("logical_events") == LOGICAL_EVENTS))

    proc = r.get("process", {})
    detail = ""
    if proc:
        split = proc["packed_split_ms"]
        detail = (f"scalar {proc['scalar_s']:.2f} s / packed {proc['packed_s']:.3f} s (start-up "
                  f"{proc['startup_s']:.3f} s; packed read {split['read_ms']:.0f} + page {split['page_ms']:.0f} + "
                  f"fold {split['fold_ms']:.0f} ms)")
    out.append(_goal("process", "process", "whole-process assemble --all, scalar / packed (median s ratio)",
                     _num(proc.get("ratio")), ">=", 20, detail=detail,
                     at_goal_size=proc.get("logical_events") == LOGICAL_EVENTS))

    surface = r.get("surface", {})
    detail = ""
    surface_sizes: list[int] = []
    if surface:
        delta = surface["delta"]
        small, large = sorted(delta, key=int)
        surface_sizes = [int(small), int(large)]
        detail = (f"{int(small):,}: {delta[small]['median_s'] * 1e3:.1f} ms, {int(large):,}: "
                  f"{delta[large]['median_s'] * 1e3:.1f} ms (size ratio {surface['size_ratio']:g})")
        if surface.get("naive_ratio"):
            nr = surface["naive_ratio"]
            detail += f"; naive dirty-flag {nr['sizes'][0]:,}->{nr['sizes'][1]:,}: {nr['ratio']:g}x"
    out.append(_goal("surface", "surface", "surface append+read, large / small median",
                     _num(surface.get("ratio_large_over_small")), "<=", 12, detail=detail,
                     at_goal_size=surface_sizes == [10_000, 100_000]))
    return out


def wire_context(benchmarks: dict[str, Any]) -> dict[str, Any] | None:
    """The synthetic wire sizes beside the reference's table (context, not a goal)."""
    result = benchmarks.get("wire_sizes", {}).get("result")
    if not result or "wire" not in result["scenarios"]["synthetic"]:
        return None
    wire = result["scenarios"]["synthetic"]["wire"]
    ref = REFERENCE["wire_json_bytes"]
    return {"raw_json_bytes": wire["raw"]["json_bytes"], "packed_json_bytes": wire["packed"]["json_bytes"],
            "reduction_pct": wire["reduction_pct"],
            "reference_raw_json_bytes": ref["raw"], "reference_packed_json_bytes": ref["packed"],
            "reference_reduction_pct": round((1 - ref["packed"] / ref["raw"]) * 100, 2)}


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
# Summary


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}x" if value >= 10 else f"{value:.2f}x"


def summary(results: dict[str, Any]) -> str:
    """A readable report: machine, each goal with its measured ratio, the context numbers, the checks."""
    m = results["machine"]
    load = " ".join(str(x) for x in (m["load_average"] or [])) or "n/a"
    lines = [f"perf.run ({results['mode']}) {m['date']}  {m['implementation']} {m['python']}  {m['platform']}",
             f"  {m['cpu_count']} CPUs, load average at start {load}, at end "
             f"{' '.join(str(x) for x in (m.get('load_average_end') or [])) or 'n/a'}; "
             f"git {(m['git_commit'] or '?')[:10]}{' (dirty tree)' if m['git_dirty'] else ''}"]
    if results["note"]:
        lines.append(f"  note: {results['note']}")
    lines.append("")
    if results["mode"] == "quick":
        lines.append("  quick run: ratios are shown but not judged (the goals name larger sizes)")
    width = max(len("status"), *(len(g["status"]) for g in results["goals"])) + 2
    lines.append(f"  {'goal':<20}{'measured':>10}  {'target':<7} {'status':<{width}}details")
    for g in results["goals"]:
        lines.append(f"  {g['id']:<20}{_fmt(g['measured']):>10}  {g['goal']:<7} {g['status']:<{width}}{g['detail']}")
        if g["reference"]:
            lines.append(f"  {'':<20}{'':>10}  {'':<7} {'':<{width}}reference: {g['reference']}")
    fold = results["benchmarks"].get("fold", {}).get("result")
    if fold:
        lines.append("")
        lines.append(f"  fold medians        scalar decode {fold['scalar']['decode_ms']:.1f} ms, fold "
                     f"{fold['scalar']['fold_ms']:.1f} ms | packed decode {fold['packed']['decode_ms']:.2f} ms, "
                     f"fold {fold['packed']['fold_ms']:.2f} ms | ratios decode {_fmt(fold['ratio_decode'])}, "
                     f"fold {_fmt(fold['ratio_fold'])}, total {_fmt(fold['ratio_total'])}")
    wire = results.get("wire_context")
    ws = results["benchmarks"].get("wire_sizes", {}).get("result")
    if wire and ws:
        syn = ws["scenarios"]["synthetic"]
        q = ws["compression"]["brotli"]["quality"]
        lines.append(f"  wire sizes          synthetic {syn['logical_events']:,} events: raw "
                     f"{wire['raw_json_bytes']:,} -> packed {wire['packed_json_bytes']:,} JSON bytes "
                     f"(-{wire['reduction_pct']['json']}%), gzip-6 -{wire['reduction_pct']['gzip']}%, "
                     f"brotli-{q} -{wire['reduction_pct']['brotli']}%"
                     + (f", brotli-11 -{wire['reduction_pct']['brotli11']}%" if "brotli11" in wire["reduction_pct"]
                        else ""))
        lines.append(f"  {'':<20}reference (private sample): {wire['reference_raw_json_bytes']:,} -> "
                     f"{wire['reference_packed_json_bytes']:,} (-{wire['reference_reduction_pct']}%)")
        for name in ("demo", "corpus"):
            sc = ws["scenarios"][name]
            if "skipped" in sc:
                lines.append(f"  {'':<20}{name}: skipped ({sc['skipped']})")
            else:
                w = sc["wire"]
                lines.append(f"  {'':<20}{name}: raw {w['raw']['json_bytes']:,} -> packed "
                             f"{w['packed']['json_bytes']:,} JSON bytes (-{w['reduction_pct']['json']}%), "
                             f"brotli-{q} -{w['reduction_pct']['brotli']}%")
    br = results["benchmarks"].get("browser", {}).get("result")
    if br and isinstance(br.get("modes"), dict) and isinstance(br.get("ratios"), dict):
        ratios = br["ratios"]
        modes = "; ".join(f"{mode} " + ", ".join(f"{k} {v} ms" for k, v in m.get("ms", {}).items())
                          for mode, m in br["modes"].items())
        lines.append(f"  browser             Chromium {br.get('chromium', '?')}, "
                     f"{br['modes'].get('scalar', {}).get('records', 0):,} scalar records: {modes}")
        lines.append(f"  {'':<20}scalar/packed: decode+journal+fold {_fmt(_num(ratios.get('decodeJournalFold')))}, "
                     f"fold {_fmt(_num(ratios.get('fold')))}, render {_fmt(_num(ratios.get('render')))}, "
                     f"page bytes {_fmt(_num(ratios.get('pageBytes')))} "
                     f"(reference {REFERENCE['fold_ratio']:g}x parse+validate+retain+fold)")
    lf = results["benchmarks"].get("load_follow", {}).get("result")
    if lf:
        lines.append(f"  load follow         {lf['followers']} followers (+{lf['disconnectors']} leaving), "
                     f"{lf['appended_events']:,} events appended in {lf['elapsed_s']} s: "
                     f"{'every window equals the log' if lf['ok'] else 'FAILED'}; {lf['live_frames']:,} live frames, "
                     f"{lf['repairs']} repairs, leftover {lf['leftover']}")
    for name, entry in results["benchmarks"].items():
        if "skipped" in entry:
            lines.append(f"  {name:<20}skipped: {entry['skipped']}")
        elif "error" in entry:
            lines.append(f"  {name:<20}ERROR: {entry['error']}")
    lines.append("")
    failed = [k for k, v in results["structure"].items() if not v]
    lines.append(f"  structural checks: {len(results['structure']) - len(failed)}/{len(results['structure'])} hold"
                 + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    times = ", ".join(f"{k} {e['elapsed_s']:.1f} s" for k, e in results["benchmarks"].items() if "elapsed_s" in e)
    lines.append(f"  wall time: {results['elapsed_s']:.0f} s ({times})")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# Plots


def _short(v: float) -> str:
    """1,234,567 -> '1.2M'; 0.25 -> '0.25': compact labels for log axes and bars."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def plots(results: dict[str, Any], out_dir: Path) -> list[str]:
    """Write PNG plots for the benchmarks that ran. Returns the file paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def log_axis(axis: Any, unit: str = "") -> None:
        """Log scale with plain labels at 1-2-5 steps (no 3x10^4 minor-tick clutter)."""
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: _short(v) + unit))
        axis.set_minor_formatter(NullFormatter())

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    res = {name: e.get("result") for name, e in results["benchmarks"].items() if e.get("result")}
    stamp = f"{results['machine']['implementation']} {results['machine']['python']}, {results['mode']} run"

    def save(fig: Any, name: str) -> None:
        path = out_dir / name
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(str(path))

    if fold := res.get("fold"):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        stages = ("decode_ms", "fold_ms", "total_ms")
        xs = range(len(stages))
        for k, (mode, color) in enumerate((("scalar", "#c0504d"), ("packed", "#4f81bd"))):
            values = [fold[mode][s] for s in stages]
            bars = ax.bar([x + (k - 0.5) * 0.38 for x in xs], values, 0.38, label=f"{mode} ({fold[mode]['records']:,}"
                          " records)", color=color)
            ax.bar_label(bars, [_short(v) for v in values], fontsize=8)
        ax.set_yscale("log")
        log_axis(ax.yaxis)
        ax.set_xticks(list(xs), [f"{s[:-3]}\n{fold['ratio_' + s[:-3]]:.1f}x" for s in stages])
        ax.set_ylabel("median ms (log)")
        ax.set_title(f"Fold: scalar vs packed ({fold['scalar']['records']:,} logical events)\n{stamp}", fontsize=10)
        ax.legend()
        save(fig, "fold.png")

        ws = fold["whitespace_prefix"]
        if ws:
            ns = sorted(int(n) for n in ws)
            med = [ws[str(n)]["median_ms"] for n in ns]
            fig, ax = plt.subplots(figsize=(6, 4))
            ax.plot(ns, med, "o-", label="median")
            ax.plot(ns, [ws[str(n)]["min_ms"] for n in ns], "s:", label="min", alpha=0.7)
            ax.plot(ns, [med[0] * n / ns[0] for n in ns], "--", color="grey", label="linear from smallest")
            ax.set_xlabel("members in the whitespace-prefix row (N)")
            ax.set_ylabel("fold ms")
            ax.set_ylim(bottom=0)
            ax.set_title(f"Whitespace-prefix row (ASSEMBLY 5.7)\n{stamp}", fontsize=10)
            ax.legend()
            save(fig, "whitespace_prefix.png")

    if surface := res.get("surface"):
        fig, ax = plt.subplots(figsize=(6, 4))
        delta = {int(k): v["median_s"] for k, v in {**surface["delta_at_naive_sizes"], **surface["delta"]}.items()}
        ns = sorted(delta)
        ax.plot(ns, [delta[n] * 1e3 for n in ns], "o-", label="delta SurfaceManager")
        naive = {int(k): v["median_s"] for k, v in surface["naive_dirty_flag"].items() if "median_s" in v}
        if naive:
            nn = sorted(naive)
            ax.plot(nn, [naive[n] * 1e3 for n in nn], "s-", color="#c0504d", label="naive dirty-flag rebuild")
        ax.plot(ns, [delta[ns[0]] * 1e3 * n / ns[0] for n in ns], "--", color="grey", label="linear")
        ax.set_xscale("log")
        ax.set_yscale("log")
        log_axis(ax.xaxis)
        log_axis(ax.yaxis)
        ax.set_xlabel("events appended (N)")
        ax.set_ylabel("median ms (log)")
        ax.set_title(f"Surface append + read after every append\n{stamp}", fontsize=10)
        ax.legend()
        save(fig, "surface.png")

    if pager := res.get("pager"):
        fig, ax = plt.subplots(figsize=(6, 4))
        scopes = ("page", "cold")
        for k, (key, label, color) in enumerate((("expand_paginate_pack_ms", "expand → paginate → pack", "#c0504d"),
                                                  ("no_expansion_ms", "no-expansion pager", "#4f81bd"))):
            values = [pager[s][key] for s in scopes]
            bars = ax.bar([x + (k - 0.5) * 0.38 for x in range(2)], values, 0.38, label=label, color=color)
            ax.bar_label(bars, [_short(v) for v in values], fontsize=8)
        ax.set_yscale("log")
        log_axis(ax.yaxis)
        ax.set_xticks([0, 1], [f"{s}\n{pager[s]['ratio']:.1f}x" for s in scopes])
        ax.set_ylabel("median ms (log)")
        ax.set_title(f"Tail page of {pager['logical_events']:,} events\n{stamp}", fontsize=10)
        ax.legend()
        save(fig, "pager.png")

    if wire := res.get("wire_sizes"):
        q = wire["compression"]["brotli"]["quality"]
        panels = [(f"{name} ({sc['logical_events']:,} events)", sc["wire"], ("JSON", "gzip-6", f"brotli-{q}"))
                  for name, sc in wire["scenarios"].items() if "wire" in sc]
        ref = wire["reference"]
        panels.append(("reference, seed 003 (private sample)",
                       {"raw": ref["raw"], "packed": ref["packed"], "reduction_pct": ref["reduction_pct"]},
                       ("JSON", "gzip", "brotli")))  # the seed does not state its compression settings
        fig, axes = plt.subplots(1, len(panels), figsize=(3.8 * len(panels), 4.4), squeeze=False)
        for ax, (name, forms, names) in zip(axes[0], panels, strict=True):
            keys = ("json", "gzip", "brotli")
            for k, (form, color) in enumerate((("raw", "#c0504d"), ("packed", "#4f81bd"))):
                values = [forms[form][f"{key}_bytes"] for key in keys]
                bars = ax.bar([x + (k - 0.5) * 0.38 for x in range(3)], values, 0.38, label=form, color=color)
                ax.bar_label(bars, [_short(v) for v in values], fontsize=7)
            ax.set_xticks(range(3), [f"{label}\n-{forms['reduction_pct'][key]:.1f}%"
                                     for label, key in zip(names, keys, strict=True)])
            ax.set_yscale("log")
            log_axis(ax.yaxis, "B")
            ax.set_title(name, fontsize=10)
        axes[0][0].set_ylabel("bytes (log)")
        axes[0][0].legend()
        fig.suptitle(f"Wire sizes: raw events vs packed records\n{stamp}", fontsize=10)
        save(fig, "wire_sizes.png")

    browser = res.get("browser") or {}
    modes = browser.get("modes")
    if isinstance(modes, dict) and {"packed", "scalar"} <= modes.keys():
        bstages = [k for k in modes["scalar"].get("ms", {}) if modes["packed"].get("ms", {}).get(k) is not None]
        if bstages:
            fig, ax = plt.subplots(figsize=(7, 4.2))
            for k, (mode, color) in enumerate((("scalar", "#c0504d"), ("packed", "#4f81bd"))):
                # a stage can measure 0 ms at small sizes; keep it visible on the log axis
                measured = [float(modes[mode]["ms"][s]) for s in bstages]
                bars = ax.bar([x + (k - 0.5) * 0.38 for x in range(len(bstages))], [max(v, 0.01) for v in measured],
                              0.38, label=f"{mode} ({modes[mode].get('records', 0):,} records)", color=color)
                ax.bar_label(bars, [_short(v) for v in measured], fontsize=8)
            ax.set_yscale("log")
            log_axis(ax.yaxis)
            ax.set_xticks(range(len(bstages)), bstages)
            ax.set_ylabel("median ms (log)")
            ax.set_title(f"Chromium {browser.get('chromium', '')} (Pyodide worker): scalar vs packed page\n{stamp}",
                         fontsize=10)
            ax.legend()
            save(fig, "browser.png")
    return written


# ---------------------------------------------------------------------------------------------------------------
# CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.run", description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="OUT", type=Path, default=Path("build/perf/results.json"),
                        help="results file; each benchmark's JSON and log go beside it (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of seconds")
    parser.add_argument("--plots", metavar="DIR", type=Path, help="write PNG plots into DIR")
    parser.add_argument("--browser", action="store_true", help="also run perf/bench_browser.py (Chromium) if present")
    parser.add_argument("--skip", action="append", default=[], choices=[b.name for b in BENCHMARKS],
                        help="leave a benchmark out (repeatable)")
    parser.add_argument("--note", default="", help="free text stored with the results (e.g. machine load)")
    args = parser.parse_args(argv)
    out: Path = args.json if args.json.is_absolute() else Path.cwd() / args.json
    results = run(out, quick=args.quick, browser=args.browser, skip=tuple(args.skip), note=args.note,
                  log=lambda line: print(line, flush=True))
    if args.plots:
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
