"""The Definition contract (ASSEMBLY 5.1): what a Definition declares and implements, and what it is given.

Rules: a Definition declares its ``kind``, its ``target`` view and every event type its ``match`` may claim; the
assembler (``conversation``) calls ``match`` only for those types and owns the Contexts. A Context's state is written
only by its Definition, through ``start`` (which may read other Contexts through ``Reader.previous``, a recorded
dependency) and ``update``. Pure and sans-I/O; the default Definitions live in ``definitions/`` and are injected by
the edges.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

from msgspec import UNSET

from .locations import UNRESOLVED, Coord, Location
from .views import LocationData, NodeLocation, ViewNode

__all__ = [
    "Role",
    "Target",
    "Match",
    "Context",
    "Reader",
    "Definition",
    "context_key",
    "node_location",
]

Role = Literal["start", "update"]
Target = Literal["chat", "trajectory"]


def context_key(kind: str, id: str) -> str:
    """The Context key ``"{len(kind)}:{kind}{id}"`` (ASSEMBLY 5.1)."""
    return f"{len(kind)}:{kind}{id}"


def node_location(location: Location) -> NodeLocation:
    """The JSON form of a location: its kind and turn/step numbers."""
    kind, turn, step = location.key
    return NodeLocation(kind, UNSET if turn is None else turn, UNSET if step is None else step)


class Match:
    """``{event, role, location}``: one Definition's claim on one entry. ``packed`` is True for a row entry."""

    __slots__ = ("event", "role", "location", "coord", "seq", "packed")

    def __init__(self, event: Any, role: Role, location: Location, coord: Coord, packed: bool) -> None:
        self.event = event
        self.role = role
        self.location = location
        self.coord = coord
        self.seq: int = event.seq
        self.packed = packed

    def __repr__(self) -> str:
        return f"Match({self.event.type!r}, seq={self.seq}, {self.role}, {self.location!r})"


class Context:
    """Everything one ``(kind, id)`` has seen: its Matches in seq order, its start, state and current nodes."""

    __slots__ = ("key", "kind", "id", "definition", "matches", "start", "state", "current", "deps", "version",
                 "order", "scratch")

    def __init__(self, definition: Definition, id: str, order: int) -> None:
        self.key = context_key(definition.kind, id)
        self.kind = definition.kind
        self.id = id
        self.definition = definition
        self.matches: list[Match] = []
        self.start: Match | None = None
        self.state: Any = None
        self.current: dict[str, ViewNode] = {}
        # (kind, context read or None, its version at read time), recorded by Reader.previous
        self.deps: list[tuple[str, Context | None, int]] = []
        self.version = 0
        self.order = order
        self.scratch: Any = None

    @property
    def first_seq(self) -> int:
        return self.matches[0].seq if self.matches else -1

    @property
    def location(self) -> Location:
        """The start Match's location, else the first Match's, else unresolved."""
        if self.start is not None:
            return self.start.location
        return self.matches[0].location if self.matches else UNRESOLVED

    def __repr__(self) -> str:
        return f"Context({self.key!r}, matches={len(self.matches)})"


class Reader:
    """What ``start`` may read of other Contexts: ``previous(kind)``, recorded as a dependency (ASSEMBLY 5.1)."""

    __slots__ = ("_previous", "_context")

    def __init__(self, previous: Callable[[str, Context], Context | None], context: Context) -> None:
        self._previous = previous
        self._context = context

    def previous(self, kind: str) -> Context | None:
        """The Context of ``kind`` with the greatest first seq before this one's start (one with state)."""
        found = self._previous(kind, self._context)
        self._context.deps.append((kind, found, found.version if found is not None else -1))
        return found


class Definition:
    """The ``ConversationNodeDefinition`` contract (ASSEMBLY 5.1). Subclass and set the class attributes.

    ``event_types`` lists every type ``match`` may claim (``chunkrow/*`` included); the assembler never calls
    ``match`` for another type. A Definition with ``fallback = True`` declares no types: it is tried for an entry
    only when no Definition of its target matched it (ASSEMBLY 5.2).
    """

    kind: ClassVar[str] = ""
    target: ClassVar[Target | None] = None
    event_types: ClassVar[frozenset[str]] = frozenset()
    fallback: ClassVar[bool] = False
    reads_turn_data: ClassVar[bool] = False
    """True when the node is built from turn-scope location data (rebuilt whenever any node of its turn is)."""

    def match(self, event: Any) -> tuple[str, Role] | None:
        """``(id, role)`` or None. Pure: no access to history."""
        raise NotImplementedError

    def start(self, context: Context, match: Match, reader: Reader) -> Any:
        raise NotImplementedError

    def update(self, context: Context, match: Match) -> Any:
        return context.state

    def build_location_data(self, context: Context, scope: Literal["step", "turn"]) -> LocationData | None:
        return None

    def build_view_node(self, context: Context) -> ViewNode | None:
        return None
