"""The Inspect AI log records this reader maps (FORMATS.md §6.2), as msgspec Structs, and how a JSON document (a
``.json`` log or one ``.eval`` member) is decoded.

Rules: a document is decoded whole into plain values (msgspec first; the stdlib only for what msgspec refuses and
Inspect writes: ``NaN``/``Infinity`` constants, read as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` since
our events are strict JSON, and lone surrogate escapes), after the nesting check, and a text that is not JSON is a
``DocumentError`` with its line and column. Each record (a message, an event, a score) is then
converted to its Struct on its own (``convert_at``), so a record of unexpected types is refused alone, with the JSON
pointer of the offending field, and the reader keeps it as a raw record with a warning. The Structs name only the
fields the mapping reads; they are lenient (unknown fields ignored: Inspect adds fields in every release) and
never hold a field whose keys matter (msgspec cannot name a bad dict key; such maps are walked by hand).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, NamedTuple, TypeVar

import msgspec

from ..jsontext import NestingError, check_depth
from ..jsontext import convert as _convert

__all__ = [
    "DocumentError",
    "decode_document",
    "convert_at",
    "Refusal",
    "ToolCallRec",
    "ToolErrorRec",
    "MessageRec",
    "TextRec",
    "ReasoningRec",
    "ImageRec",
    "UsageRec",
    "OutputMessageRec",
    "ChoiceRec",
    "OutputRec",
    "ModelEventRec",
    "ToolEventRec",
    "ScoreRec",
    "ScoreEventRec",
    "ScoreEditEventRec",
    "EvalErrorRec",
    "ErrorEventRec",
    "SampleLimitEventRec",
    "LimitRec",
    "EvalSpecRec",
]


class _Rec(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every record shape: frozen, keyword-only, unknown fields ignored (schemas grow by adding fields)."""


# -- messages (ChatMessage) -------------------------------------------------------------------------------------


class ToolCallRec(_Rec, frozen=True, kw_only=True):
    id: str
    function: str
    arguments: Any = None  # an object in every version seen; a string is kept byte for byte (FORMATS §2.5)
    parse_error: str | None = None


class ToolErrorRec(_Rec, frozen=True, kw_only=True):
    type: str = "unknown"
    message: str = ""


class MessageRec(_Rec, frozen=True, kw_only=True):
    role: str
    content: str | list[Any] = ""  # blocks are converted one by one (an unknown block type passes through)
    id: str | None = None
    source: str | None = None
    model: str | None = None
    tool_calls: list[ToolCallRec] | None = None
    tool_call_id: str | list[str] | None = None  # a str on a tool message, a list on a user message
    function: str | None = None
    error: ToolErrorRec | None = None
    tool_error: str | None = None  # before ``error`` (migrated by Inspect to ``error{type:'unknown'}``)


class TextRec(_Rec, frozen=True, kw_only=True):
    text: str


class ReasoningRec(_Rec, frozen=True, kw_only=True):
    reasoning: str = ""
    summary: str | None = None
    redacted: bool = False


class ImageRec(_Rec, frozen=True, kw_only=True):
    image: str
    detail: str | None = None


# -- events ----------------------------------------------------------------------------------------------------


