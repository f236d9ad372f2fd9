"""The Conversation assembler: history entries in, view-node upserts per target and a timeline out (ASSEMBLY 5.2).

Rule 1: one entry is one input and at most one Match per Definition; a packed row is never expanded here and can
never start a Context (``PackedStartError``). Rule 2: dispatch goes through a type -> Definitions table built once;
a Definition's ``match`` runs only for the event types it declares, and every entry point (``replace_window``,
``append``, ``prepend``) matches through the same ``_matches``. Rule 3: state has one owner: a Context's state is
written only by its Definition, through ``start``/``update`` (the contract is in ``definition``). Pure and sans-I/O;
Definitions are injected by the edges (the core never imports ``definitions``). Rule 4: an entry a Definition fails on
(a field of an unexpected type) is quarantined (``folding.quarantine``: fallback only, an ``InputFault`` in ``faults``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

from .definition import Context, Definition, Match, Reader
from .display import DisplayTracker, turn_starts
from .errors import FOLD_FAULTS as _FAULTS
from .errors import ConversationError, DefinitionError, InputFault, MatchOrderError, PackedStartError
from .errors import EntryFault as _EntryFault
from .folding import build_nodes, entry_seq, match_seq, merge_matches, quarantine, store_location_data
from .locations import BOUNDARY_TYPES, Coord, LocationIndex
from .records import ChunksRecord, EventRecord, member_count, record_range
from .views import FlushResult, ViewUpdate

__all__ = ["ConversationAssembler", "Entry"]

Entry = EventRecord | ChunksRecord


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
        self._publishers = frozenset(d.kind for d in self.definitions  # kinds that build location data
                                     if type(d).build_location_data is not Definition.build_location_data)
        self.faults: list[InputFault] = []  # entries a Definition could not fold, shown by the fallback instead
        self.display = DisplayTracker()
        self._quarantine: set[int] = set()
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
        self._dependents: dict[str, Context] = {}  # Contexts whose start read ``previous`` (ctx.deps non-empty)
        self._revised = False  # an update Match changed a started Context (since ``append`` cleared it)
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

    def window_entries(self) -> list[Entry]:
        """The window's entries in seq order (the assembler's own list: read, never change)."""
        return self._window

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
            self._row_ranges.append(r)
            if len(self._row_ranges) > 1 and r < self._row_ranges[-2]:
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

    def _matches(self, entry: Entry, coord: Coord) -> Iterator[tuple[Definition, str, Match]]:
        """Every Match of one entry, in dispatch order: the table's Definitions for its type, then the fallback of
        each target no Definition matched (ASSEMBLY 5.2). Lazy, so a caller may apply each before the next match.

        Raises:
            PackedStartError: a Definition claimed a packed row as a start.
        """
        event = entry.event
        packed = type(entry) is ChunksRecord
        location = self.index.resolve(coord)
        matched: set[str | None] = set()
        seq = event.seq
        for d in self._table.get(event.type, ()) if seq not in self._quarantine else ():
            result = d.match(event)
            if result is not None:
                matched.add(d.target)
                if result[1] == "start" and packed:
                    raise PackedStartError(seq, d.kind)
                yield d, result[0], Match(event, result[1], location, coord, packed)
        for d in self._fallbacks:
            if d.target not in matched and (result := d.match(event)) is not None:
                if result[1] == "start" and packed:
                    raise PackedStartError(seq, d.kind)
                yield d, result[0], Match(event, result[1], location, coord, packed)

    def _dispatch(self, entry: Entry, coord: Coord) -> None:
        """Match one entry and apply each Match to its Context at once (the window grows at its end)."""
        try:
            for d, id, m in self._matches(entry, coord):
                self._apply(d, id, m)
        except _FAULTS as exc:
            raise _EntryFault((entry.event.seq,), entry.event.type, exc) from exc

    def _rebuild(self, entries: list[Entry], has_more: bool) -> None:
        """Fold ``entries`` again from scratch, quarantining each entry a Definition fails on."""
        while True:
            try:
                self._replace(entries, has_more)
                return
            except _EntryFault as fault:
                quarantine(fault, self._quarantine, self.faults)

    def _context_for(self, d: Definition, id: str) -> Context:
        ctx = self.contexts.get((d.kind, id))
        if ctx is None:
            ctx = Context(d, id, len(self.contexts))
            self.contexts[(d.kind, id)] = ctx
            self._by_kind.setdefault(d.kind, []).append(ctx)
        return ctx

    def _apply(self, d: Definition, id: str, m: Match) -> None:
        ctx = self.contexts.get((d.kind, id))
        if ctx is None:
            ctx = self._context_for(d, id)
        matches = ctx.matches
        if matches and matches[-1].seq >= m.seq:
            raise MatchOrderError(m.seq, ctx.key, "received non-appended Match")
        turn = m.coord[0]  # no new dict per Match: setdefault only for a turn not seen yet
        (self._by_turn.get(turn) or self._by_turn.setdefault(turn, {}))[ctx.key] = ctx
        if m.role == "start":
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
                self._revised = True
        self._dirty[ctx.key] = ctx

    def _start(self, ctx: Context, m: Match) -> Any:
        ctx.deps = []
        state = ctx.definition.start(ctx, m, Reader(self._previous, ctx))
        if ctx.deps:
            self._dependents[ctx.key] = ctx
        else:
            self._dependents.pop(ctx.key, None)
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
            self._dependents.pop(ctx.key, None)
            self._dirty[ctx.key] = ctx
            return
        if ctx.matches[0] is not ctx.start:
            raise MatchOrderError(ctx.start.seq, ctx.key, "has a start that is not its first Match")
        m = ctx.start
        try:
            state = self._start(ctx, m)
            ctx.state = state
            for m in ctx.matches[1:]:
                state = d.update(ctx, m)
                if state is None:
                    raise DefinitionError(f"seq {m.seq}: {d.kind}.update returned no state")
                ctx.state = state
        except _FAULTS as exc:
            raise _EntryFault((m.seq,), m.event.type, exc) from exc
        self._dirty[ctx.key] = ctx

    def _replay_dependents(self) -> bool:
        """Replay, in start-seq order, every Context whose ``previous`` reads would now differ. True if any did."""
        replayed = False
        with_deps = sorted(self._dependents.values(), key=lambda c: (c.first_seq, c.order))
        for ctx in with_deps:
            for kind, seen, version in ctx.deps:
                now = self._previous(kind, ctx)
                if now is not seen or (now is not None and now.version != version):
                    self._replay(ctx)
                    replayed = True
                    break
        return replayed

    # -- entry points ----------------------------------------------------------------------------------------------

    def replace_window(self, entries: Iterable[Entry], has_more: bool) -> None:
        """Clear everything and fold ``entries`` (any order; sorted by seq)."""
        self.faults = []
        self._quarantine = set()
        self._rebuild(list(entries), has_more)

    def _replace(self, entries: list[Entry], has_more: bool) -> None:
        self._reset(has_more)
        ordered = sorted(entries, key=lambda e: e.event.seq)
        observe = self.index.observe
        coords = [observe(e.event)[0] for e in ordered]
        note, matches, apply = self._note_entry, self._matches, self._apply
        for entry, coord in zip(ordered, coords, strict=True):  # ``_dispatch``, inlined
            note(entry)
            try:
                for d, id, m in matches(entry, coord):
                    apply(d, id, m)
            except _FAULTS as exc:
                raise _EntryFault((entry.event.seq,), entry.event.type, exc) from exc
        self._replay_dependents()
        self._full = True
        self._pending = True
        self._timeline_changed = True

    def append(self, entry: Entry) -> None:
        """Fold one live scalar entry at the end of the window (ASSEMBLY 5.2); one whose seq is already present is
        ignored.

        Raises:
            ConversationError: ``entry`` is a packed row (only scalar entries are appended).
        """
        if type(entry) is not EventRecord:
            raise ConversationError(f"seq {entry.event.seq}: append takes scalar entries only")
        try:
            self._append(entry)
        except _EntryFault as fault:
            quarantine(fault, self._quarantine, self.faults)
            self._rebuild(list(self._window), self.has_more)  # the entry was noted before the fault

    def _append(self, entry: Entry) -> None:
        event = entry.event
        if self.has_seq(event.seq):
            return
        self._note_entry(entry)
        coord, changed_turn = self.index.observe(event)
        if changed_turn is not None or event.type in BOUNDARY_TYPES:
            self._timeline_changed = True
            self._relocate(self._by_turn.get(changed_turn, {}).values())
        self._revised = False
        self._dispatch(entry, coord)
        if self._revised:
            self._replay_dependents()
        self._pending = True

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

    def prepend(self, entries: Iterable[Entry], has_more: bool) -> None:
        """Merge older entries (ASSEMBLY 5.2): late starts included; affected Contexts replay from their start.

        Entries whose seq is already present are dropped. Raises ``MatchOrderError`` when a merged Context's start
        is not its first Match.
        """
        try:
            self._prepend(entries, has_more)
        except _EntryFault as fault:
            quarantine(fault, self._quarantine, self.faults)
            self._rebuild(sorted(self._window, key=lambda e: e.event.seq), self.has_more)

    def _prepend(self, entries: Iterable[Entry], has_more: bool) -> None:
        unique: dict[int, Entry] = {}
        for e in entries:
            if not self.has_seq(e.event.seq):
                unique.setdefault(e.event.seq, e)
        old_has_more = self.has_more
        self.has_more = has_more
        if not unique:
            if has_more != old_has_more and self._replay_dependents():
                self._pending = True
            return
        fresh = sorted(unique.values(), key=lambda e: e.event.seq)
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
        # The same matching as every other entry point; the Matches are merged, then their Contexts replay.
        incoming: dict[str, list[Match]] = {}
        for entry in fresh:
            try:
                for d, id, m in self._matches(entry, coord_of[entry.event.seq]):
                    ctx = self._context_for(d, id)
                    incoming.setdefault(ctx.key, []).append(m)
                    affected[ctx.key] = ctx
            except _FAULTS as exc:
                raise _EntryFault((entry.event.seq,), entry.event.type, exc) from exc
        self._by_turn = {}
        for ctx in self.contexts.values():
            extra = incoming.get(ctx.key)
            if extra:
                merge_matches(ctx, extra)
            for m in ctx.matches:
                self._by_turn.setdefault(m.coord[0], {})[ctx.key] = ctx
        for ctx in sorted(affected.values(), key=lambda c: c.first_seq):
            self._replay(ctx)
        self._replay_dependents()
        self._full = True
        self._timeline_changed = True
        self._pending = True

    @property
    def window(self) -> Sequence[Entry]:
        """The window's entries in seq order (read only: change it through the entry points and ``repack``)."""
        return self._window

    def repack(self, old: Sequence[Entry], row: ChunksRecord) -> bool:
        """Swap the consecutive window entries ``old`` for one packed ``row`` covering exactly their seqs (live
        repacking). Done only when the row's Matches are theirs folded into one per Context: the same Contexts,
        one coordinate, no start among them; the state is kept (packed = scalar, DESIGN rule 2) and nothing is
        republished. Returns False, changing nothing, otherwise."""
        first, last = record_range(row)
        n = len(old)
        window = self._window
        i = bisect_left(window, first, key=entry_seq)
        if (not old or record_range(old[0])[0] != first or record_range(old[-1])[1] != last
                or any(a is not b for a, b in zip(window[i:i + n], old, strict=False)) or len(window) < i + n):
            return False
        found: dict[str, tuple[Context, int, int]] = {}
        coord: Coord | None = None
        turn: Any = row.event.data.turn  # a JS number: 1.0 finds turn 1
        for ctx in self._by_turn.get(turn, {}).values():
            ms = ctx.matches
            a, b = bisect_left(ms, first, key=match_seq), bisect_right(ms, last, key=match_seq)
            if a == b:
                continue
            if b - a != n or any(m is ctx.start or m.seq != e.event.seq or m.coord != ms[a].coord
                                 for m, e in zip(ms[a:b], old, strict=True)) or coord not in (None, ms[a].coord):
                return False
            coord = ms[a].coord
            found[ctx.key] = (ctx, a, b)
        if coord is None:
            return False
        merged: dict[str, Match] = {}
        try:
            for d, id, m in self._matches(row, coord):
                had = self.contexts.get((d.kind, id))
                if had is None or had.key not in found or had.key in merged:
                    return False
                merged[had.key] = m
        except (PackedStartError, *_FAULTS):
            return False
        if merged.keys() != found.keys():
            return False
        for key, (ctx, a, b) in found.items():
            ctx.matches[a:b] = [merged[key]]
        window[i:i + n] = [row]
        seqs = self._entry_seqs
        seqs.difference_update(e.event.seq for e in old)
        seqs.add(first)
        ranges = self._row_ranges
        j, k = bisect_left(ranges, (first, first)), bisect_right(ranges, (last, float("inf")))
        ranges[j:k] = [(first, last)]
        self.entry_count += 1 - n
        return True

    # -- flush -------------------------------------------------------------------------------------------------------

    def flush(self) -> FlushResult | None:
        """Build location data (step scope, then turn scope, for every Context), then the view nodes of a full
        replace (every Context, creation order) or of the dirty Contexts. None when nothing was pending. A Context
        whose node cannot be built from its entries has them quarantined, and the flush is a full one."""
        while True:
            try:
                return self._flush()
            except _EntryFault as fault:
                quarantine(fault, self._quarantine, self.faults)
                self._rebuild(sorted(self._window, key=lambda e: e.event.seq), self.has_more)

    def _flush(self) -> FlushResult | None:
        if not self._pending:
            return None
        full = self._full
        index = self.index
        index.clear_data()
        ordered = sorted(self.contexts.values(), key=lambda c: c.order)
        for ctx in ordered:
            ctx.scratch = None
        scopes: tuple[Literal["step"], Literal["turn"]] = ("step", "turn")
        publishing = [c for c in ordered if c.kind in self._publishers]
        for scope in scopes:
            for ctx in publishing:
                try:
                    data = ctx.definition.build_location_data(ctx, scope)
                    if data is not None:
                        store_location_data(self.index, ctx, scope, data)
                except (*_FAULTS, DefinitionError) as exc:  # bad input can make two Contexts claim one step
                    raise _EntryFault(tuple(m.seq for m in ctx.matches), ctx.kind, exc) from exc
        if full:
            build = [c for c in ordered if c.definition.target in self.views]
        else:
            keys = set(self._dirty)
            turns = {c.location.key[1] for c in self._dirty.values()}
            build = [c for c in ordered if c.definition.target in self.views and (
                c.key in keys or (c.definition.reads_turn_data and c.location.key[1] in turns)
                or self._timeline_changed and c.definition.reads_turn_data)]
        views = build_nodes(build, self.views, full)
        display: dict[str, Any] = {}
        if "chat" in views:  # what each row shows of its neighbours: decided here, not guessed by an edge
            views["chat"], display = self.display.publish(views["chat"], full, turn_starts(index.turns))
        result = FlushResult(
            {t: ViewUpdate(t, full, nodes, display if t == "chat" else {}) for t, nodes in views.items()
             if full or nodes or self._timeline_changed}, index.timeline(), self._timeline_changed)
        self._dirty = {}
        self._full = False
        self._timeline_changed = False
        self._pending = False
        return result
