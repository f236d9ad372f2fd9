"""Record shapes: session events, the one chunk-row schema (storage and wire forms), history records, pages and
follow frames.

Rules: Structs are frozen and tagged; decoders are built once at import. Event ``data`` stays generic JSON so
unknown event types and fields pass through intact; chunk rows are strict (exact keys, non-empty payload,
``len(dt) == members - 1``, every member seq and running time a safe integer) and are validated natively by msgspec,
with the same Structs and constraints for the storage row and the wire row. Numbers follow JS (PROTOCOL 2): an
integral float is a safe integer and keeps its form, ``bool`` is never a number. PROTOCOL 1.1, 2.1, 2.3, 3.1, 3.3.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, compress, count
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .errors import RecordDecodeError
from .jsontext import MAX_DEPTH, NestingError, convert, decode_json, encode_with

__all__ = [
    "MAX_SAFE_INTEGER",
    "SafeInt",
    "SeqInt",
    "Number",
    "is_safe_integer",
    "SessionEvent",
    "TextRowData",
    "ToolCallRowData",
    "TextChunksEvent",
    "ReasoningChunksEvent",
    "ToolCallChunksEvent",
    "ChunkRowEvent",
    "TextChunksRow",
    "ReasoningChunksRow",
    "ToolCallChunksRow",
    "StorageRow",
    "StorageRecord",
    "EventRecord",
    "ChunksRecord",
    "HistoryRecord",
    "SessionPage",
    "Projections",
    "SnapshotFrame",
    "EventFrame",
    "FollowFrame",
    "CHUNK_ROW_TYPES",
    "ROW_TYPES",
    "decode_page",
    "decode_follow_frame",
    "decode_storage_row",
    "convert_storage_row",
    "encode",
    "encode_hook",
    "record_range",
    "member_count",
    "joined",
    "first_nonempty",
]

MAX_SAFE_INTEGER = 2**53 - 1

# PROTOCOL 2: JS has one number type, so a JSON ``4.0`` is the same value as ``4``. A "safe integer" is any integral
# number with |x| <= 2**53 - 1, written as an int or as an integral float; ``4.5``, strings and booleans are not.
# A float keeps its form (re-encoding gives the same bytes); it compares, hashes and adds as the int it equals, so
# the checker sees ``int``: only indexing needs ``int(x)`` first.
if TYPE_CHECKING:
    SafeInt = int
    SeqInt = int
else:
    SafeInt = (Annotated[int, Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
               | Annotated[float, Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER, multiple_of=1)])
    SeqInt = (Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]
              | Annotated[float, Meta(ge=0, le=MAX_SAFE_INTEGER, multiple_of=1)])
# "numeric" in PROTOCOL 2.2 means any JS number: integral or not, never bool.
Number = int | float
NonEmptyStrings = Annotated[list[str], Meta(min_length=1)]


def is_safe_integer(value: object) -> bool:
    """PROTOCOL 2's safe integer for a value already decoded as generic JSON (what ``SafeInt`` checks natively)."""
    if type(value) is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return type(value) is float and value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


class SessionEvent(Struct, frozen=True, omit_defaults=True):
    """One logical session event (``SessionWireEvent``). ``data`` is any JSON value, kept as decoded."""

    type: str
    seq: SeqInt
    time: SafeInt
    data: Any = None
    ignorable: Literal[True] | UnsetType = UNSET
    sourceEventSeqs: list[SeqInt] | UnsetType = UNSET
    surfaceOp: Any | UnsetType = UNSET


# ---------------------------------------------------------------------------------------------------------------
# The row schema (PROTOCOL 2.1, 3.1): one payload Struct per kind, shared by the storage row (bare tag,
# ``seq0``/``time0``) and the wire row (``chunkrow/`` tag, ``seq``/``time``). Both envelopes declare the same fields
# with the same constraints; only the tag and the field names differ (msgspec ``rename``).


class TextRowData(Struct, frozen=True, forbid_unknown_fields=True):
    """Data of a text or reasoning row: one fragment per original delta (never joined)."""

    turn: Number
    step: Number
    index: Number
    dt: list[SafeInt]
    texts: NonEmptyStrings

    @property
    def fragments(self) -> list[str]:
        return self.texts


