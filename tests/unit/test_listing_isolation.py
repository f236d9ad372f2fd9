"""One bad file never takes the session list down (issue 23 item 5): each file is listed on its own; a file whose
reading fails (a crafted database, a line nested too deep, or any failure no reader rule foresaw) is listed as
``damaged`` with its error, every other file as usual, and that session's page and follow answer with its fault
instead of a 500."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.logfile import LogLoader
from assembler.records import encode
from assembler.server import create_app
from assembler.store import loader
from perf.load_follow import HEADER, LogGenerator, append_batch

DEEP = b"[" * 5000 + b"]" * 5000


def _good(path: Path) -> None:
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, LogGenerator(1).take(40))


def _crafted_database(path: Path) -> None:
    """A session database whose row 2 has a list for its type (in ``extra``)."""
    conn = sqlite3.connect(path)
    conn.executescript("""CREATE TABLE session (id, header);
        CREATE TABLE events (seq0, kind, type, time, data, source_event_seqs, surface_op, ignorable, members, extra);
        PRAGMA user_version = 4;""")
    conn.execute("INSERT INTO session VALUES (0, ?)", (encode({"type": "session", "id": "c"}).decode(),))
    extra = encode({"keys": ["type", "seq", "time", "data"], "fields": {"type": [1]}}).decode()
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [(0, "event", "x/e", 1, "{}", None, None, None, 1, None),
                      (1, "event", "x/e", 2, "{}", None, None, None, 1, extra)])
    conn.commit()
    conn.close()


def _client(root: Path) -> TestClient:
    return TestClient(create_app([root], serve_static=False), raise_server_exceptions=False,
                      base_url="http://127.0.0.1")


@pytest.mark.parametrize("bad", ["deep-line-before-type", "crafted-database"])
def test_a_bad_file_is_listed_damaged_and_the_rest_as_usual(tmp_path: Path, bad: str) -> None:
    _good(tmp_path / "a.jsonl")
    _good(tmp_path / "z.jsonl")
    if bad == "crafted-database":
        _crafted_database(tmp_path / "bad.db")
    else:
        (tmp_path / "bad.jsonl").write_bytes(encode(HEADER) + b"\n" + b'{"x":' + DEEP +
                                             b',"type":"assistant/chunk","seq":0,"time":0,"data":{}}\n')
    client = _client(tmp_path)
    response = client.get("/api/sessions")
    assert response.status_code == 200, response.text
    entries = {e["id"]: e for e in response.json()["sessions"]}
    assert set(entries) == {"a", "z", "bad"}
    assert entries["bad"]["status"] == "damaged" and entries["bad"]["error"]
    assert entries["a"]["status"] != "damaged" and entries["z"]["eventCount"] == 40
    page = client.get("/api/sessions/bad/page")
    assert page.status_code == 200 and page.json()["error"]["error"] == "malformed-session"


def test_a_failure_no_rule_foresaw_damages_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever raises while one file is read (here a parser that fails on a marker), the list and the other files
    stand; the failing file is damaged, with the failure named, in the list and on its page and follow."""
    _good(tmp_path / "a.jsonl")
    (tmp_path / "boom.jsonl").write_bytes(encode(HEADER) + b"\n" + encode({"type": "x/boom", "seq": 0, "time": 0,
                                                                            "data": {}}) + b"\n")

    class FailingLoader(LogLoader):
        def feed(self, data: Any) -> int:
            if b"x/boom" in bytes(data):
                raise RuntimeError("a reader bug")
            return super().feed(data)

    monkeypatch.setattr(loader, "LogLoader", FailingLoader)  # the one loader both the list and pages read with
    client = _client(tmp_path)
    response = client.get("/api/sessions")
    assert response.status_code == 200, response.text
    entries = {e["id"]: e for e in response.json()["sessions"]}
    assert entries["boom"]["status"] == "damaged" and "RuntimeError: a reader bug" in entries["boom"]["error"]
    assert entries["a"]["status"] != "damaged" and entries["a"]["eventCount"] == 40
    page = client.get("/api/sessions/boom/page")
    assert page.status_code == 200, page.text
    assert "RuntimeError: a reader bug" in page.json()["error"]["detail"]
    assert client.get("/api/sessions/a/page").status_code == 200
    with client.stream("GET", "/api/sessions/boom/follow") as follow:
        assert follow.status_code == 200
        first = next(follow.iter_lines(), "")
        while not first.startswith("data:"):
            first = next(follow.iter_lines())
        assert "RuntimeError: a reader bug" in first
