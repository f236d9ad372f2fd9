"""A signal in the middle of a write (issue 9 item 2): SIGINT, SIGTERM or SIGHUP arrives while the command is
writing a large output over an old one. The old output stays byte for byte, no temporary file is left, the exit
status is 128 + the signal (130 for SIGINT) and stderr has one line saying so."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from big_logs import write_rows_log
from conftest import cli, leftovers, start

SIGNALS = [(signal.SIGINT, 130, "interrupted (SIGINT)"), (signal.SIGTERM, 143, "stopped by SIGTERM"),
           (signal.SIGHUP, 129, "stopped by SIGHUP")]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a packed log of 300,000 deltas in 60 rows, the same log unpacked: ~40 MB, one line per delta)."""
    folder = tmp_path_factory.mktemp("logs")
    packed = folder / "packed.jsonl"
    write_rows_log(packed, rows=60, per_row=5000)
    unpacked = folder / "unpacked.jsonl"
    done = cli("unpack", str(packed), "-o", str(unpacked))
    assert done.returncode == 0, done.stderr
    return packed, unpacked


def wait_until_writing(proc: subprocess.Popen[str], folder: Path) -> None:
    """Return once the command's temporary output exists: it is created just before the first byte is written, so
    the write is under way (a zstd writer may not have flushed anything to it yet)."""
    while proc.poll() is None:
        if any(p.name.endswith(".tmp") for p in folder.iterdir()):
            return
        time.sleep(0.002)
    pytest.fail("the command finished before its output was being written; it needs a bigger log")


CASES = {
    "unpack": (lambda logs, out: ["unpack", str(logs[0]), "-o", str(out)], "out.jsonl"),
    "pack-zst": (lambda logs, out: ["pack", str(logs[1]), "-o", str(out)], "out.jsonl.zst"),
    "convert-sqlite": (lambda logs, out: ["convert", str(logs[1]), str(out)], "out.sqlite"),
}


@pytest.mark.parametrize(("signum", "status", "said"), SIGNALS, ids=[s[0].name for s in SIGNALS])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_signal_mid_write_keeps_the_old_output_and_leaves_no_temporary(
        tmp_path: Path, logs: tuple[Path, Path], case: str, signum: int, status: int, said: str) -> None:
    argv, name = CASES[case]
    out = tmp_path / name
    seed = tmp_path / "seed.jsonl"
    write_rows_log(seed, rows=1, per_row=3)
    done = cli("convert", str(seed), str(out))
    assert done.returncode == 0, done.stderr
    before = out.read_bytes()
    proc = start(*argv(logs, out))
    wait_until_writing(proc, tmp_path)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == status, stderr
    assert stderr.splitlines() == [f"transcript-assembler: {said}; unfinished output files were discarded"]
    assert out.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_without_a_signal_the_same_write_completes(tmp_path: Path, logs: tuple[Path, Path]) -> None:
    """The control: the write the signals interrupt does finish and replace the output when left alone."""
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old")
    done = cli("unpack", str(logs[0]), "-o", str(out))
    assert done.returncode == 0 and out.stat().st_size == logs[1].stat().st_size
    assert leftovers(tmp_path) == []
