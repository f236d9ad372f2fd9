"""SQLite store: schema 4 bump-and-reject, lossless records, one transaction per batch, clear errors on bad files."""

from __future__ import annotations

import os
import pickle
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from assembler.chunk_rows import pack_chunk_runs
from assembler.errors import DiscontinuityError
from assembler.records import encode
from assembler.store.open import load_any, save_any, session_format
from assembler.store.sqlite import (
    SCHEMA_VERSION,
    SchemaVersionError,
    SqliteSessionStore,
    StoreError,
    read_sqlite,
    write_sqlite,
)

ROOT = Path(__file__).resolve().parents[2]
HEADER = {"type": "session", "version": 0, "id": "s-1", "createdAt": 7, "cwd": "/w", "ünïcode": "✓"}


def chunk(seq: int, text: str) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": 1000 + seq, "data": {"turn": 1, "step": 1, "chunk": {
        "type": "text-delta", "index": 0, "text": text}}}


def sample_events(n_chunks: int = 5) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
        {"type": "user/message", "seq": 1, "time": 1001, "data": {"role": "user", "content": [
            {"type": "text", "text": "héllo"}]}, "surfaceOp": "append"},
    ]
    events += [chunk(2 + i, f"t{i}") for i in range(n_chunks)]
    s = len(events)
    events.append({"type": "assistant/message", "seq": s, "time": 2000, "data": {"turn": 1, "step": 1, "message": {
        "role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
        "sourceEventSeqs": list(range(2, s)), "surfaceOp": "append"})
    return events


def odd_records(start: int) -> list[dict[str, Any]]:
    """Records the columns cannot say alone: key order, unknown keys, odd values, absent or null data."""
    s = start
    return [
        {"type": "tool/result", "seq": s, "time": 5, "data": {"b": 1, "a": 2}, "surfaceOp": "append",
         "sourceEventSeqs": [0]},
        {"seq": s + 1, "type": "x/y", "time": 5, "data": None},
        {"type": "x/z", "seq": s + 2, "time": 5},
        {"type": "x/w", "seq": s + 3, "time": 5, "data": {}, "future": {"k": [1, 2.5]}, "ignorable": True},
        {"type": "x/v", "seq": s + 4, "time": 5, "data": {}, "sourceEventSeqs": [1.0]},
        {"type": "x/u", "seq": s + 5, "time": 5.0, "data": 1.0, "ignorable": True},
        {"type": "text-chunks", "seq0": s + 6, "time0": 9, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, -2],
                                                                   "texts": ["a", "", "c"]}},
        {"type": "tool-call-chunks", "seq0": float(s + 9), "time0": 9, "data": {
            "turn": 1.5, "step": 1, "index": 0, "dt": [0, 0], "id": "c", "name": "n", "args": ["{", "}", ""]}},
    ]


def jsonl_bytes(header: dict[str, Any], records: list[Any]) -> bytes:
    return b"".join(encode(v) + b"\n" for v in [header, *records])


def make_db(path: Path, records: list[Any] | None = None) -> None:
    write_sqlite(path, HEADER, pack_chunk_runs(sample_events()) if records is None else records)


# -- round trips --------------------------------------------------------------------------------------------


def test_round_trip_is_byte_exact_including_key_order_and_unknown_keys(tmp_path: Path) -> None:
    records = pack_chunk_runs(sample_events())
    records += odd_records(len(sample_events()))
    write_sqlite(tmp_path / "s.sqlite", HEADER, records)
    result = read_sqlite(tmp_path / "s.sqlite")
    assert result.ok, result.error
    assert jsonl_bytes(result.header or {}, result.records) == jsonl_bytes(HEADER, records)
    assert result.event_count == records[-1]["seq0"] + 3
    assert result.row_count == 3


