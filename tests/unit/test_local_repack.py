"""A local file is repacked as its slices arrive (``browser.local.FileLoad``): whatever the slice size, the records
held are the canonical packing of the file's events (``pack_chunk_runs``), far fewer than the events of an
unpacked log, and the window shows what the CLI shows for the same file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conversation_support import storage_page_bytes

from assembler.browser import FileLoad, Viewer
from assembler.chunk_rows import expand_records, pack_chunk_runs
from assembler.cli import main
from assembler.demo import demo_session
from assembler.logfile import parse_session_bytes
from assembler.records import decode_page, encode
from assembler.transcript import assemble, digest
from definitions import default_definitions


def unpacked_log() -> tuple[bytes, list[object]]:
    """The demo session written one event per line (no rows), with one torn run of two deltas kept scalar."""
    header, batches = demo_session()
    events = [e for batch in batches for e in batch]
    return b"".join(encode(v) + b"\n" for v in [header, *events]), events


@pytest.mark.parametrize("slice_bytes", [1, 97, 4096, 1 << 22])
def test_slices_are_repacked_to_the_canonical_packing(slice_bytes: int) -> None:
    data, events = unpacked_log()
    load = FileLoad("demo.jsonl", len(data))
    for i in range(0, len(data), slice_bytes):
        load.feed(data[i:i + slice_bytes])
    result = load.finish()
    assert result.error is None
    assert encode(result.records) == encode(pack_chunk_runs(events))
    assert encode(list(expand_records(result.records))) == encode(events)
    assert len(result.records) < len(events) // 2
    assert result.event_count == len(events)


def test_an_unpacked_file_shows_what_the_cli_shows() -> None:
    data, _ = unpacked_log()
    viewer = Viewer()
    viewer.file_begin("demo.jsonl", len(data))
    for i in range(0, len(data), 1000):
        viewer.file_feed(data[i:i + 1000])
    update = json.loads(viewer.file_finish(True))
    records = parse_session_bytes(data).records
    expected = digest(assemble(decode_page(storage_page_bytes(records, "packed", None)).records, False,
                               default_definitions()))
    assert update["error"] is None and update["digest"] == expected
    assert update["file"]["events"] == len(records)


@pytest.mark.parametrize("name", ["demo.sqlite", "demo.db"])
def test_a_database_written_by_convert_opens_like_its_log(tmp_path: Path, name: str) -> None:
    data, _ = unpacked_log()
    (tmp_path / "demo.jsonl").write_bytes(data)
    assert main(["convert", str(tmp_path / "demo.jsonl"), str(tmp_path / name)]) == 0
    db = (tmp_path / name).read_bytes()
    viewer = Viewer()
    viewer.file_begin(name, len(db))
    for i in range(0, len(db), 4096):
        viewer.file_feed(db[i:i + 4096])
    update = json.loads(viewer.file_finish(True))
    plain = Viewer()
    plain.file_begin("demo.jsonl", len(data))
    plain.file_feed(data)
    expected = json.loads(plain.file_finish(True))
    assert update["error"] is None and update["digest"] == expected["digest"]
    assert update["file"]["events"] == expected["file"]["events"] and update["header"] == expected["header"]


def test_a_file_of_no_known_format_is_an_error_naming_the_formats_tried() -> None:
    viewer = Viewer()
    viewer.file_begin("notes.sqlite", 20)
    viewer.file_feed(b"SQLite format 2\x00 not a database")
    update = json.loads(viewer.file_finish(True))
    assert update["error"]["where"] == "file" and "not a known session log" in update["error"]["message"]
    assert "Transcript Assembler session (SQLite)" in update["error"]["message"]
    assert update["nodes"] == []


def test_the_content_decides_the_format_not_the_name() -> None:
    viewer = Viewer()
    viewer.file_begin("notes.sqlite", 20)
    viewer.file_feed(b'{"type":"session"}\n')
    update = json.loads(viewer.file_finish(True))
    assert update["error"] is None and update["header"] == {"type": "session"}
    assert update["file"]["format"] == "session-jsonl"
