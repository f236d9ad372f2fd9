"""Runs of delta lines read straight into one storage row, for readers that repack what they read anyway.

Rules: ``take_run`` reads complete lines from an offset while each one is an ``assistant/chunk`` delta of exactly
the shape ``chunk_rows`` packs (the envelope ``type, seq, time, data``; ``data`` ``turn, step, chunk``; the chunk's
own keys), decoded by typed Structs with integer ``seq``/``time`` (a missing one is rebuilt as the line parser
rebuilds it: the next seq, time 0), of the same block as the first, continuing the log's seq by one and with every
time gap a safe integer. At least ``MIN_RUN`` such lines become the row
``repack_records`` would make of them; anything else (a shorter run, a line of another shape or block, an integral
float, an unknown key) is left to the line-by-line parser, whose verdicts and errors are the rule. So the row is
only ever made from lines the line parser would have accepted one by one and packed into the same row; the
repacker merges it with what comes before and after as it merges any row. The nesting guard (``jsontext``) runs
before the decoder sees a line, as on every path: a line with more brackets than ``MAX_DEPTH`` is checked first and,
when too deep, left to the line parser, which says so (msgspec would recurse into it, even in a key it skips).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .chunk_rows import MIN_RUN, row_of_run
from .jsontext import MAX_DEPTH, NestingError, check_depth
from .records import (
    MAX_SAFE_INTEGER,
    Number,
    ReasoningChunksRow,
    StorageRow,
    TextChunksRow,
    ToolCallChunksRow,
    is_safe_integer,
)

__all__ = ["take_run"]

_Seq = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]
_Time = Annotated[int, Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]


class _Text(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="text-delta"):
    index: Number
    text: str


class _Reasoning(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="reasoning-delta"):
    index: Number
    text: str


class _Tool(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="tool-call-delta"):
    index: Number
    id: str
    argumentsDelta: str
    name: str | UnsetType = UNSET


class _Data(Struct, frozen=True, forbid_unknown_fields=True):
    turn: Number
    step: Number
    chunk: _Text | _Reasoning | _Tool


class _Delta(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="assistant/chunk"):
    data: _Data
    seq: _Seq | UnsetType = UNSET
    time: _Time | UnsetType = UNSET


class _Never(Struct, frozen=True, tag_field="type", tag="\x00"):
    """Makes the line's decoder a tagged union: msgspec requires the tag then (a lone tagged Struct would take a
    line with no ``type`` at all, which the line parser refuses)."""


_decode = msgspec.json.Decoder(_Delta | _Never).decode
_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)


def _key(data: _Data) -> tuple[Any, ...]:
    """The run key ``chunk_rows`` gives the same delta: ``(row class, turn, step, index, id, has_name, name)``."""
    chunk = data.chunk
    if type(chunk) is _Tool:
        named = chunk.name is not UNSET
        return (ToolCallChunksRow, data.turn, data.step, chunk.index, chunk.id, named, chunk.name if named else None)
    row = TextChunksRow if type(chunk) is _Text else ReasoningChunksRow
    return (row, data.turn, data.step, chunk.index, None, False, None)


def take_run(buf: bytes | bytearray, pos: int, next_seq: int,
             max_line_bytes: int | None) -> tuple[StorageRow, int, int] | int:
    """The run of delta lines that starts at offset ``pos`` of ``buf`` (its first seq ``next_seq``): ``(row, lines,
    offset after them)``, or, when fewer than ``MIN_RUN`` lines form one, the offset where the reading stopped (the
    line parser takes the lines up to there)."""
    view = memoryview(buf)
    try:
        key: tuple[Any, ...] = ()
        fragments: list[str] = []
        dt: list[int] = []
        first_time = last_time = 0
        start = pos
        while True:
            end = buf.find(b"\n", start)
            if end < 0 or (max_line_bytes is not None and end - start > max_line_bytes):
                break
            try:
                if buf.count(b"[", start, end) + buf.count(b"{", start, end) > MAX_DEPTH:
                    check_depth(view[start:end])  # few brackets cannot nest too deep: only counted (no copy)
                event = _decode(view[start:end])
            except (*_ERRORS, NestingError):
                break
            if type(event) is not _Delta:
                break
            data = event.data
            expected = next_seq + len(fragments)
            seq = expected if event.seq is UNSET else event.seq  # rebuilt as the line parser does (PROTOCOL 2.3)
            time = 0 if event.time is UNSET else event.time
            if seq != expected:
                break
            if not fragments:
                first_time, key = time, _key(data)
            else:
                gap = time - last_time
                if _key(data) != key or not is_safe_integer(gap):
                    break
                dt.append(gap)
            chunk = data.chunk
            fragments.append(chunk.argumentsDelta if type(chunk) is _Tool else chunk.text)  # type: ignore[union-attr]
            last_time = time
            start = end + 1
        if len(fragments) < MIN_RUN:
            return start
        return row_of_run(key, next_seq, first_time, dt, fragments), len(fragments), start
    finally:
        view.release()
