"""Session log files: reading, writing, the projected-fixture rebuild, and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assembler.chunk_rows import expand_records
from assembler.errors import ChunkRowError, SessionFileError
from assembler.logfile import parse_session_bytes
from assembler.store.jsonl import SessionWriter, read_session, write_session

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 0}


def line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def text_delta(seq: int, text: str) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": 10 + seq,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": text}}}


EVENTS = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}] + [
    text_delta(i, t) for i, t in enumerate(["a", "b", "c", "d"], start=1)] + [
    {"type": "turn/end", "seq": 5, "time": 99, "data": {"turn": 1, "reason": {"kind": "completed"}}}]

ROW = {"type": "text-chunks", "seq0": 1, "time0": 11,
       "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1, 1], "texts": ["a", "b", "c", "d"]}}


def write(tmp_path: Path, content: bytes, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_write_packs_by_default_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, HEADER, EVENTS)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 4 and json.loads(lines[2])["type"] == "text-chunks"
    result = read_session(path)
    assert result.ok and result.header == HEADER
    assert list(expand_records(result.records)) == EVENTS
    assert (result.event_count, result.row_count, result.row_members) == (6, 1, 4)


def test_write_unpacked_on_request(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, HEADER, EVENTS, pack=False)
    assert len(path.read_bytes().splitlines()) == 7
    assert list(expand_records(read_session(path).records)) == EVENTS


def test_each_append_batch_packs_separately(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionWriter(path, HEADER) as writer:
        writer.append(EVENTS[:3])
        writer.append(EVENTS[3:])
    types = [json.loads(x)["type"] for x in path.read_bytes().splitlines()[1:]]
    assert types == ["turn/start", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk",
                     "turn/end"]


def test_zstd_files_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.zst"
    write_session(path, HEADER, EVENTS)
    assert path.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert list(expand_records(read_session(path).records)) == EVENTS


def test_projected_records_get_seq_and_time_rebuilt(tmp_path: Path) -> None:
    row = {"type": "text-chunks", "data": ROW["data"]}
    content = line(HEADER) + line({"type": "turn/start", "data": {"turn": 1}}) + b"\n" + line(row) + line(
        {"type": "turn/end", "data": {}})
    result = read_session(write(tmp_path, content))
    assert result.ok
    assert [r["seq"] if type(r) is dict else r.seq for r in result.records] == [0, 1, 5]
    assert list(result.records[0]) == ["type", "seq", "time", "data"]
    assert result.records[1].time == 0


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    content = (line(HEADER) + line(EVENTS[0])).replace(b"\n", b"\r\n")
    assert read_session(write(tmp_path, content)).event_count == 1


# --- bad input ---------------------------------------------------------------------------------------------------


def test_torn_last_line_keeps_everything_before_and_warns(tmp_path: Path) -> None:
    content = line(HEADER) + line(EVENTS[0]) + line(EVENTS[1]) + b'{"type":"assistant/ch'
    result = read_session(write(tmp_path, content))
    assert result.ok and result.event_count == 2
    assert result.warnings == ["line 4: torn last line ignored (invalid JSON (Input data was truncated))"]


def test_torn_last_line_is_an_error_when_strict(tmp_path: Path) -> None:
    content = line(HEADER) + line(EVENTS[0]) + b'{"type":"assistant/ch'
    result = read_session(write(tmp_path, content), strict=True)
    assert isinstance(result.error, SessionFileError) and result.error.line == 3
    assert "torn last line" in str(result.error)
    assert result.event_count == 1


def test_malformed_line_in_the_middle_stops_with_the_line_and_keeps_the_valid_part(tmp_path: Path) -> None:
    content = line(HEADER) + line(EVENTS[0]) + b"{not json}\n" + line(EVENTS[1])
    result = read_session(write(tmp_path, content))
    assert str(result.error).startswith("line 3: invalid JSON")
    assert [r["seq"] for r in result.records] == [0]


@pytest.mark.parametrize("change, field", [
    ({"dt": [1]}, "dt"),
    ({"texts": []}, "texts"),
    ({"texts": ["a", "b", 3, "d"]}, "texts[2]"),
    ({"seq0": 1.5}, "seq0"),
    ({"seq0": 2**60}, "seq0"),
    ({"time0": "11"}, "time0"),
    ({"time0": 2**60}, "time0"),
    ({"extra": True}, "extra"),
])
def test_bad_rows_name_the_line_and_field(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    row = json.loads(json.dumps(ROW))
    for key, value in change.items():
        (row["data"] if key in row["data"] else row)[key] = value
    content = line(HEADER) + line(EVENTS[0]) + line(row) + line(EVENTS[5])
    result = read_session(write(tmp_path, content))
    assert isinstance(result.error, ChunkRowError)
    assert result.error.line == 3
    assert str(result.error).startswith("line 3")
    assert field.split("[")[0] in str(result.error)
    assert [r["seq"] for r in result.records] == [0]


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    content = line(HEADER) + line(EVENTS[0]) + b'{"type":"x","data":"\xff\xfe"}\n'
    result = read_session(write(tmp_path, content))
    assert str(result.error) == "line 3: invalid UTF-8"
    assert result.event_count == 1


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    result = read_session(write(tmp_path, b""))
    assert str(result.error) == "line 1: empty file: expected a session header"


def test_header_only_file_is_an_empty_session(tmp_path: Path) -> None:
    result = read_session(write(tmp_path, line(HEADER)))
    assert result.ok and result.header == HEADER and result.records == []


def test_first_line_not_a_session_header(tmp_path: Path) -> None:
    result = read_session(write(tmp_path, line(EVENTS[0])))
    assert str(result.error) == "line 1: first line is not a session header (type 'turn/start', expected 'session')"


def test_non_object_line_is_an_error(tmp_path: Path) -> None:
    result = read_session(write(tmp_path, line(HEADER) + b"[1,2]\n"))
    assert str(result.error) == "line 2: expected a JSON object, got list"


def test_seq_that_does_not_continue_the_log(tmp_path: Path) -> None:
    content = line(HEADER) + line(EVENTS[0]) + line(EVENTS[2])
    result = read_session(write(tmp_path, content))
    assert str(result.error) == "line 3, seq 2: seq 2 does not continue the log (expected seq 1)"


def test_parse_bytes_matches_the_file_reader(tmp_path: Path) -> None:
    content = line(HEADER) + line(EVENTS[0]) + line(ROW) + line(EVENTS[5])
    from_bytes = parse_session_bytes(content)
    from_file = read_session(write(tmp_path, content))
    assert from_bytes.records == from_file.records and from_bytes.ok


def test_streaming_read_does_not_hold_the_file_as_one_string(tmp_path: Path) -> None:
    """Every read the reader makes from the raw file is bounded; the 3 MB file is never requested whole."""
    import io

    from assembler.store.jsonl import read_stream

    content = line(HEADER) + b"".join(line(text_delta(i, "x" * 20)) for i in range(30000))
    assert len(content) > 3_000_000
    path = write(tmp_path, content)
    requests: list[int] = []

    class SpyRaw(io.FileIO):
        def readinto(self, buffer: Any) -> int | None:
            requests.append(len(buffer))
            return super().readinto(buffer)

        def readall(self) -> bytes:
            raise AssertionError("whole-file read")

    with SpyRaw(str(path), "rb") as raw:
        assert read_stream(raw, source=str(path), compressed=False).event_count == 30000
    assert len(requests) > 10 and max(requests) < len(content) // 4
