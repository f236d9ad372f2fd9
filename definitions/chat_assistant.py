"""Chat Assistant (``assistant-step``, target chat): one node per model step, folded from chunks and rows alike.

Rules (ASSEMBLY 5.3): ``step/start`` starts, with id ``"turn:step"``; chunks, rows, append-origin
``assistant/message`` and ``llm/retry`` update. Scalar chunks and packed rows go through the shared block fold
(``_blocks.StreamFold``) and give the same state. A retry resets everything but ``firstTokenTime`` and hides the
node; a closed step or turn without a message yields a synthetic interrupted node at boundary seq - 0.9.
A running step with nothing visible has a node (hidden) only when something was visible in this attempt
(``firstVisibleSeq`` is set: state alone, so a fresh fold of the same window builds the same node) or when the
Context already has a chat node (the reference keeps it after a retry; widened to every cause, since returning
None after a node breaks the contract: a visible block replaced by an empty one must not withdraw the node).
A tool call is shown once: in its step while it streams, then in its own ``tool`` row. So the tool events ``Tool``
claims are claimed here too, as updates that change no state: the step is published again when its call gets a row.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.views import AssistantNode, AssistantStepData, LocationData, Timing, ViewNode

from ._blocks import StreamFold, content_views, view_visible
from ._common import (
    OFFSETS,
    ROW_TYPES,
    closed_boundary,
    data_of,
    is_append,
    message_content,
    message_id,
    turn_step_id,
)
from .tool import Tool

__all__ = ["ChatAssistant", "ChatState", "ChatProjection"]

_TOOL = Tool()  # its ``match`` says which tool events give a call its own row


class ChatState:
    """Per-step Chat state. Owned by one Context; mutated in place by ``ChatAssistant`` only."""

    __slots__ = ("turn", "step", "stream", "hidden", "final", "usage", "step_start_time")

    def __init__(self, turn: Any, step: Any, step_start_time: int | None, first_token_time: int | None = None) -> None:
        self.turn = turn
        self.step = step
        self.stream = StreamFold(first_token_time)
        self.hidden = False
        self.final: Match | None = None
        self.usage: Any = None
        self.step_start_time = step_start_time


class ChatProjection:
    """What one flush derives from a Chat state: the node data, its anchor, and its visibility."""

    __slots__ = ("data", "anchor", "visibility")

    def __init__(self, data: AssistantStepData, anchor: int | float, visibility: str) -> None:
        self.data = data
        self.anchor = anchor
        self.visibility = visibility


def apply(state: ChatState, match: Match, hide_on_retry: bool = True) -> None:
    """One update Match (scalar or packed) applied to a Chat state."""
    event = match.event
    etype = event.type
    stream = state.stream
    if etype in ROW_TYPES:
        stream.apply_row(event)
        if stream.visible_blocks > 0:
            state.hidden = False
    elif etype == "assistant/chunk":
        outcome, usage = stream.apply_chunk(event)
        if outcome == "block":
            if stream.visible_blocks > 0:
                state.hidden = False
        elif outcome == "usage":
            state.usage = usage
    elif etype == "assistant/message":
        data = data_of(event)
        stream.replace_content(message_content(data))
        state.hidden = False
        state.final = match
        state.usage = data.get("usage")
    elif etype == "llm/retry":
        state.stream = StreamFold(stream.first_token_time)
        state.hidden = True
        state.final = None
        state.usage = None


def fallback_state(context: Context) -> ChatState | None:
    """``fallbackState``: fold the stored Matches of a Context with no ``step/start`` in the window."""
    state: ChatState | None = None
    for m in context.matches:
        etype = m.event.type
        if state is None:
            if etype == "llm/retry":
                continue
            if type(m.event.data) is dict:
                data = m.event.data
                state = ChatState(data.get("turn"), data.get("step"), None)
            else:
                state = ChatState(m.event.data.turn, m.event.data.step, None)
        apply(state, m)
    return state


def settled_node(context: Context, state: ChatState) -> AssistantNode | None:
    """The final message node, or a synthetic interrupted one when the step/turn closed with evidence."""
    stream = state.stream
    if state.final is not None:
        event = state.final.event
        data = data_of(event)
        return AssistantNode(
            kind="assistant", seq=event.seq, messageId=message_id(data), time=event.time,
            turn=data.get("turn"), step=data.get("step"), blocks=content_views(message_content(data)),
            usage=data.get("usage", UNSET),
            timing=Timing(state.step_start_time, stream.first_token_time, event.time),
            interrupted=True if data.get("interrupted") is True else UNSET)
    boundary = closed_boundary(context)
    if boundary is None or not stream.has_evidence():
        return None
    return AssistantNode(kind="assistant", seq=boundary.seq + OFFSETS["interruptedAssistant"], time=boundary.time,
                         turn=state.turn, step=state.step, blocks=stream.views(), interrupted=True)


class ChatAssistant(Definition):
    """``assistant-step`` (ASSEMBLY 5.3)."""

    kind = "assistant-step"
    target = "chat"
    event_types = frozenset({"step/start", "assistant/chunk", "assistant/message", "llm/retry", *ROW_TYPES,
                             *Tool.event_types})

    def match(self, event: Any) -> tuple[str, Role] | None:
        etype = event.type
        if etype == "assistant/message" and not is_append(event):
            return None
        if etype in Tool.event_types and _TOOL.match(event) is None:
            return None
        id = turn_step_id(event)
        if id is None:
            return None
        return id, "start" if etype == "step/start" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> ChatState:
        data = data_of(match.event)
        return ChatState(data.get("turn"), data.get("step"), match.event.time)

    def update(self, context: Context, match: Match) -> ChatState:
        state: ChatState = context.state
        apply(state, match)
        return state


    def project(self, context: Context) -> ChatProjection | None:
        """The node projection (``projectAssistant``), cached for the current flush in ``context.scratch``."""
        if context.scratch is not None:
            return context.scratch[0]  # type: ignore[no-any-return]
        result = self._project(context)
        context.scratch = (result,)
        return result

    def _project(self, context: Context) -> ChatProjection | None:
        state = context.state if context.start is not None else fallback_state(context)
        if state is None:
            return None
        stream = state.stream
        settled = settled_node(context, state)
        if settled is not None:
            status = "interrupted" if settled.interrupted is True else "settled"
            visible = any(view_visible(b) for b in settled.blocks)
        else:
            status = "running"
            visible = stream.visible_blocks > 0
            if not visible and stream.first_visible_seq is None and "chat" not in context.current:
                return None
        first = context.matches[0] if context.matches else None
        anchor: Any
        time: Any
        if settled is not None:
            anchor, time = settled.seq, settled.time
        elif stream.first_visible_seq is not None:
            anchor, time = stream.first_visible_seq, stream.first_visible_time
        elif first is not None:
            anchor, time = first.seq, first.event.time
        else:
            anchor, time = 0, 0
        visibility = "visible" if (settled is not None and settled.interrupted is True) or visible else "hidden"
        data = AssistantStepData(
            status=status, turn=state.turn, step=state.step,
            blocks=settled.blocks if settled is not None else stream.views(), time=time,
            firstTokenTime=stream.first_token_time, firstVisibleSeq=stream.first_visible_seq,
            firstVisibleTime=stream.first_visible_time,
            usage=UNSET if state.usage is None else state.usage,
            finalNode=UNSET if settled is None else settled)
        return ChatProjection(data, anchor, visibility)

    def build_location_data(self, context: Context, scope: Literal["step", "turn"]) -> LocationData | None:
        if scope != "step":
            return None
        location = context.location
        if location.kind != "step" or location.step is None:
            return None
        projection = self.project(context)
        if projection is None:
            return None
        return LocationData(kind="step", turn=location.step.turn.turn, step=location.step.step, key=self.kind,
                            value=projection.data)

    def build_view_node(self, context: Context) -> ViewNode | None:
        projection = self.project(context)
        if projection is None:
            return None
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat", anchorSeq=projection.anchor,
                        location=node_location(context.location), data=projection.data,
                        visibility=projection.visibility)
