"""The whole-document readers (Gemini CLI JSON, SWE-agent, mini-swe-agent, OpenHands) and the Gemini JSONL reader on
damaged input: Hypothesis takes the fixtures (and the hand-written samples of the shapes without one), puts values
of other JSON types at random JSON pointers, deletes fields, duplicates array elements and truncates the text.
Whatever it does, the reader returns one session and raises nothing: the log stops with an error that has a
location (``LINE:COL`` or a JSON pointer) or goes on with raw records and warnings naming theirs, and every log
passes ``check_log(result, allow_error=True)`` (dense seqs, provenance and surface invariants, our ``Session``
accepts it, the default Definitions fold it without a fault).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.interop.base import LineLoader, SessionLog, read_lines
from assembler.interop.gemini import GeminiReader, read_json
from assembler.interop.openhands import read_trajectory
from assembler.interop.sweagent import read_mini, read_traj
from assembler.logfile import LoadResult
from tests.interop_support import INTEROP, check_log
from tests.unit.test_interop_gemini import FIXTURE as GEMINI_FIXTURE
from tests.unit.test_interop_gemini import SESSION as GEMINI_JSONL
from tests.unit.test_interop_openhands import FIXTURE as OPENHANDS_FIXTURE
from tests.unit.test_interop_openhands import SAMPLE as OPENHANDS_SAMPLE
from tests.unit.test_interop_sweagent import MINI_1X, MINI_2X, MINI_OLDEST, MINI_TOOLS, SWE_0X, SWE_FIXTURE

Reader = Callable[[bytes, str], list[SessionLog]]

OTHER = st.sampled_from([None, 0, -1, 1.5, True, "", "x", "submitted", [], [1, "a"], {}, {"id": 3, "type": "user"}]
                        ).map(lambda v: json.loads(json.dumps(v)))  # a fresh copy: later mutations may change it


@cache
def documents() -> tuple[tuple[str, Reader, Any], ...]:
    """(name, reader, decoded document) of every fixture present and every hand-written sample."""
    out: list[tuple[str, Reader, Any]] = [
        ("swe-0x", read_traj, SWE_0X), ("mini-oldest", read_mini, MINI_OLDEST), ("mini-1x", read_mini, MINI_1X),
        ("mini-2x", read_mini, MINI_2X), ("mini-tools", read_mini, MINI_TOOLS),
        ("openhands-sample", read_trajectory, OPENHANDS_SAMPLE)]
    for name, reader, rel in (("gemini", read_json, GEMINI_FIXTURE), ("swe", read_traj, SWE_FIXTURE),
                              ("openhands", read_trajectory, OPENHANDS_FIXTURE)):
        path = INTEROP / rel
        if path.exists():
            out.append((name, reader, json.loads(path.read_bytes())))
    return tuple(out)


def _pointers(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if type(value) is dict:
        for k, v in value.items():
            out += _pointers(v, (*prefix, k))
    elif type(value) is list:
        for i, v in enumerate(value):
            out += _pointers(v, (*prefix, i))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def _mutate(data: st.DataObject, doc: Any) -> Any:
    """One to three mutations of a deep copy of ``doc``: a value of another type, a field deleted, an array
    element duplicated."""
    doc = json.loads(json.dumps(doc))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = _pointers(doc)
        if not paths:
            return data.draw(OTHER, label="whole document")
        path = data.draw(st.sampled_from(paths), label="pointer")
        parent = _parent(doc, path)
        how = data.draw(st.sampled_from(["type", "delete", "duplicate"]), label="how")
        if how == "type":
            kind = type(parent[path[-1]])
            parent[path[-1]] = data.draw(OTHER.filter(lambda v, kind=kind: type(v) is not kind), label="value")
        elif how == "delete":
            del parent[path[-1]]
        elif type(parent) is list:
            parent.insert(path[-1], json.loads(json.dumps(parent[path[-1]])))
        else:
            arrays = [p for p in paths if type(_parent(doc, p)) is list]
            if arrays:
                p = data.draw(st.sampled_from(arrays), label="element")
                owner = _parent(doc, p)
                owner.insert(p[-1], json.loads(json.dumps(owner[p[-1]])))
    return doc


def _holds(result: LoadResult) -> None:
    check_log(result, allow_error=True)
    error = result.error
    if error is not None:
        assert error.location, error  # LINE:COL, LINE or a JSON pointer
    for warning in result.warnings:
        assert warning.startswith(("/", "line ")), warning


def _read(reader: Reader, raw: bytes, name: str) -> LoadResult:
    logs = reader(raw, name)
    assert len(logs) == 1 and logs[0].key == ""
    return logs[0].result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_give_a_located_error_or_raw_records(data: st.DataObject) -> None:
    docs = documents()
    name, reader, doc = data.draw(st.sampled_from(docs), label="document")
    raw = json.dumps(_mutate(data, doc), indent=data.draw(st.sampled_from([None, 1]), label="indent")).encode()
    if data.draw(st.booleans(), label="truncate"):
        raw = raw[:data.draw(st.integers(0, len(raw)), label="cut")]
    _holds(_read(reader, raw, f"{name}.json"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_documents_name_line_and_column(data: st.DataObject) -> None:
    name, reader, doc = data.draw(st.sampled_from(documents()), label="document")
    raw = json.dumps(doc, indent=1).encode()
    cut = data.draw(st.integers(1, len(raw) - 1), label="cut")
    result = _read(reader, raw[:cut], f"{name}.json")
    _holds(result)
    if raw[:cut].strip():  # a cut document is never valid JSON: the error is inside what is left
        error = result.error
        assert error is not None and error.line is not None and error.column is not None
        assert 1 <= error.line <= raw[:cut].count(b"\n") + 1 and error.column >= 1


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_gemini_jsonl_lines(data: st.DataObject) -> None:
    lines = [json.loads(json.dumps(v)) for v in GEMINI_JSONL]
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        index = data.draw(st.integers(0, len(lines) - 1), label="line")
        lines[index] = _mutate(data, lines[index])
    if data.draw(st.booleans(), label="duplicate line"):
        index = data.draw(st.integers(0, len(lines) - 1), label="duplicated")
        lines.insert(index, lines[index])
    raw = b"".join(json.dumps(v).encode() + b"\n" for v in lines)
    if data.draw(st.booleans(), label="truncate"):
        raw = raw[:data.draw(st.integers(0, len(raw)), label="cut")]
    if data.draw(st.booleans(), label="follow"):  # read as a live file: slices, the reader settling when idle
        loader = LineLoader(GeminiReader("chats/p-1/s.jsonl"))
        cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=6), label="slices"))
        for start, end in zip([0, *cuts], [*cuts, len(raw)], strict=True):
            loader.feed(raw[start:end])
            if data.draw(st.booleans(), label="idle"):
                loader.close_tail()
        _holds(loader.finish())
    else:
        _holds(read_lines(GeminiReader("chats/p-1/s.jsonl"), raw))


def test_every_fixture_document_reads_cleanly() -> None:
    present = {name for name, _, _ in documents()}
    if not {"gemini", "swe", "openhands"} <= present:
        pytest.skip("interop fixtures not found")
    for name, reader, doc in documents():
        result = _read(reader, json.dumps(doc).encode(), f"{name}.json")
        check_log(result)
        assert result.warnings == [], (name, result.warnings)
