"""Turn Tail (``turn-tail``, target chat): the end-of-turn line with closing message, TTFT, tokens/s and usage.

Rules (ASSEMBLY 5.4): ``turn/start`` starts (id ``String(turn)``); everything carrying the turn's coordinates
updates. The state is folded incrementally in O(1) per Match (closing anchor marks, latest transcript item, the
token-usage lifecycle over scalar Matches only); the tail data is published at turn scope once ``turn/end`` exists,
from the ``assistant-step`` step data the Chat Assistant published. A text row counts as streamed text when any
member is non-blank, exactly as its members would one by one.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from msgspec import UNSET

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.records import joined as joined_text
from assembler.text import JS_WHITESPACE, js_number_str
from assembler.views import (
    AssistantStepData,
    LocationData,
    RecordedUsage,
    StepRef,
    TextBlockView,
    TurnTailData,
    ViewNode,
    is_recorded_time,
)

from ._common import OFFSETS, ROW_TYPES, data_of, is_append, message_content, message_provenance, turn_id
from ._usage import UsageFold

__all__ = ["TurnTail", "TurnTailState"]

_UPDATES = frozenset({"turn/end", "tool/call", "tool/result", "assistant/message", "assistant/chunk", "step/start",
                      "step/end", "llm/retry", "llm/retry-started", *ROW_TYPES})


def _recorded_duration(data: dict[str, Any], key: str) -> int | float | None:
    """A duration in milliseconds the log records on ``turn/end`` (a finite number >= 0), else None."""
    value = data.get(key)
    if (type(value) is int or type(value) is float) and math.isfinite(value) and value >= 0:
        return value
    return None


class TurnTailState:
    """``{turn, end?}`` plus the incremental facts the tail needs."""

    __slots__ = ("turn", "started", "start_seq", "first_seq", "end", "latest_item", "anchor", "marks", "usage",
                 "tool_calls", "recorded")

    def __init__(self, turn: Any, started: bool, start_seq: int | None, first_seq: int) -> None:
        self.turn = turn
        self.started = started
        self.start_seq = start_seq
        self.first_seq = first_seq
        self.end: Match | None = None
        self.latest_item: int | None = None
        self.anchor: int | float | None = None
        self.marks: dict[str, list[bool]] = {}  # step -> [streamedText, finalized]
        self.usage = UsageFold() if started else None
        self.tool_calls = 0
        self.recorded = RecordedFold()


_USAGE_FIELDS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


class RecordedFold:
    """Any recorded subset of token usage over the settled (append-origin) messages: per field the sum and how many
    messages recorded it. O(1) per message."""

    __slots__ = ("messages", "sums", "counts", "models")

    def __init__(self) -> None:
        self.models: list[str] = []
        self.messages = 0
        self.sums = [0] * len(_USAGE_FIELDS)
        self.counts = [0] * len(_USAGE_FIELDS)

    def feed(self, usage: Any) -> None:
        if type(usage) is not dict:
            return
        values = [usage.get(f) for f in _USAGE_FIELDS]
        if not any(type(v) is int and v >= 0 for v in values):
            return
        self.messages += 1
        for i, v in enumerate(values):
            if type(v) is int and v >= 0:
                self.sums[i] += v
                self.counts[i] += 1

    def result(self) -> RecordedUsage | None:
        if self.messages == 0:
            return None
        kept = {f: self.sums[i] for i, f in enumerate(_USAGE_FIELDS) if self.counts[i] == self.messages}
        if not kept:
            return None
        return RecordedUsage(messages=self.messages, **kept)


def _has_text(content: Any) -> bool:
    if type(content) is not list:
        return False
    for b in content:
        if type(b) is dict and b.get("type") == "text" and type(b.get("text")) is str \
                and b["text"].strip(JS_WHITESPACE):
            return True
    return False


def _step_key(event: Any) -> str:
    data = event.data
    if type(data) is dict:
        return js_number_str(data.get("step"))
    return js_number_str(data.step)


def feed(state: TurnTailState, match: Match) -> None:
    """One Match (any role) into the tail state."""
    event = match.event
    etype = event.type
    if state.usage is not None and etype not in ROW_TYPES:
        state.usage.feed(event)
    if etype == "chunkrow/text-chunks":
        if joined_text(event.data.texts).strip(JS_WHITESPACE):
            state.marks.setdefault(_step_key(event), [False, False])[0] = True
        return
    if etype in ROW_TYPES:
        return
    data = data_of(event)
    if etype == "assistant/chunk":
        chunk = data.get("chunk")
        if type(chunk) is not dict:
            return
        ctype = chunk.get("type")
        text = None
        if ctype == "text-delta":
            text = chunk.get("text")
        elif ctype == "block-end":
            block = chunk.get("block")
            if type(block) is dict and block.get("type") == "text":
                text = block.get("text")
        if type(text) is str and text.strip(JS_WHITESPACE):
            state.marks.setdefault(_step_key(event), [False, False])[0] = True
    elif etype == "assistant/message":
        state.marks[_step_key(event)] = [False, True]
        if is_append(event):
            state.recorded.feed(data.get("usage"))
            prov = message_provenance(data)
            if prov is not None and type(prov.model) is str and prov.model and prov.model not in state.recorded.models:
                state.recorded.models.append(prov.model)
        if is_append(event) and _has_text(message_content(data)):
            state.anchor = event.seq + OFFSETS["finalizedFollowup"]
    elif etype == "llm/retry":
        state.marks[_step_key(event)] = [False, False]
        state.latest_item = event.seq
    elif etype == "step/end":
        mark = state.marks.get(_step_key(event))
        if mark is not None and mark[0] and not mark[1]:
            state.anchor = event.seq + OFFSETS["interruptedFollowup"]
    elif etype == "turn/end":
        if state.end is None:
            state.end = match
        reason = data.get("reason")
        if (type(reason) is dict and reason.get("kind") == "error") or "error" in data:
            state.latest_item = event.seq
    elif etype == "tool/call" or (etype == "tool/result" and is_append(event)):
        state.latest_item = event.seq
        if etype == "tool/call":
            state.tool_calls += 1


def _fold(context: Context) -> TurnTailState | None:
    if context.start is not None:
        return context.state  # type: ignore[no-any-return]
    if not context.matches:
        return None
    first = context.matches[0]
    state = TurnTailState(None, False, None, first.seq)
    for m in context.matches:
        feed(state, m)
    return state


def _metrics(finals: list[Any]) -> tuple[Any, Any]:
    """``deriveTurnMetrics``: TTFT of the lowest step, tokens/s over the nodes with decode time and output."""
    ttft_node: tuple[Any, Any] | None = None  # (step, ttft)
    total_out = 0
    total_decode = 0
    counted = False
    for node in finals:
        timing = node.timing
        ttft = decode = None
        if timing is not UNSET and is_recorded_time(timing.completedTime):
            ftt, sst = timing.firstTokenTime, timing.stepStartTime
            ftt = ftt if is_recorded_time(ftt) else None
            sst = sst if is_recorded_time(sst) else None
            if ftt is not None and sst is not None:
                ttft = max(0, ftt - sst)
            if ftt is not None:
                decode = max(0, timing.completedTime - ftt)
        usage = node.usage
        out: Any = usage.get("outputTokens") if type(usage) is dict else None
        if not (type(out) in (int, float) and math.isfinite(out) and out >= 0):
            out = None
        step = node.step
        if ttft_node is None or (type(step) in (int, float) and type(ttft_node[0]) in (int, float)
                                 and step < ttft_node[0]):
            ttft_node = (step, ttft)
        if decode is not None and out is not None:
            total_out += out
            total_decode += decode
            counted = True
    ttft_ms = ttft_node[1] if ttft_node is not None else None
    tps = total_out / (total_decode / 1000) if counted and total_decode != 0 else None
    return ttft_ms, tps


class TurnTail(Definition):
    """``turn-tail`` (ASSEMBLY 5.4)."""

    kind = "turn-tail"
    target = "chat"
    event_types = frozenset({"turn/start", *_UPDATES})
    reads_turn_data = True

    def match(self, event: Any) -> tuple[str, Role] | None:
        id = turn_id(event)
        if id is None:
            return None
        return id, "start" if event.type == "turn/start" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> TurnTailState:
        state = TurnTailState(data_of(match.event).get("turn"), True, match.seq, match.seq)
        feed(state, match)
        return state

    def update(self, context: Context, match: Match) -> TurnTailState:
        state: TurnTailState = context.state
        feed(state, match)
        return state


    def anchor(self, state: TurnTailState) -> int | float:
        # Deviation from ASSEMBLY 5.4 (which anchors after the closing message): the tail is the last row of its
        # turn, after every notice (max tokens, error, interruption) and late tool row anchored at or before the end.
        if state.end is not None:
            return state.end.seq + OFFSETS["turnTail"]
        if state.anchor is not None:
            return state.anchor
        if state.start_seq is not None:
            return state.start_seq
        return state.first_seq

    def build_location_data(self, context: Context, scope: Literal["step", "turn"]) -> LocationData | None:
        if scope != "turn":
            return None
        location = context.location
        if location.kind not in ("turn", "step") or location.turn is None:
            return None
        state = _fold(context)
        if state is None or state.end is None:
            return None
        turn_loc = location.turn
        finalized: list[AssistantStepData] = []
        for sl in sorted(turn_loc.steps.values(), key=lambda s: s.first_seq):
            data = sl.data.get("assistant-step")
            if data is not None and data.finalNode is not UNSET:
                finalized.append(data)
        finalized.sort(key=lambda d: d.finalNode.seq)  # type: ignore[union-attr]  # filtered to set nodes above
        closing = None
        for d in finalized:
            if any(type(b) is TextBlockView and b.text.strip(JS_WHITESPACE) for b in d.blocks):
                closing = d
        latest = finalized[-1].finalNode.seq if finalized else None  # type: ignore[union-attr]
        if state.latest_item is not None and (latest is None or state.latest_item > latest):
            latest = state.latest_item
        closing_seq = closing.finalNode.seq if closing is not None else None  # type: ignore[union-attr]
        ttft, tps = _metrics([d.finalNode for d in finalized])
        usage = state.usage.result() if state.usage is not None else None
        end = state.end.event
        models = state.recorded.models
        recorded = state.recorded.result()
        duration, turn_ttft = _recorded_duration(data_of(end), "durationMs"), _recorded_duration(data_of(end), "ttftMs")
        value = TurnTailData(
            turn=data_of(end).get("turn", state.turn), seq=end.seq, time=end.time,
            closing=None if closing is None else StepRef(closing.step, closing_seq),  # type: ignore[arg-type]
            branchUnavailable=closing is None or latest != closing_seq,
            ttftMs=UNSET if ttft is None else ttft, tokensPerSecond=UNSET if tps is None else tps,
            tokenUsage=UNSET if usage is None else usage, steps=len(finalized), toolCalls=state.tool_calls,
            usage=UNSET if recorded is None else recorded, models=models or UNSET,
            durationMs=UNSET if duration is None else duration, turnTtftMs=UNSET if turn_ttft is None else turn_ttft)
        return LocationData(kind="turn", turn=turn_loc.turn, key=self.kind, value=value)

    def build_view_node(self, context: Context) -> ViewNode | None:
        location = context.location
        if location.turn is None or location.kind not in ("turn", "step"):
            return None
        data = location.turn.data.get(self.kind)
        state = _fold(context)
        if data is None or state is None:
            return None
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat",
                        anchorSeq=self.anchor(state), location=node_location(location), data=data)
