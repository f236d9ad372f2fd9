#!/usr/bin/env python3
"""Build the static viewer site in build/site/: web/ + the Pyodide runtime + every wheel the page loads.

Writes build/site/pyodide/lock.json (Pyodide's lock with msgspec 0.23.0, our pure deps and our own wheel, each
with its sha256), so the page loads packages by name from 127.0.0.1 only. Wheels from PyPI are cached in
build/wheel-cache/ and checked against pinned sha256s; a second run downloads nothing. Also writes
build/site/transcript.css, the renderer's stylesheet with the Pygments token classes (``assembler.render``; the
static export inlines the same CSS), and build/site/pyodide/snapshot.bin.gz, the Pyodide memory snapshot the worker
restores instead of initialising Python (scripts/make_snapshot.py; needs Chromium and Playwright). Run with the
project's venv (it imports the renderer and Playwright); otherwise stdlib only.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_snapshot import SnapshotError, make_snapshot
from page_modules import BUNDLE, PageModuleError, write_page_modules

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
PYODIDE_NPM = ROOT / "node_modules" / "pyodide"
BUILD = ROOT / "build"
SITE = BUILD / "site"
WHEEL_CACHE = BUILD / "wheel-cache"

PYODIDE_VERSION = "314.0.7"
PYODIDE_PYTHON = "3.14"
PYODIDE_ABI = "2026_0"

# Everything pyodide.mjs fetches at runtime (plus its source map, for debugging in DevTools).
RUNTIME_FILES = (
    "pyodide.mjs",
    "pyodide.mjs.map",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "package.json",
)

PURE = ("--python-version", PYODIDE_PYTHON)
EMSCRIPTEN = (*PURE, "--implementation", "cp", "--platform", f"pyemscripten_{PYODIDE_ABI}_wasm32")


@dataclass(frozen=True)
class PinnedWheel:
    """A wheel from PyPI, pinned by exact file name and sha256, and its entry in the Pyodide lock."""

    key: str  # the lock's package key (canonical name)
    name: str  # the project name as published
    version: str
    file_name: str
    sha256: str
    imports: tuple[str, ...]
    depends: tuple[str, ...]
    pip_target: tuple[str, ...]

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


PINNED_WHEELS = (
    PinnedWheel(
        key="msgspec",
        name="msgspec",
        version="0.23.0",
        file_name=f"msgspec-0.23.0-cp314-cp314-pyemscripten_{PYODIDE_ABI}_wasm32.whl",
        sha256="1836f50ad87e7c56600b648a1b75c3bbcce62835cb1f489435fc5fee8d068831",
        imports=("msgspec",),
        depends=(),
        pip_target=EMSCRIPTEN,
    ),
    PinnedWheel(
        key="markdown-it-py",
        name="markdown-it-py",
        version="4.3.0",
        file_name="markdown_it_py-4.3.0-py3-none-any.whl",
        sha256="7aa1511a46c39138de78d9eba92ce47e63124d8003fc98b3a351909e04239efa",
        imports=("markdown_it",),
        depends=("mdurl",),
        pip_target=PURE,
    ),
    PinnedWheel(
        key="mdurl",
        name="mdurl",
        version="0.1.2",
        file_name="mdurl-0.1.2-py3-none-any.whl",
        sha256="84008a41e51615a49fc9966191ff91509e3c40b939176e643fd50a5c2196b8f8",
        imports=("mdurl",),
        depends=(),
        pip_target=PURE,
    ),
    PinnedWheel(
        key="pygments",  # replaces Pyodide's own Pygments 2.20.0 entry (that wheel is not in the npm package)
        name="Pygments",
        version="2.21.0",
        file_name="pygments-2.21.0-py3-none-any.whl",
        sha256="2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9",
        imports=("pygments",),
        depends=(),
        pip_target=PURE,
    ),
)

# Our own package: what it imports as, and what it needs in Pyodide (by lock key).
OWN_PACKAGES = ("assembler", "definitions")
OWN_DEPENDS = ("msgspec", "markdown-it-py", "pygments")
OWN_DATA_FILES = ("py.typed",)
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: same sources give the same wheel and sha256
GENERATED = ("transcript.css", "formats.json", BUNDLE)  # written by the build; must not also exist in web/
ACCEPT_MARK = 'accept="@FORMATS@"'  # web/index.html's file input: the build writes the table's suffixes there
REQUIRED_WEB = ("index.html", "app.mjs", "worker.mjs", "boot.mjs")


class BuildError(Exception):
    """A missing input or a failed step; the message says what to run."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_runtime() -> dict[str, Any]:
    """Checks node_modules/pyodide is the pinned version; returns its lock."""
    package_json = PYODIDE_NPM / "package.json"
    if not package_json.is_file():
        raise BuildError(f"{package_json.relative_to(ROOT)} is missing: run `make browser-deps`")
    version = json.loads(package_json.read_text())["version"]
    if version != PYODIDE_VERSION:
        raise BuildError(
            f"node_modules has pyodide {version}, need {PYODIDE_VERSION}: run `make browser-deps`"
        )
    missing = [name for name in RUNTIME_FILES if not (PYODIDE_NPM / name).is_file()]
    if missing:
        raise BuildError(
            f"node_modules/pyodide lacks {', '.join(missing)}: run `rm -rf node_modules; make browser-deps`"
        )
    lock: dict[str, Any] = json.loads((PYODIDE_NPM / "pyodide-lock.json").read_text())
    info = lock["info"]
    if not info["python"].startswith(PYODIDE_PYTHON + ".") or info["abi_version"] != PYODIDE_ABI:
        raise BuildError(f"pyodide-lock.json is for Python {info['python']} ABI {info['abi_version']}")
    return lock


