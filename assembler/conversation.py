"""The Conversation assembler: history entries in, view-node upserts per target and a timeline out (ASSEMBLY 5).

Rule 1: one entry is one input and at most one Match per Definition; a packed row is never expanded here and can
never start a Context (``PackedStartError``). Rule 2: dispatch goes through a type -> Definitions table built once;
a Definition's ``match`` runs only for the event types it declares. Rule 3: state has one owner: a Context's state
is written only by its Definition, through ``start``/``update``. Pure and sans-I/O; Definitions are injected by the
edges (the core never imports ``definitions``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal

from msgspec import UNSET, Struct, UnsetType

from .errors import AssemblerError, PackedStartError
from .locations import (
    BOUNDARY_TYPES,
    UNRESOLVED,
    Coord,
    Location,
    LocationIndex,
    StepLocation,
    TimelineTurn,
    TurnLocation,
)
from .records import ChunksRecord, EventRecord, member_count

__all__ = [
    "Role",
    "Publication",
    "Target",
    "Match",
    "Context",
    "Reader",
    "Definition",
    "LocationData",
    "NodeLocation",
    "ViewNode",
    "ViewUpdate",
    "FlushResult",
    "ConversationAssembler",
    "ConversationError",
    "MatchOrderError",
    "DefinitionError",
    "context_key",
    "node_location",
    "max_publication",
]

Role = Literal["start", "update"]
Publication = Literal["none", "animation-frame", "immediate"]
Target = Literal["chat", "trajectory"]
_PUB_RANK: dict[str, int] = {"none": 0, "animation-frame": 1, "immediate": 2}
Entry = EventRecord | ChunksRecord


class ConversationError(AssemblerError):
    """A Definition or an entry broke the assembler contract (ASSEMBLY 5.1-5.2); the message names the seq."""


class MatchOrderError(ConversationError):
    """Matches of one Context arrived out of order, a second start, or a start after an update."""

    def __init__(self, seq: int, key: str, reason: str) -> None:
        super().__init__(seq, key, reason)
        self.seq = seq
        self.key = key
        self.reason = reason

    def __str__(self) -> str:
        return f"seq {self.seq}: context {self.key} {self.reason}"


class DefinitionError(ConversationError):
    """A Definition returned something the contract forbids (no state, a wrong node key or target, ...)."""


def context_key(kind: str, id: str) -> str:
    """The Context key ``"{len(kind)}:{kind}{id}"`` (ASSEMBLY 5.1)."""
    return f"{len(kind)}:{kind}{id}"


def max_publication(a: Publication, b: Publication) -> Publication:
    return a if _PUB_RANK[a] >= _PUB_RANK[b] else b


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

    __slots__ = ("_assembler", "_context")

    def __init__(self, assembler: ConversationAssembler, context: Context) -> None:
        self._assembler = assembler
        self._context = context

    def previous(self, kind: str) -> Context | None:
        found = self._assembler._previous(kind, self._context)
        self._context.deps.append((kind, found, found.version if found is not None else -1))
        return found


class LocationData(Struct, frozen=True, omit_defaults=True):
    """``{kind: scope, turn, step?, key, value}`` published by ``build_location_data`` (ASSEMBLY 5.1)."""

    kind: Literal["turn", "step"]
    turn: int
    key: str
    value: Any
    step: int | UnsetType = UNSET


class NodeLocation(Struct, frozen=True, omit_defaults=True):
    """The JSON form of a node's location: kind plus turn/step numbers."""

    kind: str
    turn: int | UnsetType = UNSET
    step: int | UnsetType = UNSET


def node_location(location: Location) -> NodeLocation:
    kind, turn, step = location.key
    return NodeLocation(kind, UNSET if turn is None else turn, UNSET if step is None else step)


class ViewNode(Struct, frozen=True, omit_defaults=True):
    """``{key, kind, id, target, anchorSeq, location, data, visibility?}``; ``data`` is a Definition's Struct."""

    key: str
    kind: str
    id: str
    target: str
    anchorSeq: int | float
    location: NodeLocation
    data: Any
    visibility: str | UnsetType = UNSET


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

    def publication(self, match: Match) -> Publication:
        return "immediate"

    def build_location_data(self, context: Context, scope: Literal["step", "turn"]) -> LocationData | None:
        return None

    def build_view_node(self, context: Context) -> ViewNode | None:
        return None


