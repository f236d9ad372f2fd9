"""JSON text of log lines, the one place every line decoder and record encoder goes through (issue 9 items 6, 7).

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
from typing import Any

import msgspec

__all__ = [
    "MAX_DEPTH",
    "NestingError",
    "check_depth",
    "convert",
    "decode_json",
    "encode_with",
    "has_lone_surrogate",
    "has_surrogate",
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
    """Raise ``NestingError`` when ``raw`` nests deeper than ``limit``. Fast for ordinary lines: the brackets are
    only walked (strings skipped) when there are more than ``limit`` of them.

    Raises:
        NestingError: too deep.
    """
    data = raw if type(raw) is bytes else bytes(raw)
    if data.count(b"[") + data.count(b"{") <= limit:
        return
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
        if not has_lone_surrogate(raw):
            raise
        try:
            value = json.loads(bytes(raw).decode("utf-8"))
        except (ValueError, RecursionError):
            raise msgspec.DecodeError("invalid JSON") from None
        return value if type_ is None else convert(value, type_)


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
