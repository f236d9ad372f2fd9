"""CLI: convert (by extension, lossless), messages, check (exit 1 on violations), repair -o."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assembler.chunk_rows import pack_chunk_runs
from assembler.cli import main
from assembler.records import encode

HEADER = {"type": "session", "version": 0, "id": "cli"}


def write_log(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(encode(v) + b"\n" for v in [HEADER, *events]))
    return path


def crashed_log() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "user/message", "data": {"role": "user", "content": [{"type": "text", "text": "old"}]},
         "surfaceOp": "append"},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
    ]
    events += [{"type": "assistant/chunk", "data": {"turn": 1, "step": 1, "chunk": {
        "type": "text-delta", "index": 0, "text": t}}} for t in "abcd"]
    events += [
        {"type": "assistant/message", "data": {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [
            {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}]}},
         "sourceEventSeqs": [3, 4, 5, 6], "surfaceOp": "append"},
        {"type": "tool/call", "data": {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}},
    ]
    return events


@pytest.mark.parametrize("packed", [True, False])
def test_convert_round_trip_is_lossless(tmp_path: Path, packed: bool) -> None:
    events = [{"type": e["type"], "seq": i, "time": 10 * i, **e} for i, e in enumerate(crashed_log())]
    src = write_log(tmp_path / "in.jsonl", pack_chunk_runs(events) if packed else events)
    assert main(["convert", str(src), str(tmp_path / "a.sqlite")]) == 0
    assert main(["convert", str(tmp_path / "a.sqlite"), str(tmp_path / "b.jsonl.zst")]) == 0
    assert main(["convert", str(tmp_path / "b.jsonl.zst"), str(tmp_path / "c.jsonl")]) == 0
    assert main(["convert", str(src), str(tmp_path / "d.jsonl")]) == 0
    assert (tmp_path / "c.jsonl").read_bytes() == (tmp_path / "d.jsonl").read_bytes()
    assert (b"text-chunks" in (tmp_path / "c.jsonl").read_bytes()) == packed  # kept as stored, never repacked
    assert (tmp_path / "c.jsonl").read_bytes() == src.read_bytes()


def test_convert_refuses_a_rejected_database_and_writes_nothing(tmp_path: Path, capsys: Any) -> None:
    src = write_log(tmp_path / "in.jsonl", crashed_log())
    main(["convert", str(src), str(tmp_path / "a.db")])
    conn = sqlite3.connect(tmp_path / "a.db")
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()
    assert main(["convert", str(tmp_path / "a.db"), str(tmp_path / "out.jsonl")]) == 1
    assert "schema version 5" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


def test_messages_prints_the_surface_as_json(tmp_path: Path, capsys: Any) -> None:
    events = crashed_log()[:2] + [
        {"type": "user/message", "data": {"role": "user", "content": [{"type": "text", "text": "summary"}]},
         "sourceEventSeqs": [1], "surfaceOp": {"op": "replace", "start": 1, "end": 1}}]
    src = write_log(tmp_path / "in.jsonl", events)
    assert main(["messages", str(src)]) == 0
    assert json.loads(capsys.readouterr().out) == [{"role": "user", "content": [{"type": "text", "text": "summary"}]}]
    assert main(["messages", str(src), "--seqs"]) == 0
    assert [m["seq"] for m in json.loads(capsys.readouterr().out)] == [2]


def test_messages_rejects_a_surface_less_log_naming_the_seq(tmp_path: Path, capsys: Any) -> None:
    events = crashed_log()
    del events[1]["surfaceOp"]
    assert main(["messages", str(write_log(tmp_path / "in.jsonl", events))]) == 1
    assert "seed seq 1" in capsys.readouterr().err


def test_check_reports_every_violation_with_its_seq(tmp_path: Path, capsys: Any) -> None:
    events = crashed_log()
    events[7]["sourceEventSeqs"] = [3, 3, 99]
    events.append({"type": "user/message", "data": {}, "surfaceOp": {"op": "replace", "start": 7, "end": 1},
                   "sourceEventSeqs": [1, 7]})
    src = write_log(tmp_path / "in.jsonl", events)
    assert main(["check", str(src)]) == 1
    out = capsys.readouterr().out
    assert "seq 7: provenance-duplicate" in out and "seq 7: provenance-unknown" in out
    assert "seq 9: replace-order" in out
    assert main(["check", str(src), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(v["seq"], v["rule"]) for v in report["violations"]] == [
        (7, "provenance-duplicate"), (7, "provenance-unknown"), (9, "replace-order")]


def test_check_passes_a_clean_log(tmp_path: Path) -> None:
    assert main(["check", str(write_log(tmp_path / "in.jsonl", crashed_log()))]) == 0


@pytest.mark.parametrize("out_name", ["fixed.jsonl", "fixed.sqlite"])
def test_repair_writes_closers_and_is_idempotent(tmp_path: Path, out_name: str, capsys: Any) -> None:
    src = write_log(tmp_path / "in.jsonl", crashed_log())
    out = tmp_path / out_name
    assert main(["repair", str(src), "-o", str(out)]) == 0
    assert "3 closer(s): tool/result@9, step/end@10, turn/end@11" in capsys.readouterr().err
    assert main(["check", str(out)]) == 0
    again = tmp_path / ("again" + out.suffix)
    assert main(["repair", str(out), "-o", str(again)]) == 0
    assert "0 closer(s)" in capsys.readouterr().err
    assert main(["convert", str(out), str(tmp_path / "x.jsonl")]) == 0
    assert main(["convert", str(again), str(tmp_path / "y.jsonl")]) == 0
    assert (tmp_path / "x.jsonl").read_bytes() == (tmp_path / "y.jsonl").read_bytes()


def test_a_non_sqlite_file_is_a_clear_error(tmp_path: Path, capsys: Any) -> None:
    fake = tmp_path / "fake.sqlite"
    fake.write_text("hello")
    assert main(["check", str(fake)]) == 1
    err = capsys.readouterr().err
    assert "not a SQLite database" in err and "Traceback" not in err
