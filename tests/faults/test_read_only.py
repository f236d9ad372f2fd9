"""Read-only inputs (issue 9 items 10 and 2): a session file of mode 0444 in a folder of mode 0555 is read by every
command in every format by a process without privileges (when the tests run as root: root with no capability, to
which the mode bits apply as to anyone), and reading changes nothing in its folder: no byte, no mtime, no
``-wal``/``-shm``, no temporary file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, cli_unprivileged

from perf.demo import write_demo

FORMATS = ["demo.jsonl", "demo.jsonl.zst", "demo.sqlite"]


def snapshot(folder: Path) -> dict[str, tuple[int, int, int, bytes]]:
    return {p.name: (p.stat().st_mode, p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(folder.iterdir())}


@pytest.fixture()
def locked(shared_dir: Path) -> dict[str, Path]:
    """Each format of the demo session in a read-only folder, each file 0444; and a writable folder for outputs."""
    inputs = shared_dir / "inputs"
    inputs.mkdir()
    source = shared_dir / "source.jsonl"
    write_demo(str(source))
    paths = {}
    for name in FORMATS:
        done = cli("convert", str(source), str(inputs / name))
        assert done.returncode == 0, done.stderr
        (inputs / name).chmod(0o444)
        paths[name] = inputs / name
    inputs.chmod(0o555)
    outputs = shared_dir / "outputs"
    outputs.mkdir()
    outputs.chmod(0o777)
    paths["outputs"] = outputs
    return paths


@pytest.mark.parametrize("name", FORMATS)
def test_every_command_reads_a_read_only_session_and_changes_nothing(locked: dict[str, Path], name: str) -> None:
    src = locked[name]
    outputs = locked["outputs"]
    before = snapshot(src.parent)
    stats = cli_unprivileged("stats", "--json", str(src))
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["events"] == 179
    for argv in (["pack", str(src)], ["unpack", str(src)], ["messages", str(src)], ["check", str(src)],
                 ["assemble", "--digest", str(src)], ["page", str(src)],
                 ["export", str(src), "-o", str(outputs / f"{name}.html")],
                 ["convert", str(src), str(outputs / f"{name}.copy.jsonl")]):
        done = cli_unprivileged(*argv)
        assert done.returncode == 0, (argv, done.stderr)
    assert snapshot(src.parent) == before
    assert (outputs / f"{name}.copy.jsonl").read_bytes() == locked["demo.jsonl"].read_bytes()


def test_an_output_into_the_read_only_folder_is_refused_and_nothing_appears(locked: dict[str, Path]) -> None:
    src = locked["demo.jsonl"]
    before = snapshot(src.parent)
    done = cli_unprivileged("pack", str(src), "-o", str(src.parent / "packed.jsonl"))
    assert done.returncode == 1
    assert f"{src.parent / 'packed.jsonl'}: error: cannot write: Permission denied" in done.stderr
    assert snapshot(src.parent) == before
