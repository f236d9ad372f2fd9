"""Activity rows (target chat): read-only rows for events users care about, which the fallback would bury in Events.

Rules: ``approval`` starts on ``approval/asked`` (id = the approval's ``id``) and takes its ``approval/decided``
(the outcome); ``goal`` is one row per ``goal/change`` (operation, objective, phase); ``hook-block`` is a
``hook/result`` whose decision is ``block``/``deny`` (its point, handler and message); ``subagent`` is a
``tool-workflow/agent-start`` (label, child session id) with its ``tool-workflow/agent-end`` (outcome), and a
session's own ``subagent/descriptor`` (this log is a child: its label and mode); ``overflow-notice`` is the
``finish`` chunk whose failure says the request exceeded the context window (what triggers a compaction). Anchors
are the first event's seq; the row's turn is the event's. Each Definition folds its Matches only.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.views import ActivityData, NoticeData, ViewNode

from ._common import data_of, display_failure, is_scalar

__all__ = ["Approval", "GoalChange", "HookBlock", "Subagent", "OverflowNotice", "is_overflow"]

_OVERFLOW_CODES = frozenset({"CONTEXT_WINDOW_EXCEEDED", "CONTEXT_OVERFLOW", "CONTEXT_LENGTH_EXCEEDED",
                             "context_length_exceeded"})


def _str(value: Any) -> str | None:
    return value if type(value) is str and value else None


def _node(definition: Definition, context: Context, first: Match, data: Any) -> ViewNode:
    return ViewNode(key=context.key, kind=definition.kind, id=context.id, target="chat", anchorSeq=first.seq,
                    location=node_location(first.location), data=data)


class _OneEvent(Definition):
    """A row per event (id = seq), built from that one Match."""

    target = "chat"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def row(self, m: Match) -> Any:
        raise NotImplementedError

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        return _node(self, context, m, self.row(m))


class Approval(Definition):
    kind = "approval"
    target = "chat"
    event_types = frozenset({"approval/asked", "approval/decided"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        aid = data_of(event).get("id")
        if type(aid) is not str:
            return None
        return aid, "start" if event.type == "approval/asked" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        asked = context.start
        decided = next((m for m in reversed(context.matches) if m.event.type == "approval/decided"), None)
        first = asked or decided
        if first is None:
            return None
        a = data_of(asked.event) if asked is not None else {}
        outcome = _str(data_of(decided.event).get("outcome")) if decided is not None else None
        tool = _str(a.get("toolName")) or _str(a.get("tool")) or "an action"
        data = ActivityData(kind="approval", seq=first.seq, time=first.event.time, title=f"Approval for {tool}",
                            turn=a.get("turn", UNSET), detail=_str(a.get("reason")) or UNSET,
                            status=outcome or ("asked" if decided is None else "decided"))
        return _node(self, context, first, data)


class GoalChange(_OneEvent):
    kind = "goal"
    event_types = frozenset({"goal/change"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        return str(event.seq), "start"

    def row(self, m: Match) -> ActivityData:
        d = data_of(m.event)
        goal = d.get("goal") if type(d.get("goal")) is dict else {}
        op = _str(d.get("operation")) or "change"
        objective = _str(goal.get("objective")) or ""  # type: ignore[union-attr]
        phase = _str(goal.get("phase"))  # type: ignore[union-attr]
        rounds = goal.get("maxGoalRounds")  # type: ignore[union-attr]
        detail = f"rounds started {d.get('roundsStarted')}" + (f" of {rounds}" if type(rounds) is int else "") \
            if type(d.get("roundsStarted")) is int else None
        return ActivityData(kind="goal", seq=m.seq, time=m.event.time, title=f"Goal {op}: {objective}".rstrip(": "),
                            turn=d.get("turn", UNSET), detail=detail or UNSET, status=phase or UNSET)


class HookBlock(_OneEvent):
    kind = "hook-block"
    event_types = frozenset({"hook/result"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        return (str(event.seq), "start") if data_of(event).get("decision") in ("block", "deny") else None

    def row(self, m: Match) -> ActivityData:
        d = data_of(m.event)
        point = _str(d.get("point")) or "hook"
        handler = _str(d.get("handlerId"))
        message = _str(d.get("stderrSummary")) or _str(d.get("reason")) or _str(d.get("message"))
        title = f"{point} hook blocked" + (f" ({handler})" if handler else "")
        return ActivityData(kind="hook-block", seq=m.seq, time=m.event.time, title=title, turn=d.get("turn", UNSET),
                            detail=message or UNSET, status=str(d.get("decision")))


class Subagent(Definition):
    kind = "subagent"
    target = "chat"
    event_types = frozenset({"tool-workflow/agent-start", "tool-workflow/agent-end", "subagent/descriptor"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        d = data_of(event)
        if event.type == "subagent/descriptor":
            return f"self:{event.seq}", "start"
        run, seq = d.get("runId"), d.get("seq")
        if type(run) is not str or type(seq) is not int:
            return None
        return f"{run}:{seq}", "start" if event.type == "tool-workflow/agent-start" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        first = context.start
        if first is None:
            return None
        d = data_of(first.event)
        label = _str(d.get("label"))
        if first.event.type == "subagent/descriptor":
            mode = _str(d.get("mode"))
            data = ActivityData(kind="subagent", seq=first.seq, time=first.event.time,
                                title="This session is a subagent" + (f": {label}" if label else ""),
                                detail=" · ".join(x for x in (mode, _str(d.get("provider"))) if x) or UNSET,
                                status="child", label=label or UNSET)
            return _node(self, context, first, data)
        end = next((m for m in reversed(context.matches) if m.event.type == "tool-workflow/agent-end"), None)
        outcome = _str(data_of(end.event).get("outcome")) if end is not None else None
        phase = _str(d.get("phase"))
        data = ActivityData(kind="subagent", seq=first.seq, time=first.event.time,
                            title="Subagent" + (f" {label}" if label else ""), turn=d.get("turn", UNSET),
                            detail=f"workflow phase {phase}" if phase else UNSET,
                            status=outcome or "running", childSession=_str(d.get("childId")) or UNSET,
                            label=label or UNSET)
        return _node(self, context, first, data)


def is_overflow(failure: Any) -> bool:
    """A failure that says the request exceeded the model's context window."""
    if type(failure) is not dict:
        return False
    if failure.get("code") in _OVERFLOW_CODES:
        return True
    message = failure.get("message")
    return type(message) is str and ("context window" in message.lower() or "context length" in message.lower())


class OverflowNotice(_OneEvent):
    """``overflow-notice``: the step that failed because the context overflowed (a compaction follows)."""

    kind = "overflow-notice"
    event_types = frozenset({"assistant/chunk"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        if not is_scalar(event):
            return None
        chunk = data_of(event).get("chunk")
        if type(chunk) is not dict or chunk.get("type") != "finish":
            return None
        reason = chunk.get("reason")
        if type(reason) is not dict or reason.get("kind") != "error" or not is_overflow(reason.get("failure")):
            return None
        return str(event.seq), "start"

    def row(self, m: Match) -> NoticeData:
        d = data_of(m.event)
        failure = d["chunk"]["reason"]["failure"]
        message, code = display_failure(failure)
        return NoticeData(kind="context-overflow", seq=m.seq, time=m.event.time, turn=d.get("turn", UNSET),
                          step=d.get("step", UNSET), message=message, code=UNSET if code is None else code)