def fetch_wheel(wheel: PinnedWheel) -> bool:
    """Puts the pinned wheel in the cache (verifying its sha256); returns True if it had to be downloaded."""
    cached = WHEEL_CACHE / wheel.file_name
    downloaded = False
    if not cached.is_file():
        WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=WHEEL_CACHE, prefix=".download-") as tmp:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                *wheel.pip_target,
                "--dest",
                tmp,
                wheel.requirement,
            ]
            proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
            got = Path(tmp) / wheel.file_name
            if proc.returncode != 0 or not got.is_file():
                raise BuildError(
                    f"could not download {wheel.file_name} ({' '.join(cmd[1:])}), pip exit {proc.returncode},"
                    f" got {sorted(p.name for p in Path(tmp).iterdir())}:\n{proc.stdout}{proc.stderr}"
                )
            got.replace(cached)
        downloaded = True
    actual = sha256_file(cached)
    if actual != wheel.sha256:
        raise BuildError(
            f"{cached.relative_to(ROOT)} has sha256 {actual}, pinned {wheel.sha256}: delete it and rebuild,"
            " or update the pin in scripts/build_site.py if the version changed on purpose"
        )
    return downloaded


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_own_wheel(dest: Path, bytecode: list[tuple[str, bytes]] | None = None) -> tuple[Path, str, int]:
    """Builds our pure py3-none-any wheel from the working tree, deterministically.

    Written with zipfile rather than `pip wheel`: the venv's setuptools (65.5, no `wheel` package) cannot build
    wheels without build isolation, and a fixed-timestamp build keeps the sha256 (and the lock) stable.
    Contains every .py file and py.typed under assembler/ and definitions/, plus ``bytecode`` entries (the bytecode the
    snapshot maker compiled). Returns (path, version, count of source files).
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    dist = name.replace("-", "_")
    dist_info = f"{dist}-{version}.dist-info"

    sources: list[Path] = []
    for package in OWN_PACKAGES:
        top = ROOT / package
        if not top.is_dir():
            raise BuildError(f"package directory {package}/ is missing")
        for path in sorted(top.rglob("*")):
            rel_parts = path.relative_to(ROOT).parts
            if any(part == "__pycache__" or part.startswith(".") for part in rel_parts):
                continue
            if path.is_file() and (path.suffix == ".py" or path.name in OWN_DATA_FILES):
                sources.append(path)
    if not any(p.suffix == ".py" for p in sources):
        raise BuildError("assembler/ and definitions/ hold no .py files")

    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3')}",
    ]
    metadata += [f"Requires-Dist: {req}" for req in project.get("dependencies", [])]
    for extra, reqs in project.get("optional-dependencies", {}).items():
        metadata.append(f"Provides-Extra: {extra}")
        for req in reqs:
            sep = " and " if ";" in req else "; "
            metadata.append(f'Requires-Dist: {req}{sep}extra == "{extra}"')
    scripts = project.get("scripts", {})
    files: list[tuple[str, bytes]] = [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in sources]
    files += bytecode or []
    files += [
        (f"{dist_info}/METADATA", ("\n".join(metadata) + "\n").encode()),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: scripts/build_site.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{dist_info}/top_level.txt", ("\n".join(OWN_PACKAGES) + "\n").encode()),
    ]
    if scripts:
        lines = ["[console_scripts]", *(f"{k} = {v}" for k, v in scripts.items())]
        files.append((f"{dist_info}/entry_points.txt", ("\n".join(lines) + "\n").encode()))

    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arcname, data in files:
        writer.writerow([arcname, _record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    files.append((f"{dist_info}/RECORD", record.getvalue().encode()))

    path = dest / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path, version, len(sources)


def lock_entry(
    name: str, version: str, file_name: str, sha256: str, imports: tuple[str, ...], depends: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "name": name,
        "version": version,
        "file_name": file_name,
        "sha256": sha256,
        "imports": list(imports),
        "depends": list(depends),
        "install_dir": "site",
        "package_type": "package",
        "unvendored_tests": False,
        "tool": {},
    }


def write_formats(out: Path) -> None:
    """The format table (``assembler.formats``) into the page: ``formats.json`` for the scripts, and the file
    input's ``accept`` list, so the page names no suffix of its own."""
    sys.path.insert(0, str(ROOT))
    from assembler.formats import ACCEPT, SUFFIXES, table

    (out / "formats.json").write_text(json.dumps({"formats": table(), "suffixes": list(SUFFIXES)}, indent=1) + "\n",
                                      encoding="utf-8")
    index = out / "index.html"
    html = index.read_text(encoding="utf-8")
    if ACCEPT_MARK not in html:
        raise BuildError(f"web/index.html has no {ACCEPT_MARK} for the file input")
    accept = ",".join(ACCEPT)
    index.write_text(html.replace(ACCEPT_MARK, f'accept="{accept}"'), encoding="utf-8")


