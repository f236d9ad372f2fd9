"""Other harnesses' logs at scale: a large Claude Code session exported by our CLI and by claude-code-log
(the tool its users run today), the same file opened as a local file in the page, and a Claude Code project folder
of many sessions listed by the server in the page.

    .venv/bin/python -m perf.bench_interop [--json OUT] [--mb 50] [--repeat 3] [--sessions 200] [--no-ccl]
                                           [--no-browser]

The session is written by our own seeded generator (``perf.claude_gen``: record shapes only, no copied data).
``export``: whole processes, ``transcript-assembler export FILE -o OUT.html`` (median of ``--repeat``) against
``claude-code-log convert FILE -o OUT.html`` (once: it takes minutes), run one after the other on the same file;
claude-code-log 1.7.0 is installed from PyPI into its own venv under build/perf (never into ours). ``page``: the
file opened with ``transcriptViewer.openFile`` after the runtime is ready: the time to its first rows (a big file
shows the part read first while the rest is read: ``firstRowsMs``), to the whole file's first screen
(``firstScreenMs``), and the tab's memory (wasm heap + JS heap). ``folder``: ``serve`` over a
``~/.claude/projects``-shaped folder of ``--sessions`` small sessions, the page's ``viewer:listShown`` mark after
navigation (median of ``--repeat`` fresh contexts). Medians and ratios are reported; nothing is asserted (STYLE 15).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["run", "main"]

ROOT = Path(__file__).resolve().parents[1]
PERF = ROOT / "build" / "perf"
CCL_VERSION = "1.7.0"
CCL_VENV = PERF / "ccl-venv"


def _session(mb: float) -> Path:
    """The generated Claude Code session of ``mb`` MB (cached: the generator is deterministic)."""
    from perf.claude_gen import generate

    path = PERF / f"claude-{mb:g}mb.jsonl"
    if not path.is_file():
        PERF.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(generate(int(mb * 1_000_000)))
        tmp.replace(path)
    return path


def _ccl() -> Path | None:
    """claude-code-log's command in its own venv (installed from PyPI on first use); None when it cannot be."""
    exe = CCL_VENV / "bin" / "claude-code-log"
    if exe.is_file():
        return exe
    try:
        subprocess.run([sys.executable, "-m", "venv", str(CCL_VENV)], check=True)
        subprocess.run([str(CCL_VENV / "bin" / "pip"), "install", "-q", f"claude-code-log=={CCL_VERSION}"],
                       check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"bench_interop: cannot install claude-code-log: {exc}", file=sys.stderr)
        return None
    return exe if exe.is_file() else None


def _timed(argv: list[str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, exit status, peak RSS KiB) of one whole process."""
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    try:
        rss = int(proc.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        rss = 0
    return wall, proc.returncode, rss


def bench_export(path: Path, repeat: int, ccl: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"fileBytes": path.stat().st_size}
    with tempfile.TemporaryDirectory(prefix="bench-interop-") as tmp:
        ours = [_timed([str(ROOT / ".venv" / "bin" / "transcript-assembler"), "export", str(path), "-o",
                        f"{tmp}/ours.html"], Path(tmp)) for _ in range(repeat)]
        out["ours"] = {"wallS": round(statistics.median(w for w, _, _ in ours), 2),
                       "runs": [round(w, 2) for w, _, _ in ours], "status": [s for _, s, _ in ours],
                       "peakRssKiB": max(r for _, _, r in ours), "htmlBytes": os.path.getsize(f"{tmp}/ours.html")}
        exe = _ccl() if ccl else None
        if exe is not None:
            copy = Path(tmp) / path.name  # claude-code-log writes a cache beside its input: never beside ours
            shutil.copyfile(path, copy)
            wall, status, rss = _timed([str(exe), "convert", str(copy), "-o", f"{tmp}/ccl.html"], Path(tmp))
            out["claudeCodeLog"] = {"version": CCL_VERSION, "wallS": round(wall, 2), "status": status,
                                    "peakRssKiB": rss,
                                    "htmlBytes": os.path.getsize(f"{tmp}/ccl.html") if status == 0 else None}
            if status == 0:
                out["ratio"] = round(wall / out["ours"]["wallS"], 1)
    return out


def _folder(root: Path, sessions: int) -> None:
    """A ``~/.claude/projects``-shaped folder: ``sessions`` small sessions over ten projects."""
    from perf.claude_gen import generate

    for i in range(sessions):
        project = root / f"-home-user-project-{i % 10}"
        project.mkdir(parents=True, exist_ok=True)
        (project / f"{i:08d}-0000-4000-8000-000000000000.jsonl").write_bytes(generate(20_000, seed=i))


@contextmanager
def _serve(root: Path) -> Iterator[str]:
    from assembler.server import create_app
    from perf.bench_browser import serve_app

    with serve_app(create_app([root])) as url:
        yield url


def bench_browser(path: Path, sessions: int, repeat: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from perf.bench_browser import CHROMIUM, CHROMIUM_ARGS, SITE, measure_file
    from perf.bench_browser import _serve as serve_site

    if not (SITE / "worker.mjs").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-interop-") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, headless=True,
                                     args=CHROMIUM_ARGS)
        out["chromium"] = browser.version
        try:
            files = Path(tmp) / "files"
            files.mkdir()
            shutil.copyfile(path, files / path.name)
            with serve_site(files) as url:
                runs = []
                for _ in range(repeat):
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(url)
                    runs.append(measure_file(page, f"/__bench__/{path.name}"))
                    context.close()
            out["page"] = {"fileBytes": runs[0]["fileBytes"], "events": runs[0]["events"],
                           "error": runs[0]["error"],
                           "firstRowsMs": round(statistics.median(r["ms"]["firstRows"] for r in runs), 1),
                           "previewed": all(r["previewed"] for r in runs),
                           "firstScreenMs": round(statistics.median(r["msWall"] for r in runs), 1),
                           "runsMs": [r["msWall"] for r in runs],
                           "tabBytes": max(r["tabBytes"] for r in runs),
                           "wasmHeapAfterBytes": max(r["wasmHeapAfterBytes"] for r in runs)}
            folder = Path(tmp) / "projects"
            _folder(folder, sessions)
            with _serve(folder) as url:
                shown = []
                for _ in range(repeat):
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(url)
                    page.wait_for_function(
                        "() => performance.getEntriesByName('viewer:listShown').length > 0", timeout=120_000)
                    shown.append(page.evaluate(
                        "() => ({ms: performance.getEntriesByName('viewer:listShown')[0].startTime,"
                        " rows: document.querySelectorAll('#session-list button[data-id]').length})"))
                    context.close()
            out["folder"] = {"sessions": sessions, "rows": shown[0]["rows"],
                             "listShownMs": round(statistics.median(s["ms"] for s in shown), 1),
                             "runsMs": [round(s["ms"], 1) for s in shown]}
        finally:
            browser.close()
    return out


def run(mb: float = 50.0, repeat: int = 3, sessions: int = 200, ccl: bool = True,
        browser: bool = True) -> dict[str, Any]:
    path = _session(mb)
    report: dict[str, Any] = {"benchmark": "interop", "mb": mb, "session": path.name,
                              "export": bench_export(path, repeat, ccl)}
    if browser:
        report |= bench_browser(path, sessions, repeat)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    parser.add_argument("--mb", type=float, default=50.0, help="size of the generated session (default 50)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=200, help="sessions in the project folder (default 200)")
    parser.add_argument("--no-ccl", action="store_true", help="skip claude-code-log (it takes minutes)")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.mb, args.repeat, args.sessions, ccl=not args.no_ccl, browser=not args.no_browser)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
