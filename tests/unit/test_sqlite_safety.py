"""SQLite edges (issue 9 items 10 and 11): reading never writes and works on files it may not write; a crafted
database is ``FILE: error: row N: ...`` with exit status 1, never a KeyError or TypeError."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.store.sqlite import SqliteSessionStore, StoreError, read_sqlite, write_sqlite

HEADER = {"type": "session", "version": 0, "id": "s"}


def events(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"type": "x/e", "seq": i, "time": 100 + i, "data": {"i": i}} for i in range(start, start + n)]


def snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file in ``folder``: (size, mtime_ns, bytes)."""
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(folder.iterdir())}


@pytest.fixture()
def shared_dir() -> Iterator[Path]:
    """A folder another user can reach (pytest's own tmp folders are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="ta-sqlite-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def as_other_user() -> Iterator[None]:
    """Run as ``nobody`` (effective uid) when root, so file permissions apply; otherwise they already do."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


# -- item 10: reading never writes ---------------------------------------------------------------------------------


def test_reading_leaves_every_byte_and_the_journal_mode_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    write_sqlite(path, HEADER, events(50))
    before = snapshot(tmp_path)
    assert read_sqlite(path).event_count == 50
    assert main(["stats", str(path)]) == 0
    assert snapshot(tmp_path) == before  # no -wal, no -shm, not one byte or mtime changed


def test_a_rollback_journal_database_is_not_switched_to_wal_by_a_reader(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    write_sqlite(path, HEADER, events(5))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    before = snapshot(tmp_path)
    assert read_sqlite(path).event_count == 5
    assert snapshot(tmp_path) == before
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_writing_keeps_wal(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    write_sqlite(path, HEADER, events(5))
    with SqliteSessionStore.open(path, write=True) as store:
        store.append(events(3, start=5))
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


@pytest.mark.parametrize("lock", ["file-0444", "folder-0555", "both"])
def test_a_read_only_database_of_another_user_can_be_read(shared_dir: Path, lock: str, capsys: Any) -> None:
    path = shared_dir / "s.sqlite"
    write_sqlite(path, HEADER, events(40))
    path.chmod(0o444 if lock != "folder-0555" else 0o644)
    if lock != "file-0444":
        shared_dir.chmod(0o555)
    before = snapshot(shared_dir)
    with as_other_user():
        result = read_sqlite(path)
        code = main(["stats", "--json", str(path)])
    assert result.ok and result.event_count == 40
    assert code == 0 and json.loads(capsys.readouterr().out)["events"] == 40
    assert snapshot(shared_dir) == before


def test_a_live_writers_uncheckpointed_log_is_read(tmp_path: Path) -> None:
    """With a writer open, committed batches sit in ``-wal``: the reader takes SQLite's shared read path, so it
    sees them (an immutable open would silently miss them)."""
    path = tmp_path / "s.sqlite"
    with SqliteSessionStore.create(path, HEADER) as writer:
        writer.append(events(30))
        writer.append(events(30, start=30))
        assert (tmp_path / "s.sqlite-wal").stat().st_size > 0
        assert read_sqlite(path).event_count == 60


def test_a_pending_wal_in_a_read_only_folder_is_a_clear_error_not_stale_data(shared_dir: Path) -> None:
    path = shared_dir / "s.sqlite"
    script = (f"from assembler.store.sqlite import SqliteSessionStore as S\n"
              f"s = S.create({str(path)!r}, {HEADER!r})\n"
              f"s.append({events(20)!r})\n"
              "import os; os._exit(0)\n")  # dies with the batch in -wal, never checkpointed
    import subprocess
    import sys
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).resolve().parents[2])
    os.remove(f"{path}-shm")
    assert Path(f"{path}-wal").stat().st_size > 0
    shared_dir.chmod(0o555)
    with as_other_user(), pytest.raises(StoreError) as caught:
        read_sqlite(path)
    assert str(caught.value).startswith(f"{path}: cannot read: s.sqlite-wal or s.sqlite-journal holds changes")


# -- item 11: crafted databases ------------------------------------------------------------------------------------


COLUMNS = "seq0, kind, type, time, data, source_event_seqs, surface_op, ignorable, members, extra"


