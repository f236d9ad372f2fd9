"""A session page, or a follow snapshot, decoded for the first screen: the same verdicts as ``records.decode_page``
(``records.decode_follow_frame``), without one Python object per packed fragment. Over 400 lines: one concept, the
lazy decoding of a page's records, which both forms share (a snapshot is a page with a header and a cursor).

Rules: ``decode_lazy_page`` parses the page with msgspec, each row's ``dt`` and ``texts``/``args`` kept as raw JSON
(``msgspec.Raw``); everything else is the strict schema (``records``). A row whose raw fields pass the fast C-level
checks below gets ``LazyTexts``/``LazyGaps`` (its joined text decoded in one piece, the member count from the
separators); any other row is decoded with the strict field types, as ``decode_page`` would. When any row is not
valid the whole page is decoded again by ``decode_page``, so the error (its ``$.path`` included) is exactly the
strict one. ``decode_lazy_frame`` does the same for a follow frame: a snapshot (the served session's first page)
is decoded as a page is, its strict error being ``decode_follow_frame``'s; an event frame (one scalar event) is decoded
strictly. A lazy sequence behaves as the list it stands for (indexing, iteration, ``len``, ``==``, encoding),
decoding its members on first use; the fold reads ``joined`` and ``first_nonempty`` without them.

Cutting (``_cut``): msgspec need not scan the string arrays the fast checks accept. Each ``"texts":[`` and
``"args":[`` array that passes them is cut out of the bytes and replaced by a placeholder string (a fresh nonce and
its index), so msgspec parses a skeleton of the page. Every placeholder must come back in a row's payload field,
each once; otherwise (such a key in an event's data, say) the page is parsed uncut. The checks accept only arrays
that are JSON on their own and the key before one is never inside a string, so the skeleton is JSON exactly when
the page is.

Nesting: a page with at most ``MAX_DEPTH`` brackets is decoded at once; otherwise the page's own levels are parsed
with each event kept raw (msgspec's skip stops deep input with ``RecursionError``), and each event is depth-checked
alone before it is decoded; anything refused goes to ``decode_page``, whose whole-text check names the error.

Fast checks (each is sufficient, never necessary; anything else takes the strict path):

* texts: ``["…","…",…]`` with no ``\\"`` pair (so every quote is a delimiter), no ``\\ud`` escape (no surrogate
  halves to pair across fragments), no ``\\u`` escape cut by a separator and no UTF-8 sequence cut by one (each
  fragment is valid on its own); removing every ``","`` leaves one JSON string, decoded as the joined text.
* dt: only digits and ``,`` inside the brackets (msgspec already checked the JSON syntax: integers) and no gap of ten
  digits or more, so every running time stays safe while ``|time| + gaps * 10**9`` does.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, overload

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .jsontext import MAX_DEPTH, NestingError, check_depth
from .records import (
    MAX_SAFE_INTEGER,
    ChunksRecord,
    EventFrame,
    EventRecord,
    HistoryRecord,
    NonEmptyStrings,
    Number,
    Projections,
    ReasoningChunksEvent,
    SafeInt,
    SeqInt,
    SessionEvent,
    SessionPage,
    SnapshotFrame,
    TextChunksEvent,
    TextRowData,
    ToolCallChunksEvent,
    ToolCallRowData,
    decode_follow_frame,
    decode_page,
)

__all__ = ["LazyTexts", "LazyGaps", "decode_lazy_frame", "decode_lazy_page", "joined_fragments"]

_strings = msgspec.json.Decoder(NonEmptyStrings)
_gaps = msgspec.json.Decoder(list[SafeInt])
_ints = msgspec.json.Decoder(list[int])
_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_MAX_GAP = 10**9  # a gap with at most nine digits


class LazyTexts(Sequence[str]):
    """The fragments of a row, held as their raw JSON array; ``joined`` is their concatenation (decoded once)."""

    __slots__ = ("_raw", "_n", "joined", "_items")

    def __init__(self, raw: bytes, n: int, joined: str) -> None:
        self._raw = raw
        self._n = n
        self.joined = joined
        self._items: list[str] | None = None

    def cut_from(self, payload: bytes) -> bool:
        """Whether these fragments were cut from another array than ``payload`` (a page's shared cut array)."""
        return self._raw is not payload

    def items(self) -> list[str]:
        """The fragments as a list (decoded on first use, then kept)."""
        if self._items is None:
            self._items = _strings.decode(self._raw)
        return self._items

    def first_nonempty(self) -> int:
        """The index of the first non-empty fragment, or -1 (read from the raw array: no quote is escaped)."""
        raw, i, k = self._raw, 1, 0
        while raw.startswith(b'"",', i):
            i += 3
            k += 1
        return -1 if raw.startswith(b'""]', i) else k

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        return self.items()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.items() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyTexts({self._n} fragments)"


class LazyGaps(Sequence[int]):
    """The ``dt`` of a row, held as its raw JSON array of small integers (decoded on first use)."""

    __slots__ = ("_raw", "_n", "_items")

    def __init__(self, raw: bytes, n: int) -> None:
        self._raw = raw
        self._n = n
        self._items: list[int] | None = None

    def items(self) -> list[int]:
        if self._items is None:
            self._items = _ints.decode(self._raw)
        return self._items

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: int | slice) -> int | list[int]:
        return self.items()[i]

    def __iter__(self) -> Iterator[int]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.items() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyGaps({self._n} gaps)"


