"""The installed wheel: its size, and the cold start-up of ``serve`` from a fresh virtual
environment, process start to the first 200 on ``/``.

    python -m perf.bench_wheel [--json OUT] [--runs N] [--wheel PATH]

Builds the wheel and sdist from the checkout (``scripts/build_dist.py``, the ``make dist`` path: needs ``make build``
first) unless ``--wheel`` names one, installs the wheel into a fresh venv (``pip install``, dependencies from the
package index), writes one generated session and starts the installed ``transcript-assembler serve`` ``--runs``
times, each a new process (the OS file cache is warm after the first: "cold" means a new interpreter, not a cold
disk). Reported: wheel, sdist and site bytes, build and install seconds, and per start the time to the ``serving``
line and to the first 200 on ``/`` (medians). Structural checks (``checks``): ``/`` is the built site's
``index.html`` byte for byte, and the viewer is the one the installed package carries, not a checkout's. The helpers
(``build_wheel``, ``install_wheel``, ``InstalledServer``) are what tests/integration/test_wheel.py uses too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["InstalledServer", "build_wheel", "install_wheel", "main", "run"]

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "build" / "site"


def build_wheel(outdir: Path) -> Path:
    """``scripts/build_dist.py --outdir outdir`` (the ``make dist`` build); returns the wheel."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_dist.py"), "--outdir", str(outdir)],
                          capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"scripts/build_dist.py failed (exit {done.returncode}): {done.stdout}{done.stderr}")
    wheels = sorted(outdir.glob("transcript_assembler-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"scripts/build_dist.py left {len(wheels)} wheels in {outdir}")
    return wheels[0]


def _clean_env() -> dict[str, str]:
    """The environment without anything that would put the checkout on the installed interpreter's path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def install_wheel(venv: Path, wheel: Path) -> Path:
    """A fresh venv at ``venv`` with ``wheel`` installed by pip (its dependencies from the index); returns its bin
    folder."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=_clean_env())
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           str(wheel)], capture_output=True, text=True, check=False, timeout=900, env=_clean_env())
    if done.returncode != 0:
        raise RuntimeError(f"pip install {wheel.name} failed (exit {done.returncode}): {done.stdout}{done.stderr}")
    return venv / "bin"


def _get(url: str, timeout: float = 30) -> tuple[int, bytes]:
    """Status and body of a GET, raw (no decompression: a ``.gz`` file is compared as stored)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class InstalledServer:
    """``BIN/transcript-assembler serve FOLDER --port 0`` run from ``cwd`` (not the checkout): ``url``, ``viewer``
    (the folder it serves at ``/``), ``line_s`` (process start to its ``serving`` line) and ``first_200_s`` (to the
    first 200 on ``/``)."""

    def __init__(self, bin_dir: Path, folder: Path, cwd: Path, *extra: str) -> None:
        self.command = [str(bin_dir / "transcript-assembler"), "serve", str(folder), "--port", "0", *extra]
        self.cwd = cwd
        self.url = ""
        self.viewer = ""
        self.line_s = self.first_200_s = float("nan")
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> InstalledServer:
        started = time.perf_counter()
        self.process = subprocess.Popen(self.command, cwd=self.cwd, env=_clean_env(), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.line_s = time.perf_counter() - started
        if not line.startswith("serving "):
            self.__exit__(None, None, None)
            raise RuntimeError(f"serve printed {line!r} first")
        self.url = line.split(" at ", 1)[1].strip()
        deadline = started + 30
        while True:
            try:
                status, _ = _get(self.url, timeout=10)
            except OSError:  # refused: the socket is bound but not listening yet
                status = 0
            if status == 200:
                break
            if status or time.perf_counter() > deadline or self.process.poll() is not None:  # an answer is final
                self.__exit__(None, None, None)
                raise RuntimeError(f"serve did not answer 200 on / (status {status or 'none within 30 s'})")
            time.sleep(0.002)
        self.first_200_s = time.perf_counter() - started
        # Printed before the socket listens, so it is there now (without a site there is no such line, and no 200).
        self.viewer = self.process.stdout.readline().strip().removeprefix("viewer: ")
        return self

    def get(self, path: str) -> tuple[int, bytes]:
        return _get(self.url + path.lstrip("/"))

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()


def _tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(runs: int, wheel: Path | None = None) -> dict[str, Any]:
    if not (SITE / "index.html").is_file():
        raise SystemExit("build/site is missing: run `make build`")
    from perf.demo import write_demo

    with tempfile.TemporaryDirectory(prefix="bench-wheel-") as tmp_name:
        tmp = Path(tmp_name)
        build_s = None
        if wheel is None:
            started = time.perf_counter()
            wheel = build_wheel(tmp / "dist")
            build_s = round(time.perf_counter() - started, 2)
        sdists = sorted(wheel.parent.glob("transcript_assembler-*.tar.gz"))
        started = time.perf_counter()
        bin_dir = install_wheel(tmp / "venv", wheel)
        install_s = round(time.perf_counter() - started, 2)
        sessions = tmp / "sessions"
        sessions.mkdir()
        write_demo(str(sessions / "demo-session.jsonl"))
        starts: list[dict[str, float]] = []
        same_index = packaged = True
        for _ in range(runs):
            with InstalledServer(bin_dir, sessions, tmp) as server:
                starts.append({"line_s": round(server.line_s, 4), "first_200_s": round(server.first_200_s, 4)})
                status, body = server.get("/")
                same_index &= status == 200 and body == (SITE / "index.html").read_bytes()
                packaged &= Path(server.viewer).is_relative_to(tmp / "venv") and server.viewer.endswith("_site")
        installed = next((tmp / "venv" / "lib").glob("python*/site-packages/assembler"))
        return {
            "wheel": wheel.name,
            "wheel_bytes": wheel.stat().st_size,
            "sdist_bytes": sdists[0].stat().st_size if sdists else None,
            "site_bytes": _tree_bytes(SITE),
            "site_files": sum(1 for p in SITE.rglob("*") if p.is_file()),
            "installed_package_bytes": _tree_bytes(installed),
            "build_s": build_s,
            "install_s": install_s,
            "runs": starts,
            "serving_line_median_s": round(statistics.median(s["line_s"] for s in starts), 4),
            "first_200_median_s": round(statistics.median(s["first_200_s"] for s in starts), 4),
            "checks": {"index_is_the_built_site": same_index, "viewer_is_the_installed_package": packaged},
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.bench_wheel", description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--runs", type=int, default=5, help="cold serve starts (default 5)")
    parser.add_argument("--wheel", type=Path, help="an already built wheel (default: build one from the checkout)")
    args = parser.parse_args(argv)
    result = run(max(1, args.runs), args.wheel.resolve() if args.wheel else None)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(f"wheel {result['wheel_bytes'] / 1e6:.1f} MB (site {result['site_bytes'] / 1e6:.1f} MB); cold serve: "
          f"first 200 on / after {result['first_200_median_s'] * 1e3:.0f} ms (median of {len(result['runs'])}); "
          f"checks {result['checks']}")
    return 0 if all(result["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
