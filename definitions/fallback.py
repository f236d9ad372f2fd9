"""The fallback Definition (``event``, target chat): every entry no chat Definition claimed, shown compactly.

Rules (ASSEMBLY 5.2): the assembler tries it only when no Definition of its target matched an entry, so nothing is
dropped. One Context per event (id = seq); the node keeps the type, seq, time, the ``ignorable`` marker and a short
JSON summary of the data. Packed rows are never claimed here (a row cannot start a Context).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.jsontext import encode_with
from assembler.views import EventData, ViewNode

from ._common import ROW_TYPES

__all__ = ["Fallback", "SUMMARY_CHARS"]

SUMMARY_CHARS = 160
_encode = msgspec.json.Encoder().encode


def summarize(data: Any) -> tuple[str, bool]:
    """Compact JSON of ``data``, cut to ``SUMMARY_CHARS`` characters."""
    text = encode_with(_encode, data).decode()
    if len(text) > SUMMARY_CHARS:
        return text[:SUMMARY_CHARS] + "\u2026", True
    return text, False


class Fallback(Definition):
    kind = "event"
    target = "chat"
    fallback = True

    def match(self, event: Any) -> tuple[str, Role] | None:
        if event.type in ROW_TYPES:
            return None
        return str(event.seq), "start"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        event = m.event
        summary, truncated = summarize(event.data)
        out = EventData(kind="event", type=event.type, seq=event.seq, time=event.time, summary=summary,
                        ignorable=True if event.ignorable is True else UNSET, truncated=True if truncated else UNSET)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat", anchorSeq=event.seq,
                        location=node_location(m.location), data=out)
