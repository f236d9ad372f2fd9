"""What the readers of whole JSON documents share (FORMATS.md §1, §2.5, §2.8, §2.9): the document decoded with the
line and column of any damage, each element's group under its JSON pointer, an element converted to its msgspec
Struct with the failing field's pointer, and the LiteLLM usage and finish shapes normalised.

Rules: a document that is not JSON is a ``SourceError`` with its 1-based line and column (``FILE:LINE:COL``); an
element of the wrong shape is kept as a raw record with a warning naming its pointer and the field, never an
exception; a reader returns its log (with ``error`` set when the document is unusable), it does not raise. Pure
and sans-I/O.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar

import msgspec

from ..jsontext import MAX_DEPTH, NestingError, convert, decode_json, encode_with
from .base import LogBuilder, SessionLog, SourceError, member_origin

__all__ = [
    "decode_document",
    "position",
    "compact",
    "Elements",
    "litellm_usage",
    "litellm_finish",
    "openai_blocks",
    "session_logs",
        "distinct_ids",
]

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
_BYTE = re.compile(r"\(byte (\d+)\)")
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_PATH = re.compile(r" - at `\$([^`]*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")

S = TypeVar("S")


def position(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of byte ``offset`` of ``data``."""
    offset = max(0, min(offset, len(data)))
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def _deep_offset(data: bytes) -> int:
    """Where ``data`` first opens a bracket past ``MAX_DEPTH`` levels (outside strings)."""
    depth = 0
    for m in _TOKENS.finditer(data):
        c = m.group()
        if c == b"[" or c == b"{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif c == b"]" or c == b"}":
            depth -= 1
    return len(data)


def damage(data: bytes, exc: Exception) -> int:
    """The byte offset where a document the decoder refused goes wrong."""
    if isinstance(exc, NestingError):
        return _deep_offset(data)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return bad.start
    found = _BYTE.search(str(exc))
    if found is not None:
        return int(found.group(1))
    end = len(data.rstrip())  # "truncated": the damage is where the text stops
    return end


