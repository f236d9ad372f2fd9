"""The lossless chunk-row codec over plain JSON values (PROTOCOL 2).

Rules: ``pack_chunk_runs`` packs runs of >= 3 consecutive same-block deltas into storage rows; every other value
passes through verbatim, in log order. ``decode_storage_record`` is strict on the three row tags and passes anything
else through unvalidated. Expansion happens only here, in the explicit codec calls; the browser path never calls
them. Rows can also be re-packed, merged, renamed to wire rows and sliced without expanding them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import accumulate
from typing import Any

from .errors import ChunkRowError
from .records import MAX_SAFE_INTEGER

__all__ = [
    "MIN_RUN",
    "ROW_TAGS",
    "WIRE_ROW_TAGS",
    "pack_chunk_runs",
    "repack_records",
    "decode_storage_record",
    "expand_records",
    "validate_storage_row",
    "is_storage_row",
    "storage_row_to_wire",
    "wire_row_to_storage",
    "storage_record_range",
    "row_member_count",
    "row_last_time",
    "slice_storage_row",
]

MIN_RUN = 3
"""A run becomes a row only with at least this many members (a format constant)."""

# storage tag -> (delta chunk type, payload key)
ROW_TAGS: dict[str, tuple[str, str]] = {
    "text-chunks": ("text-delta", "texts"),
    "reasoning-chunks": ("reasoning-delta", "texts"),
    "tool-call-chunks": ("tool-call-delta", "args"),
}
_DELTA_TO_TAG = {delta: tag for tag, (delta, _) in ROW_TAGS.items()}
WIRE_ROW_TAGS = {tag: "chunkrow/" + tag for tag in ROW_TAGS}
_WIRE_TO_STORAGE = {wire: tag for tag, wire in WIRE_ROW_TAGS.items()}

_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data"})
_DATA_KEYS = frozenset({"turn", "step", "chunk"})
_TEXT_CHUNK_KEYS = frozenset({"type", "index", "text"})
_TOOL_CHUNK_KEYS = frozenset({"type", "index", "id", "argumentsDelta"})
_TOOL_CHUNK_KEYS_NAMED = frozenset({"type", "index", "id", "name", "argumentsDelta"})
_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_ROW_DATA_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_ROW_DATA_KEYS = frozenset({"turn", "step", "index", "dt", "id", "args"})
_TOOL_ROW_DATA_KEYS_NAMED = frozenset({"turn", "step", "index", "dt", "id", "name", "args"})


def _is_number(value: object) -> bool:
    # JS has one number type; bool is never a number.
    return type(value) is int or type(value) is float


def _is_safe_int(value: object) -> bool:
    if type(value) is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if type(value) is float:
        return value.is_integer() and abs(value) <= MAX_SAFE_INTEGER
    return False


def is_storage_row(value: object) -> bool:
    """True when ``value`` carries one of the three storage row tags."""
    return type(value) is dict and value.get("type") in ROW_TAGS


# ---------------------------------------------------------------------------------------------------------------
# Encoder


def _packable(event: object) -> tuple[tuple[Any, ...], str] | None:
    """Classify a packable delta (PROTOCOL 2.2), or None.

    Returns ``(key, fragment)``; the run key is ``(tag, turn, step, index, id, has_name, name)``.
    """
    if type(event) is not dict or event.keys() != _ENVELOPE_KEYS or event["type"] != "assistant/chunk":
        return None
    seq = event["seq"]
    if not _is_safe_int(seq) or seq < 0 or not _is_safe_int(event["time"]):
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
        return (_DELTA_TO_TAG[ctype], turn, step, index, None, False, None), text
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
        return ("tool-call-chunks", turn, step, index, call_id, has_name, name), delta
    return None


class _Run:
    """An open run: its block key, first seq/time, gaps, fragments, and last member seq/time."""

    __slots__ = ("key", "seq0", "time0", "dt", "payload", "last_seq", "last_time", "pieces")

    def __init__(self, key: tuple[Any, ...], seq0: Any, time0: Any) -> None:
        self.key = key
        self.seq0 = seq0
        self.time0 = time0
        self.dt: list[Any] = []
        self.payload: list[str] = []
        self.last_seq = seq0
        self.last_time = time0
        self.pieces: list[dict[str, Any]] = []


def _continues(run: _Run, key: tuple[Any, ...], seq: Any, time: Any) -> bool:
    # Tuples compare numbers by value (1 == 1.0, as JS ===); bools were excluded by the packable test.
    if key != run.key or seq != run.last_seq + 1:
        return False
    return _is_safe_int(time - run.last_time)


def _emit_run(run: _Run) -> Iterator[dict[str, Any]]:
    if len(run.payload) >= MIN_RUN:
        tag, turn, step, index, call_id, has_name, name = run.key
        if tag == "tool-call-chunks":
            data: dict[str, Any] = {"turn": turn, "step": step, "index": index, "dt": run.dt, "id": call_id}
            if has_name:
                data["name"] = name
            data["args"] = run.payload
        else:
            data = {"turn": turn, "step": step, "index": index, "dt": run.dt, "texts": run.payload}
        yield {"type": tag, "seq0": run.seq0, "time0": run.time0, "data": data}
    else:
        for piece in run.pieces:
            if is_storage_row(piece):
                yield from decode_storage_record(piece)
            else:
                yield piece


def _row_key(row: dict[str, Any]) -> tuple[Any, ...]:
    data = row["data"]
    if row["type"] == "tool-call-chunks":
        return ("tool-call-chunks", data["turn"], data["step"], data["index"], data["id"], "name" in data,
                data.get("name"))
    return (row["type"], data["turn"], data["step"], data["index"], None, False, None)


def repack_records(records: Iterable[Any]) -> Iterator[Any]:
    """Canonically pack a stream of storage records (events and rows), without expanding rows.

    The output equals ``pack_chunk_runs(expand_records(records))``: adjacent rows and deltas that continue each
    other merge into one row, and a run shorter than ``MIN_RUN`` is written as events. Rows must be valid.
    """
    run: _Run | None = None
    for value in records:
        if is_storage_row(value):
            data = value["data"]
            key = _row_key(value)
            seq, time = value["seq0"], value["time0"]
            fragments: list[str] | tuple[str] = data[ROW_TAGS[value["type"]][1]]
            gaps: list[Any] | tuple[()] = data["dt"]
            last_seq, last_time = seq + len(fragments) - 1, row_last_time(value)
        else:
            info = _packable(value)
            if info is None:
                if run is not None:
                    yield from _emit_run(run)
                    run = None
                yield value
                continue
            key, fragment = info
            seq, time = value["seq"], value["time"]
            fragments, gaps = (fragment,), ()
            last_seq, last_time = seq, time
        if run is not None and _continues(run, key, seq, time):
            run.dt.append(time - run.last_time)
        else:
            if run is not None:
                yield from _emit_run(run)
            run = _Run(key, seq, time)
        run.dt.extend(gaps)
        run.payload.extend(fragments)
        run.last_seq = last_seq
        run.last_time = last_time
        run.pieces.append(value)
    if run is not None:
        yield from _emit_run(run)


def pack_chunk_runs(events: Iterable[Any]) -> list[Any]:
    """Pack one batch of logical events into storage records (PROTOCOL 2.2). Pure; output is in log order."""
    return list(repack_records(events))


# ---------------------------------------------------------------------------------------------------------------
# Decoder


def validate_storage_row(value: dict[str, Any]) -> None:
    """Strictly validate a storage row (PROTOCOL 2.3). Raises ``ChunkRowError`` naming the field."""
    tag = value.get("type")
    if tag not in ROW_TAGS:
        raise ChunkRowError(f"not a storage row type: {tag!r}")

    def fail(reason: str) -> ChunkRowError:
        seq0 = value.get("seq0")
        return ChunkRowError(f"malformed {tag} storage row: {reason}", seq=seq0 if type(seq0) is int else None)

    if value.keys() != _ROW_KEYS:
        extra = sorted(set(value) - _ROW_KEYS)
        missing = sorted(_ROW_KEYS - set(value))
        raise fail(f"envelope keys must be exactly type, seq0, time0, data (extra {extra}, missing {missing})")
    seq0, time0, data = value["seq0"], value["time0"], value["data"]
    if not _is_safe_int(seq0) or seq0 < 0:
        raise fail(f"seq0 must be a safe integer >= 0, got {seq0!r}")
    if not _is_safe_int(time0):
        raise fail(f"time0 must be a safe integer, got {time0!r}")
    if type(data) is not dict:
        raise fail(f"data must be an object, got {type(data).__name__}")
    payload_key = ROW_TAGS[tag][1]
    if tag == "tool-call-chunks":
        if data.keys() != _TOOL_ROW_DATA_KEYS and data.keys() != _TOOL_ROW_DATA_KEYS_NAMED:
            raise fail(f"data keys must be turn, step, index, dt, id, name?, args; got {sorted(data)}")
        if type(data["id"]) is not str:
            raise fail("data.id must be a string")
        if "name" in data and type(data["name"]) is not str:
            raise fail("data.name must be a string")
    elif data.keys() != _TEXT_ROW_DATA_KEYS:
        raise fail(f"data keys must be turn, step, index, dt, texts; got {sorted(data)}")
    for field in ("turn", "step", "index"):
        if not _is_number(data[field]):
            raise fail(f"data.{field} must be a number, got {data[field]!r}")
    payload = data[payload_key]
    if type(payload) is not list or not payload:
        raise fail(f"data.{payload_key} must be a non-empty array of strings")
    for k, item in enumerate(payload):
        if type(item) is not str:
            raise fail(f"data.{payload_key}[{k}] must be a string, got {type(item).__name__}")
    dt = data["dt"]
    if type(dt) is not list:
        raise fail("data.dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise fail(f"data.dt has {len(dt)} gaps for {len(payload)} members (expected {len(payload) - 1})")
    for k, gap in enumerate(dt):
        if not _is_safe_int(gap):
            raise fail(f"data.dt[{k}] must be a safe integer, got {gap!r}")
    if seq0 + len(payload) - 1 > MAX_SAFE_INTEGER:
        raise fail("last member seq is not a safe integer")
    if dt:
        for k, running in enumerate(accumulate(dt, initial=time0)):
            if not -MAX_SAFE_INTEGER <= running <= MAX_SAFE_INTEGER:
                raise fail(f"member {k} time is not a safe integer")


def decode_storage_record(value: Any) -> list[Any]:
    """Decode one storage record into its logical events (PROTOCOL 2.3).

    A value that is not a row is returned as ``[value]`` without validation. A row is validated strictly and
    expanded; member keys are in the reference order ``type, seq, time, data``.

    Raises:
        ChunkRowError: a row tag with a malformed row.
    """
    if not is_storage_row(value):
        return [value]
    validate_storage_row(value)
    tag = value["type"]
    data = value["data"]
    turn, step, index = data["turn"], data["step"], data["index"]
    seq = value["seq0"]
    times = accumulate(data["dt"], initial=value["time0"])
    out: list[Any] = []
    if tag == "tool-call-chunks":
        call_id = data["id"]
        named = "name" in data
        name = data.get("name")
        for k, (time, delta) in enumerate(zip(times, data["args"], strict=True)):
            chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
            if named:
                chunk["name"] = name
            chunk["argumentsDelta"] = delta
            out.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                        "data": {"turn": turn, "step": step, "chunk": chunk}})
    else:
        ctype = ROW_TAGS[tag][0]
        for k, (time, text) in enumerate(zip(times, data["texts"], strict=True)):
            out.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                        "data": {"turn": turn, "step": step, "chunk": {"type": ctype, "index": index, "text": text}}})
    return out


def expand_records(records: Iterable[Any]) -> Iterator[Any]:
    """Every logical event of a stream of storage records, in order (the explicit, expanding codec call)."""
    for value in records:
        if is_storage_row(value):
            yield from decode_storage_record(value)
        else:
            yield value


# ---------------------------------------------------------------------------------------------------------------
# Rows without expansion


def row_member_count(row: dict[str, Any]) -> int:
    """How many logical events a (storage or wire) row covers."""
    data = row["data"]
    return len(data["args"] if "args" in data else data["texts"])


def row_last_time(row: dict[str, Any]) -> Any:
    """The time of a storage row's last member: ``time0 + sum(dt)``."""
    return row["time0"] + sum(row["data"]["dt"])


