"""One row schema: every row constraint and JS number rule gives the same verdict on every path (issue 11 item 1).

Paths: the storage line decoder (the log parser), the storage value converter (projected rows, SQLite), the wire page
decoder, the CLI (``assemble``), the browser edge (a local file) and the server (a page). A rejected row is reported
on its own line wherever a line exists, and everything before it is kept.
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest

from assembler import cli
from assembler.browser import Viewer
from assembler.chunk_rows import storage_row
from assembler.errors import ChunkRowError, RecordDecodeError
from assembler.logfile import parse_session_bytes
from assembler.records import MAX_SAFE_INTEGER, decode_page, decode_storage_row

with warnings.catch_warnings():  # starlette 1.10 nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.server import create_app

HEADER = {"type": "session", "version": 0, "id": "rows", "createdAt": 0}
FIRST = {"type": "step/start", "seq": 0, "time": 1000, "data": {"turn": 1, "step": 1}}
ROW: dict[str, Any] = {"type": "reasoning-chunks", "seq0": 1, "time0": 1001,
                       "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}}
TOOL_ROW: dict[str, Any] = {"type": "tool-call-chunks", "seq0": 1, "time0": 1001,
                            "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "id": "c1", "name": "bash",
                                     "args": ["{", "}", ""]}}
LAST = {"type": "step/end", "seq": 4, "time": 1004, "data": {"turn": 1, "step": 1}}


def variant(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``base`` with the field at ``path`` (``seq0``, ``data.dt``, ``+extra`` adds, ``-data.id`` removes) set."""
    row = copy.deepcopy(base)
    remove = path.startswith("-")
    keys = path.lstrip("+-").split(".")
    holder = row
    for key in keys[:-1]:
        holder = holder[key]
    if remove:
        del holder[keys[-1]]
    else:
        holder[keys[-1]] = value
    return row


# (case id, row, accepted, fits the log) -- "fits" is False where the constraint is about seqs beyond the log.
CASES: list[tuple[str, dict[str, Any], bool, bool]] = [
    ("valid", ROW, True, True),
    ("valid-tool-row", TOOL_ROW, True, True),
    ("seq0-integral-float", variant(ROW, "seq0", 1.0), True, True),
    ("time0-integral-float", variant(ROW, "time0", 1001.0), True, True),
    ("time0-exponent", variant(ROW, "time0", 1.001e3), True, True),
    ("dt-integral-float", variant(ROW, "data.dt", [1.0, 1]), True, True),
    ("turn-fraction-is-a-number", variant(ROW, "data.turn", 1.5), True, True),
    ("negative-gap", variant(ROW, "data.dt", [-5, 3]), True, True),
    ("seq0-fraction", variant(ROW, "seq0", 1.5), False, True),
    ("seq0-bool", variant(ROW, "seq0", True), False, True),
    ("seq0-string", variant(ROW, "seq0", "1"), False, True),
    ("seq0-negative", variant(ROW, "seq0", -1), False, False),
    ("seq0-unsafe", variant(ROW, "seq0", 2**53), False, False),
    ("last-seq-unsafe", variant(ROW, "seq0", MAX_SAFE_INTEGER - 1), False, False),
    ("time0-fraction", variant(ROW, "time0", 1001.5), False, True),
    ("time0-unsafe", variant(ROW, "time0", 2**53), False, True),
    ("time0-null", variant(ROW, "time0", None), False, True),
    ("running-time-unsafe", variant(variant(ROW, "time0", MAX_SAFE_INTEGER - 1), "data.dt", [1, 1]), False, True),
    ("dt-fraction", variant(ROW, "data.dt", [1, 0.5]), False, True),
    ("dt-bool", variant(ROW, "data.dt", [1, True]), False, True),
    ("dt-too-short", variant(ROW, "data.dt", [1]), False, True),
    ("dt-too-long", variant(ROW, "data.dt", [1, 1, 1]), False, True),
    ("dt-not-a-list", variant(ROW, "data.dt", 1), False, True),
    ("texts-empty", variant(ROW, "data.texts", []), False, True),
    ("texts-non-string", variant(ROW, "data.texts", ["a", 1, "c"]), False, True),
    ("turn-bool", variant(ROW, "data.turn", True), False, True),
    ("turn-string", variant(ROW, "data.turn", "1"), False, True),
    ("index-null", variant(ROW, "data.index", None), False, True),
    ("extra-envelope-key", variant(ROW, "+extra", 1), False, True),
    ("extra-data-key", variant(ROW, "+data.name", "n"), False, True),
    ("missing-data-key", variant(ROW, "-data.step", None), False, True),
    ("data-not-object", variant(ROW, "data", [1]), False, True),
    ("tool-name-not-string", variant(TOOL_ROW, "data.name", 3), False, True),
    ("tool-id-missing", variant(TOOL_ROW, "-data.id", None), False, True),
    ("tool-args-in-text-row", variant(variant(ROW, "-data.texts", None), "+data.args", ["a", "b", "c"]), False,
     True),
]
IDS = [case[0] for case in CASES]