def crafted(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """A schema-4 database whose ``events`` table has the right columns but none of our constraints."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE session (id INTEGER, header TEXT);"
        "CREATE TABLE events (seq0, kind, type, time, data, source_event_seqs, surface_op, ignorable, members, "
        "extra);")
    conn.execute("PRAGMA user_version = 4")
    conn.execute("INSERT INTO session VALUES (0, ?)", (json.dumps(HEADER),))
    conn.executemany(f"INSERT INTO events ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def good(seq: int) -> tuple[Any, ...]:
    return (seq, "event", "x/e", 100 + seq, json.dumps({"i": seq}), None, None, None, 1, None)


ROW = json.dumps({"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]})

CRAFTED = {
    "kind-says-row-type-is-an-event": ((2, "row", "x/e", 102, "{}", None, None, None, 1, None),
                                       "kind 'row' and type 'x/e' disagree"),
    "kind-says-event-type-is-a-row": ((2, "event", "text-chunks", 102, ROW, None, None, None, 3, None),
                                      "kind 'event' and type 'text-chunks' disagree"),
    "unknown-kind": ((2, "thing", "x/e", 102, "{}", None, None, None, 1, None), "column kind must be"),
    "null-kind": ((2, None, "x/e", 102, "{}", None, None, None, 1, None), "column kind must be"),
    "null-type": ((2, "event", None, 102, "{}", None, None, None, 1, None), "column type must be text, got NULL"),
    "null-seq0": ((None, "event", "x/e", 102, "{}", None, None, None, 1, None), "column seq0 must be an integer"),
    "null-members": ((2, "event", "x/e", 102, "{}", None, None, None, None, None), "column members must be"),
    "text-time": ((2, "event", "x/e", "noon", "{}", None, None, None, 1, None), "column time must be an integer"),
    "non-json-data": ((2, "event", "x/e", 102, "{not json", None, None, None, 1, None),
                      "column data is not valid JSON"),
    "blob-data": ((2, "event", "x/e", 102, b"\x00\x01", None, None, None, 1, None),
                  "column data must be JSON text or NULL, got a blob"),
    "row-data-a-list": ((2, "row", "text-chunks", 102, "[1, 2]", None, None, None, 3, None),
                        "Expected `object`, got `array` - at `$.data`"),
    "row-texts-not-strings": ((2, "row", "text-chunks", 102, ROW.replace('"a"', "7"), None, None, None, 3, None),
                              "Expected `str`, got `int` - at `$.data.texts[0]`"),
    "row-members-disagree": ((2, "row", "text-chunks", 102, ROW, None, None, None, 5, None),
                             "column members says 5 but the row holds 3"),
    "extra-not-an-object": ((2, "event", "x/e", 102, "{}", None, None, None, 1, "[1]"), "column extra must be"),
    "extra-names-a-missing-key": ((2, "event", "x/e", 102, "{}", None, None, None, 1,
                                   json.dumps({"keys": ["type", "seq", "time", "ghost"], "fields": {}})),
                                  "names the key 'ghost'"),
    "ignorable-not-a-flag": ((2, "event", "x/e", 102, "{}", None, None, 7, 1, None), "column ignorable must be"),
}


def test_a_null_time_is_a_record_without_time_rebuilt_as_the_jsonl_reader_rebuilds_it(tmp_path: Path) -> None:
    """Issue 23 item 4: the rebuilt record gets the JSONL reader's rules, and a line without ``time`` gets time 0."""
    path = tmp_path / "crafted.sqlite"
    crafted(path, [good(0), good(1), (2, "event", "x/e", None, "{}", None, None, None, 1, None), good(3)])
    result = read_sqlite(path)
    assert result.ok and result.records[2] == {"type": "x/e", "seq": 2, "time": 0, "data": {}}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_a_crafted_row_is_an_error_naming_the_row_and_keeping_the_rows_before(tmp_path: Path, case: str,
                                                                              capsys: Any) -> None:
    bad, expected = CRAFTED[case]
    path = tmp_path / "crafted.sqlite"
    crafted(path, [good(0), good(1), bad, good(3)])
    kept = 0 if case == "null-seq0" else 2  # rows are read in seq0 order, and NULL sorts first
    result = read_sqlite(path)
    assert result.error is not None and len(result.records) == kept
    assert main(["stats", "--json", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"{path}: error: row {kept + 1}" in captured.err and expected in captured.err, captured.err
    assert "Traceback" not in captured.err and "KeyError" not in captured.err and "TypeError" not in captured.err
    assert json.loads(captured.out)["events"] == kept


@pytest.mark.parametrize("command", [["pack"], ["unpack"], ["messages"], ["check"], ["assemble"], ["page"]])
def test_every_command_reports_a_crafted_row_without_a_traceback(tmp_path: Path, command: list[str],
                                                                 capsys: Any) -> None:
    path = tmp_path / "crafted.sqlite"
    crafted(path, [good(0), CRAFTED["kind-says-row-type-is-an-event"][0]])
    assert main([command[0], str(path), *command[1:]]) == 1
    err = capsys.readouterr().err
    assert f"{path}: error: row 2" in err and "Traceback" not in err
