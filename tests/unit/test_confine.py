"""``server.confine`` looks a served path up once beneath its root, following no symlink, by both of its ways
(``openat2`` and the ``O_NOFOLLOW | O_DIRECTORY`` descriptor walk); ``server.database`` reads a SQLite session from
the checked descriptor (issue 23 item 1). The race itself is ``tests/faults/test_folder_swap_race.py``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from assembler.chunk_rows import pack_chunk_runs
from assembler.server import confine
from assembler.server.confine import OutsideRootError, open_folder_in_root, open_in_root
from assembler.server.database import read_served_database
from assembler.store.sqlite import SqliteSessionStore, write_sqlite

HEADER = {"type": "session", "id": "s"}


@pytest.fixture(params=["openat2", "walk"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "openat2" and not confine.openat2_available():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(confine, "USE_OPENAT2", request.param == "openat2")
    yield request.param


@pytest.fixture()
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(a resolved root holding ``a/b/s.jsonl``, a folder outside it holding ``b/s.jsonl``)."""
    root = (tmp_path / "root").resolve()
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "s.jsonl").write_bytes(b'{"type":"session"}\n')
    outside = tmp_path / "outside"
    (outside / "b").mkdir(parents=True)
    (outside / "b" / "s.jsonl").write_bytes(b"SECRET\n")
    return root, outside


def test_the_walk_is_what_runs_when_openat2_is_off(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = tree
    monkeypatch.setattr(confine, "USE_OPENAT2", False)
    monkeypatch.setattr(confine, "_openat2", None)  # calling it would raise: the walk must not
    with open_in_root(root / "a" / "b" / "s.jsonl", root) as stream:
        assert stream.read() == b'{"type":"session"}\n'


def test_opens_a_regular_file_beneath_the_root(tree: tuple[Path, Path], method: str) -> None:
    root, _ = tree
    with open_in_root(root / "a" / "b" / "s.jsonl", root) as stream:
        assert stream.read() == b'{"type":"session"}\n'


@pytest.mark.parametrize("level", ["a", "a/b", "a/b/s.jsonl"])
def test_a_symlink_anywhere_on_the_way_is_refused(tree: tuple[Path, Path], method: str, level: str) -> None:
    root, outside = tree
    target = {"a": outside, "a/b": outside / "b", "a/b/s.jsonl": outside / "b" / "s.jsonl"}[level]
    swapped = root / level
    swapped.rename(root / "moved-away")
    swapped.symlink_to(target, target_is_directory=target.is_dir())
    with pytest.raises(OutsideRootError, match="leads outside the served folders"):
        open_in_root(root / "a" / "b" / "s.jsonl", root)


def test_a_symlink_that_stays_inside_is_refused_too(tree: tuple[Path, Path], method: str) -> None:
    """The registry stores resolved paths: a link met at open time appeared after the scan."""
    root, _ = tree
    (root / "c").symlink_to(root / "a", target_is_directory=True)
    with pytest.raises(OutsideRootError):
        open_in_root(root / "c" / "b" / "s.jsonl", root)


def test_a_path_outside_the_root_is_refused_before_any_lookup(tree: tuple[Path, Path], method: str) -> None:
    root, outside = tree
    with pytest.raises(OutsideRootError, match="is outside the served folders"):
        open_in_root(outside / "b" / "s.jsonl", root)
    with pytest.raises(OutsideRootError):
        open_in_root(root / "a" / ".." / ".." / "outside" / "b" / "s.jsonl", root)


def test_a_fifo_or_a_folder_in_place_is_refused_and_a_missing_file_is_an_os_error(tree: tuple[Path, Path],
                                                                                method: str) -> None:
    root, _ = tree
    path = root / "a" / "b" / "s.jsonl"
    path.unlink()
    with pytest.raises(FileNotFoundError):
        open_in_root(path, root)
    os.mkfifo(path)
    with pytest.raises(OutsideRootError, match="no longer a regular file"):  # O_NONBLOCK: no writer needed
        open_in_root(path, root)
    path.unlink()
    path.mkdir()
    with pytest.raises(OutsideRootError, match="no longer a regular file"):
        open_in_root(path, root)


def test_a_file_root_opens_itself_and_refuses_a_symlink(tree: tuple[Path, Path], method: str) -> None:
    root, outside = tree
    single = root / "a" / "b" / "s.jsonl"
    with open_in_root(single, single) as stream:
        assert stream.read(1) == b"{"
    single.unlink()
    single.symlink_to(outside / "b" / "s.jsonl")
    with pytest.raises(OutsideRootError):
        open_in_root(single, single)


def test_the_folder_descriptor_is_the_folder_beneath_the_root(tree: tuple[Path, Path], method: str) -> None:
    root, outside = tree
    fd = open_folder_in_root(root / "a" / "b" / "s.jsonl", root)
    try:
        assert os.listdir(fd) == ["s.jsonl"]
    finally:
        os.close(fd)
    (root / "a" / "b").rename(root / "b-away")
    (root / "a" / "b").symlink_to(outside / "b", target_is_directory=True)
    with pytest.raises(OutsideRootError):
        open_folder_in_root(root / "a" / "b" / "s.jsonl", root)


def _database(path: Path, text: str) -> None:
    events = [{"type": "x/note", "seq": i, "time": i, "data": {"text": text}} for i in range(5)]
    write_sqlite(path, HEADER, pack_chunk_runs(events))


def test_a_database_is_read_from_the_checked_descriptor_not_its_path_again(tmp_path: Path, method: str) -> None:
    root = tmp_path.resolve()
    path = root / "s.db"
    _database(path, "inside")
    _database(root / "other.db", "SECRET")
    with open_in_root(path, root) as stream:
        os.replace(root / "other.db", path)  # the name now leads to another database
        result = read_served_database(path, root, stream)
    assert result.error is None and result.event_count == 5
    assert {r["data"]["text"] for r in result.records} == {"inside"}


def test_a_live_database_is_read_with_its_wal_and_a_symlinked_wal_is_refused(tmp_path: Path, method: str) -> None:
    root = tmp_path.resolve()
    path = root / "s.db"
    _database(path, "first")
    with SqliteSessionStore.open(path, write=True) as writer:  # a live writer: its batch sits in -wal
        writer.append([{"type": "x/note", "seq": 5, "time": 5, "data": {"text": "in the wal"}}])
        assert Path(f"{path}-wal").stat().st_size > 0
        with open_in_root(path, root) as stream:
            result = read_served_database(path, root, stream)
        assert result.error is None and result.event_count == 6
    os.replace(path, root / "kept.db")
    _database(path, "second")
    (tmp_path / "elsewhere-wal").write_bytes(b"x" * 100)
    Path(f"{path}-wal").symlink_to(tmp_path / "elsewhere-wal")
    with open_in_root(path, root) as stream, pytest.raises(OutsideRootError, match="wal file beside"):
        read_served_database(path, root, stream)


def test_a_file_that_is_no_database_is_the_sessions_error(tmp_path: Path, method: str) -> None:
    root = tmp_path.resolve()
    (root / "s.db").write_bytes(b"not sqlite at all, but long enough to have a header" * 3)
    with open_in_root(root / "s.db", root) as stream:
        result = read_served_database(root / "s.db", root, stream)
    assert result.error is not None and "not a SQLite database" in str(result.error)
