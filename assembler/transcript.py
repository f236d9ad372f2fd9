"""From an assembler flush to the canonical transcript: the one way the CLI (``assemble``), the browser worker and the
benchmarks get ``{"chat", "trajectory", "turns"}``, its canonical JSON and its digest.

Rules: a transcript is built from a full (``replace``) flush: each view's nodes ordered by ``anchorSeq`` (stable over
Context creation order) and the turn timeline. ``canonical_json`` is the msgspec encoding of the ``Transcript``
Struct (fixed field order, compact, UTF-8) and ``digest`` its sha256 hex. Pure; the Definitions are passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec
from msgspec import Struct

from .conversation import ConversationAssembler, Entry
from .definition import Definition
from .views import FlushResult, TimelineTurn, ViewNode

__all__ = ["Transcript", "transcript", "current_transcript", "assemble", "canonical_json", "digest", "by_anchor"]

_encoder = msgspec.json.Encoder()


class Transcript(Struct, frozen=True):
    """``{"chat": [...], "trajectory": [...], "turns": [...]}``: view nodes per target and the turn timeline."""

    chat: list[ViewNode]
    trajectory: list[ViewNode]
    turns: list[TimelineTurn]


def by_anchor(nodes: Iterable[ViewNode]) -> list[ViewNode]:
    """Nodes in display order: by ``anchorSeq``, ties in the order given (Context creation order)."""
    return sorted(nodes, key=lambda n: n.anchorSeq)


def transcript(result: FlushResult) -> Transcript:
    """The transcript of a full flush (``replace_window`` or ``prepend``, then ``flush``)."""
    views = result.views
    chat = views["chat"].nodes if "chat" in views else []
    trajectory = views["trajectory"].nodes if "trajectory" in views else []
    return Transcript(by_anchor(chat), by_anchor(trajectory), result.timeline)


def current_transcript(assembler: ConversationAssembler) -> Transcript:
    """The transcript of what ``assembler`` shows now (after its last flush): every Context's current node per view,
    in creation order as a full flush builds them, without folding again."""
    ordered = sorted(assembler.contexts.values(), key=lambda c: c.order)
    chat = [c.current["chat"] for c in ordered if "chat" in c.current]
    trajectory = [c.current["trajectory"] for c in ordered if "trajectory" in c.current]
    return Transcript(by_anchor(chat), by_anchor(trajectory), assembler.index.timeline())


def assemble(records: Sequence[Entry], has_more: bool, definitions: Sequence[Definition]) -> Transcript:
    """Fold decoded history records (``EventRecord | ChunksRecord``) through ``definitions`` into a transcript.

    Raises:
        AssemblerError: a Definition or entry broke the assembler contract (e.g. ``PackedStartError``).
    """
    assembler = ConversationAssembler(definitions)
    assembler.replace_window(records, has_more)
    result = assembler.flush()
    assert result is not None  # replace_window always leaves a flush pending
    return transcript(result)


def canonical_json(value: Transcript) -> bytes:
    """The canonical JSON bytes: compact, fixed field order, UTF-8."""
    return _encoder.encode(value)


def digest(value: Transcript | bytes) -> str:
    """sha256 hex of exactly ``canonical_json(value)`` (or of the bytes given)."""
    import hashlib  # only the commands that print a digest pay for OpenSSL's start-up

    data = value if isinstance(value, bytes) else canonical_json(value)
    return hashlib.sha256(data).hexdigest()
