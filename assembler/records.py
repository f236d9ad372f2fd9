"""Wire shapes: session events, packed chunk-row events, history records, pages and follow frames.

Rules: wire Structs are frozen and tagged; decoders are built once at import. Event ``data`` stays generic JSON so
unknown event types and fields pass through intact; chunk-row data is strict (exact keys, non-empty payload,
``len(dt) == members - 1``, every member seq and running time a safe integer). PROTOCOL 1.1, 3.1, 3.3.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .errors import RecordDecodeError

__all__ = [
    "MAX_SAFE_INTEGER",
    "SafeInt",
    "SeqInt",
    "SessionEvent",
    "TextChunksEvent",
    "ReasoningChunksEvent",
    "ToolCallChunksEvent",
    "ChunkRowEvent",
    "TextRowData",
    "ToolCallRowData",
    "EventRecord",
    "ChunksRecord",
    "HistoryRecord",
    "SessionPage",
    "Projections",
    "SnapshotFrame",
    "EventFrame",
    "FollowFrame",
    "CHUNK_ROW_TYPES",
    "decode_page",
    "decode_follow_frame",
    "decode_records",
    "encode",
    "record_range",
    "member_count",
    "is_chunk_row",
]

MAX_SAFE_INTEGER = 2**53 - 1

SafeInt = Annotated[int, Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
SeqInt = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]
# "numeric" in PROTOCOL 2.2 means any JS number: integral or not, never bool.
Number = int | float
NonEmptyStrings = Annotated[list[str], Meta(min_length=1)]


class SessionEvent(Struct, frozen=True, omit_defaults=True):
    """One logical session event (``SessionWireEvent``). ``data`` is any JSON value, kept as decoded."""

    type: str
    seq: SeqInt
    time: SafeInt
    data: Any = None
    ignorable: Literal[True] | UnsetType = UNSET
    sourceEventSeqs: list[SeqInt] | UnsetType = UNSET
    surfaceOp: Any | UnsetType = UNSET


class TextRowData(Struct, frozen=True, forbid_unknown_fields=True):
    """Data of a text or reasoning row: one fragment per original delta (never joined)."""

    turn: Number
    step: Number
    index: Number
    dt: list[SafeInt]
    texts: NonEmptyStrings


class ToolCallRowData(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Data of a tool-call row; ``name`` is the only optional key."""

    turn: Number
    step: Number
    index: Number
    dt: list[SafeInt]
    id: str
    args: NonEmptyStrings
    name: str | UnsetType = UNSET


def _check_row(seq: int, time: int, dt: list[int], members: int) -> None:
    if len(dt) != members - 1:
        raise ValueError(f"dt has {len(dt)} gaps for {members} members (expected {members - 1})")
    if seq + members - 1 > MAX_SAFE_INTEGER:
        raise ValueError("last member seq is not a safe integer")
    if dt:
        running = list(accumulate(dt, initial=time))
        if max(running) > MAX_SAFE_INTEGER or min(running) < -MAX_SAFE_INTEGER:
            raise ValueError("a member time is not a safe integer")


