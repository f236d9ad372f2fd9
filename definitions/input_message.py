"""Input messages (``input-message``, target chat) and the state-only ``inbox-next-step`` claims they read.

Rules (ASSEMBLY 5.6): an append-origin ``user/message`` (not a compaction checkpoint) starts one Context. A source
other than ``user`` gives a ``context`` node (source kept for provenance and form); a user message is ``steering``
when the previous ``inbox-next-step`` Context claimed its id, else ``user``. The inbox claims accumulate through
``reader.previous``, so a late or changed claim replays the messages that read it.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.views import InputMessageData, ViewNode

from ._blocks import content_views
from ._common import data_of, is_append

__all__ = ["InputMessage", "InboxNextStep"]


def _is_checkpoint(data: dict[str, Any]) -> bool:
    source = data.get("source")
    return type(source) is dict and source.get("kind") == "plugin" and source.get("plugin") == "compact"


class InboxNextStep(Definition):
    """Message ids inserted into the next-step inbox so far (cumulative through ``previous``)."""

    kind = "inbox-next-step"
    target = None
    event_types = frozenset({"agent/inbox/spliced"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        if data_of(event).get("target") != "next-step":
            return None
        return str(event.seq), "start"

    def start(self, context: Context, match: Match, reader: Reader) -> frozenset[Any]:
        prev = reader.previous(self.kind)
        claimed = set(prev.state) if prev is not None else set()
        inserted = data_of(match.event).get("inserted")
        if type(inserted) is list:
            for message in inserted:
                if type(message) is dict and type(message.get("id")) is str:
                    claimed.add(message["id"])
        return frozenset(claimed)


class InputMessage(Definition):
    """``input-message``: user prompts, steering and injected context (ASSEMBLY 5.6)."""

    kind = "input-message"
    target = "chat"
    event_types = frozenset({"user/message"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        if not is_append(event) or _is_checkpoint(data_of(event)):
            return None
        return str(event.seq), "start"

    def start(self, context: Context, match: Match, reader: Reader) -> str:
        data = data_of(match.event)
        source = data.get("source")
        if type(source) is dict and source.get("kind") not in (None, "user"):
            return "context"
        prev = reader.previous("inbox-next-step")
        if prev is not None and data.get("id") in prev.state:
            return "steering"
        return "user"

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        data = data_of(m.event)
        kind = context.state
        out = InputMessageData(kind=kind, seq=m.seq, time=m.event.time, messageId=data.get("id"),
                               blocks=content_views(data.get("content")),
                               source=data.get("source") if kind == "context" else UNSET)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat", anchorSeq=m.seq,
                        location=node_location(m.location), data=out)
