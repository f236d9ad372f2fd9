"""The harness's text report: machine, each goal with its measured ratio, the context numbers, the checks."""

from __future__ import annotations

from typing import Any

from .goals import REFERENCE, number

__all__ = ["summary"]


def _fmt(value: float | None, unit: str = "x") -> str:
    if value is None:
        return "—"
    return f"{value:.1f}{unit}" if value >= 10 else f"{value:.2f}{unit}"


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
        measured = _fmt(g["measured"], g.get("unit", "x"))
        lines.append(f"  {g['id']:<20}{measured:>10}  {g['goal']:<7} {g['status']:<{width}}{g['detail']}")
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
        lines.append(f"  {'':<20}scalar/packed: decode+journal+fold {_fmt(number(ratios.get('decodeJournalFold')))}, "
                     f"fold {_fmt(number(ratios.get('fold')))}, render {_fmt(number(ratios.get('render')))}, "
                     f"page bytes {_fmt(number(ratios.get('pageBytes')))} "
                     f"(reference {REFERENCE['fold_ratio']:g}x parse+validate+retain+fold)")
    boot = (br or {}).get("boot", {}).get("median")
    if boot:
        lines.append(f"  {'':<20}boot (ms since load, medians): list visible {boot.get('listVisibleMs')}, worker "
                     f"runtime {boot.get('runtimeMs')} / packages {boot.get('packagesMs')} / import "
                     f"{boot.get('importMs')} (from worker start at {boot.get('workerStartMs')}), ready "
                     f"{boot.get('readyMs')}; cold #session=ID to first row {boot.get('coldSessionFirstRowMs')}")
    wheel = results["benchmarks"].get("wheel", {}).get("result")
    if wheel:
        lines.append(f"  wheel               {wheel['wheel']} {wheel['wheel_bytes'] / 1e6:.1f} MB (sdist "
                     f"{(wheel['sdist_bytes'] or 0) / 1e6:.1f} MB; site {wheel['site_bytes'] / 1e6:.1f} MB, "
                     f"{wheel['site_files']} files); installed serve: first 200 on / "
                     f"{wheel['first_200_median_s'] * 1e3:.0f} ms after process start (median of {len(wheel['runs'])})")
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
