"""The one table of readable formats (``assembler.formats``): each format is recognised from its content, never its
name; a file of no known format is refused naming every format tried; detection asks for more bytes only when the
first JSON value is not complete; the loader reads through the table whatever the slices."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
import zstandard
from interop_support import INTEROP

from assembler.formats import (
    EMPTY,
    FORMATS,
    NEED_MORE,
    PROBE_BYTES,
    SUFFIXES,
    ZSTD,
    UnknownFormat,
    by_name,
    detect,
    table,
    tried,
)
from assembler.store.loader import AnyLoader
from tests.corpus import FIXTURES

EXPECTED = {  # a fixture of each format (the folders of ../shared/fixtures/interop), by the format detected
    "claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data/sidechain.jsonl": "claude-code",
    "codex/madshn+localpush@219b539/src-tauri/tests/fixtures/codex/2026-02-23/raw/sessions/"
    "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl": "codex",
    "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_formats.eval": "inspect-eval",
    "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_formats.json": "inspect-json",
    "gemini-cli/codemie-ai+codemie-code@8e8d4ce/tests/integration/metrics/fixtures/gemini/"
    "session-2025-12-01T21-45-5b959dae.json": "gemini-json",
    "swe-agent/SWE-agent+SWE-agent@3ea751c/tests/test_data/trajectories/"
    "gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj":
        "swe-agent",
    "openhands/All-Hands-AI+OpenHands@156d068/tests/runtime/trajs/basic.json": "openhands",
}


def _detect_all(data: bytes) -> str:
    found = detect(data[:PROBE_BYTES], complete=len(data) <= PROBE_BYTES)
    if found is NEED_MORE:
        found = detect(data, complete=True)
    assert found is not NEED_MORE
    return found.name  # type: ignore[union-attr]


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_each_fixture_is_recognised_from_its_content(rel: str) -> None:
    path = INTEROP / rel
    if not path.exists():
        pytest.skip(f"{path} not here")
    data = path.read_bytes()
    assert _detect_all(data) == EXPECTED[rel]
    renamed = AnyLoader("renamed.bin")  # the name plays no part
    renamed.feed(data)
    renamed.finish()
    assert renamed.format is not None and renamed.format.name == EXPECTED[rel]


def test_our_own_logs_in_every_container() -> None:
    line = b'{"type":"session","version":0,"id":"s"}\n{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n'
    assert _detect_all(line) == "session-jsonl"
    assert detect(zstandard.ZstdCompressor().compress(line), complete=True) is ZSTD
    loader = AnyLoader("x")
    loader.feed(zstandard.ZstdCompressor().compress(line))
    result = loader.finish()
    assert loader.compressed and loader.format is not None and loader.format.name == "session-jsonl"
    assert result.ok and len(result.records) == 1
    assert detect(b"SQLite format 3\x00" + b"\0" * 100, complete=True).name == "session-sqlite"  # type: ignore[union-attr]


def test_documents_pretty_printed_or_on_one_line() -> None:
    doc = {"sessionId": "s", "projectHash": "h", "startTime": "2025-01-01T10:00:00Z", "messages": []}
    assert _detect_all(json.dumps(doc).encode()) == "gemini-json"
    pretty = json.dumps(doc, indent=2).encode()
    assert detect(pretty, complete=False) is NEED_MORE  # its first line is not a value: the edge reads on
    assert _detect_all(pretty) == "gemini-json"
    mini = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert _detect_all(json.dumps(mini, indent=1).encode()) == "mini-swe-agent"


def test_a_claude_file_that_opens_with_bookkeeping_records() -> None:
    lines = [{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False},
             {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "hi"}}]
    assert _detect_all(b"".join(json.dumps(v).encode() + b"\n" for v in lines)) == "claude-code"


def test_an_inspect_zip_and_other_zips() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("_journal/start.json", "{}")
    assert detect(buf.getvalue(), complete=True).name == "inspect-eval"  # type: ignore[union-attr]
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("readme.txt", "x")
    with pytest.raises(UnknownFormat, match="a zip archive that is not an Inspect log"):
        detect(other.getvalue(), complete=True)


@pytest.mark.parametrize("data", [b"hello", b'{"a": 1}\n{"b": 2}\n', b"[1, 2, 3]", b'{"x": ', b"\x00" * 10])
def test_no_known_format_names_every_format_tried(data: bytes) -> None:
    loader = AnyLoader("f.jsonl")
    loader.feed(data)
    result = loader.finish()
    assert result.error is not None and "not a known session log" in str(result.error)
    for fmt in FORMATS:
        if fmt.session:
            assert fmt.label in str(result.error)


def test_empty_and_whitespace_files_are_empty_sessions() -> None:
    for data in (b"", b"  \n\n"):
        loader = AnyLoader("empty.jsonl")
        loader.feed(data)
        result = loader.finish()
        assert loader.format is EMPTY and result.ok and result.records == [] and result.header["id"] == "empty"


def test_a_sidecar_is_recognised_and_refused_as_no_session() -> None:
    loader = AnyLoader("agent-x.meta.json")
    loader.feed(b'{"agentType": "Explore", "description": "look around"}')
    result = loader.finish()
    assert loader.format is not None and loader.format.name == "claude-code-agent-meta"
    assert "not a session log" in str(result.error)


def test_a_lone_surrogate_escape_does_not_hide_the_format() -> None:
    assert _detect_all(b'{"type":"session","id":"t\\ud800"}\n') == "session-jsonl"


@pytest.mark.parametrize("size", [1, 7, 100, 4096])
def test_any_slicing_gives_the_same_session(size: int) -> None:
    path = INTEROP / sorted(EXPECTED)[0]
    if not path.exists():
        pytest.skip("fixtures not here")
    data = path.read_bytes()
    whole = AnyLoader(path.name)
    whole.feed(data)
    expected = whole.finish().records
    sliced = AnyLoader(path.name)
    for i in range(0, len(data), size):
        sliced.feed(data[i:i + size])
    assert sliced.finish().records == expected


def test_the_table_is_what_the_page_gets() -> None:
    names = [f["name"] for f in table()]
    assert len(names) == len(set(names)) and "claude-code-agent-meta" not in names
    assert all(s.startswith(".") for s in SUFFIXES) and ".jsonl" in SUFFIXES and ".eval" in SUFFIXES
    assert by_name("codex").live and not by_name("inspect-eval").live
    assert tried().count(",") == len(names) - 1
    assert FIXTURES  # the corpus location is known (conformance tests read our own logs there)


def test_a_long_first_line_is_waited_for_then_capped(tmp_path: Path) -> None:
    line = b'{"type":"session","id":"s","pad":"' + b"x" * 200_000 + b'"}\n'
    loader = AnyLoader("big.jsonl")
    for i in range(0, len(line), 10_000):
        loader.feed(line[i:i + 10_000])
    assert loader.format is not None and loader.format.name == "session-jsonl"
    capped = AnyLoader("big.jsonl", max_line_bytes=100_000)
    capped.feed(line[:-2])
    capped.feed(b"x" * 10)
    assert capped.result.error is not None and "line is longer than 100000 bytes" in str(capped.result.error)
