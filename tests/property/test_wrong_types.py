"""Issue 9 item 5: an event whose fields have unexpected types never crashes the fold.

Hypothesis takes real session logs (``tests/corpus.py``), replaces one to three fields of their events (at any depth
of ``data``, or the envelope's ``ignorable``/``sourceEventSeqs``/``type``) with values of other JSON types, writes the
log back as lines and reads it like every command does. Whatever it does, no Python exception escapes: the parser
stops at the line with a ``FILE:LINE`` fault naming the seq and field, or the assembler shows the event through the
fallback Definition and records an ``InputFault`` naming its seq, on the scalar and the packed path alike, and the
browser edge answers with an update (never an ``internal`` error).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from corpus import session_logs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.browser import Viewer
from assembler.commands.export import export_html
from assembler.errors import MatchOrderError
from assembler.history import MessageIndex
from assembler.logfile import parse_session_bytes
from assembler.transcript import assemble_checked, canonical_json
from definitions import default_definitions

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.sampled_from([1.5, -0.0, 1e300, 4.0]),
                    st.sampled_from(["", "x", "text-delta", "tool-call", "1"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.sampled_from(["type", "index", "a"]),
                                                                        inner, max_size=2)), max_leaves=4)


FOLDED = frozenset({"assistant/chunk", "assistant/message", "tool/call", "tool/result", "turn/start", "turn/end",
                    "step/start", "step/end", "user/message", "text-chunks", "reasoning-chunks", "tool-call-chunks",
                    "command/done", "session/title", "compaction/done"})
"""Types the default Definitions fold (most mutations go there)."""


@cache
def small_logs() -> tuple[tuple[bytes, tuple[dict[str, Any], ...]], ...]:
    """(header line, events) of the corpus logs under 64 KiB that have a few events."""
    out = []
    for path in session_logs():
        if Path(path).stat().st_size > 64 << 10:
            continue
        lines = [x for x in Path(path).read_bytes().splitlines() if x.strip()]
        if len(lines) > 3:
            out.append((lines[0], tuple(json.loads(x) for x in lines[1:])))
    return tuple(out)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if type(value) is dict:
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif type(value) is list:
        for i, v in enumerate(value[:4]):
            out += _paths(v, (*prefix, i))
    return out


def _mutable_paths(event: dict[str, Any]) -> list[tuple[Any, ...]]:
    paths = [p for p in _paths(event) if p[0] not in ("seq", "seq0", "time", "time0")]
    return paths + [("ignorable",), ("sourceEventSeqs",)]


def _set(event: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target: Any = event
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


class Mutated:
    """A mutated log; its repr (what Hypothesis prints for a failure) names the changes, not the bytes."""

    def __init__(self, data: bytes, changes: list[str]) -> None:
        self.data = data
        self.changes = changes

    def __repr__(self) -> str:
        return f"Mutated({'; '.join(self.changes)})"


@st.composite
def mutated_log(draw: Any) -> Mutated:
    logs = small_logs()
    which = draw(st.integers(0, len(logs) - 1))
    header, events = logs[which]
    events = json.loads(json.dumps(events))  # a private copy
    changes = [f"log {which}"]
    folded = [i for i, e in enumerate(events) if e.get("type") in FOLDED]
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.sampled_from(folded) if folded and draw(st.integers(0, 4)) else st.integers(0, len(events) - 1))
        path = draw(st.sampled_from(_mutable_paths(events[n])))
        value = draw(VALUES)
        _set(events[n], path, value)
        changes.append(f"event {n} {events[n].get('type')!r} {list(path)} = {value!r}")
    return Mutated(header + b"\n" + b"\n".join(json.dumps(e).encode() for e in events) + b"\n", changes)


@pytest.fixture(scope="module", autouse=True)
def _corpus() -> None:
    if not small_logs():
        from corpus import require_corpus

        require_corpus()
        pytest.skip("no small corpus logs")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_log())
def test_wrong_types_never_escape_the_fold(mutated: Mutated) -> None:
    data = mutated.data
    result = parse_session_bytes(data)
    if result.error is not None:
        assert result.error.line is not None  # the parser names the line (and the field in its message)
    try:
        _fold_everywhere(data, result)
    except MatchOrderError as exc:
        # A value of the right type that breaks the log's order (a chunk naming a step before that step's start): a
        # clear error naming the seq (``FILE: error: seq N: ...`` in the CLI, the page's alert), never a traceback.
        # (A projected log's events carry no seq: theirs is their position.)
        seqs = {e.get("seq", i) for i, e in enumerate(_events(data))}
        assert str(exc).startswith(f"seq {exc.seq}: ") and exc.seq in seqs


def _events(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()[1:] if line.strip()]


def _fold_everywhere(data: bytes, result: Any) -> None:
    index = MessageIndex(result.records)
    outputs = {}
    for scalar in (False, True):
        page = index.session_page(None, None, None, scalar=scalar)
        transcript, faults = assemble_checked(page.records, page.hasMore, default_definitions())
        outputs[scalar] = canonical_json(transcript)
        seqs = {r.event.seq for r in page.records}
        assert all(f.seq in seqs for f in faults)  # every warning names a seq of the window
        assert all(str(f).startswith(f"seq {f.seq}: ") for f in faults)
    assert export_html(result.records, title="t").startswith("<!")
    viewer = Viewer()
    viewer.file_begin("s.jsonl", len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish(all_records=True))
    assert not (update.get("error") or {}).get("internal"), update.get("error")
    # Every view the page asks for, on the same window: none may end in an internal error.
    keys = [n["key"] for n in update.get("nodes", [])]
    answers = [viewer.render(keys), viewer.trajectory_view(), viewer.context_view(), viewer.search("e"),
               viewer.export(fmt="md", scope="window", title="t"),
               viewer.export(fmt="html", scope="session", title="t")]
    answers += [viewer.records(k) for k in keys[:20]] + [viewer.row_text(k) for k in keys[:20]]
    # The request inspector and the context meter (issue 22) read the same window's raw payloads.
    steps = [r for r in json.loads(answers[1])["rows"] if r["kind"] == "step"][:10]
    answers += [viewer.context_meter()] + [viewer.request_inspector(r.get("request", r["seq"]), "request" not in r)
                                           for r in steps]
    for answer in answers:
        value = json.loads(answer)
        assert not (isinstance(value, dict) and (value.get("error") or {}).get("internal")), value
