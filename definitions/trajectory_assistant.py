"""Trajectory Assistant (``trajectory-assistant-step``, target trajectory) and the companion ``trajectory-turn-end``.

Rules (ASSEMBLY 5.5): Chat's matching plus ``step/end``, and ``assistant/message`` whether or not append-origin.
The same block fold as Chat, minus ``hidden``; usage adds up across usage chunks; a retry keeps
``firstTokenTime`` and usage, records the failure and marks the request started. The node carries the settled
message, a running ``partial`` and the ``request`` summary. The turn-end node carries the error of a failed turn.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.locations import UNRESOLVED
from assembler.views import (
    AssistantNode,
    Timing,
    TrajectoryAssistantData,
    TrajectoryPartial,
    TrajectoryRequest,
    TrajectoryTurnEndData,
    ViewNode,
)

from ._blocks import StreamFold, content_views
from ._common import (
    OFFSETS,
    ROW_TYPES,
    closed_boundary,
    data_of,
    display_failure,
    message_content,
    message_id,
    message_provenance,
    turn_step_id,
)

__all__ = ["TrajectoryAssistant", "TrajectoryTurnEnd", "TrajectoryState", "add_usage"]

_OPTIONAL_USAGE = ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


def add_usage(current: dict[str, Any] | None, nxt: Any) -> dict[str, Any] | None:
    """``addUsage``: input/output are ``(current ?? 0) + next``; each optional count is present when either side
    has it. No validation or clamping (ASSEMBLY 5.5)."""
    if type(nxt) is not dict:
        return current
    cur = current or {}
    out: dict[str, Any] = {
        "inputTokens": (cur.get("inputTokens") or 0) + (nxt.get("inputTokens") or 0),
        "outputTokens": (cur.get("outputTokens") or 0) + (nxt.get("outputTokens") or 0),
    }
    for key in _OPTIONAL_USAGE:
        if key in cur or key in nxt:
            out[key] = (cur.get(key) or 0) + (nxt.get(key) or 0)
    return out


class TrajectoryState:
    """Per-step Trajectory state (Chat's fields except ``hidden``, plus start, retry and step-end facts)."""

    __slots__ = ("turn", "step", "stream", "final", "usage", "start_seq", "start_time", "started", "saw_chunk",
                 "retry", "step_end")

    def __init__(self, turn: Any, step: Any, start_seq: int, start_time: int, started: bool) -> None:
        self.turn = turn
        self.step = step
        self.stream = StreamFold()
        self.final: Match | None = None
        self.usage: dict[str, Any] | None = None
        self.start_seq = start_seq
        self.start_time = start_time
        self.started = started
        self.saw_chunk = False
        self.retry: dict[str, Any] | None = None
        self.step_end: Match | None = None


def _retry_info(data: dict[str, Any]) -> dict[str, Any]:
    message, code = display_failure(data.get("failure"))
    info: dict[str, Any] = {"message": message, "retry": data.get("retry"), "delayMs": data.get("delayMs")}
    if code is not None:
        info["code"] = code
    if data.get("mode") == "normal" and "maxRetries" in data:
        info["maxRetries"] = data.get("maxRetries")
    return info


def apply(state: TrajectoryState, match: Match, fallback: bool = False) -> None:
    event = match.event
    etype = event.type
    if etype in ROW_TYPES:
        state.stream.apply_row(event)
        state.saw_chunk = True
    elif etype == "assistant/chunk":
        state.saw_chunk = True
        outcome, usage = state.stream.apply_chunk(event)
        if outcome == "usage":
            state.usage = add_usage(state.usage, usage)
    elif etype == "assistant/message":
        data = data_of(event)
        state.stream.replace_content(message_content(data))
        state.final = match
        if state.usage is None and type(data.get("usage")) is dict:
            state.usage = data["usage"]
    elif etype == "step/end":
        state.step_end = match
    elif etype == "llm/retry" and not fallback:
        state.stream = StreamFold(state.stream.first_token_time)
        state.started = True
        state.saw_chunk = False
        state.final = None
        state.step_end = None
        state.retry = _retry_info(data_of(event))


def fallback_state(context: Context) -> TrajectoryState | None:
    """The fallback fold: state from the first chunk, row or message; ``llm/retry`` ignored (ASSEMBLY 5.5)."""
    state: TrajectoryState | None = None
    for m in context.matches:
        etype = m.event.type
        if state is None:
            if etype not in ROW_TYPES and etype not in ("assistant/chunk", "assistant/message"):
                continue
            data = m.event.data
            if type(data) is dict:
                state = TrajectoryState(data.get("turn"), data.get("step"), m.seq, m.event.time, False)
            else:
                state = TrajectoryState(data.turn, data.step, m.seq, m.event.time, False)
        apply(state, m, fallback=True)
    return state


class TrajectoryAssistant(Definition):
    """``trajectory-assistant-step`` (ASSEMBLY 5.5)."""

    kind = "trajectory-assistant-step"
    target = "trajectory"
    event_types = frozenset({"step/start", "step/end", "assistant/chunk", "assistant/message", "llm/retry",
                             *ROW_TYPES})

    def match(self, event: Any) -> tuple[str, Role] | None:
        id = turn_step_id(event)
        if id is None:
            return None
        return id, "start" if event.type == "step/start" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> TrajectoryState:
        data = data_of(match.event)
        return TrajectoryState(data.get("turn"), data.get("step"), match.seq, match.event.time, True)

    def update(self, context: Context, match: Match) -> TrajectoryState:
        state: TrajectoryState = context.state
        apply(state, match)
        return state


    def build_view_node(self, context: Context) -> ViewNode | None:
        stored = context.start is not None
        state = context.state if stored else fallback_state(context)
        if state is None:
            return None
        stream = state.stream
        boundary = closed_boundary(context, state.step_end if stored else None)
        settled: AssistantNode | None = None
        real = False
        if state.final is not None:
            event = state.final.event
            data = data_of(event)
            mid = message_id(data)
            real = mid is not None
            provenance = message_provenance(data)
            settled = AssistantNode(
                kind="assistant", seq=event.seq, messageId=mid, time=event.time, turn=data.get("turn"),
                step=data.get("step"), blocks=content_views(message_content(data)), usage=data.get("usage", UNSET),
                timing=Timing(state.start_time if state.started else None, stream.first_token_time, event.time),
                interrupted=True if data.get("interrupted") is True else UNSET,
                provenance=UNSET if provenance is None else provenance)
        elif boundary is not None and stream.has_evidence():
            settled = AssistantNode(kind="assistant", seq=boundary.seq + OFFSETS["interruptedAssistant"],
                                    time=boundary.time, turn=state.turn, step=state.step, blocks=stream.views(),
                                    interrupted=True)
        partial = None
        if settled is None and boundary is None and state.saw_chunk:
            partial = TrajectoryPartial(state.turn, state.step, stream.views())
        request: TrajectoryRequest | None = None
        if state.started:
            if settled is not None and settled.interrupted is not True:
                status = "complete"
            elif state.retry is not None or boundary is not None:
                status = "error"
            else:
                status = "running"
            completed = settled.time if settled is not None else boundary.time if boundary is not None else None
            retry = state.retry or {}
            provenance_out: Any = UNSET
            if real and settled is not None and settled.provenance is not UNSET:
                provenance_out = settled.provenance
            request = TrajectoryRequest(
                purpose="assistant", startSeq=state.start_seq, turn=state.turn, step=state.step,
                startedAt=state.start_time, completedAt=completed, status=status,
                error=retry["message"] if state.retry is not None else UNSET,
                errorCode=retry.get("code", UNSET), retry=retry.get("retry", UNSET),
                maxRetries=retry.get("maxRetries", UNSET), retryDelayMs=retry.get("delayMs", UNSET),
                resultSeq=settled.seq if real and settled is not None else UNSET,  # type: ignore[arg-type]
                provenance=provenance_out,
                usage=UNSET if state.usage is None else state.usage)
        if settled is None and partial is None and request is None:
            return None
        location = context.start.location if context.start is not None else UNRESOLVED
        data_out = TrajectoryAssistantData(kind="assistant", node=UNSET if settled is None else settled,
                                           partial=partial, request=UNSET if request is None else request)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="trajectory",
                        anchorSeq=state.start_seq, location=node_location(location), data=data_out)


class TrajectoryTurnEnd(Definition):
    """``trajectory-turn-end``: one node per ``turn/end`` (id = its seq) with the failure of an error turn."""

    kind = "trajectory-turn-end"
    target = "trajectory"
    event_types = frozenset({"turn/end"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        return str(event.seq), "start"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        m = context.start
        if m is None:
            return None
        data = data_of(m.event)
        reason = data.get("reason")
        error = code = None
        if type(reason) is dict and reason.get("kind") == "error":
            error, code = display_failure(reason.get("error"))
        out = TrajectoryTurnEndData(kind="turn-end", turn=data.get("turn"), time=m.event.time,
                                    error=UNSET if error is None else error, errorCode=UNSET if code is None else code)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="trajectory", anchorSeq=m.seq,
                        location=node_location(m.location), data=out)