def storage_record_range(value: dict[str, Any]) -> tuple[int, int]:
    """Inclusive logical seq range of a storage record (event or row)."""
    if is_storage_row(value):
        return value["seq0"], value["seq0"] + row_member_count(value) - 1
    return value["seq"], value["seq"]


def storage_row_to_wire(row: dict[str, Any]) -> dict[str, Any]:
    """Rename a storage row into a ``ChunkRowEvent`` value: ``chunkrow/`` tag, ``seq``/``time``; data shared."""
    return {"type": WIRE_ROW_TAGS[row["type"]], "seq": row["seq0"], "time": row["time0"], "data": row["data"]}


def wire_row_to_storage(event: dict[str, Any]) -> dict[str, Any]:
    """The inverse rename of ``storage_row_to_wire``."""
    return {"type": _WIRE_TO_STORAGE[event["type"]], "seq0": event["seq"], "time0": event["time"],
            "data": event["data"]}


def slice_storage_row(row: dict[str, Any], first: int, last: int) -> dict[str, Any]:
    """The part of a storage row covering logical seqs ``first..last`` (inclusive), as a new row.

    No event is expanded: fragments and gaps are sliced and the new ``time0`` is the old one plus the skipped gaps.
    The result may hold fewer than ``MIN_RUN`` members; ``repack_records`` turns such a piece into events.
    """
    seq0 = row["seq0"]
    n = row_member_count(row)
    a, b = first - seq0, last - seq0 + 1
    if not (0 <= a < b <= n):
        raise ValueError(f"slice {first}..{last} is outside row {seq0}..{seq0 + n - 1}")
    if a == 0 and b == n:
        return row
    data = row["data"]
    dt = data["dt"]
    new_data = dict(data)
    new_data["dt"] = dt[a:b - 1]
    payload_key = "args" if "args" in data else "texts"
    new_data[payload_key] = data[payload_key][a:b]
    return {"type": row["type"], "seq0": seq0 + a, "time0": row["time0"] + sum(dt[:a]), "data": new_data}
