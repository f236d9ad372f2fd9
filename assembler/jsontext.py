"""JSON text of log lines, the one place every line decoder and record encoder goes through.

Rules: a value nested deeper than ``MAX_DEPTH`` arrays/objects is refused before any decoder sees it
(``NestingError``, "nesting too deep"): CPython's decoders end in ``RecursionError`` near 1000 levels and Pyodide's
stack can die below that. A lone UTF-16 surrogate escape (``"\\ud800"``) is valid JSON to ``JSON.parse``, which the
reference uses, but msgspec refuses it: such a line is decoded by the stdlib ``json`` module instead (a lone
surrogate becomes the same code point in the ``str``), and ``encode`` writes it back as the same escape, so a line
the reference wrote round-trips byte for byte. Pure and sans-I/O.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import msgspec

__all__ = [
    "MAX_DEPTH",
    "NestingError",
    "check_depth",
    "convert",
    "decode_json",
    "encode_with",
    "format_json",
    "has_lone_surrogate",
    "has_surrogate",
    "loads_text",
    "reader_text",
    "utf8_text",
]

MAX_DEPTH = 256
"""Deepest nesting of arrays and objects a line may have (real logs stay below 20)."""


class NestingError(ValueError):
    """A JSON text nested deeper than ``MAX_DEPTH``."""

    def __init__(self) -> None:
        super().__init__(f"nesting too deep (more than {MAX_DEPTH} levels of arrays/objects)")


_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_depth(raw: bytes | bytearray | memoryview, limit: int = MAX_DEPTH) -> None:
    """Raise ``NestingError`` when ``raw`` nests deeper than ``limit``. Exact on JSON texts; a text that is not JSON
    may pass here when the bracket walk would refuse it, but never when a decoder could nest deeper than ``limit``
    before finding the fault, and ``decode_json`` gives such a text the walk's verdict (``_walk_depth``).

    Cost: a text with at most ``limit`` brackets is only counted. Otherwise a few C-level passes over the bytes
    (``_structure_depth``: escapes and string contents dropped, brackets outside strings kept) and one step per
    structural bracket, not per string; only a text they reach no verdict on, or find too deep, is walked token by
    token (``_walk_depth``, which then decides).

    Raises:
        NestingError: too deep.
    """
    data = raw if type(raw) is bytes else bytes(raw)
    if data.count(b"[") + data.count(b"{") <= limit:
        return
    depth = _structure_depth(data, limit)
    if depth is None or depth > limit:
        _walk_depth(data, limit)


# Every byte but the quote and the four brackets (deleted by ``bytes.translate``).
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def _structure_depth(data: bytes, limit: int) -> int | None:
    """The deepest nesting of ``data`` read as JSON: exact for a JSON text; for any other text, at least the nesting
    of its longest JSON prefix (so a decoder that stops at the fault never nests deeper). ``None``: no verdict.
    A text with at most ``limit`` brackets outside strings gets their count (at least its depth, within the limit).

    Every backslash of a JSON text is in a string, where each one escapes the next byte: removing the ``\\\\``
    pairs left to right, then every ``\\"``, leaves only the quotes that open and close strings. Keeping only the
    quotes and brackets and dropping each adjacent pair of quotes (which keeps every bracket's side of a string)
    leaves ``"…"`` only around brackets inside strings; what lies outside them is the structure.
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in skeleton:
        pieces = skeleton.split(b'"')
        if len(pieces) % 2 == 0:
            return None  # an odd number of quotes: not JSON, the walk decides
        skeleton = b"".join(pieces[::2])
    opens = skeleton.count(b"[") + skeleton.count(b"{")
    if opens <= limit:
        return opens  # at least the depth
    return max(accumulate(map(_STEP.__getitem__, skeleton)), default=0)


def _walk_depth(data: bytes, limit: int) -> None:
    """The bracket walk: every string token and bracket in order (the verdict for any text, JSON or not).

    Raises:
        NestingError: a bracket outside strings opens level ``limit + 1``.
    """
    depth = 0
    for m in _TOKENS.finditer(data):
        c = m.group()
        if c == b"[" or c == b"{":
            depth += 1
            if depth > limit:
                raise NestingError()
        elif c == b"]" or c == b"}":
            depth -= 1


def has_lone_surrogate(raw: bytes | bytearray | memoryview) -> bool:
    """True when ``raw`` holds a ``\\uD800``-``\\uDFFF`` escape (paired or not: the caller decodes to find out)."""
    return _SURROGATE_ESCAPE.search(raw) is not None


def has_surrogate(text: str) -> bool:
    """True when ``text`` holds a code point U+D800..U+DFFF (which UTF-8 cannot encode)."""
    return _SURROGATE.search(text) is not None


def decode_json(raw: bytes | bytearray | memoryview, decoder: Callable[[Any], Any], type_: Any = None, *,
                limit: int = MAX_DEPTH) -> Any:
    """Decode one JSON text with ``decoder`` (a msgspec ``decode``), after the depth check; a text msgspec refuses
    only for a lone surrogate escape is decoded by the stdlib instead (then converted to ``type_``, the type a typed
    ``decoder`` decodes, when given).

    Raises:
        NestingError: nested deeper than ``MAX_DEPTH``.
        msgspec.DecodeError: not JSON (or not valid UTF-8).
        msgspec.ValidationError: a typed ``decoder`` (or ``type_``) refused the value.
    """
    check_depth(raw, limit)
    try:
        return decoder(raw)
    except msgspec.DecodeError:
        if has_lone_surrogate(raw):
            try:
                value = json.loads(bytes(raw).decode("utf-8"))
            except (ValueError, RecursionError):
                pass
            else:
                return value if type_ is None else convert(value, type_)
        _not_json(raw, limit)
        raise


def loads_text(text: str) -> Any:
    """``json.loads(text)`` after the depth check: for JSON held inside a string (tool arguments and results the
    renderers pretty-print), so a string of a million ``[`` is an error like any other, never a ``RecursionError``.

    Raises:
        ValueError: not JSON (``json.JSONDecodeError``), or nested deeper than ``MAX_DEPTH`` (``NestingError``).
    """
    check_depth(text.encode("utf-8", "surrogatepass"))
    return json.loads(text)


def _not_json(raw: bytes | bytearray | memoryview, limit: int) -> None:
    """A text no decoder accepts: ``NestingError`` when the bracket walk finds it too deep (its verdict on any text,
    which ``check_depth`` leaves to it for a text that is not JSON), else ``msgspec.DecodeError`` when only the
    surrogate fallback refused it; returns otherwise (the caller re-raises the decoder's own error)."""
    data = raw if type(raw) is bytes else bytes(raw)
    if data.count(b"[") + data.count(b"{") > limit:
        _walk_depth(data, limit)
    if has_lone_surrogate(data):
        raise msgspec.DecodeError("invalid JSON") from None


def _mark(value: Any, nonce: str) -> Any:
    if type(value) is str:
        return _SURROGATE.sub(lambda m: f"{nonce}{ord(m.group()):04x}", value)
    if type(value) is dict:
        return {_mark(k, nonce): _mark(v, nonce) for k, v in value.items()}
    if type(value) is list:
        return [_mark(v, nonce) for v in value]
    if isinstance(value, msgspec.Struct):
        return _mark(msgspec.to_builtins(value, str_keys=True), nonce)
    return value


def _unmark(value: Any, pattern: re.Pattern[str]) -> Any:
    if type(value) is str:
        return pattern.sub(lambda m: chr(int(m.group(1), 16)), value)
    if type(value) is list:
        return [_unmark(v, pattern) for v in value]
    if type(value) is tuple:
        return tuple(_unmark(v, pattern) for v in value)
    if type(value) is dict:
        return {_unmark(k, pattern): _unmark(v, pattern) for k, v in value.items()}
    if isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            msgspec.structs.force_setattr(value, name, _unmark(getattr(value, name), pattern))
    return value


def convert(value: Any, type_: Any, **options: Any) -> Any:
    """``msgspec.convert(value, type_, **options)`` that also takes strings holding lone surrogates (a JSON text may
    carry them, and a run of deltas split inside a surrogate pair does: msgspec refuses such a ``str``); they come out
    the same in the result.

    Raises:
        msgspec.ValidationError: ``type_`` refused the value.
    """
    try:
        return msgspec.convert(value, type_, **options)
    except UnicodeEncodeError:
        nonce = f"\ue000{secrets.token_hex(8)}:"
        out = msgspec.convert(_mark(value, nonce), type_, **options)
        return _unmark(out, re.compile(re.escape(nonce) + "([0-9a-f]{4})"))


_ESCAPE_OR_SURROGATE = re.compile(rb"\\\\|\\u([dD][89a-fA-F][0-9a-fA-F]{2})")


def format_json(data: bytes, indent: int = 2) -> bytes:
    """``msgspec.json.format(data, indent=indent)`` for JSON we encoded (``encode_with``), which may hold lone
    surrogate escapes: msgspec's formatter refuses those, so each surrogate escape is swapped for a token while it
    formats (strings are copied verbatim) and put back after, byte for byte.

    Raises:
        msgspec.DecodeError: ``data`` is not JSON.
    """
    try:
        return msgspec.json.format(data, indent=indent)
    except msgspec.DecodeError:
        if not has_lone_surrogate(data):
            raise
    token = f"@{secrets.token_hex(8)}:".encode()
    marked = _ESCAPE_OR_SURROGATE.sub(lambda m: token + m.group(1) if m.group(1) else m.group(), data)
    out = msgspec.json.format(marked, indent=indent)
    return re.sub(re.escape(token) + rb"([dD][0-9a-fA-F]{3})", lambda m: b"\\u" + m.group(1), out)


def reader_text(text: str) -> str:
    """``text`` as a reader sees it: text built from JSON strings is UTF-16 code units the way the log's writer saw
    them, so a surrogate pair split between two deltas is joined into its character and a surrogate with no partner
    becomes U+FFFD, as a browser shows it. JSON outputs keep the surrogates instead (``encode_with``)."""
    if not has_surrogate(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf8_text(text: str) -> bytes:
    """``text`` as UTF-8 for a reader (HTML, Markdown, a terminal): ``reader_text`` where UTF-8 cannot encode it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return reader_text(text).encode("utf-8")


def encode_with(encoder: Callable[[Any], bytes], value: Any) -> bytes:
    """``encoder(value)``; a value holding lone surrogates (decoded by ``decode``) is written with them escaped as
    ``\\udXXX`` and everything else exactly as ``encoder`` writes it.

    Raises:
        whatever ``encoder`` raises for a value it cannot encode.
    """
    try:
        return encoder(value)
    except UnicodeEncodeError:
        nonce = f"\ue000{secrets.token_hex(8)}:"
        out = encoder(_mark(value, nonce))
        token = nonce.encode("utf-8")
        return re.sub(re.escape(token) + rb"([0-9a-f]{4})", lambda m: b"\\u" + m.group(1), out)