def decode_document(data: bytes) -> Any:
    """The JSON value of a whole document (a UTF-8 BOM skipped). ``None`` for a document of whitespace only.

    Raises:
        SourceError: not JSON, not UTF-8 or nested too deep, with the line and column where it goes wrong.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        return None
    try:
        return decode_json(data, _decode)
    except (msgspec.DecodeError, NestingError) as exc:
        line, column = position(data, damage(data, exc))
        if isinstance(exc, NestingError):
            why = str(exc)
        elif "UTF-8" in str(exc):
            why = "invalid UTF-8"
        else:
            why = f"invalid JSON ({exc})"
        raise SourceError(why, line=line, column=column) from None


def compact(value: Any) -> str:
    """The compact JSON text of a decoded element (its source text in the raw view)."""
    return encode_with(_encode, value).decode("utf-8")


def _pointer_of(path: str) -> str:
    out = []
    for m in _STEP.finditer(path):
        token = m.group(1) if m.group(1) is not None else m.group(2)
        out.append("/" + token.replace("~", "~0").replace("/", "~1"))
    return "".join(out)


class Elements:
    """The groups of one document's elements in a ``LogBuilder``: ``open`` begins the group of the element at a
    JSON pointer (its compact text kept); ``shape`` converts an element to its Struct, or keeps it raw with a
    warning naming the pointer of the field that is wrong."""

    def __init__(self, out: LogBuilder) -> None:
        self.out = out

    def open(self, ptr: str, record_type: str, value: Any) -> None:
        self.out.begin(member_origin(None, ptr), record_type, compact(value), value)

    def shape(self, value: Any, struct: type[S], ptr: str, record_type: str) -> S | None:
        try:
            return convert(value, struct)  # type: ignore[no-any-return]
        except msgspec.ValidationError as exc:
            message = str(exc)
            found = _PATH.search(message)
            where = ptr + (_pointer_of(found.group(1)) if found else "")
            why = message[:found.start()] if found else message
            self.open(ptr, record_type, value)
            self.out.end()
            self.out.warnings.append(f"{where or '/'}: {record_type} not understood ({why}); kept as a raw record")
            return None

    def raw(self, ptr: str, record_type: str, value: Any, *, notice: str | None = None,
            duplicate_of: Any = None) -> int | None:
        """An element that becomes nothing: its raw record (shown as a notice when ``notice`` is given)."""
        self.open(ptr, record_type, value)
        return self.out.end(notice=notice, duplicate_of=duplicate_of)


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def litellm_usage(usage: Any) -> dict[str, Any] | None:
    """Our ``TokenUsage`` of a LiteLLM (OpenAI-shaped) ``usage`` object (FORMATS §2.8): ``prompt_tokens`` holds the
    cache reads and writes, ``completion_tokens`` the reasoning; ``cache_read_input_tokens`` and
    ``prompt_tokens_details.cached_tokens`` count the same tokens, so only one is subtracted. None when the
    counts are not recorded."""
    if type(usage) is not dict:
        return None
    prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    details = usage.get("prompt_tokens_details")
    read = _int(usage.get("cache_read_input_tokens"))
    if read is None and type(details) is dict:
        read = _int(details.get("cached_tokens"))
    write = _int(usage.get("cache_creation_input_tokens"))
    out_details = usage.get("completion_tokens_details")
    reasoning = _int(out_details.get("reasoning_tokens")) if type(out_details) is dict else None
    cached = (read or 0) + (write or 0)
    # A provider whose prompt count leaves the cache out would go negative: its prompt count is the input then.
    result: dict[str, Any] = {"inputTokens": prompt - cached if prompt >= cached else prompt,
                              "outputTokens": completion - (reasoning or 0) if completion >= (reasoning or 0)
                              else completion}
    if read is not None:
        result["cacheReadTokens"] = read
    if write is not None:
        result["cacheWriteTokens"] = write
    if reasoning is not None and completion >= reasoning:
        result["reasoningTokens"] = reasoning
    return result


_FINISH: Final = {"stop": "stop", "end_turn": "stop", "tool_calls": "tool-calls", "function_call": "tool-calls",
                  "tool_use": "tool-calls", "length": "max-tokens", "max_tokens": "max-tokens"}


def litellm_finish(reason: Any) -> dict[str, Any] | None:
    """Our finish reason for a recorded LiteLLM ``finish_reason`` (None when none is recorded or it has no
    counterpart: no reason is invented)."""
    kind = _FINISH.get(reason) if type(reason) is str else None
    return None if kind is None else {"kind": kind}


def openai_blocks(content: Any) -> list[dict[str, Any]]:
    """Content blocks of an OpenAI-style message ``content``: a string is one text block (none when empty); a list
    of parts gives a text block per ``text`` part, an image block per ``image_url`` part, other parts as they are
    (unknown block types pass through); a part that would pass for one of our block types without its shape (a
    ``text`` part whose text is not a string) is kept whole as ``{"type": "part", "part": …}``."""
    if type(content) is str:
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    if type(content) is not list:
        return blocks
    for part in content:
        if type(part) is str:
            blocks.append({"type": "text", "text": part})
        elif type(part) is dict and part.get("type") == "text" and type(part.get("text")) is str:
            blocks.append({"type": "text", "text": part["text"]})
        elif type(part) is dict and part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if type(image) is dict else image
            blocks.append({"type": "image", "attachment": {"url": url}})
        elif type(part) is dict and part.get("type") not in ("text", "image", "tool-call", "tool-result",
                                                             "reasoning"):
            blocks.append(part)
        else:  # a part of a known block type but not its shape: kept whole under a type of its own
            blocks.append({"type": "part", "part": part})
    return blocks


def distinct_ids(out: LogBuilder, ids: list[str]) -> list[str]:
    """``ids`` with each one already used by a ``tool/call`` of ``out`` (or earlier in ``ids``) made distinct as
    ``<id>#2``, ``<id>#3``...: a repeated call id (a record written twice, a damaged file) must not start a second
    call under the same id. Deterministic."""
    seen: set[str] = set()
    out_ids = []
    for call_id in ids:
        candidate, n = call_id, 2
        while out.has_call(candidate) or candidate in seen:
            candidate, n = f"{call_id}#{n}", n + 1
        seen.add(candidate)
        out_ids.append(candidate)
    return out_ids


def session_logs(out: LogBuilder, error: SourceError | None = None) -> list[SessionLog]:
    """The one session a document reader returns: the builder's log, with ``error`` when it stopped."""
    out.end()
    result = out.result()
    result.error = error
    return [SessionLog("", None, result)]