def log_bytes(row: dict[str, Any]) -> bytes:
    """Header, one event, the row (line 3), one event after it: the row must be judged on line 3."""
    lines = [HEADER, FIRST, row, LAST]
    return b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in lines)


def storage_line_verdict(row: dict[str, Any]) -> bool:
    try:
        decode_storage_row(json.dumps(row).encode())
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


def storage_value_verdict(row: dict[str, Any]) -> bool:
    try:
        storage_row(row)
    except ChunkRowError:
        return False
    return True


def wire_verdict(row: dict[str, Any]) -> bool:
    event = {("seq" if k == "seq0" else "time" if k == "time0" else k): v for k, v in row.items()}
    event["type"] = "chunkrow/" + row["type"]
    page = {"records": [{"type": "chunks", "event": event}], "hasMore": False}
    try:
        decode_page(json.dumps(page).encode())
    except RecordDecodeError:
        return False
    return True


@pytest.mark.parametrize("name, row, accepted, fits", CASES, ids=IDS)
def test_storage_and_wire_decoders_agree(name: str, row: dict[str, Any], accepted: bool, fits: bool) -> None:
    assert storage_line_verdict(row) is accepted
    assert storage_value_verdict(row) is accepted
    assert wire_verdict(row) is accepted


@pytest.mark.parametrize("name, row, accepted, fits", [c for c in CASES if c[3]], ids=[c[0] for c in CASES if c[3]])
def test_log_paths_agree_and_name_the_rows_own_line(name: str, row: dict[str, Any], accepted: bool, fits: bool,
                                                   tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = log_bytes(row)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(data)

    # the log parser (every reader goes through it)
    result = parse_session_bytes(data)
    assert result.ok is accepted
    if not accepted:
        assert result.error is not None and result.error.line == 3 and len(result.records) == 1

    # the CLI
    code = cli.main(["assemble", str(path), "--digest"])
    err = capsys.readouterr().err
    assert code == (0 if accepted else 1)
    if not accepted:
        assert f"{path}:3: error:" in err

    # the browser edge (a local file, on CPython)
    viewer = Viewer()
    viewer.file_begin("rows.jsonl", len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish(all_records=True))
    assert (update["error"] is None) is accepted
    if not accepted:
        assert update["error"]["line"] == 3
    assert update["file"]["records"] == (3 if accepted else 1)

    # the server: a page of the file, the fault (if any) in the header; the body decodes on the wire path
    client = TestClient(create_app([tmp_path], serve_static=False), raise_server_exceptions=False,
                        base_url="http://127.0.0.1")
    response = client.get("/api/sessions/rows/page", params={"maxMessages": 5})
    assert response.status_code == 200
    assert ("x-session-error" not in response.headers) is accepted
    if not accepted:
        assert "line 3" in response.headers["x-session-error"]
    page = decode_page(response.content)
    assert len(page.records) == (3 if accepted else 1)


def test_integral_floats_keep_their_form_through_storage_and_wire() -> None:
    row = variant(variant(ROW, "seq0", 1.0), "data.dt", [1.0, 1])
    data = log_bytes(row)
    result = parse_session_bytes(data)
    assert result.ok
    assert msgspec.json.encode(result.records[1]) == json.dumps(row, separators=(",", ":")).encode()
    from assembler.history import MessageIndex

    page = MessageIndex(result.records).page(None, None, None)
    assert b'"seq":1.0' in msgspec.json.encode(page)


@pytest.mark.parametrize("record", [
    {"type": "image-chunks", "seq0": 1, "time0": 1001, "data": {"dt": [1, 1], "texts": ["a", "b", "c"]}},
    {"type": "text-chunks-v2", "time0": 1001, "data": {}},
    {"type": "chunkrow/text-chunks", "seq": 1, "time": 1001,
     "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}},
])
def test_unknown_row_like_tags_fail_on_their_own_line(record: dict[str, Any]) -> None:
    result = parse_session_bytes(log_bytes(record))
    assert result.error is not None and result.error.line == 3
    assert "unknown row type" in str(result.error)
    assert len(result.records) == 1


def test_unknown_tag_with_event_envelope_loads_as_an_event() -> None:
    record = {"type": "image-chunks", "seq": 1, "time": 1001, "data": {"x": 1}}
    last = {**LAST, "seq": 2}
    data = b"".join(json.dumps(v).encode() + b"\n" for v in (HEADER, FIRST, record, last))
    result = parse_session_bytes(data)
    assert result.ok and result.records[1] == record


def test_a_row_tag_written_with_an_escape_is_still_a_row() -> None:
    line = json.dumps(ROW).replace("reasoning-chunks", "reasoning\\u002dchunks").encode()
    data = log_bytes(ROW).replace(json.dumps(ROW, separators=(",", ":")).encode(), line)
    result = parse_session_bytes(data)
    assert result.ok and result.row_count == 1 and result.event_count == 5
