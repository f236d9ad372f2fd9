"""A SQLite output's side files are outputs too (issue 23 item 2): ``convert IN OUT.db`` and ``repair IN -o OUT.db``
refuse an input named ``OUT.db-wal``, ``OUT.db-journal`` or ``OUT.db-shm`` before reading it, and never remove a
file the command did not create (a stale side file beside the output is refused, not deleted)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.store.atomic import SameFileError, UnsafeOutputError, atomic_path
from perf.demo import write_demo

SIDES = ["-wal", "-journal", "-shm"]
COMMANDS = [["convert", "IN", "OUT"], ["repair", "IN", "-o", "OUT"]]


def _argv(template: list[str], src: Path, out: Path) -> list[str]:
    return [str(src) if a == "IN" else str(out) if a == "OUT" else a for a in template]


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("side", SIDES)
def test_an_input_named_like_the_outputs_side_file_is_refused_and_kept(tmp_path: Path, capsys: Any,
                                                                      command: list[str], side: str) -> None:
    out = tmp_path / "out.db"
    src = tmp_path / f"out.db{side}"
    write_demo(str(src))  # a JSONL session that happens to carry the name
    before = _listing(tmp_path)
    assert main(_argv(command, src, out)) == 1
    err = capsys.readouterr().err
    assert f"{out}: error: its SQLite file {src} is the input {src}" in err, err
    assert "Traceback" not in err
    assert _listing(tmp_path) == before  # the input whole, no output, nothing left behind


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("side", SIDES)
def test_a_side_file_beside_the_output_is_refused_never_removed(tmp_path: Path, capsys: Any, command: list[str],
                                                               side: str) -> None:
    src = tmp_path / "in.jsonl"
    write_demo(str(src))
    out = tmp_path / "out.db"
    assert main(_argv(["convert", "IN", "OUT"], src, out)) == 0
    (tmp_path / f"out.db{side}").write_bytes(b"someone else's log")
    before = _listing(tmp_path)
    assert main(_argv(command, src, out)) == 1
    err = capsys.readouterr().err
    assert f"{out}: error: {out}{side} exists beside it" in err and "never removed" in err, err
    assert _listing(tmp_path) == before


def test_a_side_file_that_is_a_hard_link_to_the_input_is_the_input(tmp_path: Path, capsys: Any) -> None:
    src = tmp_path / "in.jsonl"
    write_demo(str(src))
    os.link(src, tmp_path / "out.db-wal")
    assert main(["convert", str(src), str(tmp_path / "out.db")]) == 1
    assert "is the input" in capsys.readouterr().err
    assert src.read_bytes() == (tmp_path / "out.db-wal").read_bytes() and not (tmp_path / "out.db").exists()


def test_a_side_file_appearing_during_the_write_is_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "x.db"
    with pytest.raises(UnsafeOutputError, match="exists beside it"):
        with atomic_path(out, siblings=SIDES) as tmp:
            Path(tmp).write_bytes(b"db")
            Path(f"{out}-wal").write_bytes(b"a live writer's log")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db-wal"]
    assert Path(f"{out}-wal").read_bytes() == b"a live writer's log"


def test_the_temporary_files_own_side_files_are_removed(tmp_path: Path) -> None:
    with atomic_path(tmp_path / "x.db", siblings=SIDES) as tmp:
        Path(tmp).write_bytes(b"db")
        Path(tmp + "-shm").write_bytes(b"shm")  # made by the writer: removed with the temporary file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]


def test_same_file_check_still_refuses_the_output_itself(tmp_path: Path) -> None:
    src = tmp_path / "s.db"
    src.write_bytes(b"")
    with pytest.raises(SameFileError):
        with atomic_path(src, inputs=[src], siblings=SIDES):
            pass  # pragma: no cover