def joined_fragments(fragments: Sequence[str]) -> str:
    """``"".join(fragments)``, without decoding the members of a ``LazyTexts``."""
    if type(fragments) is LazyTexts:
        return fragments.joined
    return "".join(fragments)


# Continuation bytes of UTF-8 (0x80-0xBF) become 0x01: ``","\x01`` is a separator that cuts a character.
_CONTINUATION = bytes(1 if 0x80 <= b <= 0xBF else b for b in range(256))
_CUT_ESCAPE = re.compile(rb'\\u[^"]{0,3}"')  # a \u escape a quote cuts short (or an escaped backslash + u: strict)


def _fast_texts(raw: bytes) -> LazyTexts | None:
    if not (raw.startswith(b'["') and raw.endswith(b'"]')) or len(raw) < 4:
        return None
    if b"\\" in raw and (b'\\"' in raw or b"\\ud" in raw or b"\\uD" in raw or
                         (b"\\u" in raw and _CUT_ESCAPE.search(raw))):
        return None
    if not raw.isascii() and b'","\x01' in raw.translate(_CONTINUATION):
        return None  # a fragment that starts inside a character is not valid UTF-8 on its own
    joined_raw = raw.replace(b'","', b"")
    try:
        joined = _strings.decode(joined_raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(joined) != 1:
        return None
    return LazyTexts(raw, (len(raw) - len(joined_raw)) // 3 + 1, joined[0])


def _fast_gaps(raw: bytes) -> LazyGaps | None:
    if raw == b"[]":
        return LazyGaps(raw, 0)
    commas = raw.translate(None, b"0123456789")  # msgspec checked the syntax: brackets, commas, integers
    n = len(commas) - 1  # gaps, when only digits were removed between "[" and "]"
    if commas != b"[" + b"," * (n - 1) + b"]":
        return None  # a minus sign, a fraction or an exponent: the strict path decides
    # Every gap has at most nine digits when the digits beyond one per gap add up to at most eight; else look.
    if len(raw) - len(commas) - n > 8 and b"0000000000" in raw.translate(_TO_ZERO):
        return None
    return LazyGaps(raw, n)


# The page as decoded for the first screen: the strict schema except the raw payload fields.

class _RawTextData(Struct, frozen=True, forbid_unknown_fields=True):
    turn: Number
    step: Number
    index: Number
    dt: msgspec.Raw
    texts: msgspec.Raw


class _RawToolData(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    turn: Number
    step: Number
    index: Number
    dt: msgspec.Raw
    id: str
    name: str | UnsetType = UNSET
    args: msgspec.Raw


class _RawText(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="chunkrow/text-chunks"):
    seq: SeqInt
    time: SafeInt
    data: _RawTextData


class _RawReasoning(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type",
                    tag="chunkrow/reasoning-chunks"):
    seq: SeqInt
    time: SafeInt
    data: _RawTextData


class _RawTool(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", tag="chunkrow/tool-call-chunks"):
    seq: SeqInt
    time: SafeInt
    data: _RawToolData


class _RawChunks(Struct, frozen=True, tag_field="type", tag="chunks"):
    event: _RawText | _RawReasoning | _RawTool


class _RawPage(Struct, frozen=True):
    records: list[EventRecord | _RawChunks]
    hasMore: bool


class _RawEventRecord(Struct, frozen=True, tag_field="type", tag="event"):
    event: msgspec.Raw


class _ShallowPage(Struct, frozen=True):
    """A page whose events are kept raw, so each is depth-checked alone before it is decoded."""

    records: list[_RawEventRecord | _RawChunks]
    hasMore: bool


_Cursor = Annotated[int, Meta(ge=-1, le=MAX_SAFE_INTEGER)]


class _RawSnapshot(Struct, frozen=True, tag_field="type", tag="snapshot"):
    """A follow snapshot (``records.SnapshotFrame``) whose rows' payload fields are kept raw."""

    header: dict[str, Any]
    cursor: _Cursor
    records: list[EventRecord | _RawChunks]
    hasMore: bool
    projections: Projections
    error: dict[str, Any] | None = None


class _ShallowSnapshot(Struct, frozen=True, tag_field="type", tag="snapshot"):
    """A snapshot whose events, header, projections and error are kept raw (each is depth-checked alone)."""

    header: msgspec.Raw
    cursor: _Cursor
    records: list[_RawEventRecord | _RawChunks]
    hasMore: bool
    projections: msgspec.Raw
    error: msgspec.Raw = msgspec.Raw(b"null")


_header = msgspec.json.Decoder(dict[str, Any])
_projections = msgspec.json.Decoder(Projections)
_error = msgspec.json.Decoder(dict[str, Any] | None)
_event = msgspec.json.Decoder(SessionEvent)
_STRICT: dict[type, Any] = {_RawText: TextChunksEvent, _RawReasoning: ReasoningChunksEvent,
                            _RawTool: ToolCallChunksEvent}


class _Invalid(Exception):
    pass


class _Cuts:
    """The string arrays cut out of a page (``_cut``): each placeholder names one by index; ``taken`` marks the
    ones a row's payload field claimed."""

    __slots__ = ("prefix", "values", "taken")

    def __init__(self, prefix: bytes) -> None:
        self.prefix = prefix
        self.values: list[LazyTexts] = []
        self.taken: list[bool] = []

    def take(self, raw: bytes) -> LazyTexts | None:
        """The array a placeholder stands for (``None``: ``raw`` is not one); each is taken once."""
        if not raw.startswith(self.prefix):
            return None
        i = int(raw[len(self.prefix):-1])
        if self.taken[i]:
            raise _Invalid
        self.taken[i] = True
        return self.values[i]


# A row's payload keys. Outside strings only: inside one, their quotes would be escaped.
_TEXTS_KEY = b'"texts":["'
_ARGS_KEY = b'"args":["'


def _cut(data: bytes) -> tuple[bytes, _Cuts] | None:
    """``data`` with each payload array ``_fast_texts`` accepts replaced by a placeholder string; ``None`` when none
    is. Linear: each search starts where the last one ended (an array ends at the first ``]`` after a quote, and
    an array ``_fast_texts`` refuses holds no key of a valid page), so no byte is read twice."""
    cuts = _Cuts(b'"' + secrets.token_hex(8).encode() + b":")
    pieces: list[bytes] = []
    kept = pos = 0
    size = len(data)
    texts = data.find(_TEXTS_KEY)
    args_clear = 0  # no args key before this offset
    while True:
        # The next key: texts (found once per stretch), then args only before it; no byte is searched twice.
        if 0 <= texts < pos:
            texts = data.find(_TEXTS_KEY, pos)
        bound = texts if texts >= 0 else size
        args = data.find(_ARGS_KEY, max(pos, args_clear), bound)
        if args >= 0:
            start = args + len(_ARGS_KEY) - 2  # the "["
        else:
            args_clear = bound
            if texts < 0:
                break
            start = texts + len(_TEXTS_KEY) - 2
        end = data.find(b"]", start)
        while end >= 0 and data[end - 1] != 34:
            end = data.find(b"]", end + 1)
        if end < 0:
            break
        pos = end + 1
        value = _fast_texts(data[start:pos])
        if value is not None:
            pieces += (data[kept:start], cuts.prefix, b"%d" % len(cuts.values), b'"')
            kept = pos
            cuts.values.append(value)
            cuts.taken.append(False)
    if not cuts.values:
        return None
    pieces.append(data[kept:])
    return b"".join(pieces), cuts


def _row(raw_event: Any, cuts: _Cuts | None) -> ChunksRecord:
    data = raw_event.data
    tool = type(data) is _RawToolData
    payload = bytes(data.args if tool else data.texts)
    dt_raw = bytes(data.dt)
    texts: Sequence[str] | None = cuts.take(payload) if cuts is not None else None
    if texts is None:
        texts = _fast_texts(payload)
    gaps: Sequence[int] | None = _fast_gaps(dt_raw) if texts is not None else None
    seq, time = raw_event.seq, raw_event.time
    members = len(texts) if texts is not None else 0
    if (texts is None or gaps is None or len(gaps) != members - 1 or seq + members - 1 > MAX_SAFE_INTEGER
            or abs(time) + len(gaps) * _MAX_GAP > MAX_SAFE_INTEGER):
        if type(texts) is LazyTexts and texts.cut_from(payload):
            raise _Invalid  # a cut array the strict types must see: decode the page uncut
        try:  # the strict field types; the row's own check runs in __post_init__
            texts, gaps = _strings.decode(payload), _gaps.decode(dt_raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise _Invalid from None
    row_data: TextRowData | ToolCallRowData
    if tool:
        row_data = ToolCallRowData(turn=data.turn, step=data.step, index=data.index, dt=gaps, id=data.id,  # type: ignore[arg-type]
                                   name=data.name, args=texts)  # type: ignore[arg-type]
    else:
        row_data = TextRowData(data.turn, data.step, data.index, gaps, texts)  # type: ignore[arg-type]
    try:
        event = _STRICT[type(raw_event)](seq, time, row_data)
    except ValueError:
        raise _Invalid from None
    return ChunksRecord(event)


def _event_record(raw: msgspec.Raw) -> EventRecord:
    check_depth(raw, MAX_DEPTH)
    return EventRecord(_event.decode(raw))


_BRACKET_SPAN = 1 << 16


def _few_brackets(data: bytes) -> bool:
    """At most ``MAX_DEPTH`` brackets (``[`` and ``{``) in ``data``, so nothing in it can nest too deep. Counts span
    by span and stops once there are more: a long page full of brackets is not scanned to its end."""
    n = 0
    for start in range(0, len(data), _BRACKET_SPAN):
        end = start + _BRACKET_SPAN
        n += data.count(b"[", start, end) + data.count(b"{", start, end)
        if n > MAX_DEPTH:
            return False
    return True


def _snapshot(raw: Any, records: list[HistoryRecord]) -> SnapshotFrame:
    header, projections, error = raw.header, raw.projections, raw.error
    if type(raw) is _ShallowSnapshot:
        for part in (header, projections, error):
            check_depth(part, MAX_DEPTH)
        header, projections, error = _header.decode(header), _projections.decode(projections), _error.decode(error)
    return SnapshotFrame(header, raw.cursor, records, raw.hasMore, projections, error)


class _Form(Struct, frozen=True):
    """What is decoded: its decoders (all at once; its events kept raw), how the records become it, and its strict
    decoder (which names the error)."""

    whole: msgspec.json.Decoder[Any]
    shallow: msgspec.json.Decoder[Any]
    build: Callable[[Any, list[HistoryRecord]], Any]
    strict: Callable[[bytes | bytearray | memoryview], Any]


_PAGE = _Form(msgspec.json.Decoder(_RawPage), msgspec.json.Decoder(_ShallowPage),
              lambda raw, records: SessionPage(records, raw.hasMore), decode_page)
_SNAPSHOT = _Form(msgspec.json.Decoder(_RawSnapshot), msgspec.json.Decoder(_ShallowSnapshot), _snapshot,
                  decode_follow_frame)
_SNAPSHOT_START = b'{"type":"snapshot",'


def decode_lazy_page(buf: bytes | bytearray | memoryview) -> SessionPage:
    """Decode the JSON bytes of a ``SessionPage`` like ``decode_page`` (same records, same errors), packed fragments
    kept lazy where the fast checks allow.

    Raises:
        RecordDecodeError: the bytes are not a valid page (the strict decoder's message).
    """
    page: SessionPage = _lazy(buf, _PAGE)
    return page


def decode_lazy_frame(buf: bytes | bytearray | memoryview) -> SnapshotFrame | EventFrame:
    """Decode one follow frame like ``decode_follow_frame`` (same frames, same errors): a snapshot's packed
    fragments kept lazy where the fast checks allow, as ``decode_lazy_page`` keeps a page's.

    Raises:
        RecordDecodeError: the bytes are not a valid frame (the strict decoder's message).
    """
    if bytes(buf[:len(_SNAPSHOT_START)]) != _SNAPSHOT_START:
        return decode_follow_frame(buf)  # an event frame is one scalar event: nothing to keep lazy
    frame: SnapshotFrame = _lazy(buf, _SNAPSHOT)
    return frame


def _lazy(buf: bytes | bytearray | memoryview, form: _Form) -> Any:
    data = buf if type(buf) is bytes else bytes(buf)
    cut = _cut(data)
    if cut is not None:
        try:
            return _decode(*cut, form)
        except (msgspec.DecodeError, msgspec.ValidationError, NestingError, RecursionError, _Invalid):
            pass  # the page uncut decides (a placeholder in an event's data, a row the strict types must see)
    try:
        return _decode(data, None, form)
    except (msgspec.DecodeError, msgspec.ValidationError, NestingError, RecursionError, _Invalid):
        return form.strict(buf)  # raises the strict error (or, should the fast path be stricter, decodes)


def _decode(data: bytes, cuts: _Cuts | None, form: _Form) -> Any:
    if _few_brackets(data):  # nothing can nest too deep
        raw: Any = form.whole.decode(data)
        records = [r if type(r) is EventRecord else _row(r.event, cuts) for r in raw.records]
    else:  # the page's own levels are fixed: only an event's data can nest deeper, so check each event
        raw = form.shallow.decode(data)
        records = [_event_record(r.event) if type(r) is _RawEventRecord else _row(r.event, cuts)
                   for r in raw.records]
    if cuts is not None and not all(cuts.taken):
        raise _Invalid  # a placeholder landed outside a row's payload field
    return form.build(raw, records)
