"""Fault injection (issue 9): signals during writes, a full disk, read-only inputs, symlink swaps while serving.

Every test here runs the real command line or the real server in a subprocess or thread and checks what is left on
disk afterwards: the old output whole, no temporary file, one ``FILE: error:`` line, never a traceback.
"""

from __future__ import annotations

import contextlib
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


_RUNNER = (
    "import os, sys\n"
    # The commands import lazily; once the user has changed, root's Python and a checkout in a folder of mode 0700
    # (mktemp -d) are unreadable: import every module of ours, and the stdlib ones they load late, first.
    "import importlib, pkgutil, urllib.parse, sqlite3, json\n"
    "import assembler, definitions\n"
    "for pkg in (assembler, definitions):\n"
    "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
    "        if not m.name.endswith('__main__'):\n"
    "            importlib.import_module(m.name)\n"
    "from assembler.cli import main\n"
    "if os.geteuid() == 0:\n"
    "    os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def cli_as_other_user(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the command line as another user (``nobody``) when we are root, so file permissions apply to it as to
    anyone else's process; a non-root user is subject to them already."""
    return subprocess.run([sys.executable, "-c", _RUNNER, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