@pytest.mark.parametrize(("odd", "message"), [
    ({"ignorable": False}, "field 'ignorable' must be true when present, got False"),
    ({"ignorable": "yes"}, "field 'ignorable' must be true when present, got 'yes'"),
    ({"sourceEventSeqs": "x"}, "field 'sourceEventSeqs' must be a list of safe integers >= 0, got 'x'"),
    ({"time": 5.5}, "time must be a safe integer, got 5.5"),
    ({"type": "chunkrow/text"}, "unknown row type 'chunkrow/text'"),
])
def test_a_record_the_jsonl_reader_refuses_is_stored_but_refused_alike(tmp_path: Path, odd: dict[str, Any],
                                                                      message: str) -> None:
    """Issue 23 item 4: the store keeps any record (lossless), and its reader gives the JSONL reader's verdict."""
    records = [*pack_chunk_runs(sample_events())]
    bad = {"type": "x/w", "seq": records[-1]["seq"] + 1, "time": 5, "data": {}, **odd}
    write_sqlite(tmp_path / "s.sqlite", HEADER, [*records, bad])
    (tmp_path / "s.jsonl").write_bytes(jsonl_bytes(HEADER, [*records, bad]))
    from_db, from_jsonl = read_sqlite(tmp_path / "s.sqlite"), load_any(tmp_path / "s.jsonl")
    assert from_jsonl.error is not None and message in from_jsonl.error.message
    assert from_db.error is not None and from_db.error.message == f"row 5 (seq0 {bad['seq']}): " + \
        from_jsonl.error.message
    assert jsonl_bytes(HEADER, from_db.records) == jsonl_bytes(HEADER, from_jsonl.records)


def test_packed_rows_stay_one_table_row(tmp_path: Path) -> None:
    make_db(tmp_path / "s.db")
    conn = sqlite3.connect(tmp_path / "s.db")
    rows = conn.execute("SELECT kind, type, members, extra FROM events ORDER BY seq0").fetchall()
    conn.close()
    assert rows == [("event", "turn/start", 1, None), ("event", "user/message", 1, None),
                    ("row", "text-chunks", 5, None), ("event", "assistant/message", 1, None)]


def test_schema_has_nullable_surface_columns_and_version_4(tmp_path: Path) -> None:
    make_db(tmp_path / "s.sqlite")
    conn = sqlite3.connect(tmp_path / "s.sqlite")
    info = {r[1]: (r[2], r[3]) for r in conn.execute("PRAGMA table_info(events)")}
    assert info["source_event_seqs"] == ("TEXT", 0) and info["surface_op"] == ("TEXT", 0)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    surface = conn.execute(
        "SELECT source_event_seqs, surface_op FROM events WHERE type = 'assistant/message'").fetchone()
    conn.close()
    assert surface == ("[2,3,4,5,6]", '"append"')


def test_open_any_round_trip_through_every_format(tmp_path: Path) -> None:
    records = pack_chunk_runs(sample_events())
    save_any(tmp_path / "a.jsonl", HEADER, records)
    for name in ("b.sqlite", "c.jsonl.zst", "d.db", "e.jsonl"):
        src = load_any(tmp_path / "a.jsonl")
        save_any(tmp_path / name, src.header or {}, src.records)
        back = load_any(tmp_path / name)
        assert jsonl_bytes(back.header or {}, back.records) == (tmp_path / "a.jsonl").read_bytes(), name
    assert [session_format(p) for p in ("x.sqlite", "x.db", "x.jsonl.zst", "x.jsonl")] == [
        "sqlite", "sqlite", "jsonl.zst", "jsonl"]


# -- bump-and-reject ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 3, 5])
def test_other_schema_versions_are_rejected_with_the_found_value(tmp_path: Path, version: int) -> None:
    path = tmp_path / "s.sqlite"
    make_db(path)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaVersionError) as info:
        read_sqlite(path)
    assert (info.value.found, info.value.expected) == (version, 4)
    assert f"schema version {version}" in str(info.value) and str(path) in str(info.value)


def test_schema_version_error_is_a_store_error_and_pickles() -> None:
    err = SchemaVersionError(3, 4, "/x.sqlite")
    copy = pickle.loads(pickle.dumps(err))
    assert isinstance(copy, StoreError)
    assert (copy.found, copy.expected, str(copy)) == (3, 4, str(err))
    err2 = StoreError("/y.db", "truncated")
    assert str(pickle.loads(pickle.dumps(err2))) == "/y.db: truncated"


def test_a_version_4_database_without_our_tables_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="no 'session' table"):
        read_sqlite(path)


# -- bad files ----------------------------------------------------------------------------------------------


def test_a_truncated_database_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    events = [chunk(i, "x" * 50) | {"data": {"n": i, "pad": "y" * 200}} for i in range(400)]
    make_db(path, events)
    size = path.stat().st_size
    assert size > 3 * 4096
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(StoreError, match="truncated") as info:
        read_sqlite(path)
    assert info.value.path == str(path)


