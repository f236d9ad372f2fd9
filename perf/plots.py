"""The harness's plots: one PNG per benchmark that ran (matplotlib, Agg), ratios in the tick labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["plots"]


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
