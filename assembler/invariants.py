"""Invariant checks over any session log: provenance (``sourceEventSeqs``) and surface markers (``surfaceOp``).

Rules (seeds/001 and 000, "Invariants"): ``sourceEventSeqs`` is a non-empty list of integer seqs (an empty list
only on ``assistant/message``, meaning a known-empty stream), with no duplicates, each naming a known event earlier
than the citing one. ``surfaceOp`` is on every surface-eligible event and only there; a replace has ``start <= end``,
both endpoints on the surface as tracked so far, a range not reversed in surface position, and provenance citing
every shadowed node. The checker never raises on bad input: it reports every violation with its seq, in log order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .surface import SurfaceError, SurfaceManager

__all__ = ["RULES", "Violation", "provenance_problems", "check_events"]

RULES: dict[str, str] = {
    "seq-order": "seqs are contiguous from 0",
    "provenance-shape": "sourceEventSeqs is a list of integer seqs",
    "provenance-empty": "sourceEventSeqs is non-empty (except an assistant/message's known-empty stream)",
    "provenance-duplicate": "sourceEventSeqs has no duplicates",
    "provenance-not-earlier": "sourceEventSeqs references earlier events only",
    "provenance-unknown": "sourceEventSeqs references known seqs only",
    "surface-missing": "every surface-eligible event carries surfaceOp",
    "surface-not-eligible": "surfaceOp appears only on surface-eligible types",
    "surface-malformed": "surfaceOp is 'append' or {op:'replace', start, end}",
    "replace-order": "a replace has start <= end",
    "replace-endpoint": "both replace endpoints are on the current surface",
    "replace-reversed": "a replace range is not reversed in surface position",
    "replace-provenance": "a replace's sourceEventSeqs includes every shadowed node",
}
"""Rule id -> what it requires."""


@dataclass(frozen=True)
class Violation:
    """One broken invariant: the event's ``seq``, the ``rule`` id (a key of ``RULES``) and the details."""

    seq: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.rule}: {self.message}"


def provenance_problems(seq: int, event_type: object, sources: object,
                        known: Any = None) -> list[tuple[str, str]]:
    """The ``(rule, message)`` pairs a ``sourceEventSeqs`` value breaks for the event at ``seq``.

    ``known`` is a container of the log's seqs; None means "every seq below ``seq``" (an append-only log
    being extended at ``seq``), where every earlier seq is known by construction.
    """
    if type(sources) is not list or any(type(s) is not int for s in sources):
        return [("provenance-shape", f"sourceEventSeqs must be a list of integer seqs, got {sources!r}")]
    problems: list[tuple[str, str]] = []
    if not sources and event_type != "assistant/message":
        problems.append(("provenance-empty", f"empty sourceEventSeqs on {event_type}"))
    seen: set[int] = set()
    dups: list[int] = []
    unknown: list[int] = []
    later: list[int] = []
    for s in sources:
        if s in seen:
            dups.append(s)
            continue
        seen.add(s)
        if s < 0 or (s >= seq if known is None else s not in known):
            unknown.append(s)
        elif s >= seq:
            later.append(s)
    if dups:
        problems.append(("provenance-duplicate", f"duplicate source seq(s) {sorted(set(dups))}"))
    if unknown:
        problems.append(("provenance-unknown", f"unknown source seq(s) {unknown[:10]}"))
    if later:
        problems.append(("provenance-not-earlier", f"source seq(s) {later[:10]} are not earlier than {seq}"))
    return problems


def check_events(events: Iterable[Mapping[str, Any]]) -> list[Violation]:
    """Every invariant violation in a log of logical events, in log order (never raises on bad data).

    The surface is tracked as the log goes; an event whose marker is invalid is reported and left off it.
    """
    log = list(events)
    violations: list[Violation] = []
    known = {e.get("seq") for e in log if type(e.get("seq")) is int}
    expected = 0
    for index, event in enumerate(log):
        seq = event.get("seq")
        if type(seq) is not int or seq != expected:
            violations.append(Violation(seq if type(seq) is int else index, "seq-order",
                                        f"expected seq {expected}, got {seq!r}"))
        expected = (seq if type(seq) is int else index) + 1
        if "sourceEventSeqs" in event:
            own = seq if type(seq) is int else index
            for rule, message in provenance_problems(own, event.get("type"), event["sourceEventSeqs"], known):
                violations.append(Violation(own, rule, message))

    def report(exc: SurfaceError) -> None:
        violations.append(Violation(exc.seq, exc.rule, exc.reason))

    surface = SurfaceManager(log, on_invalid=report)
    surface.sync()
    # Keep log order (the surface pass reports after the provenance pass); sort is stable.
    violations.sort(key=lambda v: v.seq)
    return violations

