"""``make build`` (``scripts/build_site.py``) rebuilds the site only when its inputs changed (issue 22 item 15): the
second run in a row says the site is up to date and leaves it as it is; the fingerprint sees a changed input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import build_site  # noqa: E402


def run_build() -> str:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_site.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(not (ROOT / "node_modules" / "pyodide").is_dir(), reason="the JS toolchain is not installed")
def test_a_second_build_in_a_row_is_skipped() -> None:
    run_build()  # builds when the site is not current (after `make build` it is)
    worker = (build_site.SITE / "worker.mjs").stat()
    assert "is up to date" in run_build()
    assert (build_site.SITE / "worker.mjs").stat().st_mtime_ns == worker.st_mtime_ns  # the site was not rewritten


def test_the_fingerprint_follows_the_inputs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    first = build_site.inputs_fingerprint()
    assert build_site.inputs_fingerprint() == first
    extra = tmp_path / "extra.txt"
    extra.write_text("one")
    monkeypatch.setattr(build_site, "INPUT_FILES", (*build_site.INPUT_FILES, str(extra.relative_to(tmp_path))))
    monkeypatch.setattr(build_site, "ROOT", tmp_path)
    monkeypatch.setattr(build_site, "PYODIDE_NPM", tmp_path / "node_modules" / "pyodide")
    changed = build_site.inputs_fingerprint()
    extra.write_text("two")
    assert build_site.inputs_fingerprint() != changed
