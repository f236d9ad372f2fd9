"""The lossless chunk-row codec (PROTOCOL 2): events are generic JSON values, rows are the Structs of ``records``.

Rules: ``pack_chunk_runs`` packs runs of >= 3 consecutive same-block deltas into storage rows; every other value
passes through verbatim, in log order. A row holds at most ``MAX_ROW_MEMBERS`` deltas and ``MAX_ROW_CHARS``
characters of fragments (a fragment longer than that alone): a longer run becomes consecutive rows of one block
(which the format allows), cut greedily, so packing never holds more than one row's worth of a run. A row given as
generic JSON (a dict with a row tag) is validated with the row Structs (``storage_row``) wherever the codec meets
it; the log parser decodes row lines straight into them. Expansion happens only here, in the explicit codec calls
(``decode_storage_record``, ``expand_row``, ``expand_records``); the browser path never calls them. Rows can also be
re-packed, merged, renamed to wire rows (``row.to_wire()``) and sliced without expanding them."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any

import msgspec
from msgspec.structs import replace

from .errors import ChunkRowError
from .records import (
    ROW_TYPES,
    ReasoningChunksRow,
    StorageRecord,
    StorageRow,
    TextChunksRow,
    TextRowData,
    ToolCallChunksRow,
    ToolCallRowData,
    convert_storage_row,
    is_safe_integer,
)

__all__ = [
    "MAX_ROW_CHARS",
    "MAX_ROW_MEMBERS",
    "MIN_RUN",
    "row_of_run",
    "pack_chunk_runs",
    "repack_records",
    "storage_row",
    "decode_storage_record",
    "expand_row",
    "expand_records",
    "is_storage_row",
    "storage_record_range",
    "slice_storage_row",
]

MIN_RUN = 3
"""A run becomes a row only with at least this many members (a format constant)."""

MAX_ROW_MEMBERS = 1 << 16
"""The most deltas one packed row holds; a longer run continues in the next row of the same block."""

MAX_ROW_CHARS = 1 << 22
"""The most characters of fragments one packed row holds (a single longer fragment is alone in its row)."""

_ROW_CLASSES = frozenset({TextChunksRow, ReasoningChunksRow, ToolCallChunksRow})
_DELTA_ROW: dict[str, type[TextChunksRow] | type[ReasoningChunksRow]] = {
    "text-delta": TextChunksRow, "reasoning-delta": ReasoningChunksRow}
_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data"})
_DATA_KEYS = frozenset({"turn", "step", "chunk"})
_TEXT_CHUNK_KEYS = frozenset({"type", "index", "text"})
_TOOL_CHUNK_KEYS = frozenset({"type", "index", "id", "argumentsDelta"})
_TOOL_CHUNK_KEYS_NAMED = frozenset({"type", "index", "id", "name", "argumentsDelta"})


def _is_number(value: object) -> bool:
    # JS has one number type; bool is never a number.
    return type(value) is int or type(value) is float


def is_storage_row(value: object) -> bool:
    """True for a storage row Struct (``text-chunks``, ``reasoning-chunks``, ``tool-call-chunks``)."""
    return type(value) in _ROW_CLASSES


def storage_row(value: dict[str, Any]) -> StorageRow:
    """Validate a storage row held as generic JSON (PROTOCOL 2.3) into its Struct.

    Raises:
        ChunkRowError: ``malformed <tag> storage row: <what, at which $.path>``, with the seq when it is readable.
    """
    try:
        return convert_storage_row(value)
    except msgspec.ValidationError as exc:
        raise _row_error(value, exc) from None


def _row_error(value: Any, exc: Exception) -> ChunkRowError:
    tag = value.get("type") if type(value) is dict else None
    seq0 = value.get("seq0") if type(value) is dict else None
    seq = int(seq0) if is_safe_integer(seq0) else None  # type: ignore[arg-type]
    return ChunkRowError(f"malformed {tag} storage row: {exc}", seq=seq)


# ---------------------------------------------------------------------------------------------------------------
# Encoder


def _packable(event: object) -> tuple[tuple[Any, ...], str] | None:
    """Classify a packable delta (PROTOCOL 2.2), or None.

    Returns ``(key, fragment)``; the run key is ``(row class, turn, step, index, id, has_name, name)``.
    """
    if type(event) is not dict or event.keys() != _ENVELOPE_KEYS or event["type"] != "assistant/chunk":
        return None
    seq = event["seq"]
    if not is_safe_integer(seq) or seq < 0 or not is_safe_integer(event["time"]):
        return None
    data = event["data"]
    if type(data) is not dict or data.keys() != _DATA_KEYS:
        return None
    turn, step, chunk = data["turn"], data["step"], data["chunk"]
    if not _is_number(turn) or not _is_number(step) or type(chunk) is not dict:
        return None
    index = chunk.get("index")
    if not _is_number(index):
        return None
    ctype = chunk.get("type")
    if ctype == "text-delta" or ctype == "reasoning-delta":
        text = chunk.get("text")
        if chunk.keys() != _TEXT_CHUNK_KEYS or type(text) is not str:
            return None
        return (_DELTA_ROW[ctype], turn, step, index, None, False, None), text
    if ctype == "tool-call-delta":
        keys = chunk.keys()
        if keys == _TOOL_CHUNK_KEYS:
            has_name, name = False, None
        elif keys == _TOOL_CHUNK_KEYS_NAMED:
            has_name, name = True, chunk["name"]
            if type(name) is not str:
                return None
        else:
            return None
        call_id, delta = chunk["id"], chunk["argumentsDelta"]
        if type(call_id) is not str or type(delta) is not str:
            return None
        return (ToolCallChunksRow, turn, step, index, call_id, has_name, name), delta
    return None


def _row_key(row: StorageRow) -> tuple[Any, ...]:
    data = row.data
    if type(data) is ToolCallRowData:
        named = data.name is not msgspec.UNSET
        return (ToolCallChunksRow, data.turn, data.step, data.index, data.id, named, data.name if named else None)
    return (type(row), data.turn, data.step, data.index, None, False, None)


class _Run:
    """An open run: its block key, first seq/time, gaps, fragments (and their characters), last member seq/time, and
    the records (or parts of rows) in it."""

    __slots__ = ("key", "seq0", "time0", "dt", "payload", "chars", "last_seq", "last_time", "pieces")

    def __init__(self, key: tuple[Any, ...], seq0: Any, time0: Any) -> None:
        self.key = key
        self.seq0 = seq0
        self.time0 = time0
        self.dt: list[Any] = []
        self.payload: list[str] = []
        self.chars = 0
        self.last_seq = seq0
        self.last_time = time0
        self.pieces: list[StorageRecord] = []


def _continues(run: _Run, key: tuple[Any, ...], seq: Any, time: Any) -> bool:
    # Tuples compare numbers by value (1 == 1.0, as JS ===); bools were excluded by the packable test.
    if key != run.key or seq != run.last_seq + 1:
        return False
    return is_safe_integer(time - run.last_time)


def _emit_run(run: _Run) -> Iterator[StorageRecord]:
    pieces = run.pieces
    if len(run.payload) < MIN_RUN:
        for piece in pieces:
            if type(piece) in _ROW_CLASSES:
                yield from expand_row(piece)  # type: ignore[arg-type]
            else:
                yield piece
    elif len(pieces) == 1 and type(pieces[0]) in _ROW_CLASSES:
        yield pieces[0]  # a row nothing joined: already canonical
    else:
        yield row_of_run(run.key, run.seq0, run.time0, run.dt, run.payload)


def row_of_run(key: tuple[Any, ...], seq0: Any, time0: Any, dt: list[Any], payload: list[str]) -> StorageRow:
    """The storage row of a run: its key ``(row class, turn, step, index, id, has_name, name)``, first seq and time,
    gaps and fragments."""
    cls, turn, step, index, call_id, has_name, name = key
    if cls is ToolCallChunksRow:
        data: TextRowData | ToolCallRowData = ToolCallRowData(
            turn=turn, step=step, index=index, dt=dt, id=call_id, name=name if has_name else msgspec.UNSET,
            args=payload)
    else:
        data = TextRowData(turn, step, index, dt, payload)
    row: StorageRow = cls(seq0, time0, data)
    return row


def repack_records(records: Iterable[StorageRecord]) -> Iterator[StorageRecord]:
    """Canonically pack a stream of storage records (events and rows), without expanding rows.

    The output equals ``pack_chunk_runs(expand_records(records))``: adjacent rows and deltas that continue each
    other merge into one row, a run shorter than ``MIN_RUN`` is written as events, and a row is closed when it holds
    ``MAX_ROW_MEMBERS`` deltas or the next fragment would take it past ``MAX_ROW_CHARS`` characters (the rest of the
    run continues in the next row; a row in the input is cut there too).
    """
    run: _Run | None = None
    for value in records:
        if type(value) is dict and value.get("type") in ROW_TYPES:
            value = storage_row(value)
        if type(value) in _ROW_CLASSES:
            row: StorageRow = value  # type: ignore[assignment]
            key = _row_key(row)
            seq, time = row.seq, row.time
            fragments: list[str] | tuple[str] = row.data.fragments
            gaps: list[Any] | tuple[()] = row.data.dt
            last_seq, last_time = row.last_seq, row.last_time
            chars = sum(map(len, fragments))
        else:
            info = _packable(value)
            if info is None:
                if run is not None:
                    yield from _emit_run(run)
                    run = None
                yield value
                continue
            key, fragment = info
            seq, time = value["seq"], value["time"]  # type: ignore[index]
            fragments, gaps = (fragment,), ()
            last_seq, last_time = seq, time
            chars = len(fragment)
        gap: Any = None
        if run is not None and _continues(run, key, seq, time):
            gap = time - run.last_time
        else:
            if run is not None:
                yield from _emit_run(run)
            run = _Run(key, seq, time)
        if len(run.payload) + len(fragments) <= MAX_ROW_MEMBERS and run.chars + chars <= MAX_ROW_CHARS:
            if gap is not None:
                run.dt.append(gap)
            run.dt.extend(gaps)
            run.payload.extend(fragments)
            run.chars += chars
            run.last_seq = last_seq
            run.last_time = last_time
            run.pieces.append(value)
            continue
        # The run reaches a cap inside this record: fill the row, close it, go on in a new one (member by member
        # decisions, so a row in the input is cut exactly where its deltas one by one would be).
        for part in _cut_at_caps(run, value, key, seq, time, fragments, gaps, gap):
            yield from _emit_run(run)
            run = part
    if run is not None:
        yield from _emit_run(run)


def _cut_at_caps(run: _Run, value: StorageRecord, key: tuple[Any, ...], seq: Any, time: Any,
                 fragments: Sequence[str], gaps: Sequence[Any], gap: Any) -> Iterator[_Run]:
    """Add ``value``'s members to ``run`` up to the caps; each time a row is full, yield the run that follows it
    (the caller emits the full one first). ``run`` (and each yielded run) ends up holding what fits."""
    n = len(fragments)
    times = list(accumulate(gaps, initial=time))
    i = 0
    while i < n:
        room = MAX_ROW_MEMBERS - len(run.payload)
        budget = MAX_ROW_CHARS - run.chars
        sizes = list(accumulate(map(len, fragments[i:i + room]))) if room > 0 else []
        k = bisect_right(sizes, budget)
        if k == 0 and not run.payload:
            k = 1  # a fragment longer than a whole row: alone in its row
        if k:
            if gap is not None:  # member 0 continues the run it joins
                run.dt.append(gap)
                gap = None
            run.dt.extend(gaps[i:i + k - 1])
            run.payload.extend(fragments[i:i + k])
            run.chars += sizes[k - 1]
            run.last_seq = seq + i + k - 1
            run.last_time = times[i + k - 1]
            run.pieces.extend([value] if k == n else _part(value, i, i + k))
            i += k
        if i < n:
            run = _Run(key, seq + i, times[i])
            gap = None  # the new row starts at member i: no gap before it
            yield run


def _part(value: StorageRecord, a: int, b: int) -> list[StorageRecord]:
    """Members ``a..b-1`` of a row (as a row, or as events when fewer than ``MIN_RUN``); a delta event as it is."""
    if type(value) not in _ROW_CLASSES:
        return [value]
    row: StorageRow = value  # type: ignore[assignment]
    if b - a >= MIN_RUN:
        return [slice_storage_row(row, row.seq + a, row.seq + b - 1)]
    return list(expand_row(slice_storage_row(row, row.seq + a, row.seq + b - 1)))


def pack_chunk_runs(events: Iterable[StorageRecord]) -> list[StorageRecord]:
    """Pack one batch of logical events into storage records (PROTOCOL 2.2). Pure; output is in log order."""
    return list(repack_records(events))


# ---------------------------------------------------------------------------------------------------------------
# Expansion (the explicit codec call)


def expand_row(row: StorageRow) -> list[dict[str, Any]]:
    """The logical events of one row (PROTOCOL 2.3), keys in the reference order ``type, seq, time, data`` and
    ``type, index, (id, name?,) text/argumentsDelta`` for the chunk."""
    data = row.data
    turn, step, index = data.turn, data.step, data.index
    seq = row.seq
    times = accumulate(data.dt, initial=row.time)
    out: list[dict[str, Any]] = []
    if type(data) is ToolCallRowData:
        call_id = data.id
        named = data.name is not msgspec.UNSET
        name = data.name
        for k, (time, delta) in enumerate(zip(times, data.args, strict=True)):
            chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
            if named:
                chunk["name"] = name
            chunk["argumentsDelta"] = delta
            out.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                        "data": {"turn": turn, "step": step, "chunk": chunk}})
    else:
        ctype = row.kind
        for k, (time, text) in enumerate(zip(times, data.texts, strict=True)):  # type: ignore[union-attr]
            out.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                        "data": {"turn": turn, "step": step, "chunk": {"type": ctype, "index": index, "text": text}}})
    return out


def decode_storage_record(value: Any) -> list[Any]:
    """Decode one storage record into its logical events (PROTOCOL 2.3 ``decodeStorageRecord``): a row (Struct, or
    generic JSON with a row tag, validated strictly) is expanded; any other value is ``[value]``, unvalidated.

    Raises:
        ChunkRowError: a row tag with a malformed row.
    """
    if type(value) is dict and value.get("type") in ROW_TYPES:
        value = storage_row(value)
    if type(value) in _ROW_CLASSES:
        return expand_row(value)
    return [value]


def expand_records(records: Iterable[Any]) -> Iterator[Any]:
    """Every logical event of a stream of storage records, in order (``decode_storage_record`` of each)."""
    for value in records:
        if type(value) in _ROW_CLASSES:
            yield from expand_row(value)
        elif type(value) is dict and value.get("type") in ROW_TYPES:
            yield from expand_row(storage_row(value))
        else:
            yield value


# ---------------------------------------------------------------------------------------------------------------
# Rows without expansion


def storage_record_range(value: StorageRecord) -> tuple[int, int]:
    """Inclusive logical seq range of a storage record (event or row)."""
    if isinstance(value, dict):
        return value["seq"], value["seq"]
    return value.seq, value.last_seq


def slice_storage_row(row: StorageRow, first: int, last: int) -> StorageRow:
    """The part of a storage row covering logical seqs ``first..last`` (inclusive), as a new row.

    No event is expanded: fragments and gaps are sliced and the new ``time0`` is the old one plus the skipped gaps.
    The result may hold fewer than ``MIN_RUN`` members; ``repack_records`` turns such a piece into events.
    """
    n = row.members
    a, b = int(first - row.seq), int(last - row.seq) + 1  # seq may be an integral float (PROTOCOL 2)
    if not (0 <= a < b <= n):
        raise ValueError(f"slice {first}..{last} is outside row {row.seq}..{row.last_seq}")
    if a == 0 and b == n:
        return row
    data = row.data
    dt = data.dt
    if type(data) is ToolCallRowData:
        new_data: TextRowData | ToolCallRowData = replace(data, dt=dt[a:b - 1], args=data.args[a:b])
    else:
        new_data = replace(data, dt=dt[a:b - 1], texts=data.texts[a:b])  # type: ignore[union-attr]
    return type(row)(row.seq + a, row.time + sum(dt[:a]), new_data)  # type: ignore[arg-type]

