"""Live repacking: when a live block ends, the window's scalar deltas of that block become packed rows, so a long
live session holds one window entry per block, not one per token.

Rules: ``LiveRepacker`` watches what the journal publishes to the assembler. A ``block-end`` chunk closes its block
(turn, step, index), a ``step/end`` its step and a ``turn/end`` its turn; then the scalar deltas of what closed (with
a row an earlier page or repack left just before them) are packed by the codec (``chunk_rows.repack_records``: the
runs, rows and ``MIN_RUN`` of a stored log) and swapped in through the window's ``repack``: the viewer's
``ConversationAssembler.repack`` keeps the folded state and publishes nothing (packed = scalar, DESIGN rule 2), so the
view does not change; any other holder of a window (``Window``) swaps the entries. A row
covers exactly the seqs it replaces: the window's ranges stay continuous and later pages and repairs join as before.
A delta nothing closes stays scalar. Pure and sans-I/O.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from msgspec import UNSET

from .chunk_rows import is_storage_row, repack_records
from .conversation import Entry
from .records import ChunksRecord, EventRecord, SessionEvent

__all__ = ["LiveRepacker", "Window", "closed_scope"]

_DELTAS = frozenset({"text-delta", "reasoning-delta", "tool-call-delta"})
ANY: Any = object()
"""In a scope: every step of the turn, or every block of the step."""


class Window(Protocol):
    """What holds a live window: ``ConversationAssembler`` (the viewer), or a client without an assembler."""

    @property
    def window(self) -> Sequence[Entry]: ...

    def repack(self, old: Sequence[Entry], new: ChunksRecord, /) -> bool: ...


def _number(value: object) -> bool:
    return type(value) is int or type(value) is float


def _delta_block(event: SessionEvent) -> tuple[Any, Any, Any] | None:
    """``(turn, step, index)`` of a scalar delta the codec may pack, else None."""
    if event.type != "assistant/chunk":
        return None
    data = event.data
    if type(data) is not dict:
        return None
    chunk = data.get("chunk")
    if type(chunk) is not dict:
        return None
    ctype = chunk.get("type")
    if type(ctype) is not str or ctype not in _DELTAS:  # malformed input must not raise (an unhashable type)
        return None
    turn, step, index = data.get("turn"), data.get("step"), chunk.get("index")
    if not (_number(turn) and _number(step) and _number(index)):
        return None
    return turn, step, index


def closed_scope(event: SessionEvent) -> tuple[Any, Any, Any] | None:
    """What a live event closes: ``(turn, step, index)`` for a ``block-end`` chunk, ``(turn, step, ANY)`` for
    ``step/end``, ``(turn, ANY, ANY)`` for ``turn/end``; None for anything else."""
    data = event.data
    if type(data) is not dict:
        return None
    turn = data.get("turn")
    if not _number(turn):
        return None
    etype = event.type
    if etype == "assistant/chunk":
        chunk = data.get("chunk")
        step = data.get("step")
        if type(chunk) is dict and chunk.get("type") == "block-end" and _number(step) and _number(chunk.get("index")):
            return turn, step, chunk["index"]
    elif etype == "step/end":
        step = data.get("step")
        if _number(step):
            return turn, step, ANY
    elif etype == "turn/end":
        return turn, ANY, ANY
    return None


def _in_scope(block: tuple[Any, Any, Any], scope: tuple[Any, Any, Any]) -> bool:
    turn, step, index = scope
    return block[0] == turn and (step is ANY or block[1] == step) and (index is ANY or block[2] == index)


def _row_block(entry: ChunksRecord) -> tuple[Any, Any, Any]:
    data = entry.event.data
    return data.turn, data.step, data.index


def _plain(event: SessionEvent) -> dict[str, Any] | None:
    """The event as the codec's generic JSON, when it has only ``type, seq, time, data`` (else it is not packable)."""
    if event.ignorable is not UNSET or event.sourceEventSeqs is not UNSET or event.surfaceOp is not UNSET:
        return None
    return {"type": event.type, "seq": event.seq, "time": event.time, "data": event.data}


def _seq(entry: Entry) -> int:
    return entry.event.seq


