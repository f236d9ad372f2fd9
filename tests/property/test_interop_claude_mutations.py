"""Mutated real Claude Code records never crash the reader (FORMATS §1.4, DESIGN rule 10).

Hypothesis takes the records of the real Claude Code fixtures (``../shared/fixtures/interop/claude-code``), and
mutates a session made of them: a field (at any depth) replaced by a value of another JSON type, a field removed, a
line truncated, lines duplicated, lines reordered. Whatever it does, reading gives a line error or raw records with
warnings, never an exception, and the main log and every child log still pass ``check_log(allow_error=True)``.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.interop.claude import split_sidechains
from tests.interop_support import check_log, interop_files

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.sampled_from([1.5, -0.0, 1e300]),
                   st.sampled_from(["", "x", "tool_use", "text", "2025-01-01T10:00:00Z", "(no content)"]),
                   st.sampled_from([[], {}, ["x"], [{"type": "text"}], {"type": "tool_result"},
                                    {"type": "image", "source": {}}]))


@cache
def real_lines() -> tuple[bytes, ...]:
    """Every record line of the fixtures, the big ones cut out (an image sample, long subagent results) for speed."""
    out: list[bytes] = []
    for path in interop_files("claude-code", ".jsonl"):
        for line in path.read_bytes().split(b"\n"):
            if line.strip() and len(line) < 20_000:
                out.append(line)
    return tuple(out)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into a decoded JSON value."""
    out: list[tuple[Any, ...]] = []
    if type(value) is dict:
        for k, v in value.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    elif type(value) is list:
        for i, v in enumerate(value):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> None:
    for key in path[:-1]:
        value = value[key]
    if delete and type(value) is dict:
        del value[path[-1]]
    else:
        value[path[-1]] = new


@st.composite
def mutated_sessions(draw: st.DrawFn) -> bytes:
    lines = real_lines()
    picked = draw(st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=12))
    records = [json.loads(lines[i]) for i in picked]
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, len(records) - 1))
        paths = _paths(records[i])
        # half the mutations go into the message (its blocks are where the mapping looks deepest)
        inner = [p for p in paths if p[0] == "message" and len(p) > 1]
        if inner and draw(st.booleans()):
            paths = inner
        if paths:
            path = draw(st.sampled_from(paths))
            _set(records[i], path, json.loads(json.dumps(draw(VALUES))), draw(st.booleans()))  # a fresh copy
    out = [json.dumps(r, ensure_ascii=False).encode() for r in records]
    if draw(st.booleans()):  # duplicated lines
        i = draw(st.integers(0, len(out) - 1))
        out.insert(draw(st.integers(0, len(out))), out[i])
    if draw(st.booleans()):  # reordered lines
        out = draw(st.permutations(out))
    if draw(st.booleans()):  # a truncated line, anywhere
        i = draw(st.integers(0, len(out) - 1))
        out[i] = out[i][:draw(st.integers(0, max(0, len(out[i]) - 1)))]
    return b"\n".join(out) + draw(st.sampled_from([b"\n", b""]))


@pytest.mark.skipif(not interop_files("claude-code", ".jsonl"), reason="claude-code fixtures not found")
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_sessions())
def test_mutated_records_give_errors_or_raw_records_never_exceptions(data: bytes) -> None:
    logs = split_sidechains(data, "s.jsonl")
    main = logs[0].result
    for log in logs:
        check_log(log.result, allow_error=True)
    if main.error is not None:
        assert main.error.line is not None  # a line error names its line
    for warning in main.warnings:
        assert warning.startswith("line ")