class UsageRec(_Rec, frozen=True, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    input_tokens_cache_write: int | None = None
    input_tokens_cache_read: int | None = None
    reasoning_tokens: int | None = None


class OutputMessageRec(_Rec, frozen=True, kw_only=True):
    id: str | None = None
    content: Any = None
    tool_calls: Any = None
    model: str | None = None


class ChoiceRec(_Rec, frozen=True, kw_only=True):
    message: OutputMessageRec | None = None
    stop_reason: str | None = None


class OutputRec(_Rec, frozen=True, kw_only=True):
    model: str | None = None
    choices: list[ChoiceRec] = []
    usage: UsageRec | None = None
    error: str | None = None


class ModelEventRec(_Rec, frozen=True, kw_only=True):
    timestamp: str | None = None
    model: str | None = None
    output: OutputRec | None = None
    error: str | None = None
    completed: str | None = None


class ToolEventRec(_Rec, frozen=True, kw_only=True):
    timestamp: str | None = None
    id: str | None = None
    function: str | None = None
    completed: str | None = None
    message_id: str | None = None
    error: ToolErrorRec | None = None


class ScoreRec(_Rec, frozen=True, kw_only=True):
    value: Any = None
    answer: Any = None
    explanation: Any = None


class ScoreEventRec(_Rec, frozen=True, kw_only=True):
    score: ScoreRec
    target: Any = None
    intermediate: bool = False
    scorer: str | None = None


class ScoreEditEventRec(_Rec, frozen=True, kw_only=True):
    score_name: str
    edit: Any = None


class EvalErrorRec(_Rec, frozen=True, kw_only=True):
    message: str
    traceback: str | None = None


class ErrorEventRec(_Rec, frozen=True, kw_only=True):
    error: EvalErrorRec


class SampleLimitEventRec(_Rec, frozen=True, kw_only=True):
    type: str
    message: str = ""
    limit: float | None = None


class LimitRec(_Rec, frozen=True, kw_only=True):
    type: str
    limit: float | None = None


# -- the log ---------------------------------------------------------------------------------------------------


class EvalSpecRec(_Rec, frozen=True, kw_only=True):
    task: str | None = None
    model: str | None = None
    run_id: str | None = None
    eval_id: str | None = None
    task_id: str | None = None
    created: str | None = None


# -- decoding --------------------------------------------------------------------------------------------------


class DocumentError(ValueError):
    """A JSON document that is not JSON: ``line`` and ``column`` (1-based) say where, ``reason`` what, ``detail``
    the decoder's own words."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None, detail: str = "") -> None:
        super().__init__(reason, line, column, detail)
        self.reason = reason
        self.line = line
        self.column = column
        self.detail = detail

    def __str__(self) -> str:
        where = "" if self.line is None else f" at line {self.line}, column {self.column}"
        return f"{self.reason}{where}{': ' + self.detail if self.detail else ''}"


_decode: Final = msgspec.json.Decoder().decode


def decode_document(data: bytes) -> Any:
    """One whole JSON document (a UTF-8 BOM skipped) as plain values.

    Raises:
        DocumentError: not JSON, not UTF-8 or nested too deep (with the line and column when known).
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        check_depth(data)
    except NestingError as exc:
        raise DocumentError(str(exc)) from None
    try:
        return _decode(data)
    except msgspec.DecodeError:
        pass  # NaN/Infinity constants, lone surrogates, or not JSON: the stdlib decides and says where
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_col(data, exc.start)
        raise DocumentError("invalid UTF-8", line, column) from None
    try:
        return json.loads(text, parse_constant=str)  # NaN/Infinity as their names: our events are strict JSON
    except json.JSONDecodeError as exc:
        raise DocumentError("invalid JSON", exc.lineno, exc.colno, exc.msg) from None
    except RecursionError:  # unreachable after check_depth; kept so no traceback can escape
        raise DocumentError("nesting too deep") from None


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, offset - start + 1


T = TypeVar("T")

_PATH: Final = re.compile(r" - at `\$([^`]*)`$")
_STEP: Final = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\.\.\.\]")


class Refusal(NamedTuple):
    """Why a record was refused: the JSON pointer of the offending field and msgspec's reason."""

    pointer: str
    reason: str


def convert_at(value: Any, type_: type[T], ptr: str) -> T | Refusal:
    """``value`` as ``type_``, or a ``Refusal`` naming the JSON pointer (``ptr`` is the value's own) of the field
    that was refused and what it should have been."""
    try:
        return _convert(value, type_)  # type: ignore[no-any-return]
    except msgspec.ValidationError as exc:
        return _located(str(exc), ptr)


def _located(message: str, ptr: str) -> Refusal:
    """msgspec's ``... - at `$.a[0].b``` as ``Refusal('/ptr/a/0/b', '...')``."""
    found = _PATH.search(message)
    if found is None:
        return Refusal(ptr, message)
    where = ptr
    for step in _STEP.finditer(found.group(1)):
        name, index = step.group(1), step.group(2)
        if name is not None:
            where += "/" + name
        elif index is not None:
            where += "/" + index
        else:
            break  # a dict key msgspec does not name: the pointer stops at its map
    return Refusal(where, message[:found.start()])
