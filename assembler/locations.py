"""The turn/step location index: where each entry of a window sits, and whether its turn or step is open or closed.

Rules (ASSEMBLY 5.1, from ``location-index.ts``): an entry's coordinates come from ``data.turn``/``data.step`` when
they are safe integers >= 0; ``data.turn === null`` pins it to the session; otherwise it inherits the current turn
and step, which ``turn/start``, ``step/start`` and explicit coordinates set and ``step/end``/``turn/end`` clear.
``turn/*`` events never get a step. Turns and steps exist only through boundary events and are ordered by their
first seq. Status is ``closed`` with the end in the window, else ``open`` with the start, else ``unknown``.
Pure and sans-I/O; rows resolve through the ``turn``/``step`` their data carries, exactly like scalar chunks.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET

from .records import SessionEvent
from .text import safe_index
from .views import Status, TimelineStep, TimelineTurn

__all__ = [
    "Status",
    "LocationKind",
    "Coord",
    "SESSION_COORD",
    "BOUNDARY_TYPES",
    "StepLocation",
    "TurnLocation",
    "Location",
    "SESSION",
    "UNRESOLVED",
    "LocationIndex",
    "TimelineStep",
    "TimelineTurn",
]

LocationKind = Literal["session", "turn", "step", "unresolved"]
Coord = tuple[int | None, int | None]
"""Resolved coordinates ``(turn, step)``; ``(None, None)`` is the session."""
SESSION_COORD: Coord = (None, None)
BOUNDARY_TYPES = frozenset({"turn/start", "turn/end", "step/start", "step/end"})


def _status(start: Any, end: Any) -> Status:
    if end is not None:
        return "closed"
    if start is not None:
        return "open"
    return "unknown"


class Location:
    """Where a Match sits: ``{kind:'session'}``, ``{kind:'turn', turn}``, ``{kind:'step', turn, step}`` or
    ``{kind:'unresolved'}``. ``key`` compares two resolutions (boundary objects are rebuilt with the index)."""

    __slots__ = ("kind", "turn", "step", "key")

    def __init__(self, kind: LocationKind, turn: TurnLocation | None = None, step: StepLocation | None = None) -> None:
        self.kind = kind
        self.turn = turn
        self.step = step
        self.key: tuple[Any, ...] = (kind, turn.turn if turn else None, step.step if step else None)

    def __repr__(self) -> str:
        return f"Location{self.key!r}"


SESSION = Location("session")
UNRESOLVED = Location("unresolved")


class StepLocation:
    """One step of a turn: its boundary events (``step/start``, ``step/end``) and published data."""

    __slots__ = ("turn", "step", "start", "end", "first_seq", "data", "location")

    def __init__(self, turn: TurnLocation, step: int, first_seq: int) -> None:
        self.turn = turn
        self.step = step
        self.start: SessionEvent | None = None
        self.end: SessionEvent | None = None
        self.first_seq = first_seq
        self.data: dict[str, Any] = {}
        self.location = Location("step", turn, self)

    @property
    def status(self) -> Status:
        return _status(self.start, self.end)


class TurnLocation:
    """One turn: its boundary events, its steps in first-seq order, and published data."""

    __slots__ = ("turn", "start", "end", "first_seq", "steps", "data", "location")

    def __init__(self, turn: int, first_seq: int) -> None:
        self.turn = turn
        self.start: SessionEvent | None = None
        self.end: SessionEvent | None = None
        self.first_seq = first_seq
        self.steps: dict[int, StepLocation] = {}
        self.data: dict[str, Any] = {}
        self.location = Location("turn", self)

    @property
    def status(self) -> Status:
        return _status(self.start, self.end)


def _coordinates(event: Any) -> tuple[bool, int | None, int | None, bool]:
    """``(explicit, turn, step, pinned)`` read from an event's data. ``pinned`` means ``data.turn is null``."""
    data = event.data
    if type(event) is not SessionEvent:
        # A chunk row: its data Struct always carries turn and step.
        return True, safe_index(data.turn), safe_index(data.step), False
    if type(data) is not dict or "turn" not in data:
        return False, None, None, False
    turn = data["turn"]
    if turn is None:
        return True, None, None, True
    t = safe_index(turn)
    if t is None:
        return False, None, None, False
    return True, t, safe_index(data.get("step")), False


class LocationIndex:
    """Built by observing entries in seq order; ``resolve`` maps a coordinate to a ``Location``.

    ``observe`` may continue after a build (live ``append``): the current turn/step carry on from the last entry.
    """

    __slots__ = ("turns", "_cur_turn", "_cur_step")

    def __init__(self) -> None:
        self.turns: dict[int, TurnLocation] = {}
        self._cur_turn: int | None = None
        self._cur_step: int | None = None

    def observe(self, event: Any) -> tuple[Coord, int | None]:
        """Advance over one entry; returns its coordinate and, for a boundary event, the turn it changed."""
        etype = event.type
        explicit, turn, step, pinned = _coordinates(event)
        if pinned:
            return SESSION_COORD, None
        if explicit and turn is not None:
            if turn != self._cur_turn:
                self._cur_turn, self._cur_step = turn, step
            elif step is not None:
                self._cur_step = step
        else:
            turn, step = self._cur_turn, self._cur_step
        if etype.startswith("turn/"):
            step = None
        changed: int | None = None
        if etype in BOUNDARY_TYPES and turn is not None:
            changed = turn
            seq = event.seq
            tl = self.turns.get(turn)
            if tl is None:
                tl = self.turns[turn] = TurnLocation(turn, seq)
            if etype == "turn/start":
                if tl.start is None:
                    tl.start = event
                self._cur_turn, self._cur_step = turn, None
            elif etype == "turn/end":
                if tl.end is None:
                    tl.end = event
                self._cur_turn = self._cur_step = None
            elif step is not None:
                sl = tl.steps.get(step)
                if sl is None:
                    sl = tl.steps[step] = StepLocation(tl, step, seq)
                if etype == "step/start":
                    if sl.start is None:
                        sl.start = event
                    self._cur_turn, self._cur_step = turn, step
                else:
                    if sl.end is None:
                        sl.end = event
                    self._cur_step = None
        if turn is None:
            return SESSION_COORD, changed
        return (turn, step), changed

    def resolve(self, coord: Coord) -> Location:
        """The location of a coordinate: session, the step, the turn (unknown step), or unresolved (no turn)."""
        turn, step = coord
        if turn is None:
            return SESSION
        tl = self.turns.get(turn)
        if tl is None:
            return UNRESOLVED
        if step is not None:
            sl = tl.steps.get(step)
            if sl is not None:
                return sl.location
        return tl.location

    def clear_data(self) -> None:
        for tl in self.turns.values():
            tl.data.clear()
            for sl in tl.steps.values():
                sl.data.clear()

    def timeline(self) -> list[TimelineTurn]:
        """Turns and steps in first-seq order with their status and turn-scope data."""
        out = []
        for tl in sorted(self.turns.values(), key=lambda t: t.first_seq):
            steps = [
                TimelineStep(sl.step, sl.start.seq if sl.start else None, sl.end.seq if sl.end else None, sl.status)
                for sl in sorted(tl.steps.values(), key=lambda s: s.first_seq)
            ]
            out.append(TimelineTurn(tl.turn, tl.start.seq if tl.start else None, tl.end.seq if tl.end else None,
                                    tl.status, steps, dict(tl.data) if tl.data else UNSET))
        return out
