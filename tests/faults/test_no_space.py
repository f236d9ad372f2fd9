"""No space left (issue 9 items 2 and 4): an output that cannot grow, because of a file-size limit or a full file
system, is ``OUT: error: ...`` with exit status 1; the old output stays byte for byte and no temporary is left.

The file-size limit (``RLIMIT_FSIZE``) works anywhere; the full file system is a real 256 KiB tmpfs, mounted when the
tests run as root (as they do on the project's machines and in CI), never a device node.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from big_logs import write_rows_log
from conftest import cli, leftovers, one_error

from perf.demo import write_demo

LIMIT = 1024  # bytes: every writer's output of the demo log is larger (checked below)

WRITERS = {
    "unpack": (["unpack", "IN", "-o", "OUT"], "out.jsonl"),
    "pack-zst": (["pack", "IN", "-o", "OUT"], "out.jsonl.zst"),
    "convert-sqlite": (["convert", "IN", "OUT"], "out.sqlite"),
    "export": (["export", "IN", "-o", "OUT"], "out.html"),
    "messages": (["messages", "IN", "-o", "OUT"], "out.json"),
    "repair": (["repair", "IN", "-o", "OUT"], "out.jsonl"),
}


def argv_for(argv: list[str], src: Path, out: Path) -> list[str]:
    return [str(src) if a == "IN" else str(out) if a == "OUT" else a for a in argv]


def old_output(path: Path) -> bytes:
    """Put a small valid old output at ``path`` (in its own format) and return its bytes."""
    if path.suffix in (".html", ".json"):
        path.write_bytes(b"old output\n")
    else:
        seed = path.with_name("seed.jsonl")
        write_rows_log(seed, rows=1, per_row=3)
        done = cli("convert", str(seed), str(path))
        assert done.returncode == 0, done.stderr
        seed.unlink()
    return path.read_bytes()


def limited(limit: int) -> dict[str, object]:
    def set_limit() -> None:  # in the child only; SIGXFSZ is left at its default (the command ignores it)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return {"preexec_fn": set_limit}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_file_size_limit_mid_write_is_an_error_that_keeps_the_old_output(tmp_path: Path, writer: str) -> None:
    argv, name = WRITERS[writer]
    src = tmp_path / "in" / "demo.jsonl"
    src.parent.mkdir()
    write_demo(str(src))
    control = tmp_path / "control" / name
    control.parent.mkdir()
    assert cli(*argv_for(argv, src, control)).returncode == 0
    assert control.stat().st_size > LIMIT  # so the limit really cuts the write
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / name
    before = old_output(out)
    done = cli(*argv_for(argv, src, out), **limited(LIMIT))
    assert done.returncode == 1, done.stderr
    line = one_error(done.stderr, str(out))
    # SQLite says EFBIG in its own words ("disk I/O error"); everything else quotes the system's.
    words = ("disk I/O error", "database or disk is full") if name.endswith(".sqlite") else ("File too large",)
    assert any(w in line for w in words), line
    assert out.read_bytes() == before
    assert leftovers(folder) == []


@pytest.fixture()
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (root only; room for a small old database with its WAL); unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the file-size-limit test covers this case without it)")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        with contextlib.suppress(Exception):
            subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize(("argv", "name"), [(["unpack", "IN", "-o", "OUT"], "out.jsonl"),
                                            (["convert", "IN", "OUT"], "out.sqlite")], ids=["unpack", "sqlite"])
def test_a_full_file_system_is_an_error_that_keeps_the_old_output(tmp_path: Path, full_disk: Path,
                                                                  argv: list[str], name: str) -> None:
    packed = tmp_path / "packed.jsonl"
    write_rows_log(packed, rows=10, per_row=2000)
    src = tmp_path / "unpacked.jsonl"  # ~2.7 MB (one line per delta), and as large again unpacked or in SQLite
    assert cli("unpack", str(packed), "-o", str(src)).returncode == 0
    out = full_disk / name
    before = old_output(out)
    done = cli(*argv_for(argv, src, out))
    assert done.returncode == 1, done.stderr
    line = one_error(done.stderr, str(out))
    assert "No space left on device" in line or "database or disk is full" in line, line
    assert out.read_bytes() == before
    assert leftovers(full_disk) == []
