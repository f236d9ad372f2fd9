"""The ``unpack``, ``pack`` and ``stats`` commands: output, exit codes and file:line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assembler.chunk_rows import expand_records
from assembler.cli import main
from assembler.demo import demo_session
from assembler.store.jsonl import read_session, write_session
from perf.demo import write_demo


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    write_demo(str(path))
    return path


def test_demo_session_has_two_turns_with_reasoning_text_and_a_tool_round(demo: Path) -> None:
    result = read_session(demo)
    types = [e["type"] for e in expand_records(result.records)]
    assert types.count("turn/start") == 2 and types.count("tool/result") == 1
    kinds = {r.type for r in result.records if type(r) is not dict}
    assert kinds == {"text-chunks", "reasoning-chunks", "tool-call-chunks"}
    header, batches = demo_session()
    assert header == result.header and sum(map(len, batches)) == result.event_count


def test_unpack_writes_one_logical_event_per_line(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "flat.jsonl"
    assert main(["unpack", str(demo), "-o", str(out)]) == 0
    lines = out.read_bytes().splitlines()
    assert json.loads(lines[0])["type"] == "session"
    events = [json.loads(x) for x in lines[1:]]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(not e["type"].endswith("-chunks") for e in events)


def test_pack_of_unpacked_equals_pack_of_packed(demo: Path, tmp_path: Path) -> None:
    flat, a, b = tmp_path / "flat.jsonl", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["unpack", str(demo), "-o", str(flat)]) == 0
    assert main(["pack", str(flat), "-o", str(a)]) == 0
    assert main(["pack", str(demo), "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    # Canonical packing merges the per-batch rows of the demo file where they continue each other.
    assert len(a.read_bytes().splitlines()) <= len(demo.read_bytes().splitlines())


def test_pack_and_unpack_handle_zstd(demo: Path, tmp_path: Path) -> None:
    zst, back = tmp_path / "s.jsonl.zst", tmp_path / "back.jsonl"
    assert main(["pack", str(demo), "-o", str(zst)]) == 0
    assert main(["unpack", str(zst), "-o", str(back)]) == 0
    assert list(expand_records(read_session(back).records)) == list(expand_records(read_session(demo).records))


def test_stats_json(demo: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["stats", "--json", str(demo)]) == 0
    stats = json.loads(capsysbinary.readouterr().out)
    result = read_session(demo)
    assert stats["events"] == result.event_count
    assert stats["rows"] == result.row_count and stats["rowMembers"] == result.row_members
    assert stats["bytes"] == demo.stat().st_size
    assert sum(stats["eventsByType"].values()) == stats["events"]
    assert stats["error"] is None


def test_stats_table_is_readable(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(demo)]) == 0
    out = capsys.readouterr().out
    assert "events by type" in out and "assistant/chunk" in out and "rows" in out


def test_errors_name_file_and_line_and_exit_non_zero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"type":"session","id":"x"}\n{"type":"turn/start","data":{}}\n{oops\n')
    proc = subprocess.run([sys.executable, "-m", "assembler", "stats", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"{bad}:3: error: invalid JSON" in proc.stderr
    # the valid part is still reported
    assert "events        1" in proc.stdout


def test_torn_last_line_warns_and_strict_fails(tmp_path: Path) -> None:
    torn = tmp_path / "torn.jsonl"
    write_session(torn, {"type": "session", "id": "t"}, [{"type": "turn/start", "seq": 0, "time": 0, "data": {}}])
    torn.write_bytes(torn.read_bytes() + b'{"type":"tu')
    lenient = subprocess.run([sys.executable, "-m", "assembler", "unpack", str(torn)], capture_output=True, text=True)
    assert lenient.returncode == 0 and "warning: line 3: torn last line ignored" in lenient.stderr
    assert len(lenient.stdout.splitlines()) == 2
    strict = subprocess.run([sys.executable, "-m", "assembler", "unpack", "--strict", str(torn)],
                            capture_output=True, text=True)
    assert strict.returncode == 1 and f"{torn}:3: error: invalid JSON" in strict.stderr


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(tmp_path / "nope.jsonl")]) == 1
    assert "nope.jsonl: error: No such file or directory" in capsys.readouterr().err
