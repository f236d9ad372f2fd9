"""Fault injection (issue 9): signals during writes, a full disk, read-only inputs, symlink swaps while serving.

Every test here runs the real command line or the real server in a subprocess or thread and checks what is left on
disk afterwards: the old output whole, no temporary file, one ``FILE: error:`` line, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*argv: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """Run ``transcript-assembler ARGV`` in a subprocess; stdout and stderr captured as text."""
    return subprocess.run([sys.executable, "-m", "assembler", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kw)


def start(*argv: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "assembler", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def leftovers(folder: Path) -> list[str]:
    """Temporary files (ours: ``.NAME.RANDOM.tmp``) and SQLite side files left in ``folder``."""
    return sorted(p.name for p in folder.iterdir()
                  if p.name.endswith(".tmp") or p.name.endswith(("-wal", "-shm", "-journal")))


def one_error(stderr: str, name: str) -> str:
    """The single ``NAME: error: ...`` line of ``stderr`` (and no traceback)."""
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith(f"{name}: error: "), stderr
    return errors[0]


@pytest.fixture()
def shared_dir() -> Iterator[Path]:
    """A folder another user can reach (pytest's tmp folders are private to root); removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="ta-faults-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in [folder, *folder.rglob("*")]:
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


def cli_unprivileged(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the command line without privileges, so file permissions apply to it as to anyone's process: when we are
    root, as root with no capability at all (``setpriv``: no ``CAP_DAC_OVERRIDE``, so a file or folder without a
    ``w`` bit is read-only even to its owner). Not as another user: that user could not read a checkout in a private
    folder (``mktemp -d``), nor the modules the commands import late."""
    drop = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] if os.geteuid() == 0 else []
    return subprocess.run([*drop, sys.executable, "-m", "assembler", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
