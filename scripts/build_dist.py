#!/usr/bin/env python3
"""Build the distributions (``make dist``): dist/transcript_assembler-X-py3-none-any.whl and the sdist, each carrying
the built viewer (build/site) as package data under ``assembler/_site/``.

    .venv/bin/python scripts/build_dist.py [--outdir dist] [--site build/site] [--no-isolation]

The build backend is the project's own (setuptools, pyproject.toml) driven by the standard front end ``python -m
build`` (sdist first, then the wheel from the sdist, so the sdist alone rebuilds the same wheel). The site is never
committed and never written into the checkout: a staging copy of pyproject.toml, README.md, assembler/ and
definitions/ gets the site copied in as ``assembler/_site/``, and the build runs there. The wheel is then checked to
hold every file of the site, byte for byte. Earlier transcript_assembler distributions in the output folder are
replaced. Stdlib only (plus ``build`` in the venv).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "build" / "site"
DIST = ROOT / "dist"
SOURCES = ("pyproject.toml", "README.md")
PACKAGES = ("assembler", "definitions")
SITE_PACKAGE_DIR = "assembler/_site"  # where the site sits in the wheel; assembler/server/site.py looks there
REQUIRED_SITE_FILES = ("index.html", "worker.mjs", "pyodide/pyodide.asm.wasm", "pyodide/lock.json",
                       "pyodide/snapshot.bin.gz")


class DistError(Exception):
    pass


def _ignore(_folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or n.startswith(".") or n.endswith((".pyc", ".egg-info"))}


def site_files(site: Path) -> dict[str, str]:
    """``{relative path: sha256}`` of every file of the site."""
    return {p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(site.rglob("*")) if p.is_file()}


def stage(staging: Path, site: Path) -> None:
    """The tree the build runs from: the package sources with the site copied in as ``assembler/_site``."""
    for name in SOURCES:
        shutil.copy2(ROOT / name, staging / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, staging / package, ignore=_ignore)
    if (staging / SITE_PACKAGE_DIR).exists():
        raise DistError(f"{SITE_PACKAGE_DIR}/ exists in the checkout: remove it (the site is copied in at dist time)")
    shutil.copytree(site, staging / SITE_PACKAGE_DIR)


def check_wheel(wheel: Path, expected: dict[str, str]) -> None:
    """Every file of the site is in the wheel under ``assembler/_site/`` with the same bytes, and nothing more."""
    prefix = SITE_PACKAGE_DIR + "/"
    with zipfile.ZipFile(wheel) as zf:
        found = {name[len(prefix):]: hashlib.sha256(zf.read(name)).hexdigest()
                 for name in zf.namelist() if name.startswith(prefix) and not name.endswith("/")}
    missing = sorted(set(expected) - set(found))
    changed = sorted(k for k in expected.keys() & found.keys() if expected[k] != found[k])
    extra = sorted(set(found) - set(expected))
    if missing or changed or extra:
        raise DistError(f"{wheel.name}: the site it carries differs from the built one: missing {missing[:5]}, "
                        f"changed {changed[:5]}, extra {extra[:5]}")


def check_sdist(sdist: Path, expected: dict[str, str]) -> None:
    with tarfile.open(sdist) as tf:
        names = {m.name.split("/", 1)[1] for m in tf.getmembers() if m.isfile() and "/" in m.name}
    missing = sorted(f"{SITE_PACKAGE_DIR}/{k}" for k in expected if f"{SITE_PACKAGE_DIR}/{k}" not in names)
    if missing:
        raise DistError(f"{sdist.name} lacks {len(missing)} file(s) of the site, e.g. {missing[:3]}")


def build(outdir: Path, site: Path, *, isolation: bool = True) -> tuple[Path, Path]:
    """Builds the sdist and the wheel into ``outdir``; returns (wheel, sdist)."""
    missing = [name for name in REQUIRED_SITE_FILES if not (site / name).is_file()]
    if missing:
        raise DistError(f"{site} is not a built site (lacks {', '.join(missing)}): run `make build`")
    expected = site_files(site)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dist_name = project["name"].replace("-", "_")
    outdir.mkdir(parents=True, exist_ok=True)
    for old in [*outdir.glob(f"{dist_name}-*.whl"), *outdir.glob(f"{dist_name}-*.tar.gz")]:
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="dist-stage-") as tmp:
        staging = Path(tmp) / "src"
        staging.mkdir()
        stage(staging, site)
        command = [sys.executable, "-m", "build", "--outdir", str(outdir), *([] if isolation else ["--no-isolation"]),
                   str(staging)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise DistError(f"python -m build failed (exit {done.returncode}):\n{done.stdout[-4000:]}"
                            f"{done.stderr[-4000:]}")
    version = project["version"]
    wheel = outdir / f"{dist_name}-{version}-py3-none-any.whl"
    sdist = outdir / f"{dist_name}-{version}.tar.gz"
    for path in (wheel, sdist):
        if not path.is_file():
            raise DistError(f"python -m build wrote no {path.name} in {outdir}")
    check_wheel(wheel, expected)
    check_sdist(sdist, expected)
    return wheel, sdist


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/build_dist.py", description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=DIST, help="output folder (default dist/)")
    parser.add_argument("--site", type=Path, default=SITE, help="the built site to carry (default build/site)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with this venv's setuptools instead of a fresh isolated one (offline)")
    args = parser.parse_args(argv)
    try:
        wheel, sdist = build(args.outdir.resolve(), args.site.resolve(), isolation=not args.no_isolation)
    except DistError as exc:
        print(f"build_dist: FAILED: {exc}", file=sys.stderr)
        return 1
    site_bytes = sum(p.stat().st_size for p in args.site.rglob("*") if p.is_file())
    print(f"build_dist: {wheel.name} {wheel.stat().st_size / 1e6:.1f} MB, {sdist.name} "
          f"{sdist.stat().st_size / 1e6:.1f} MB (site {site_bytes / 1e6:.1f} MB, carried as {SITE_PACKAGE_DIR}/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