class ToolCallRowData(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Data of a tool-call row; ``name`` is the only optional key. Fields are in the reference's key order."""

    turn: Number
    step: Number
    index: Number
    dt: list[SafeInt]
    id: str
    name: str | UnsetType = UNSET
    args: NonEmptyStrings

    @property
    def fragments(self) -> list[str]:
        return self.args


def _check_row(seq: int, time: int, dt: list[Any], members: int) -> None:
    """The cross-field rules of PROTOCOL 2.3 that a field type cannot state. Linear only in C (``min``/``max``):
    every running time lies between ``time + k*min(dt)`` and ``time + k*max(dt)``, so the exact running sums are
    computed only when that bound leaves the safe range."""
    if type(dt) is not list:
        return  # a lazy run (``lazy_rows``): its builder made these checks on the raw JSON
    if len(dt) != members - 1:
        raise ValueError(f"dt has {len(dt)} gaps for {members} members (expected {members - 1})")
    if seq + members - 1 > MAX_SAFE_INTEGER:
        raise ValueError("last member seq is not a safe integer")
    if dt:
        k = members - 1
        if time + k * max(max(dt), 0) > MAX_SAFE_INTEGER or time + k * min(min(dt), 0) < -MAX_SAFE_INTEGER:
            running = list(accumulate(dt, initial=time))
            if max(running) > MAX_SAFE_INTEGER or min(running) < -MAX_SAFE_INTEGER:
                raise ValueError("a member time is not a safe integer")


_RowClass = type["_ChunkRow"]


class _ChunkRow(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    """A packed run of deltas: ``seq``/``time`` are its first member's, ``data`` its payload (subclasses type it).

    ``type`` is the tag (a class attribute, readable as on a scalar event); ``wire``/``storage`` name the class of
    the same row in the other form, so a rename shares ``data`` and copies two numbers.
    """

    type: ClassVar[str]
    kind: ClassVar[str]  # the delta chunk type of every member
    wire: ClassVar[_RowClass]
    storage: ClassVar[_RowClass]

    seq: SeqInt
    time: SafeInt

    if TYPE_CHECKING:
        data: TextRowData | ToolCallRowData

    def __post_init__(self) -> None:
        data = self.data
        _check_row(self.seq, self.time, data.dt, len(data.fragments))

    @property
    def members(self) -> int:
        """How many logical events the row covers."""
        return len(self.data.fragments)

    @property
    def last_seq(self) -> int:
        return self.seq + len(self.data.fragments) - 1

    @property
    def last_time(self) -> int:
        """The time of the last member: ``time + sum(dt)``."""
        return self.time + sum(self.data.dt)

    def to_wire(self) -> ChunkRowEvent:
        """The same row as a wire ``chunkrow/*`` event (``data`` shared)."""
        row: ChunkRowEvent = self.wire(self.seq, self.time, self.data)  # type: ignore[assignment]
        return row

    def to_storage(self) -> StorageRow:
        """The same row as a storage ``*-chunks`` record (``data`` shared)."""
        row: StorageRow = self.storage(self.seq, self.time, self.data)  # type: ignore[assignment]
        return row


_STORAGE_NAMES = {"seq": "seq0", "time": "time0"}


class TextChunksEvent(_ChunkRow, frozen=True, tag="chunkrow/text-chunks"):
    """Wire: a packed run of ``text-delta`` chunks."""

    type: ClassVar[str] = "chunkrow/text-chunks"
    kind: ClassVar[str] = "text-delta"
    data: TextRowData


class ReasoningChunksEvent(_ChunkRow, frozen=True, tag="chunkrow/reasoning-chunks"):
    """Wire: a packed run of ``reasoning-delta`` chunks."""

    type: ClassVar[str] = "chunkrow/reasoning-chunks"
    kind: ClassVar[str] = "reasoning-delta"
    data: TextRowData


class ToolCallChunksEvent(_ChunkRow, frozen=True, tag="chunkrow/tool-call-chunks"):
    """Wire: a packed run of ``tool-call-delta`` chunks of one call id."""

    type: ClassVar[str] = "chunkrow/tool-call-chunks"
    kind: ClassVar[str] = "tool-call-delta"
    data: ToolCallRowData


class TextChunksRow(_ChunkRow, frozen=True, tag="text-chunks", rename=_STORAGE_NAMES):
    """Storage: a text row, ``{"type":"text-chunks","seq0","time0","data"}`` (PROTOCOL 2.1)."""

    type: ClassVar[str] = "text-chunks"
    kind: ClassVar[str] = "text-delta"
    seq: SeqInt
    time: SafeInt
    data: TextRowData


class ReasoningChunksRow(_ChunkRow, frozen=True, tag="reasoning-chunks", rename=_STORAGE_NAMES):
    """Storage: a reasoning row."""

    type: ClassVar[str] = "reasoning-chunks"
    kind: ClassVar[str] = "reasoning-delta"
    seq: SeqInt
    time: SafeInt
    data: TextRowData


class ToolCallChunksRow(_ChunkRow, frozen=True, tag="tool-call-chunks", rename=_STORAGE_NAMES):
    """Storage: a tool-call row."""

    type: ClassVar[str] = "tool-call-chunks"
    kind: ClassVar[str] = "tool-call-delta"
    seq: SeqInt
    time: SafeInt
    data: ToolCallRowData


for _wire, _storage in ((TextChunksEvent, TextChunksRow), (ReasoningChunksEvent, ReasoningChunksRow),
                        (ToolCallChunksEvent, ToolCallChunksRow)):
    _wire.wire = _storage.wire = _wire
    _wire.storage = _storage.storage = _storage
del _wire, _storage

ChunkRowEvent = TextChunksEvent | ReasoningChunksEvent | ToolCallChunksEvent
StorageRow = TextChunksRow | ReasoningChunksRow | ToolCallChunksRow
StorageRecord = dict[str, Any] | StorageRow
"""A storage record as the log parser gives it: an event (generic JSON, kept as written) or a row Struct."""
CHUNK_ROW_TYPES = frozenset(cls.type for cls in (TextChunksEvent, ReasoningChunksEvent, ToolCallChunksEvent))
ROW_TYPES = frozenset(cls.type for cls in (TextChunksRow, ReasoningChunksRow, ToolCallChunksRow))


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
    error: dict[str, Any] | None = None  # the server's fault report for a session that stopped parsing


class EventFrame(Struct, frozen=True, tag_field="type", tag="event"):
    """A live follow frame: always one scalar event."""

    event: SessionEvent


FollowFrame = SnapshotFrame | EventFrame

_page_decoder = msgspec.json.Decoder(SessionPage)
_frame_decoder = msgspec.json.Decoder(FollowFrame)
_records_decoder = msgspec.json.Decoder(list[HistoryRecord])
_storage_row_decoder = msgspec.json.Decoder(StorageRow)


def encode_hook(value: Any) -> Any:
    """msgspec ``enc_hook``: a lazy row payload (``lazy_rows``) encodes as the list it stands for."""
    items = getattr(value, "items", None)
    if items is not None and not isinstance(value, dict):
        return items()
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=encode_hook)
_WIRE_DEPTH = MAX_DEPTH + 8
"""A page or frame wraps events a few levels deep; the events themselves passed ``MAX_DEPTH`` when read."""


def _wrap(exc: Exception, what: str) -> RecordDecodeError:
    return RecordDecodeError(f"invalid {what}: {exc}")


def decode_page(buf: bytes | bytearray | memoryview) -> SessionPage:
    """Decode the JSON bytes of a ``SessionPage``.

    Raises:
        RecordDecodeError: the bytes are not a valid page; the message keeps msgspec's ``$.path``.
    """
    try:
        value: SessionPage = decode_json(buf, _page_decoder.decode, SessionPage, limit=_WIRE_DEPTH)
        return value
    except (msgspec.ValidationError, msgspec.DecodeError, NestingError) as exc:
        raise _wrap(exc, "session page") from None


def decode_follow_frame(buf: bytes | bytearray | memoryview) -> SnapshotFrame | EventFrame:
    """Decode one follow frame (snapshot or live event). Raises ``RecordDecodeError``."""
    try:
        value: SnapshotFrame | EventFrame = decode_json(buf, _frame_decoder.decode, FollowFrame, limit=_WIRE_DEPTH)
        return value
    except (msgspec.ValidationError, msgspec.DecodeError, NestingError) as exc:
        raise _wrap(exc, "follow frame") from None




def decode_storage_row(buf: bytes | bytearray | memoryview) -> StorageRow:
    """Decode one storage row line (PROTOCOL 2.3), validated natively.

    Raises:
        msgspec.ValidationError, msgspec.DecodeError: not a valid row (the log parser adds the line).
    """
    return _storage_row_decoder.decode(buf)


def convert_storage_row(value: dict[str, Any]) -> StorageRow:
    """A storage row from its generic JSON value (for sources that do not hold the line: SQLite columns, a projected
    row whose ``seq0``/``time0`` were rebuilt). Same Structs, same verdicts as ``decode_storage_row``.

    Raises:
        msgspec.ValidationError: not a valid row.
    """
    row: StorageRow = convert(value, StorageRow, strict=True)
    return row


def encode(value: Any) -> bytes:
    """Compact JSON, dict key order kept, non-ASCII as UTF-8 (the reference's ``JSON.stringify`` form)."""
    return encode_with(_encoder.encode, value)


def joined(fragments: Sequence[str]) -> str:
    """A row's fragments joined: ``"".join(fragments)``, or what a lazily decoded payload already holds (it keeps
    its members undecoded). The one way Definitions read a row's text: they never see a decoder's type."""
    if type(fragments) is list:
        return "".join(fragments)
    done = getattr(fragments, "joined", None)
    return done if type(done) is str else "".join(fragments)


def first_nonempty(fragments: Sequence[str]) -> int:
    """The index of a row's first non-empty fragment, or -1 (a lazily decoded payload answers without decoding)."""
    if type(fragments) is not list:
        quick = getattr(fragments, "first_nonempty", None)
        if quick is not None:
            found: int = quick()
            return found
    return next(compress(count(), fragments), -1)


def member_count(event: SessionEvent | ChunkRowEvent) -> int:
    """Logical events covered: 1 for a scalar event, the fragment count for a row."""
    if type(event) is SessionEvent:
        return 1
    return len(event.data.fragments)


def record_range(record: HistoryRecord) -> tuple[int, int]:
    """The inclusive logical seq range ``[first, last]`` of a record (PROTOCOL 3.1)."""
    event = record.event
    return event.seq, event.seq + member_count(event) - 1

