"""Property: the delta-maintained surface always equals a naive full rebuild (seeds/001, "SurfaceManager").

Random append/replace sequences, valid and invalid, go through ``Session.append``; after every append the session's
cached surface (advanced by the delta) is compared with a list-based oracle rebuilt from the whole log, and a
refused append must be exactly one the oracle rejects too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import event as note_event
from hypothesis import strategies as st

from assembler.session import Session
from assembler.surface import SURFACE_TYPES, SurfaceError, SurfaceManager, replace_op

TYPES = sorted(SURFACE_TYPES)


def oracle_surface(events: list[dict[str, Any]]) -> list[int] | None:
    """Naive full rebuild on a Python list; None when some marker is invalid."""
    surface: list[int] = []
    for event in events:
        if event["type"] not in SURFACE_TYPES:
            continue
        op = event.get("surfaceOp")
        if op == "append":
            surface.append(event["seq"])
            continue
        start, end = op["start"], op["end"]
        if start > end or start not in surface or end not in surface:
            return None
        i, j = surface.index(start), surface.index(end)
        if i > j or not set(surface[i:j + 1]) <= set(event.get("sourceEventSeqs", [])):
            return None
        surface[i:j + 1] = [event["seq"]]
    return surface


class Clock:
    def __init__(self) -> None:
        self.t = 0

    def __call__(self) -> int:
        self.t += 1
        return self.t


op_strategy = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 2)),
    st.tuples(st.just("other"), st.just(0)),
    st.tuples(st.just("replace"), st.integers(0, 2), st.integers(0, 40), st.integers(0, 40), st.integers(0, 9),
              st.integers(0, 40)),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op_strategy, max_size=150))
def test_delta_surface_equals_naive_rebuild(ops: list[tuple[Any, ...]]) -> None:
    session = Session(clock=Clock())
    expected: list[int] = []
    for op in ops:
        kind = op[0]
        if kind == "append":
            session.append(TYPES[op[1]], {"n": session.seq}, surface="append")
        elif kind == "other":
            session.append("assistant/chunk", {"n": session.seq})
        else:
            _, t, a, b, mode, stray = op
            n = len(expected)
            if n == 0:
                start, end = stray % (session.seq + 1), stray % (session.seq + 1)
            else:
                start, end = expected[a % n], expected[b % n]
            if mode == 0:  # an endpoint that may be off the surface (a shadowed, non-surface or future seq)
                start = stray
            i, j = sorted((a % max(n, 1), b % max(n, 1)))
            covered = expected[i:j + 1] if n else []
            sources = list(dict.fromkeys([*covered, *([] if mode != 1 else covered[1:])]))  # mode 1 drops one
            if mode == 1 and covered:
                sources = covered[1:]
            if mode == 2:
                sources = sorted(set(expected))  # everything on the surface: always covers
            seq = session.seq
            candidate = {"type": TYPES[t], "seq": seq, "surfaceOp": replace_op(start, end),
                         "sourceEventSeqs": sources}
            valid = oracle_surface([*session.events, candidate]) is not None
            if sources and any(s >= seq for s in sources):
                valid = False
            try:
                session.append(TYPES[t], {"n": seq}, surface=replace_op(start, end), source_event_seqs=sources)
            except SurfaceError as exc:
                assert not valid, f"refused a valid replace: {exc}"
                note_event(f"refused: {exc.rule}")
                assert exc.seq == seq
                assert session.seq == seq  # nothing committed
                continue
            assert valid, f"accepted an invalid replace {start}..{end} sources {sources}"
            note_event("replace accepted")
        rebuilt = oracle_surface(list(session.events))
        assert rebuilt is not None
        expected = rebuilt
        assert session.surface.seqs() == expected  # the delta-maintained cache
    assert session.surface.rebuilds == 1
    assert SurfaceManager(session.events).seqs() == expected  # a fresh full rebuild agrees


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(0, 30)), max_size=60))
def test_reading_in_any_rhythm_gives_the_same_surface(steps: list[tuple[bool, int, int]]) -> None:
    """Reading after every event, after some, or only at the end is the same surface."""
    session = Session(clock=Clock())
    eager = SurfaceManager(session.events)
    for read_now, a, b in steps:
        surface = session.surface.seqs()
        i, j = sorted((a % max(len(surface), 1), b % max(len(surface), 1)))
        if surface and a % 3 == 0 and surface[i] <= surface[j]:
            session.append("user/message", {}, surface=replace_op(surface[i], surface[j]),
                           source_event_seqs=surface[i:j + 1])
        else:
            session.append("tool/result", {}, surface="append")
        if read_now:
            eager.sync()
    assert eager.seqs() == session.surface.seqs() == oracle_surface(list(session.events))
