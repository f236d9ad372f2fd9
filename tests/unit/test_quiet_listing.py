"""A listing of a quiet folder opens no file: a file whose device, inode, size and time are those it was read with
is listed from what was read (``catalog.ServedFile._unchanged``); a grown file, one replaced by another (same size and
time, another inode) or by a symlink, and a line-format file whose idle tail is due to close are opened again."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from assembler.server import catalog
from assembler.server.registry import SessionRegistry
from tests.browser.session_builder import Session


def write(path: Path, sid: str, turns: int) -> None:
    s = Session(sid)
    for i in range(turns):
        s.user(f"question {i}")
        s.assistant([("text", f"answer {i}")])
        s.end_step()
        s.end_turn()
    path.write_bytes(s.to_bytes())


def listed(registry: SessionRegistry) -> dict[str, dict[str, Any]]:
    from assembler.server.app import list_entries

    entries, pending = asyncio.run(registry.listing(None))
    assert pending == 0
    return {e["id"]: e for e in list_entries(entries)}


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = catalog.open_in_root

    def counting(path: Path, root: Path) -> Any:
        calls.append(path)
        return real(path, root)

    monkeypatch.setattr(catalog, "open_in_root", counting)
    return calls


def test_a_quiet_folder_is_listed_without_opening_its_files(tmp_path: Path, opened: list[Path]) -> None:
    for i in range(5):
        write(tmp_path / f"s{i}.jsonl", f"s{i}", 3)
    then = time.time() - catalog.TAIL_IDLE_S - 5  # idle: the first listing closes what it may close
    for p in tmp_path.iterdir():
        os.utime(p, (then, then))
    registry = SessionRegistry([tmp_path])
    first = listed(registry)
    assert len(opened) == 5
    opened.clear()
    assert listed(registry) == first
    assert opened == []


def test_a_fresh_file_is_not_opened_again_until_its_tail_is_due(tmp_path: Path, opened: list[Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "fresh.jsonl", "fresh", 3)  # written now: its tail closes after TAIL_IDLE_S
    registry = SessionRegistry([tmp_path])
    listed(registry)
    opened.clear()
    listed(registry)
    assert opened == []
    monkeypatch.setattr(catalog, "TAIL_IDLE_S", 0.0)  # now it is due: opened once, then quiet again
    listed(registry)
    assert len(opened) == 1
    listed(registry)
    assert len(opened) == 1


def test_a_changed_file_is_read_again(tmp_path: Path, opened: list[Path]) -> None:
    path = tmp_path / "s.jsonl"
    write(path, "s", 3)
    then = time.time() - catalog.TAIL_IDLE_S - 5
    os.utime(path, (then, then))
    registry = SessionRegistry([tmp_path])
    assert listed(registry)["s"]["eventCount"] > 0
    before = listed(registry)["s"]["eventCount"]
    # Another file put in its place with the same size and time: another inode, so it is opened and read.
    other = tmp_path / "other.tmp"
    write(other, "s", 3)
    data = other.read_bytes().replace(b"answer 2", b"ANSWER 2")
    other.write_bytes(data)
    os.utime(other, (then, then))
    os.replace(other, path)
    opened.clear()
    assert listed(registry)["s"]["eventCount"] == before
    assert opened == [path]
    # Grown (a blank line appended): opened and read on.
    with open(path, "ab") as out:
        out.write(b"\n")
    opened.clear()
    listed(registry)
    assert opened == [path]


def test_a_file_replaced_by_a_symlink_is_refused_again(tmp_path: Path, opened: list[Path]) -> None:
    root = tmp_path / "root"
    root.mkdir()
    path = root / "s.jsonl"
    write(path, "s", 3)
    then = time.time() - catalog.TAIL_IDLE_S - 5
    os.utime(path, (then, then))
    registry = SessionRegistry([root])
    assert "s" in listed(registry)
    outside = tmp_path / "outside.jsonl"
    shutil.copy2(path, outside)  # same bytes, size and time, outside the root
    path.unlink()
    path.symlink_to(outside)
    opened.clear()
    assert "s" not in listed(registry)
