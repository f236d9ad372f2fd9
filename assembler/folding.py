"""Parts of the Conversation assembler (``conversation``) that act on one Context or one flush: building view nodes
and checking location data against the contract, merging older Matches, and quarantining the entries a Definition
failed on. Pure and sans-I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .definition import Context, Match
from .errors import FOLD_FAULTS, DefinitionError, EntryFault, InputFault, MatchOrderError
from .locations import LocationIndex, StepLocation, TurnLocation
from .views import LocationData, ViewNode

__all__ = ["build_nodes", "store_location_data", "merge_matches", "quarantine", "entry_seq", "match_seq"]


def build_nodes(build: Iterable[Context], views: Iterable[str], full: bool) -> dict[str, list[ViewNode]]:
    """The view node of each Context in ``build``, per target view; ``ctx.current`` follows.

    Raises:
        EntryFault: a Definition failed on the Context's entries (a field of an unexpected type).
        DefinitionError: a Definition broke the node contract.
    """
    out: dict[str, list[ViewNode]] = {t: [] for t in views}
    for ctx in build:
        d = ctx.definition
        target = d.target
        assert target is not None
        try:
            node = d.build_view_node(ctx)
        except FOLD_FAULTS as exc:
            raise EntryFault(tuple(m.seq for m in ctx.matches), ctx.kind, exc) from exc
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
        out[target].append(node)
    return out


def store_location_data(index: LocationIndex, ctx: Context, scope: str, data: LocationData) -> None:
    """Publish ``data`` on its step or turn of ``index`` (nothing when that location is outside the window).

    Raises:
        DefinitionError: the data names another scope or kind, a turn/step that is not a safe integer >= 0, or a
            location another Context already published on.
    """
    if data.kind != scope:
        raise DefinitionError(f"{ctx.key}: location data kind {data.kind!r} in {scope} scope")
    if data.key != ctx.kind:
        raise DefinitionError(f"{ctx.key}: location data key {data.key!r} is not the definition kind")
    if type(data.turn) is not int or data.turn < 0:
        raise DefinitionError(f"{ctx.key}: location data turn {data.turn!r} is not a safe integer >= 0")
    tl = index.turns.get(data.turn)
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


def merge_matches(ctx: Context, older: list[Match]) -> None:
    """Merge older Matches into a Context's own, in seq order: one Match per seq, at most one start.

    Raises:
        MatchOrderError: two Matches of one seq, or two starts.
    """
    merged = sorted([*ctx.matches, *older], key=lambda m: m.seq)
    for a, b in zip(merged, merged[1:], strict=False):
        if a.seq == b.seq:
            raise MatchOrderError(b.seq, ctx.key, "received non-appended Match")
    starts = [m for m in merged if m.role == "start"]
    if len(starts) > 1:
        raise MatchOrderError(starts[1].seq, ctx.key, "received a second start Match")
    ctx.matches = merged
    ctx.start = starts[0] if starts else None


def quarantine(fault: EntryFault, quarantined: set[int], faults: list[InputFault]) -> None:
    """Quarantine the entries of ``fault`` (from now on only the fallback Definitions see them) and record an
    ``InputFault`` for each. Re-raises the fault's cause when they all were quarantined already (no progress: the
    fallback itself failed, a bug)."""
    fresh = [seq for seq in fault.seqs if seq not in quarantined]
    if not fresh:
        raise fault.cause
    exc = fault.cause
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    for seq in fresh:
        quarantined.add(seq)
        faults.append(InputFault(seq, fault.etype, f"{fault.etype} event not understood ({what}); "
                                                    "shown as a raw event"))


def entry_seq(entry: Any) -> int:
    """An entry's first seq (a sort and bisect key)."""
    return int(entry.event.seq)


def match_seq(m: Match) -> int:
    """A Match's seq (a sort and bisect key)."""
    return m.seq