class _RowBase(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    seq: SeqInt
    time: SafeInt


class TextChunksEvent(_RowBase, frozen=True, tag="chunkrow/text-chunks"):
    """A packed run of ``text-delta`` chunks; ``seq``/``time`` are the first member's."""

    type: ClassVar[str] = "chunkrow/text-chunks"  # the tag, readable as on a scalar event

    data: TextRowData

    def __post_init__(self) -> None:
        _check_row(self.seq, self.time, self.data.dt, len(self.data.texts))


class ReasoningChunksEvent(_RowBase, frozen=True, tag="chunkrow/reasoning-chunks"):
    """A packed run of ``reasoning-delta`` chunks."""

    type: ClassVar[str] = "chunkrow/reasoning-chunks"  # the tag, readable as on a scalar event

    data: TextRowData

    def __post_init__(self) -> None:
        _check_row(self.seq, self.time, self.data.dt, len(self.data.texts))


class ToolCallChunksEvent(_RowBase, frozen=True, tag="chunkrow/tool-call-chunks"):
    """A packed run of ``tool-call-delta`` chunks of one call id."""

    type: ClassVar[str] = "chunkrow/tool-call-chunks"  # the tag, readable as on a scalar event

    data: ToolCallRowData

    def __post_init__(self) -> None:
        _check_row(self.seq, self.time, self.data.dt, len(self.data.args))


ChunkRowEvent = TextChunksEvent | ReasoningChunksEvent | ToolCallChunksEvent
CHUNK_ROW_TYPES = frozenset(
    {"chunkrow/text-chunks", "chunkrow/reasoning-chunks", "chunkrow/tool-call-chunks"}
)


class EventRecord(Struct, frozen=True, tag_field="type", tag="event"):
    """``SessionEventEntry``: one scalar event."""

    event: SessionEvent


class ChunksRecord(Struct, frozen=True, tag_field="type", tag="chunks"):
    """``SessionChunkRun``: one packed row, covering ``member_count`` logical events."""

    event: ChunkRowEvent


HistoryRecord = EventRecord | ChunksRecord


class SessionPage(Struct, frozen=True):
    """A message-aligned history page (PROTOCOL 3.2)."""

    records: list[HistoryRecord]
    hasMore: bool


class Projections(Struct, frozen=True):
    asOfSeq: int
    values: dict[str, Any] = {}


class SnapshotFrame(Struct, frozen=True, tag_field="type", tag="snapshot"):
    """The first follow frame: the tail page whose last record ends exactly at ``cursor``."""

    header: dict[str, Any]
    cursor: Annotated[int, Meta(ge=-1, le=MAX_SAFE_INTEGER)]
    records: list[HistoryRecord]
    hasMore: bool
    projections: Projections


class EventFrame(Struct, frozen=True, tag_field="type", tag="event"):
    """A live follow frame: always one scalar event."""

    event: SessionEvent


FollowFrame = SnapshotFrame | EventFrame

_page_decoder = msgspec.json.Decoder(SessionPage)
_frame_decoder = msgspec.json.Decoder(FollowFrame)
_records_decoder = msgspec.json.Decoder(list[HistoryRecord])
_encoder = msgspec.json.Encoder()


def _wrap(exc: Exception, what: str) -> RecordDecodeError:
    return RecordDecodeError(f"invalid {what}: {exc}")


def decode_page(buf: bytes | bytearray | memoryview) -> SessionPage:
    """Decode the JSON bytes of a ``SessionPage``.

    Raises:
        RecordDecodeError: the bytes are not a valid page; the message keeps msgspec's ``$.path``.
    """
    try:
        return _page_decoder.decode(buf)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _wrap(exc, "session page") from None


def decode_follow_frame(buf: bytes | bytearray | memoryview) -> SnapshotFrame | EventFrame:
    """Decode one follow frame (snapshot or live event). Raises ``RecordDecodeError``."""
    try:
        return _frame_decoder.decode(buf)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _wrap(exc, "follow frame") from None


def decode_records(buf: bytes | bytearray | memoryview) -> list[HistoryRecord]:
    """Decode a JSON array of history records. Raises ``RecordDecodeError``."""
    try:
        return _records_decoder.decode(buf)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _wrap(exc, "history records") from None


def encode(value: Any) -> bytes:
    """Compact JSON, dict key order kept, non-ASCII as UTF-8 (the reference's ``JSON.stringify`` form)."""
    return _encoder.encode(value)


def is_chunk_row(event: SessionEvent | ChunkRowEvent) -> bool:
    """True for a packed ``chunkrow/*`` event."""
    return type(event) is not SessionEvent


def member_count(event: SessionEvent | ChunkRowEvent) -> int:
    """Logical events covered: 1 for a scalar event, the fragment count for a row."""
    if type(event) is SessionEvent:
        return 1
    data = event.data
    return len(data.args) if type(data) is ToolCallRowData else len(data.texts)  # type: ignore[union-attr]


def record_range(record: HistoryRecord) -> tuple[int, int]:
    """The inclusive logical seq range ``[first, last]`` of a record (PROTOCOL 3.1)."""
    event = record.event
    return event.seq, event.seq + member_count(event) - 1