class ViewUpdate(Struct, frozen=True):
    """What a flush gives one view: every node (``replace``) or the upserts since the last flush."""

    target: str
    replace: bool
    nodes: list[ViewNode]


class FlushResult(Struct, frozen=True):
    views: dict[str, ViewUpdate]
    timeline: list[TimelineTurn]
    timeline_changed: bool


class ConversationAssembler:
    """Folds history entries through Definitions (ASSEMBLY 5.2). Entries are decoded wire records.

    Raises (every entry point): ``PackedStartError`` when a row would start a Context, ``MatchOrderError`` for
    out-of-order Matches, ``DefinitionError`` when a Definition breaks its contract. After an error the assembler's
    state is undefined; replace the window to recover.
    """

    def __init__(self, definitions: Sequence[Definition], views: Iterable[str] = ("chat", "trajectory")) -> None:
        kinds = [d.kind for d in definitions]
        if len(set(kinds)) != len(kinds):
            raise DefinitionError(f"duplicate definition kinds in {kinds}")
        self.definitions = list(definitions)
        self.views = frozenset(views)
        self._rank = {d.kind: i for i, d in enumerate(self.definitions)}
        table: dict[str, list[Definition]] = {}
        for d in self.definitions:
            if d.fallback:
                continue
            for etype in d.event_types:
                table.setdefault(etype, []).append(d)
        self._table = {etype: tuple(ds) for etype, ds in table.items()}
        self._fallbacks = tuple(d for d in self.definitions if d.fallback and d.target is not None)
        self._reset(False)

    # -- state ---------------------------------------------------------------------------------------------------

    def _reset(self, has_more: bool) -> None:
        self.has_more = has_more
        self.index = LocationIndex()
        self.contexts: dict[tuple[str, str], Context] = {}
        self._by_kind: dict[str, list[Context]] = {}
        self._by_turn: dict[int | None, dict[str, Context]] = {}
        self._entry_seqs: set[int] = set()
        self._row_ranges: list[tuple[int, int]] = []
        self._window: list[Entry] = []
        self._dirty: dict[str, Context] = {}
        self._full = False
        self._timeline_changed = False
        self._pending = False
        self.entry_count = 0

    def context(self, kind: str, id: str) -> Context | None:
        return self.contexts.get((kind, id))

    def contexts_of(self, kind: str) -> list[Context]:
        return list(self._by_kind.get(kind, ()))

    def has_seq(self, seq: int) -> bool:
        """True when ``seq`` is an entry's first seq or lies inside a row of the window."""
        if seq in self._entry_seqs:
            return True
        ranges = self._row_ranges
        i = bisect_right(ranges, (seq, float("inf"))) - 1
        return i >= 0 and ranges[i][0] <= seq <= ranges[i][1]

    def _note_entry(self, entry: Entry) -> None:
        event = entry.event
        self._entry_seqs.add(event.seq)
        self._window.append(entry)
        if type(entry) is ChunksRecord:
            r = (event.seq, event.seq + member_count(event) - 1)
            if not self._row_ranges or r >= self._row_ranges[-1]:
                self._row_ranges.append(r)
            else:
                self._row_ranges.append(r)
                self._row_ranges.sort()
        self.entry_count += 1

    def _previous(self, kind: str, reader: Context) -> Context | None:
        first = reader.start.seq if reader.start is not None else reader.first_seq
        best: Context | None = None
        for ctx in self._by_kind.get(kind, ()):
            if ctx is reader or ctx.state is None:
                continue
            s = ctx.first_seq
            if s < first and (best is None or s > best.first_seq):
                best = ctx
        return best

    # -- matching ------------------------------------------------------------------------------------------------

    def _dispatch(self, entry: Entry, coord: Coord, new: list[Context] | None = None) -> Publication:
        """Match one entry against the table (and the fallbacks); apply each Match to its Context."""
        event = entry.event
        packed = type(entry) is ChunksRecord
        location = self.index.resolve(coord)
        pub: Publication = "none"
        matched: set[str | None] = set()
        for d in self._table.get(event.type, ()):
            result = d.match(event)
            if result is None:
                continue
            matched.add(d.target)
            pub = max_publication(pub, self._apply(d, result, event, location, coord, packed, new))
        for d in self._fallbacks:
            if d.target in matched:
                continue
            result = d.match(event)
            if result is not None:
                pub = max_publication(pub, self._apply(d, result, event, location, coord, packed, new))
        return pub

    def _context_for(self, d: Definition, id: str) -> Context:
        ctx = self.contexts.get((d.kind, id))
        if ctx is None:
            ctx = Context(d, id, len(self.contexts))
            self.contexts[(d.kind, id)] = ctx
            self._by_kind.setdefault(d.kind, []).append(ctx)
        return ctx

    def _apply(self, d: Definition, result: tuple[str, Role], event: Any, location: Location, coord: Coord,
               packed: bool, new: list[Context] | None) -> Publication:
        id, role = result
        ctx = self._context_for(d, id)
        m = Match(event, role, location, coord, packed)
        matches = ctx.matches
        if matches and matches[-1].seq >= m.seq:
            raise MatchOrderError(m.seq, ctx.key, "received non-appended Match")
        self._by_turn.setdefault(coord[0], {})[ctx.key] = ctx
        if role == "start":
            if packed:
                raise PackedStartError(m.seq, d.kind)
            if ctx.start is not None:
                raise MatchOrderError(m.seq, ctx.key, "received a second start Match")
            if matches:
                raise MatchOrderError(m.seq, ctx.key, "received an update before its start Match")
            matches.append(m)
            ctx.start = m
            ctx.state = self._start(ctx, m)
        else:
            matches.append(m)
            if ctx.state is not None:
                state = d.update(ctx, m)
                if state is None:
                    raise DefinitionError(f"seq {m.seq}: {d.kind}.update returned no state")
                ctx.state = state
                ctx.version += 1
        if new is not None:
            new.append(ctx)
        self._dirty[ctx.key] = ctx
        return d.publication(m)

    def _start(self, ctx: Context, m: Match) -> Any:
        ctx.deps = []
        state = ctx.definition.start(ctx, m, Reader(self, ctx))
        if state is None:
            raise DefinitionError(f"seq {m.seq}: {ctx.kind}.start returned no state")
        ctx.version += 1
        return state

    def _replay(self, ctx: Context) -> None:
        """Rebuild a Context's state from its start and every later Match (ASSEMBLY 5.2)."""
        d = ctx.definition
        ctx.version += 1
        if ctx.start is None:
            ctx.state = None
            ctx.deps = []
            self._dirty[ctx.key] = ctx
            return
        if ctx.matches[0] is not ctx.start:
            raise MatchOrderError(ctx.start.seq, ctx.key, "has a start that is not its first Match")
        state = self._start(ctx, ctx.start)
        ctx.state = state
        for m in ctx.matches[1:]:
            state = d.update(ctx, m)
            if state is None:
                raise DefinitionError(f"seq {m.seq}: {d.kind}.update returned no state")
            ctx.state = state
        self._dirty[ctx.key] = ctx

    def _replay_dependents(self) -> bool:
        """Replay, in start-seq order, every Context whose ``previous`` reads would now differ. True if any did."""
        replayed = False
        with_deps = [c for c in self.contexts.values() if c.deps]
        with_deps.sort(key=lambda c: c.first_seq)
        for ctx in with_deps:
            for kind, seen, version in ctx.deps:
                now = self._previous(kind, ctx)
                if now is not seen or (now is not None and now.version != version):
                    self._replay(ctx)
                    replayed = True
                    break
        return replayed

    # -- entry points ----------------------------------------------------------------------------------------------

    def replace_window(self, entries: Iterable[Entry], has_more: bool) -> Publication:
        """Clear everything and fold ``entries`` (any order; sorted by seq). Returns ``'immediate'``."""
        self._reset(has_more)
        ordered = sorted(entries, key=lambda e: e.event.seq)
        observe = self.index.observe
        coords = [observe(e.event)[0] for e in ordered]
        dispatch = self._dispatch
        note = self._note_entry
        for entry, coord in zip(ordered, coords, strict=True):
            note(entry)
            dispatch(entry, coord)
        self._replay_dependents()
        self._full = True
        self._pending = True
        self._timeline_changed = True
        return "immediate"

    def append(self, entry: Entry) -> Publication:
        """Fold one live scalar entry at the end of the window (ASSEMBLY 5.2).

        Returns the highest publication of its Matches, raised to ``'immediate'`` when the timeline or a location
        changed or a dependent was replayed; ``'none'`` when its seq is already present (ignored).

        Raises:
            ConversationError: ``entry`` is a packed row (only scalar entries are appended).
        """
        if type(entry) is not EventRecord:
            raise ConversationError(f"seq {entry.event.seq}: append takes scalar entries only")
        event = entry.event
        if self.has_seq(event.seq):
            return "none"
        self._note_entry(entry)
        coord, changed_turn = self.index.observe(event)
        pub: Publication = "none"
        if changed_turn is not None or event.type in BOUNDARY_TYPES:
            pub = "immediate"
            self._timeline_changed = True
            self._relocate(self._by_turn.get(changed_turn, {}).values())
        before = {c.key: c.version for c in self.contexts.values() if c.state is not None}
        pub = max_publication(pub, self._dispatch(entry, coord))
        revised = any(c.version != before.get(c.key, c.version) for c in self.contexts.values())
        if revised and self._replay_dependents():
            pub = "immediate"
        self._pending = True
        return pub

    def _relocate(self, contexts: Iterable[Context]) -> None:
        """Re-resolve Matches after the index changed: replay Contexts whose locations moved, mark all dirty."""
        resolve = self.index.resolve
        for ctx in list(contexts):
            moved = False
            for m in ctx.matches:
                loc = resolve(m.coord)
                if loc.key != m.location.key:
                    moved = True
                m.location = loc
            if moved:
                self._replay(ctx)
            self._dirty[ctx.key] = ctx

    def prepend(self, entries: Iterable[Entry], has_more: bool) -> Publication:
        """Merge older entries (ASSEMBLY 5.2): late starts included; affected Contexts replay from their start.

        Entries whose seq is already present are dropped. Raises ``MatchOrderError`` when a merged Context's start
        is not its first Match.
        """
        fresh = sorted((e for e in entries if not self.has_seq(e.event.seq)), key=lambda e: e.event.seq)
        old_has_more = self.has_more
        self.has_more = has_more
        if not fresh:
            if has_more != old_has_more and self._replay_dependents():
                self._pending = True
                return "immediate"
            return "none"
        unique: dict[int, Entry] = {}
        for e in fresh:
            unique.setdefault(e.event.seq, e)
        fresh = list(unique.values())
        for e in fresh:
            self._note_entry(e)
        self._window.sort(key=lambda e: e.event.seq)
        # Rebuild the index over the whole window; coordinates of old Matches may change (inheritance).
        self.index = LocationIndex()
        coord_of = {e.event.seq: self.index.observe(e.event)[0] for e in self._window}
        resolve = self.index.resolve
        affected: dict[str, Context] = {}
        for ctx in self.contexts.values():
            for m in ctx.matches:
                m.coord = coord_of[m.seq]
                loc = resolve(m.coord)
                if loc.key != m.location.key:
                    affected[ctx.key] = ctx
                m.location = loc
        incoming: dict[str, list[Match]] = {}
        for entry in fresh:
            event = entry.event
            packed = type(entry) is ChunksRecord
            coord = coord_of[event.seq]
            location = resolve(coord)
            matched: set[str | None] = set()
            for d in (*self._table.get(event.type, ()), *self._fallbacks):
                if d.fallback and d.target in matched:
                    continue
                result = d.match(event)
                if result is None:
                    continue
                matched.add(d.target)
                id, role = result
                if role == "start" and packed:
                    raise PackedStartError(event.seq, d.kind)
                ctx = self._context_for(d, id)
                incoming.setdefault(ctx.key, []).append(Match(event, role, location, coord, packed))
                affected[ctx.key] = ctx
        self._by_turn = {}
        for ctx in self.contexts.values():
            extra = incoming.get(ctx.key)
            if extra:
                merged = sorted([*ctx.matches, *extra], key=lambda m: m.seq)
                for a, b in zip(merged, merged[1:], strict=False):
                    if a.seq == b.seq:
                        raise MatchOrderError(b.seq, ctx.key, "received non-appended Match")
                starts = [m for m in merged if m.role == "start"]
                if len(starts) > 1:
                    raise MatchOrderError(starts[1].seq, ctx.key, "received a second start Match")
                ctx.matches = merged
                ctx.start = starts[0] if starts else None
            for m in ctx.matches:
                self._by_turn.setdefault(m.coord[0], {})[ctx.key] = ctx
        for ctx in sorted(affected.values(), key=lambda c: c.first_seq):
            self._replay(ctx)
        self._replay_dependents()
        self._full = True
        self._timeline_changed = True
        self._pending = True
        return "immediate"

    # -- flush -------------------------------------------------------------------------------------------------------

    def flush(self) -> FlushResult | None:
        """Build location data (step scope, then turn scope, for every Context), then the view nodes of a full
        replace (every Context, creation order) or of the dirty Contexts. None when nothing was pending."""
        if not self._pending:
            return None
        full = self._full
        index = self.index
        index.clear_data()
        ordered = sorted(self.contexts.values(), key=lambda c: c.order)
        for ctx in ordered:
            ctx.scratch = None
        scopes: tuple[Literal["step"], Literal["turn"]] = ("step", "turn")
        for scope in scopes:
            for ctx in ordered:
                data = ctx.definition.build_location_data(ctx, scope)
                if data is not None:
                    self._store_location_data(ctx, scope, data)
        if full:
            build = [c for c in ordered if c.definition.target in self.views]
        else:
            keys = set(self._dirty)
            turns = {c.location.key[1] for c in self._dirty.values()}
            build = [c for c in ordered if c.definition.target in self.views and (
                c.key in keys or (c.definition.reads_turn_data and c.location.key[1] in turns)
                or self._timeline_changed and c.definition.reads_turn_data)]
        views: dict[str, list[ViewNode]] = {t: [] for t in self.views}
        for ctx in build:
            d = ctx.definition
            target = d.target
            assert target is not None
            node = d.build_view_node(ctx)
            if node is None:
                if not full and target in ctx.current:
                    raise DefinitionError(f"{ctx.key}: build_view_node returned None after a node (hide it instead)")
                ctx.current.pop(target, None)
                continue
            if node.key != ctx.key:
                raise DefinitionError(f"{ctx.key}: view node key {node.key!r} is not the context key")
            if node.target != target:
                raise DefinitionError(f"{ctx.key}: view node target {node.target!r} is not {target!r}")
            ctx.current[target] = node
            views[target].append(node)
        result = FlushResult(
            {t: ViewUpdate(t, full, nodes) for t, nodes in views.items() if full or nodes or self._timeline_changed},
            index.timeline(), self._timeline_changed)
        self._dirty = {}
        self._full = False
        self._timeline_changed = False
        self._pending = False
        return result

    def _store_location_data(self, ctx: Context, scope: str, data: LocationData) -> None:
        if data.kind != scope:
            raise DefinitionError(f"{ctx.key}: location data kind {data.kind!r} in {scope} scope")
        if data.key != ctx.kind:
            raise DefinitionError(f"{ctx.key}: location data key {data.key!r} is not the definition kind")
        if type(data.turn) is not int or data.turn < 0:
            raise DefinitionError(f"{ctx.key}: location data turn {data.turn!r} is not a safe integer >= 0")
        tl = self.index.turns.get(data.turn)
        holder: TurnLocation | StepLocation | None
        if scope == "step":
            if type(data.step) is not int or data.step < 0:
                raise DefinitionError(f"{ctx.key}: location data step {data.step!r} is not a safe integer >= 0")
            holder = tl.steps.get(data.step) if tl is not None else None
        else:
            holder = tl
        if holder is None:
            return  # the location is outside the window: nothing to publish on
        if data.key in holder.data:
            raise DefinitionError(f"{ctx.key}: a second context published {data.key!r} on the same {scope}")
        holder.data[data.key] = data.value
