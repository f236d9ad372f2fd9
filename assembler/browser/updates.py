"""What crosses the worker boundary: bytes coming in, and the JSON values the page gets back (chat node metadata,
page requests, error values, the transcript digest's canonical bytes).

Rules: inputs are bytes, never a JS string to parse; every result is msgspec-encoded JSON bytes. A node's metadata
lets the page lay out a row without its HTML (which ``render`` makes on demand). Pure apart from the timer.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from .. import render
from ..journal import PageRequest
from ..jsontext import encode_with
from ..records import encode_hook
from ..views import InputMessageData, ViewNode, hidden_by_default
from .facets import has_thinking, row_facet

__all__ = [
    "NodeMeta",
    "as_bytes",
    "encode_json",
    "elapsed_ms",
    "node_meta",
    "request_value",
    "error_value",
    "first_screen_keys",
    "seq_target",
    "FIRST_SCREEN_ROWS",
]

_encode = msgspec.json.Encoder(enc_hook=encode_hook).encode


def encode_json(value: Any) -> bytes:
    """Any result value → the JSON bytes the page receives (a lone surrogate written as its escape)."""
    return encode_with(_encode, value)


def as_bytes(data: Any) -> bytes | bytearray | memoryview:
    """Accept a ``memoryview``/``bytes`` (what ``pyodide.toPy(Uint8Array)`` gives) or a JsProxy of a typed array."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return data
    to_bytes = getattr(data, "to_bytes", None)  # a JsProxy of a Uint8Array / ArrayBuffer
    if to_bytes is not None:
        return to_bytes()  # type: ignore[no-any-return]
    raise TypeError(f"expected bytes, got {type(data).__name__}")


def elapsed_ms(t0: float) -> float:
    """Milliseconds since ``t0`` (a ``time.perf_counter()`` reading), rounded to microseconds."""
    return round((time.perf_counter() - t0) * 1000, 3)


class NodeMeta(msgspec.Struct, omit_defaults=True):
    """What the page needs to lay out one chat node without its HTML."""

    key: str
    kind: str
    seq: int | float
    rev: int
    label: str
    size: int
    hidden: bool = False
    role: str | None = None
    turn: int | None = None
    facet: str = ""  # browser.filters: the row's kind for the page's filters
    think: bool = False  # the row holds a Think section


def node_meta(node: ViewNode, rev: int) -> NodeMeta:
    """The metadata of chat node ``node`` at revision ``rev``: its label and text size come from ``render``;
    ``hidden`` is the one decision of what the page shows only with "show all events" (``views``)."""
    size = sum(len(text) for _, text in render.node_text_blocks(node))
    data = node.data
    role = data.kind if node.kind == "input-message" and type(data) is InputMessageData else None
    turn = node.location.turn
    return NodeMeta(key=node.key, kind=node.kind, seq=node.anchorSeq, rev=rev, label=render.node_label(node),
                    size=size, hidden=hidden_by_default(node), role=role, turn=turn if type(turn) is int else None,
                    facet=row_facet(node), think=has_thinking(node))


def request_value(request: PageRequest) -> dict[str, Any]:
    """A page request as the page sees it: it fetches the page and answers with ``Viewer.answer_page(id, …)``."""
    return {"id": request.id, "kind": request.kind, "through": request.through, "before": request.before,
            "maxMessages": request.max_messages}


def error_value(exc: BaseException, where: str) -> dict[str, Any]:
    """An error for the page: ``{where, message, line, seq, text, type}`` (line and seq None unless known)."""
    line = getattr(exc, "line", None)
    seq = getattr(exc, "seq", None)
    message = getattr(exc, "message", None) or str(exc)
    return {"where": where, "message": str(message), "line": line if type(line) is int else None,
            "seq": seq if type(seq) is int else None, "text": str(exc), "type": type(exc).__name__}


FIRST_SCREEN_ROWS = 8
"""Rows whose HTML ``load_page`` sends with its update: the last shown ones (a page opens at its end), so the first
screen needs no second trip to the worker; the page asks ``render`` for any other row it shows."""


def first_screen_keys(nodes: Sequence[NodeMeta]) -> list[str]:
    """The keys of the last ``FIRST_SCREEN_ROWS`` nodes the page shows (not hidden), in display order."""
    keys: list[str] = []
    for meta in reversed(nodes):
        if not meta.hidden:
            keys.append(meta.key)
            if len(keys) == FIRST_SCREEN_ROWS:
                break
    return keys[::-1]


def seq_target(ordered: Iterable[ViewNode], seq: float, first: int | None, last: int | None,
               has_more: bool) -> dict[str, Any]:
    """Where a deep link ``#seq=N`` lands: ``key``, the visible node with the greatest anchor <= N (else the first
    node); ``inWindow`` false when N lies before the window (``first``) and older pages could hold it; ``beyond``
    when N is past the session's ``last`` seq (the page says so instead of landing elsewhere silently)."""
    best: ViewNode | None = None
    for node in ordered:
        if hidden_by_default(node):
            continue
        if node.anchorSeq > seq:
            best = best or node
            break
        best = node
    return {"key": None if best is None else best.key, "inWindow": first is None or seq >= first or not has_more,
            "first": first, "last": last, "beyond": last is not None and seq > last}
