"""From a history page to the canonical transcript: the one entry the CLI, the browser and the tests share.

Rules: ``assemble_page`` folds a decoded ``SessionPage`` through the default Definitions with ``replace_window`` +
``flush``; nodes are ordered by ``anchorSeq`` (stable over Context creation order). ``canonical_json`` is the
msgspec encoding of the ``Transcript`` Struct (fixed field order, compact), and ``digest`` its sha256 hex.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import msgspec
from msgspec import Struct

from assembler.conversation import ConversationAssembler, Definition, ViewNode
from assembler.locations import TimelineTurn
from assembler.records import SessionPage

__all__ = ["Transcript", "assemble_page", "assemble_entries", "canonical_json", "digest", "Mode"]

Mode = Literal["packed", "scalar"]
_encoder = msgspec.json.Encoder()


class Transcript(Struct, frozen=True):
    """``{"chat": [...], "trajectory": [...], "turns": [...]}``: view nodes per target and the turn timeline."""

    chat: list[ViewNode]
    trajectory: list[ViewNode]
    turns: list[TimelineTurn]


def _sorted(nodes: list[ViewNode]) -> list[ViewNode]:
    return sorted(nodes, key=lambda n: n.anchorSeq)


def assemble_entries(records: Sequence[Any], has_more: bool,
                     definitions: Sequence[Definition] | None = None) -> Transcript:
    """Fold decoded history records (``EventRecord | ChunksRecord``) into a ``Transcript``.

    Raises:
        AssemblerError: a Definition or entry broke the assembler contract (e.g. ``PackedStartError``).
    """
    if definitions is None:
        from . import default_definitions

        definitions = default_definitions()
    assembler = ConversationAssembler(definitions)
    assembler.replace_window(records, has_more)
    result = assembler.flush()
    assert result is not None
    views = result.views
    chat = views["chat"].nodes if "chat" in views else []
    trajectory = views["trajectory"].nodes if "trajectory" in views else []
    return Transcript(_sorted(chat), _sorted(trajectory), result.timeline)


def assemble_page(page: SessionPage, definitions: Sequence[Definition] | None = None) -> Transcript:
    """Fold one decoded ``SessionPage`` into the canonical ``Transcript`` (ASSEMBLY 5)."""
    return assemble_entries(page.records, page.hasMore, definitions)


def canonical_json(transcript: Transcript) -> bytes:
    """The canonical JSON bytes: compact, fixed field order, UTF-8."""
    return _encoder.encode(transcript)


def digest(transcript: Transcript | bytes) -> str:
    """sha256 hex of exactly ``canonical_json(transcript)``."""
    data = transcript if isinstance(transcript, bytes) else canonical_json(transcript)
    return hashlib.sha256(data).hexdigest()