@pytest.mark.parametrize("keep", [10, 60])
def test_a_database_cut_inside_its_header_raises_store_error(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "s.sqlite"
    make_db(path)
    with open(path, "r+b") as f:
        f.truncate(keep)
    with pytest.raises(StoreError, match="truncated"):
        read_sqlite(path)


def test_a_corrupt_page_raises_store_error_not_a_raw_sqlite_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    make_db(path, [chunk(i, "x") | {"data": {"pad": "y" * 300}} for i in range(300)])
    with open(path, "r+b") as f:
        f.seek(4096 * 2)
        f.write(os.urandom(4096 * 3))
    with pytest.raises(StoreError):
        read_sqlite(path)


@pytest.mark.parametrize("content", [b"x" * 500, b"SQLite format 2\x00" + b"\0" * 200])
def test_a_non_sqlite_file_named_sqlite_raises_store_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fake.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a SQLite database"):
        load_any(path)


def test_the_content_decides_the_format_not_the_name(tmp_path: Path) -> None:
    """A JSONL session named ``.sqlite`` is read as the JSONL it is (FORMATS §1.1: a name orders guesses only)."""
    path = tmp_path / "fake.sqlite"
    path.write_bytes(b'{"type":"session","version":0}\n')
    result = load_any(path)
    assert result.ok and result.header == {"type": "session", "version": 0} and result.records == []


def test_an_empty_or_missing_file_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(StoreError, match="empty"):
        read_sqlite(tmp_path / "empty.db")
    with pytest.raises(StoreError, match="no such file"):
        read_sqlite(tmp_path / "missing.db")


# -- transactions -------------------------------------------------------------------------------------------


def table_state(path: Path) -> list[Any]:
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT * FROM events ORDER BY seq0").fetchall()
    conn.close()
    return rows


def test_append_continues_the_log_in_batches(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    events = sample_events()
    with SqliteSessionStore.create(path, HEADER) as store:
        assert store.append(events[:4]) == 4
        assert store.append(events[4:]) == len(events) - 4
        assert store.next_seq() == len(events)
    result = read_sqlite(path)
    assert result.header == HEADER and result.event_count == len(events)


def test_a_discontinuous_batch_is_rolled_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    events = sample_events()
    with SqliteSessionStore.create(path, HEADER) as store:
        store.append(events[:3])
        before = table_state(path)
        bad = [events[3], events[4], events[6]]  # gap after 4
        with pytest.raises(DiscontinuityError) as info:
            store.append_records(bad)
        assert (info.value.expected, info.value.got) == (5, 6)
        assert table_state(path) == before
        assert store.append(events[3:]) == len(events) - 3  # still usable


def test_an_unstorable_record_mid_batch_leaves_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with SqliteSessionStore.create(path, HEADER) as store:
        with pytest.raises(StoreError, match="seq 1"):
            store.append_records([{"type": "a/b", "seq": 0, "time": 0, "data": {}},
                                  {"type": 7, "seq": 1, "time": 0, "data": {}}])
        assert store.next_seq() == 0


def test_a_crash_mid_batch_leaves_the_previous_state_intact(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from assembler.store.sqlite import SqliteSessionStore
        header = {{"type": "session", "version": 0, "id": "crash"}}
        store = SqliteSessionStore.create({str(path)!r}, header)
        store.append([{{"type": "x/a", "seq": i, "time": i, "data": {{}}}} for i in range(10)])
        def batch():
            for i in range(10, 1000):
                if i == 500:
                    os._exit(17)  # the process dies inside the open transaction
                yield {{"type": "x/a", "seq": i, "time": i, "data": {{"pad": "z" * 500}}}}
        store.append_records(batch())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == 17, proc.stderr.decode()
    result = read_sqlite(path)
    assert result.ok and result.event_count == 10
    with SqliteSessionStore.open(path, write=True) as store:
        assert store.append([{"type": "x/a", "seq": 10, "time": 10, "data": {}}]) == 1


def test_write_sqlite_failure_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    make_db(path)
    before = path.read_bytes()
    with pytest.raises(DiscontinuityError):
        write_sqlite(path, HEADER, [{"type": "a/b", "seq": 3, "time": 0, "data": {}}])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite"]


def test_create_refuses_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    make_db(path)
    with pytest.raises(StoreError, match="already exists"):
        SqliteSessionStore.create(path, HEADER)


def test_a_seq_gap_inside_the_table_is_reported_with_its_seq(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    make_db(path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM events WHERE seq0 = 1")
    conn.commit()
    conn.close()
    result = read_sqlite(path)
    assert not result.ok and result.error is not None and result.error.seq == 2
    assert len(result.records) == 1
