"""Crafted SQLite columns in every command (issue 23 items 4 and 11): a ``type`` that is a list, a number or null
in a row's ``extra`` fields, a NULL or non-session header, invalid UTF-8 in ``type`` or ``data``, a ``seq0`` stored
as text, values the JSONL reader refuses. Every command ends with one ``FILE: error: row N: ...`` line (the header:
``FILE: error: session header ...``) naming the right row, exit status 1, no traceback; ``convert`` writes nothing.
A data column longer than ``--max-line-bytes`` is refused without being read."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.records import encode

LOOSE = """CREATE TABLE session (id, header);
CREATE TABLE events (seq0, kind, type, time, data, source_event_seqs, surface_op, ignorable, members, extra);
PRAGMA user_version = 4;"""


def _event(seq: int) -> tuple[Any, ...]:
    return (seq, "event", "x/e", 100 + seq, encode({"i": seq}).decode(), None, None, None, 1, None)


def _extra(fields: dict[str, Any]) -> str:
    return encode({"keys": ["type", "seq", "time", "data"], "fields": fields}).decode()


# name -> (SQL run on a loose copy of a good 6-row table, the row named, what the message says)
CASES: dict[str, tuple[str, int | None, str]] = {
    "type-a-list-in-extra": (f"UPDATE events SET extra = '{_extra({'type': [1]})}' WHERE seq0 = 3", 4,
                             "record has no string 'type' (got [1])"),
    "type-a-number-in-extra": (f"UPDATE events SET extra = '{_extra({'type': 5})}' WHERE seq0 = 3", 4,
                               "record has no string 'type' (got 5)"),
    "type-null-in-extra": (f"UPDATE events SET extra = '{_extra({'type': None})}' WHERE seq0 = 3", 4,
                           "record has no string 'type' (got None)"),
    "null-header": ("UPDATE session SET header = NULL", None, "session header must be JSON text, got NULL"),
    "header-not-a-session": ("""UPDATE session SET header = '{"type":"nope"}'""", None,
                             "not a session header (type 'nope', expected 'session')"),
    "invalid-utf8-type": ("UPDATE events SET type = CAST(X'66ff6f' AS TEXT) WHERE seq0 = 3", 4,
                          "column type is invalid UTF-8"),
    "invalid-utf8-data": ("UPDATE events SET data = CAST(X'22ff22' AS TEXT) WHERE seq0 = 3", 4,
                          "column data is invalid UTF-8"),
    "seq0-as-text": ("UPDATE events SET seq0 = '3' WHERE seq0 = 3", 4, "column seq0 must be an integer, got text '3'"),
    "ignorable-false": ("UPDATE events SET ignorable = 0 WHERE seq0 = 3", 4,
                        "field 'ignorable' must be true when present, got False"),
    "source-event-seqs-not-a-list": ("""UPDATE events SET source_event_seqs = '"x"' WHERE seq0 = 3""", 4,
                                     "field 'sourceEventSeqs' must be a list of safe integers >= 0"),
    "a-wire-tag": ("UPDATE events SET type = 'chunkrow/text' WHERE seq0 = 3", 4, "unknown row type 'chunkrow/text'"),
}
COMMANDS = [["stats"], ["stats", "--json"], ["messages"], ["check"], ["pack"], ["unpack"], ["assemble"], ["page"],
            ["export", "-o", "OUT.md"], ["convert", "OUT.jsonl"], ["repair", "-o", "OUT.jsonl"]]


def _database(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(LOOSE)
    conn.execute("INSERT INTO session VALUES (0, ?)", (encode({"type": "session", "id": "s"}).decode(),))
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [_event(i) for i in range(6)])
    conn.execute(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_command_names_the_crafted_row(tmp_path: Path, capsys: Any, case: str, command: list[str]) -> None:
    sql, row, message = CASES[case]
    path = tmp_path / "crafted.db"
    _database(path, sql)
    argv = [command[0], str(path), *(str(tmp_path / a) if a.startswith("OUT") else a for a in command[1:])]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    where = f"{path}: error: " + ("session header" if row is None else f"row {row}")
    assert where in err and message in err, err
    assert not (tmp_path / "OUT.jsonl").exists()  # convert and repair write nothing from a faulty input


def test_a_data_column_longer_than_the_line_cap_is_refused(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "big.db"
    _database(path, "UPDATE events SET data = '\"' || printf('%.*c', 5000, 'x') || '\"' WHERE seq0 = 4")
    assert main(["stats", "--max-line-bytes", "4K", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: error: row 5 (seq0 4): column data is longer than 4096 bytes" in err, err
    assert main(["stats", str(path)]) == 0  # under the default cap it is just a long string