def write_stylesheet(out: Path) -> int:
    """Writes transcript.css from ``assembler.render.stylesheet()`` and the comparison's rules; returns its size."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        from assembler.render import stylesheet
        from assembler.render.compare import COMPARE_CSS
    except ImportError as exc:
        raise BuildError(f"cannot import assembler.render ({exc}): run the build with .venv/bin/python") from None
    css = stylesheet() + COMPARE_CSS  # the page's compare view (web/compare.mjs) uses the static page's rules
    if 'style="' in css or "<" in css:
        raise BuildError("the generated stylesheet looks wrong (markup in it)")
    path = out / "transcript.css"
    path.write_text(css, encoding="utf-8")
    return path.stat().st_size


def lock_own(packages: dict[str, Any], wheel: Path, version: str) -> None:
    """Puts our wheel in the lock and checks that every dependency of ours and of the pinned wheels resolves."""
    packages["transcript-assembler"] = lock_entry(
        "transcript-assembler", version, wheel.name, sha256_file(wheel), OWN_PACKAGES, OWN_DEPENDS
    )
    for key in [w.key for w in PINNED_WHEELS] + ["transcript-assembler"]:
        for dep in packages[key]["depends"]:
            if dep not in packages:
                raise BuildError(f"lock entry {key!r} depends on {dep!r}, which is not in the lock")


def write_lock(pyodide_dir: Path, lock: dict[str, Any]) -> None:
    path = pyodide_dir / "lock.json"
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(lock, sort_keys=True, separators=(",", ":")) + "\n")
    partial.replace(path)


def pyc_entries(pyc_zip: bytes) -> list[tuple[str, bytes]]:
    """The maker's bytecode zip as wheel entries; each must sit in a __pycache__ next to one of our packages."""
    entries: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(io.BytesIO(pyc_zip)) as zf:
        for name in sorted(zf.namelist()):
            parts = name.split("/")
            if parts[0] not in OWN_PACKAGES or parts[-2:-1] != ["__pycache__"] or not name.endswith(".pyc"):
                raise BuildError(f"the maker's bytecode has an unexpected entry {name!r}")
            entries.append((name, zf.read(name)))
    if not entries:
        raise BuildError("the maker compiled no bytecode for our wheel")
    return entries


