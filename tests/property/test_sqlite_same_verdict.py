"""Issue 23 item 4: the SQLite reader gives the JSONL reader's verdict. Hypothesis takes session logs (the demo, the
load generator's, and the small real logs when ``../shared`` is there), packs them, then changes one to three fields
of their storage records (the envelope ``type``/``seq``/``time``/``seq0``/``time0``/``ignorable``/
``sourceEventSeqs``/``surfaceOp``, anything in ``data``, a row's ``texts`` and ``dt``; or drops a key) to values of
other JSON types, and writes the same records both as JSONL lines and as SQLite table rows: through the store's own
mapping (``record_row``) where it can hold the record, else as a crafted row whose ``extra`` field holds what the
columns cannot (a ``type`` that is a list, a ``seq`` that is text), as an attacker would. Both readers must agree:
both accept, with the same records; or both stop at the same record (JSONL line ``L``, SQLite row ``L - 1``) with
the same message, keeping the same records before it. No exception escapes either.
"""

from __future__ import annotations

import json
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
from corpus import session_logs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.chunk_rows import is_storage_row, pack_chunk_runs
from assembler.demo import demo_session
from assembler.logfile import parse_session_bytes
from assembler.records import ROW_TYPES, encode
from assembler.store.sqlite import StoreError, read_sqlite
from assembler.store.sqlite_rows import record_row
from perf.load_follow import LogGenerator

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.sampled_from([1.5, -0.0, 1e300, 4.0, 2.0]),
                    st.sampled_from(["", "x", "text-delta", "text-chunks", "chunkrow/text", "1", "session"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.sampled_from(["type", "index", "a"]),
                                                                        inner, max_size=2)), max_leaves=4)
ENVELOPE = ("type", "seq", "time", "seq0", "time0", "ignorable", "sourceEventSeqs", "surfaceOp")


@cache
def logs() -> tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]:
    """(header, storage records as JSON values) of a few logs, packed as a writer packs them."""
    header, batches = demo_session()
    out = [(header, [e for batch in batches for e in batch]),
           ({"type": "session", "id": "load"}, LogGenerator(5).take(120))]
    for path in session_logs():
        if Path(path).stat().st_size <= 64 << 10 and len(out) < 8:
            lines = [x for x in Path(path).read_bytes().splitlines() if x.strip()]
            if len(lines) > 3:
                out.append((json.loads(lines[0]), [json.loads(x) for x in lines[1:]]))
    packed = []
    for head, events in out:
        try:
            records = pack_chunk_runs(events)
        except Exception:  # a real log the packer does not take: use it as it is
            records = list(events)
        packed.append((head, tuple(msgspec.to_builtins(r) if is_storage_row(r) else r for r in records)))
    return tuple(packed)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if type(value) is dict:
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif type(value) is list:
        for i, v in enumerate(value[:4]):
            out += _paths(v, (*prefix, i))
    return out


def _set(record: dict[str, Any], path: tuple[Any, ...], value: Any, drop: bool) -> None:
    target: Any = record
    for key in path[:-1]:
        target = target[key]
    if drop and type(target) is dict and path[-1] in target:
        del target[path[-1]]
    else:
        target[path[-1]] = value


class Mutated:
    """The mutated header and records; its repr (what Hypothesis prints) names the changes."""

    def __init__(self, header: dict[str, Any], records: list[dict[str, Any]], changes: list[str]) -> None:
        self.header = header
        self.records = records
        self.changes = changes

    def __repr__(self) -> str:
        return f"Mutated({'; '.join(self.changes)})"


