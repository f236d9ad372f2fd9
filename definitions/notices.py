"""Notices (target chat): how a turn ended when it did not simply complete, retries, and compaction.

Rules: ``turn-notice`` starts on a ``turn/end`` whose reason is error, max-tokens, aborted, interrupted or blocked
(and the legacy ``{error}`` form), keeping the error's own message when ``displayFailure`` blanks it
(``errorMessage``); ``retry-notice`` starts on ``llm/retry`` (id = ``retryId``) and notes its
``llm/retry-started``; ``compaction`` starts on ``compaction/start`` (id = ``compactionId``), takes the summary with
its shadowed range and the end, and ``compaction/prune`` gives its own notice. Anchors are the event seqs.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.views import CompactionData, NoticeData, ViewNode

from ._blocks import content_views
from ._common import data_of, display_failure

__all__ = ["TurnNotice", "RetryNotice", "Compaction"]

_TURN_KINDS = {"error": "turn-error", "max-tokens": "max-tokens", "aborted": "interrupted",
               "interrupted": "interrupted", "blocked": "blocked"}


def _node(definition: Definition, context: Context, first: Match, data: Any) -> ViewNode:
    return ViewNode(key=context.key, kind=definition.kind, id=context.id, target="chat", anchorSeq=first.seq,
                    location=node_location(first.location), data=data)


class TurnNotice(Definition):
    kind = "turn-notice"
    target = "chat"
    event_types = frozenset({"turn/end"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        data = data_of(event)
        reason = data.get("reason")
        if type(reason) is dict and reason.get("kind") in _TURN_KINDS:
            return str(event.seq), "start"
        if "reason" not in data and "error" in data:
            return str(event.seq), "start"
        return None

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        data = data_of(m.event)
        reason = data.get("reason")
        message = code = None
        own: Any = None
        inner: Any = UNSET
        if type(reason) is dict:
            kind = _TURN_KINDS[reason["kind"]]
            if reason["kind"] == "error":
                message, code = display_failure(reason.get("error"))
                own = reason.get("error")
            elif reason["kind"] == "aborted":
                inner = reason.get("reason", UNSET)
            elif reason["kind"] == "interrupted":
                inner = "interrupted"
        else:
            kind = "turn-error"
            message, code = display_failure(data.get("error"))
            own = data.get("error")
        # displayFailure blanks some messages (AUTH); the error's own message is kept beside it, to be shown.
        own = own.get("message") if type(own) is dict else None
        out = NoticeData(kind=kind, seq=m.seq, time=m.event.time, turn=data.get("turn", UNSET),
                         message=UNSET if message is None else message, code=UNSET if code is None else code,
                         reason=inner,
                         errorMessage=own if type(own) is str and own and own != message else UNSET)
        return _node(self, context, m, out)


class RetryNotice(Definition):
    kind = "retry-notice"
    target = "chat"
    event_types = frozenset({"llm/retry", "llm/retry-started"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        retry_id = data_of(event).get("retryId")
        if type(retry_id) is not str:
            return (str(event.seq), "start") if event.type == "llm/retry" else None
        return retry_id, "start" if event.type == "llm/retry" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        data = data_of(m.event)
        message, code = display_failure(data.get("failure"))
        resumed = any(x.event.type == "llm/retry-started" for x in context.matches)
        out = NoticeData(kind="retry", seq=m.seq, time=m.event.time, turn=data.get("turn", UNSET),
                         step=data.get("step", UNSET), message=message, code=UNSET if code is None else code,
                         retry=data.get("retry", UNSET),
                         maxRetries=data.get("maxRetries", UNSET) if data.get("mode") == "normal" else UNSET,
                         delayMs=data.get("delayMs", UNSET), resumed=resumed)
        return _node(self, context, m, out)


class Compaction(Definition):
    kind = "compaction"
    target = "chat"
    event_types = frozenset({"compaction/start", "compaction/summary", "compaction/end", "compaction/prune"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        if event.type == "compaction/prune":
            return f"prune:{event.seq}", "start"
        cid = data_of(event).get("compactionId")
        if type(cid) is not str:
            return None
        return cid, "start" if event.type == "compaction/start" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        if not context.matches:
            return None
        first = context.matches[0]
        if first.event.type == "compaction/prune":
            data = data_of(first.event)
            out = CompactionData(kind="prune", seq=first.seq, time=first.event.time, status="done",
                                 shadowedRange=data.get("shadowedRange", UNSET),
                                 shadowedTokenCount=data.get("shadowedTokenCount", UNSET))
            return _node(self, context, first, out)
        summary = end = None
        for m in context.matches:
            if m.event.type == "compaction/summary":
                summary = data_of(m.event)
            elif m.event.type == "compaction/end":
                end = data_of(m.event)
        error = end.get("error", UNSET) if end is not None else UNSET
        status = "running" if end is None else "error" if error is not UNSET else "done"
        turn = data_of(first.event).get("turn", UNSET)
        out = CompactionData(
            kind="compaction", seq=first.seq, time=first.event.time, status=status, turn=turn,
            summary=content_views(summary.get("summary")) if summary is not None else UNSET,
            shadowedRange=summary.get("shadowedRange", UNSET) if summary is not None else UNSET,
            shadowedTokenCount=summary.get("shadowedTokenCount", UNSET) if summary is not None else UNSET,
            error=error)
        return _node(self, context, first, out)