def build(out: Path) -> str:
    for name in REQUIRED_WEB:
        if not (WEB / name).is_file():
            raise BuildError(f"web/{name} is missing")
    if (WEB / "pyodide").exists():
        raise BuildError("web/pyodide/ would clash with the Pyodide runtime folder")
    for name in GENERATED:
        if (WEB / name).exists():
            raise BuildError(f"web/{name} would clash with the generated {name}")
    lock = check_runtime()

    shutil.copytree(WEB, out, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    write_stylesheet(out)
    write_formats(out)
    try:
        write_page_modules(out)
    except PageModuleError as exc:
        raise BuildError(str(exc)) from None
    pyodide_dir = out / "pyodide"
    pyodide_dir.mkdir()
    for name in RUNTIME_FILES:
        shutil.copy2(PYODIDE_NPM / name, pyodide_dir / name)

    downloaded = 0
    packages = lock["packages"]
    for wheel in PINNED_WHEELS:
        downloaded += fetch_wheel(wheel)
        shutil.copy2(WHEEL_CACHE / wheel.file_name, pyodide_dir / wheel.file_name)
        packages[wheel.key] = lock_entry(
            wheel.name, wheel.version, wheel.file_name, wheel.sha256, wheel.imports, wheel.depends
        )

    own, own_version, own_files = build_own_wheel(pyodide_dir)
    lock_own(packages, own, own_version)
    write_lock(pyodide_dir, lock)
    try:
        made = make_snapshot(out)
    except SnapshotError as exc:
        raise BuildError(f"the Pyodide memory snapshot: {exc}") from None
    # Our wheel again, now with the bytecode the maker compiled (the snapshot does not hold our package).
    own, own_version, own_files = build_own_wheel(pyodide_dir, pyc_entries(made.pyc_zip))
    lock_own(packages, own, own_version)
    write_lock(pyodide_dir, lock)

    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return (
        f"pyodide {PYODIDE_VERSION} (Python {lock['info']['python']}), {len(PINNED_WHEELS)} pinned wheels"
        f" ({downloaded} downloaded), {own.name} ({own_files} files + bytecode), snapshot.bin.gz"
        f" ({made.size / 1e6:.1f} MB heap, {made.packed / 1e6:.1f} MB gzipped, {made.info.get('modules')} modules),"
        f" {size / 1e6:.1f} MB"
    )


STAMP = BUILD / "site-inputs.sha256"
"""The fingerprint of the inputs the site in build/site was built from (``inputs_fingerprint``)."""

INPUT_TREES = ("web", "assembler", "definitions")
INPUT_FILES = ("pyproject.toml", "package-lock.json", "scripts/build_site.py", "scripts/make_snapshot.py",
               "scripts/page_modules.py")


def inputs_fingerprint() -> str:
    """A hash of everything the site is made from: web/, our packages' sources, the pins, this script, the Pyodide
    runtime files and the Python running it. Equal fingerprints build the same site, so ``make run`` skips it."""
    h = hashlib.sha256(f"{sys.version}\n".encode())
    paths = [ROOT / f for f in INPUT_FILES] + [PYODIDE_NPM / n for n in RUNTIME_FILES]
    for tree in INPUT_TREES:
        paths += [p for p in (ROOT / tree).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")]
    for path in sorted(paths):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"(missing)")
        h.update(b"\0")
    return h.hexdigest()


def up_to_date(fingerprint: str) -> bool:
    """The site exists whole (its worker, lock and snapshot) and was built from these inputs."""
    whole = all((SITE / n).is_file() for n in ("worker.mjs", "pyodide/lock.json", "pyodide/snapshot.bin.gz"))
    return whole and STAMP.is_file() and STAMP.read_text().strip() == fingerprint


def main() -> int:
    started = time.perf_counter()
    BUILD.mkdir(exist_ok=True)
    fingerprint = inputs_fingerprint()
    if "--force" not in sys.argv[1:] and up_to_date(fingerprint):
        print(f"build_site: {SITE.relative_to(ROOT)}/ is up to date (built from these sources; --force rebuilds)")
        return 0
    STAMP.unlink(missing_ok=True)  # the site is about to change: no stamp until the new one is whole
    staging = Path(tempfile.mkdtemp(dir=BUILD, prefix=".site-"))
    try:
        summary = build(staging / "site")
        # Swap the finished tree in, so a failed build never leaves a half-written site behind.
        old = BUILD / f".site-old-{staging.name}"
        if SITE.exists():
            SITE.replace(old)
        (staging / "site").replace(SITE)
        shutil.rmtree(old, ignore_errors=True)
    except BuildError as exc:
        print(f"build_site: FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    STAMP.write_text(fingerprint + "\n")
    print(f"build_site: {SITE.relative_to(ROOT)}/ ready in {time.perf_counter() - started:.2f} s: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