@st.composite
def mutated(draw: Any) -> Mutated:
    all_logs = logs()
    which = draw(st.integers(0, len(all_logs) - 1))
    header, records = json.loads(json.dumps(all_logs[which]))  # a private copy
    changes = [f"log {which}"]
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, len(records) - 1))
        record = records[n]
        envelope = [(k,) for k in ENVELOPE if k in record] + [("ignorable",), ("sourceEventSeqs",)]
        paths = _paths(record)
        path = draw(st.sampled_from(envelope) if draw(st.booleans()) or not paths else st.sampled_from(paths))
        drop = draw(st.integers(0, 6)) == 0
        value = draw(VALUES)
        _set(record, path, value, drop)
        changes.append(f"record {n} {record.get('type')!r} {list(path)} {'dropped' if drop else f'= {value!r}'}")
    if draw(st.integers(0, 20)) == 0:
        header["type"] = draw(VALUES)
        changes.append(f"header type = {header['type']!r}")
    return Mutated(header, records, changes)


def _members(record: dict[str, Any]) -> int:
    data = record.get("data")
    items = data.get("args" if "args" in data else "texts") if type(data) is dict else None
    return max(1, len(items)) if type(items) is list else 1


def crafted_row(record: dict[str, Any], position: int) -> tuple[Any, ...]:
    """The table row of ``record`` at ``position`` (its ``seq0`` column, so rows stay in file order): the store's
    own mapping when it holds the record there, else every key but ``data`` in ``extra``."""
    try:
        row = record_row(record)
    except (ValueError, TypeError, KeyError, AttributeError):
        row = None
    if row is not None and row[0] == position:
        return row
    rtype = record.get("type")
    column_type = rtype if type(rtype) is str else "x/not-a-string"
    is_row = column_type in ROW_TYPES
    fields = {k: v for k, v in record.items() if k != "data"}
    data = encode(record["data"]).decode() if "data" in record else None
    extra = encode({"keys": list(record), "fields": fields}).decode()
    return (position, "row" if is_row else "event", column_type, None, data, None, None, None,
            _members(record) if is_row else 1, extra)


def write_database(path: Path, header: dict[str, Any], records: list[dict[str, Any]]) -> None:
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE session (id INTEGER PRIMARY KEY CHECK (id = 0), header TEXT NOT NULL);
        CREATE TABLE events (seq0 INTEGER PRIMARY KEY, kind TEXT NOT NULL, type TEXT NOT NULL, time INTEGER NULL,
            data TEXT NULL, source_event_seqs TEXT NULL, surface_op TEXT NULL, ignorable INTEGER NULL,
            members INTEGER NOT NULL, extra TEXT NULL);
        PRAGMA user_version = 4;
    """)
    conn.execute("INSERT INTO session VALUES (0, ?)", (encode(header).decode(),))
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [crafted_row(r, i) for i, r in enumerate(records)])
    conn.commit()
    conn.close()


def _kept(records: list[Any]) -> list[bytes]:
    return [encode(r) for r in records]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                   HealthCheck.function_scoped_fixture])
@given(mutated())
def test_the_sqlite_reader_gives_the_jsonl_readers_verdict(tmp_path: Path, case: Mutated) -> None:
    lines = b"".join(encode(v) + b"\n" for v in [case.header, *case.records])
    jsonl = parse_session_bytes(lines)
    path = tmp_path / "s.sqlite"
    path.unlink(missing_ok=True)
    write_database(path, case.header, case.records)
    try:
        db = read_sqlite(path)
    except StoreError as exc:  # the header: the whole file is refused, as the JSONL reader refuses line 1
        assert jsonl.header is None and jsonl.error is not None and jsonl.error.line == 1, (str(exc), jsonl.error)
        assert "session header" in exc.reason
        return
    assert jsonl.header == db.header
    if jsonl.error is None:
        assert db.error is None, db.error
    else:
        assert db.error is not None, jsonl.error
        row = jsonl.error.line - 1  # type: ignore[operator]
        assert db.error.message == f"row {row} (seq0 {row - 1}): {jsonl.error.message}", (db.error, jsonl.error)
    assert _kept(db.records) == _kept(jsonl.records)
    assert (db.event_count, db.row_count, db.row_members) == (jsonl.event_count, jsonl.row_count, jsonl.row_members)