def _last_seq(entry: Entry) -> int:
    """The last logical seq an entry covers (a row's last member)."""
    if type(entry) is ChunksRecord:
        return int(entry.event.last_seq)
    return entry.event.seq


class LiveRepacker:
    """Packs a live window's closed blocks. Call ``replaced`` with the entries of every window replacement and
    ``appended`` after every live append; ``rows`` counts the rows made and ``saved`` the window entries saved."""

    def __init__(self) -> None:
        self.open: dict[tuple[Any, Any], int] = {}  # (turn, step) -> first seq of a scalar delta not yet packed
        self.rows = 0
        self.saved = 0

    def replaced(self, entries: Iterable[Entry]) -> None:
        """The window was replaced (an opening, a reconnect, a repair): its scalar deltas may be packed later."""
        self.open = {}
        for entry in entries:
            if type(entry) is EventRecord:
                self._note(entry.event)

    def _note(self, event: SessionEvent) -> None:
        block = _delta_block(event)
        if block is not None:
            self.open.setdefault((block[0], block[1]), event.seq)

    def appended(self, asm: Window, entry: Entry) -> int:
        """After ``asm.append(entry)``: note a delta, or pack what ``entry`` closes. Returns the entries saved."""
        if type(entry) is not EventRecord:
            return 0
        event = entry.event
        self._note(event)
        scope = closed_scope(event)
        return 0 if scope is None else self.close(asm, scope)

    def close(self, asm: Window, scope: tuple[Any, Any, Any]) -> int:
        """Pack the scalar deltas of ``scope`` (see ``closed_scope``) in ``asm``'s window. Returns entries saved."""
        keys = [k for k in self.open if _in_scope((*k, None), (scope[0], scope[1], ANY))]
        if not keys:
            return 0
        window = asm.window
        start = bisect_left(window, min(self.open[k] for k in keys), key=_seq)
        before = window[start - 1] if start > 0 else None
        if type(before) is ChunksRecord and _in_scope(_row_block(before), scope):
            start -= 1  # join the row a page or an earlier repack left just before
        fed: list[Any] = []
        scoped: list[Entry] = []
        kept: dict[int, Entry] = {}  # id of an input storage row -> its entry
        for entry in window[start:]:
            if isinstance(entry, ChunksRecord):
                if _in_scope(_row_block(entry), scope):
                    row = entry.event.to_storage()
                    kept[id(row)] = entry
                    fed.append(row)
                    scoped.append(entry)
                    continue
            else:
                scalar = entry.event
                block = _delta_block(scalar)
                plain = _plain(scalar) if block is not None and _in_scope(block, scope) else None
                if plain is not None:
                    fed.append(plain)
                    scoped.append(entry)
                    continue
            fed.append(entry)  # a barrier: passes through the codec as it is
        saved = 0
        seqs = [_seq(e) for e in scoped]
        for item in repack_records(fed):
            if not is_storage_row(item) or id(item) in kept:
                continue
            assert not isinstance(item, dict)
            a, b = bisect_left(seqs, item.seq), bisect_left(seqs, item.last_seq + 1)
            old = scoped[a:b]
            if not old or _seq(old[0]) != item.seq or _last_seq(old[-1]) != item.last_seq:
                continue  # a row cut inside an entry (at the row caps): its entries stay as they are
            if asm.repack(old, ChunksRecord(item.to_wire())):
                self.rows += 1
                saved += len(old) - 1
        self.saved += saved
        self._reopen(asm, keys, scope, window[start:] if start < len(window) else ())
        return saved

    def _reopen(self, asm: Window, keys: list[tuple[Any, Any]], scope: tuple[Any, Any, Any],
                tail: Any) -> None:
        """Forget what closed; a step with blocks still open keeps its first remaining scalar delta."""
        for k in keys:
            del self.open[k]
        if scope[2] is ANY:
            return
        for entry in tail:
            if type(entry) is EventRecord:
                block = _delta_block(entry.event)
                if block is not None and (block[0], block[1]) in keys and not _in_scope(block, scope):
                    self.open.setdefault((block[0], block[1]), entry.event.seq)
