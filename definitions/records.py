"""Another harness's kept source records (target chat): what the chat shows of them (FORMATS.md §2.2).

Rules: an ``interop/source`` event (the original of a record that became other events) is claimed and shows no row:
"Show records" reads it. An ``interop/*`` event whose data carries a ``notice`` text (a raw record the reader marks
for the reader of the chat: a score, a queued prompt, a hook line, a rewind) is one ``record-notice`` row; any other
raw record is left to the fallback (shown with "Events"). Each Definition folds its Matches only.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.views import NoticeData, ViewNode

from ._common import data_of, is_scalar

__all__ = ["SourceRecord", "RecordNotice"]


class SourceRecord(Definition):
    """``interop/source``: claimed, no row (the raw view shows it beside the events made from it)."""

    kind = "source-record"
    target = "chat"
    event_types = frozenset({"interop/source"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        return (str(event.seq), "start") if is_scalar(event) else None

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        return None


class RecordNotice(Definition):
    """A raw record with a ``notice`` text: one notice row (its text, the source's record type as the code)."""

    kind = "record-notice"
    target = "chat"
    event_types = frozenset({"interop/raw", "interop/branch"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        if not is_scalar(event):
            return None
        notice = data_of(event).get("notice")
        return (str(event.seq), "start") if type(notice) is str and notice else None

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        d = data_of(m.event)
        rtype = d.get("recordType")
        data = NoticeData(kind="record", seq=m.seq, time=m.event.time, message=d["notice"],
                          code=rtype if type(rtype) is str and rtype else UNSET)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat", anchorSeq=m.seq,
                        location=node_location(m.location), data=data)
