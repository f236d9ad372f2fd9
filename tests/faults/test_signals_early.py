"""Signals and modes at the edges of a command (issue 23 item 10): a signal that arrives while the command is still
starting ends it with one line and exit status 128 + its number (it used to be killed by the default action with
no line, or print a KeyboardInterrupt traceback); a command started under ``nohup`` (SIGHUP ignored) keeps ignoring
SIGHUP; an existing output this process may not write (mode 0444, no privilege) is refused, not replaced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, cli_unprivileged, one_error

from perf.demo import write_demo
from perf.load_follow import HEADER, LogGenerator

# The command line, with a signal sent to itself at a chosen point of its start (deterministic, no timing).
EARLY = """
import os, signal, sys
from assembler import cli
point, signum = sys.argv[1], getattr(signal, sys.argv[2])
if point == "parser":
    build = cli.build_parser
    cli.build_parser = lambda command=None: (os.kill(os.getpid(), signum), build(command))[1]
elif point == "run":
    import assembler.commands._output as output
    run = output.run
    output.run = lambda command, args: (os.kill(os.getpid(), signum), run(command, args))[1]
sys.exit(cli.main(sys.argv[3:]))
"""


@pytest.mark.parametrize("point", ["parser", "run"])
@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_signal_while_the_command_starts_is_one_line(tmp_path: Path, point: str, name: str) -> None:
    source = tmp_path / "in.jsonl"
    write_demo(str(source))
    out = tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, "-c", EARLY, point, name, "pack", str(source), "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    signum = getattr(signal, name)
    assert done.returncode == 128 + signum, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"transcript-assembler: stopped by {name}"), done.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def _big_log(path: Path) -> None:
    from assembler.records import encode

    generator = LogGenerator(11)
    with path.open("wb") as f:
        f.write(encode(HEADER) + b"\n")
        while f.tell() < 40_000_000:
            f.write(b"".join(encode(e) + b"\n" for e in generator.take(20_000)))


def test_a_command_started_under_nohup_keeps_ignoring_sighup(tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    _big_log(source)
    expected = tmp_path / "expected.jsonl"
    assert subprocess.run([sys.executable, "-m", "assembler", "pack", str(source), "-o", str(expected)], cwd=ROOT,
                          capture_output=True, timeout=300).returncode == 0
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "assembler", "pack", str(source), "-o", str(out)], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))  # as nohup does
    hangups = 0
    while process.poll() is None:  # a hangup every 20 ms for the whole run, start to end
        os.kill(process.pid, signal.SIGHUP)
        hangups += 1
        time.sleep(0.02)
    _, stderr = process.communicate(timeout=60)
    assert hangups > 10, "the command ended before the hangups could reach it"
    assert process.returncode == 0, (process.returncode, stderr)
    assert out.read_bytes() == expected.read_bytes()


def test_an_output_it_may_not_write_is_refused_not_replaced(shared_dir: Path) -> None:
    source = shared_dir / "in.jsonl"
    write_demo(str(source))
    out = shared_dir / "out.jsonl"
    out.write_bytes(b"KEEP ME")
    out.chmod(0o444)
    done = cli_unprivileged("pack", str(source), "-o", str(out))
    assert done.returncode == 1
    assert "is read-only (mode 0444)" in one_error(done.stderr, str(out))
    assert out.read_bytes() == b"KEEP ME" and oct(out.stat().st_mode & 0o777) == "0o444"
    assert sorted(p.name for p in shared_dir.iterdir()) == ["in.jsonl", "out.jsonl"]
