"""Mutated Inspect logs never raise: the real logs' JSON with values of wrong types put at random JSON pointers,
fields and elements removed, and the bytes cut anywhere, read as ``.json`` and inside a rebuilt ``.eval``, give
either a ``SourceError`` with a location (only for a document that is no JSON object at all, or no zip) or sessions
that pass ``check_log`` whose errors and warnings all name where they are, and that keep every message and event
of every sample still readable (or the sample itself beside its error). The hand-built tool-using log of the unit
tests is mutated the same way, for the branches the real logs do not reach."""

from __future__ import annotations

import copy
import io
import json
import re
import zipfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.interop.base import RAW, SOURCE, SessionLog, SourceError
from assembler.interop.inspect import read_eval, read_json
from tests.inspect_samples import agent_sample, log_doc
from tests.interop_support import check_log, interop_file

FIXTURES = "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/"
_CACHE: dict[str, Any] = {}

WRONG = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "x", "attachment://missing", "tc://missing", "data:image/png;base64,AAAA", "model",
                     "assistant", "tool", "2025-13-45T99:00:00"]),
    st.just([]), st.just({}), st.just([1, "a", None]), st.just({"type": 3}), st.just({"type": "image"}),
    st.just({"role": "tool", "content": []}), st.just({"event": "model", "output": {"choices": [{}]}}),
)
# pointer index, operation ("set" a wrong value, "drop" the field or element), the value
MUTATION = st.tuples(st.integers(0, 10_000), st.sampled_from(["set", "set", "drop"]), WRONG)
LOCATED = re.compile(r"^(\S+\.json:)?/")


def _fixture(name: str) -> bytes:
    if name not in _CACHE:
        _CACHE[name] = interop_file(FIXTURES + name).read_bytes()
    data: bytes = _CACHE[name]
    return data


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if type(value) is dict:
        for k, v in value.items():
            out += _paths(v, (*here, k))
    elif type(value) is list:
        for i, v in enumerate(value):
            out += _paths(v, (*here, i))
    return out


def _mutate(doc: Any, mutations: list[tuple[int, str, Any]]) -> Any:
    doc = copy.deepcopy(doc)
    for index, op, value in mutations:
        paths = _paths(doc)[1:]
        if not paths:
            return value
        path = paths[index % len(paths)]
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if op == "drop":
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(value)
    return doc


def _check(sessions: list[SessionLog]) -> set[tuple[Any, str]]:
    """check_log on every session; every error and warning located; returns the origins kept."""
    origins: set[tuple[Any, str]] = set()
    for s in sessions:
        check_log(s.result, allow_error=True)
        error = s.result.error
        if error is not None:  # located, or a zip cut before any member's name (the message says where)
            assert isinstance(error, SourceError), error
            assert error.location or (error.member is None and re.search(r"at byte \d+", error.message)), error
        for w in s.result.warnings:
            assert LOCATED.match(w), w
        for e in s.result.records:
            if e["type"] in (RAW, SOURCE):
                origin = e["data"]["origin"]
                origins.add((origin.get("member"), origin["pointer"]))
    return origins


def _kept(sample: Any, member: str | None, base: str, origins: set[tuple[Any, str]]) -> None:
    """Every message and event of a readable sample is kept; an unreadable sample is kept whole."""
    readable = type(sample) is dict and type(sample.get("id")) in (int, str) and type(sample.get("epoch")) is int
    if not readable:
        assert (member, base) in origins
        return
    for name in ("messages", "events"):
        items = sample.get(name)
        if type(items) is list:
            for i in range(len(items)):
                assert (member, f"{base}/{name}/{i}") in origins, (member, base, name, i)
        elif items is not None:
            assert (member, f"{base}/{name}") in origins


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["log_formats.json", "log_images.json"]), st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_json_log_is_read_or_refused_with_a_location(name: str, mutations: list[Any]) -> None:
    doc = _mutate(json.loads(_fixture(name)), mutations)
    data = json.dumps(doc).encode()
    try:
        sessions = read_json(data, name)
    except SourceError as exc:
        assert type(doc) is not dict, exc  # only a document that is not an object is refused whole
        return
    origins = _check(sessions)
    samples = doc.get("samples")
    if type(samples) is list:
        for i, sample in enumerate(samples):
            _kept(sample, None, f"/samples/{i}", origins)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MUTATION, min_size=1, max_size=6))
def test_mutated_agent_log_is_read_with_locations(mutations: list[Any]) -> None:
    """The hand-built tool-using samples (tool calls, tool events, reasoning, ids, attachments) mutated."""
    doc = _mutate(log_doc([agent_sample(1, 1), agent_sample("b", 2)]), mutations)
    sessions = read_json(json.dumps(doc).encode(), "agent.json")
    origins = _check(sessions)
    samples = doc.get("samples")
    if type(samples) is list:
        for i, sample in enumerate(samples):
            _kept(sample, None, f"/samples/{i}", origins)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["samples/1_epoch_1.json", "header.json", "_journal/start.json", "summaries.json",
                        "reductions.json"]), st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_eval_member_is_read_with_locations(member: str, mutations: list[Any]) -> None:
    original = zipfile.ZipFile(io.BytesIO(_fixture("log_formats.eval")))
    buffer = io.BytesIO()
    mutated: Any = None
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in original.infolist():
            raw = original.read(info)
            if info.filename == member:
                mutated = _mutate(json.loads(raw), mutations)
                raw = json.dumps(mutated).encode()
            out.writestr(info.filename, raw)
    sessions = read_eval(buffer.getvalue(), "log_formats.eval")
    origins = _check(sessions)
    if member.startswith("samples/"):
        _kept(mutated, member, "", origins)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_cut_logs_keep_what_was_complete(data: st.DataObject) -> None:
    raw = _fixture("log_formats.eval")
    cut = data.draw(st.integers(0, len(raw)))
    try:
        sessions = read_eval(raw[:cut], "log_formats.eval")
    except SourceError as exc:
        assert cut < 4 and "not a zip" in exc.message  # only bytes that do not even start a zip are refused
        return
    _check(sessions)
    complete = [s for s in sessions if s.key == "1_epoch_1" and s.result.error is None]
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo("samples/1_epoch_1.json")
    if cut >= info.header_offset + 30 + len(info.filename) + info.compress_size:
        assert complete, "a sample stored completely before the cut is read"
    text = _fixture("log_formats.json")
    cut = data.draw(st.integers(0, len(text) - 1))
    try:
        read_json(text[:cut], "log_formats.json")
    except SourceError as exc:
        assert exc.line is not None or exc.pointer == ""
