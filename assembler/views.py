"""The view vocabulary: what a flush publishes and every consumer reads (Definitions build it, the renderer, the
browser edge and ``transcript`` read it). One module, typed end to end.

Rules: Structs with a fixed field order, so the JSON encoding is deterministic (the canonical transcript is their
encoding). Optional fields default to ``UNSET`` and are omitted; fields the reference always emits (``partial``,
``firstTokenTime`` ...) are present, ``null`` when empty. Blocks are a tagged union on ``kind``. Floats appear only
where the spec has them (synthetic anchors such as ``seq - 0.9``, ``tokensPerSecond``). ASSEMBLY 5.1-5.6. Pure
data: no logic beyond the rule of which node kinds the chat shows only on request (``HIDDEN_KINDS``).
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType

__all__ = [
    "Status",
    "RECORDED_TIME_MIN",
    "is_recorded_time",
    "RecordedUsage",
    "HIDDEN_KINDS",
    "hidden_by_default",
    "NodeLocation",
    "ViewNode",
    "LocationData",
    "ViewUpdate",
    "NodeDisplay",
    "FlushResult",
    "TimelineStep",
    "TimelineTurn",
    "TextBlockView",
    "ReasoningBlockView",
    "ToolCallBlockView",
    "ImageBlockView",
    "OtherBlockView",
    "BlockView",
    "Timing",
    "Provenance",
    "AssistantNode",
    "AssistantStepData",
    "StepRef",
    "TurnTailData",
    "TokenUsage",
    "TrajectoryPartial",
    "TrajectoryRequest",
    "TrajectoryAssistantData",
    "TrajectoryTurnEndData",
    "InputMessageData",
    "ToolResultView",
    "ToolSubcall",
    "ToolData",
    "NoticeData",
    "CompactionData",
    "CommandOutcome",
    "CommandData",
    "EventData",
    "ActivityData",
]

Status = Literal["open", "closed", "unknown"]

RECORDED_TIME_MIN = 946_684_800_000
"""2000-01-01T00:00:00Z in epoch milliseconds. A log written by an agent records wall-clock times (epoch ms); a
projected fixture has no ``time`` and the reader rebuilds it from 0 (rows add their ``dt`` counters: PROTOCOL 2.3).
Anything below this is such a counter, never a clock."""


def is_recorded_time(ms: Any) -> bool:
    """True when ``ms`` is a wall-clock time the log recorded (epoch ms), false for a time rebuilt from a counter
    (or no number at all). The one rule for whether a duration, TTFT or throughput may be computed from a time:
    every time it uses must pass."""
    return type(ms) in (int, float) and ms >= RECORDED_TIME_MIN

HIDDEN_KINDS = frozenset({"event"})
"""Chat node kinds shown only on request ("show all events"): the fallback's one row per unclaimed event."""


# ---------------------------------------------------------------------------------------------------------------
# Nodes, what a flush publishes, the timeline


class NodeLocation(Struct, frozen=True, omit_defaults=True):
    """The JSON form of a node's location: kind plus turn/step numbers."""

    kind: str
    turn: int | UnsetType = UNSET
    step: int | UnsetType = UNSET


class ViewNode(Struct, frozen=True, omit_defaults=True):
    """``{key, kind, id, target, anchorSeq, location, data, visibility?}``; ``data`` is a Definition's Struct."""

    key: str
    kind: str
    id: str
    target: str
    anchorSeq: int | float
    location: NodeLocation
    data: Any
    visibility: str | UnsetType = UNSET


def hidden_by_default(node: ViewNode) -> bool:
    """A chat node the page shows only with "show all events": hidden by its Definition, or of a hidden kind."""
    return node.visibility == "hidden" or node.kind in HIDDEN_KINDS


class LocationData(Struct, frozen=True, omit_defaults=True):
    """``{kind: scope, turn, step?, key, value}`` published by ``build_location_data`` (ASSEMBLY 5.1)."""

    kind: Literal["turn", "step"]
    turn: int
    key: str
    value: Any
    step: int | UnsetType = UNSET


class TimelineStep(Struct, frozen=True):
    step: int
    startSeq: int | None
    endSeq: int | None
    status: Status


class TimelineTurn(Struct, frozen=True, omit_defaults=True):
    """One turn of the timeline a flush publishes; ``data`` holds the turn-scope location data by key."""

    turn: int
    startSeq: int | None
    endSeq: int | None
    status: Status
    steps: list[TimelineStep]
    data: dict[str, Any] | UnsetType = UNSET


class NodeDisplay(Struct, frozen=True, omit_defaults=True):
    """What a chat node shows that depends on its neighbours (``display.DisplayTracker``, decided at each flush, not
    part of the canonical transcript): ``turnHeading`` the turn whose "Turn N" heading it opens (its first shown
    row), ``hiddenCalls`` the tool calls of an assistant step that have their own row (not repeated in the step),
    ``quietInterruption`` its turn's interruption is said by a notice row (the step does not say it again),
    ``turnStart`` a turn tail's turn start time (for "Ran for")."""

    turnHeading: int | UnsetType = UNSET
    hiddenCalls: list[str] | UnsetType = UNSET
    quietInterruption: bool | UnsetType = UNSET
    turnStart: int | UnsetType = UNSET


class ViewUpdate(Struct, frozen=True):
    """What a flush gives one view: every node (``replace``) or the upserts since the last flush (and, for the chat,
    the nodes whose ``display`` changed because of them), with each node's ``NodeDisplay`` by key."""

    target: str
    replace: bool
    nodes: list[ViewNode]
    display: dict[str, NodeDisplay] = {}


class FlushResult(Struct, frozen=True):
    views: dict[str, ViewUpdate]
    timeline: list[TimelineTurn]
    timeline_changed: bool


# ---------------------------------------------------------------------------------------------------------------
# Content blocks


class _Block(Struct, frozen=True, tag_field="kind"):
    pass


class TextBlockView(_Block, frozen=True, tag="text"):
    text: str


class ReasoningBlockView(_Block, frozen=True, tag="reasoning"):
    text: str


class ToolCallBlockView(_Block, frozen=True, tag="tool-call"):
    callId: Any
    name: Any
    argsRaw: str


class ImageBlockView(_Block, frozen=True, tag="image"):
    attachment: Any


class OtherBlockView(_Block, frozen=True, tag="other"):
    block: Any


BlockView = TextBlockView | ReasoningBlockView | ToolCallBlockView | ImageBlockView | OtherBlockView


# ---------------------------------------------------------------------------------------------------------------
# Node data, one Struct per node kind (and the parts they share)


class Timing(Struct, frozen=True):
    stepStartTime: int | None
    firstTokenTime: int | None
    completedTime: int


class Provenance(Struct, frozen=True):
    provider: Any
    model: Any


class AssistantNode(Struct, frozen=True, omit_defaults=True, kw_only=True):
    """A settled assistant message (real, or synthetic interrupted with no ``messageId``/``usage``/``timing``)."""

    kind: str
    seq: int | float
    messageId: Any = UNSET
    time: int
    turn: Any
    step: Any
    blocks: list[BlockView]
    usage: Any = UNSET
    timing: Timing | UnsetType = UNSET
    interrupted: bool | UnsetType = UNSET
    provenance: Provenance | UnsetType = UNSET


class AssistantStepData(Struct, frozen=True, omit_defaults=True):
    """Chat Assistant node data, also its ``assistant-step`` step data (ASSEMBLY 5.3). The three first-* fields
    are an addition: they expose the stream boundaries packed and scalar folds must agree on."""

    status: str
    turn: Any
    step: Any
    blocks: list[BlockView]
    time: int | float
    firstTokenTime: int | None
    firstVisibleSeq: int | None
    firstVisibleTime: int | None
    usage: Any = UNSET
    finalNode: AssistantNode | UnsetType = UNSET


class StepRef(Struct, frozen=True):
    """The closing assistant of a turn, by reference: its step and settled seq."""

    step: Any
    seq: int | float


class TokenUsage(Struct, frozen=True, omit_defaults=True):
    uncachedInputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadTokens: int | UnsetType = UNSET
    cacheWriteTokens: int | UnsetType = UNSET
    reasoningTokens: int | UnsetType = UNSET
    routes: list[Provenance] | UnsetType = UNSET


class RecordedUsage(Struct, frozen=True, omit_defaults=True):
    """Token usage as the log records it, any subset: each field is the sum over the ``messages`` settled messages
    that carried usage, present only when every one of them recorded it (an addition to ASSEMBLY 5.4, whose strict
    ``TokenUsage`` needs input, output, cache read and cache write or a total)."""

    messages: int
    inputTokens: int | UnsetType = UNSET
    outputTokens: int | UnsetType = UNSET
    cacheReadTokens: int | UnsetType = UNSET
    cacheWriteTokens: int | UnsetType = UNSET
    reasoningTokens: int | UnsetType = UNSET


class TurnTailData(Struct, frozen=True, omit_defaults=True):
    """``turn-tail`` turn data (ASSEMBLY 5.4); ``closing`` is a reference rather than a copy of the step data.
    Additions: ``steps``/``toolCalls`` (counts, shown where times are not recorded), ``usage`` (``RecordedUsage``)
    and ``models`` (the models of the turn's settled messages, in order of first use). ``ttftMs`` and
    ``tokensPerSecond`` are left out unless every time they use ``is_recorded_time``. ``durationMs`` and
    ``turnTtftMs`` are durations the log records itself on ``turn/end`` (another harness's: Claude Code's turn
    duration, Codex's task duration and time to first token), never computed."""

    turn: Any
    seq: int
    time: int
    closing: StepRef | None
    branchUnavailable: bool
    ttftMs: int | float | UnsetType = UNSET
    tokensPerSecond: int | float | UnsetType = UNSET
    tokenUsage: TokenUsage | UnsetType = UNSET
    steps: int | UnsetType = UNSET
    toolCalls: int | UnsetType = UNSET
    usage: RecordedUsage | UnsetType = UNSET
    models: list[str] | UnsetType = UNSET
    durationMs: int | float | UnsetType = UNSET
    turnTtftMs: int | float | UnsetType = UNSET


class TrajectoryPartial(Struct, frozen=True):
    turn: Any
    step: Any
    blocks: list[BlockView]


class TrajectoryRequest(Struct, frozen=True, omit_defaults=True):
    purpose: str
    startSeq: int
    turn: Any
    step: Any
    startedAt: int
    completedAt: int | None
    status: str
    error: str | UnsetType = UNSET
    errorCode: str | UnsetType = UNSET
    retry: Any = UNSET
    maxRetries: Any = UNSET
    retryDelayMs: Any = UNSET
    resultSeq: int | UnsetType = UNSET
    provenance: Provenance | UnsetType = UNSET
    usage: Any = UNSET


class TrajectoryAssistantData(Struct, frozen=True, omit_defaults=True, kw_only=True):
    kind: str
    node: AssistantNode | UnsetType = UNSET
    partial: TrajectoryPartial | None
    request: TrajectoryRequest | UnsetType = UNSET


class TrajectoryTurnEndData(Struct, frozen=True, omit_defaults=True):
    kind: str
    turn: Any
    time: int
    error: str | UnsetType = UNSET
    errorCode: str | UnsetType = UNSET


class InputMessageData(Struct, frozen=True, omit_defaults=True):
    kind: str
    seq: int
    time: int
    messageId: Any
    blocks: list[BlockView]
    source: Any = UNSET


class ToolResultView(Struct, frozen=True, omit_defaults=True):
    """A tool call's result. ``view`` (an addition) is the normalised display form another harness's reader put in
    the result's ``meta.view`` (``{kind: 'diff'|'shell'|'read'|'todo'|'subagent'|'error', ...}``); ``child`` the
    subagent session the result answers for (``meta.subagent``: ``{kind:'subagent', childSessionId, ...}``)."""

    seq: int
    time: int
    isError: bool
    blocks: list[BlockView]
    error: Any = UNSET
    view: Any = UNSET
    child: Any = UNSET


class ToolSubcall(Struct, frozen=True, omit_defaults=True):
    """A call a code-mode program (``run_code``) made, from ``tool/code-dispatch-start``/``tool/code-dispatch``:
    status ``running`` until its dispatch result, then ``done`` or ``error``."""

    id: str
    name: Any
    arguments: Any
    status: str
    blocks: list[BlockView] | UnsetType = UNSET


class ToolApproval(Struct, frozen=True, omit_defaults=True):
    """The approval a call waited for: the ``approval/asked`` naming its ``callId`` (seq, reason). The decision is
    the approval row's own (``approval/decided`` names only the approval, not the call)."""

    seq: int
    reason: str | UnsetType = UNSET


class ToolData(Struct, frozen=True, omit_defaults=True):
    """``tool`` node data; ``subcalls`` (an addition) are the nested calls of a code-mode program, in order;
    ``approval`` (an addition) the approval the call waited for."""

    kind: str
    callId: Any
    name: Any
    arguments: Any
    turn: Any
    step: Any
    status: str
    callSeq: int | None
    result: ToolResultView | UnsetType = UNSET
    subcalls: list[ToolSubcall] | UnsetType = UNSET
    approval: ToolApproval | UnsetType = UNSET


class NoticeData(Struct, frozen=True, omit_defaults=True):
    kind: str
    seq: int
    time: int
    turn: Any = UNSET
    step: Any = UNSET
    message: str | UnsetType = UNSET
    code: str | UnsetType = UNSET
    reason: Any = UNSET
    retry: Any = UNSET
    maxRetries: Any = UNSET
    delayMs: Any = UNSET
    resumed: bool | UnsetType = UNSET
    errorMessage: str | UnsetType = UNSET


class CompactionData(Struct, frozen=True, omit_defaults=True):
    kind: str
    seq: int
    time: int
    status: str
    turn: Any = UNSET
    summary: list[BlockView] | UnsetType = UNSET
    shadowedRange: Any = UNSET
    shadowedTokenCount: Any = UNSET
    error: Any = UNSET


class CommandOutcome(Struct, frozen=True, omit_defaults=True):
    """The ``command/done`` that settled the command: its ``kind`` as written, its seq/time, text and source seq."""

    kind: Any
    seq: int
    time: int
    text: str | UnsetType = UNSET
    sourceEventSeq: int | UnsetType = UNSET


class CommandData(Struct, frozen=True, omit_defaults=True):
    """``command`` node data. ``name``/``args``/``input``/``runSeq`` are None when the run is outside the window."""

    kind: str
    commandId: str
    name: Any
    args: Any
    input: str | None
    status: str
    seq: int
    time: int
    runSeq: int | None
    source: Any = UNSET
    outcome: CommandOutcome | UnsetType = UNSET


class EventData(Struct, frozen=True, omit_defaults=True):
    kind: str
    type: str
    seq: int
    time: int
    summary: str
    ignorable: bool | UnsetType = UNSET
    truncated: bool | UnsetType = UNSET


class ActivityData(Struct, frozen=True, omit_defaults=True):
    """A read-only chat row for an event users care about (``definitions.activity``): ``kind`` is ``approval``,
    ``goal``, ``hook-block`` or ``subagent``; ``title`` the one line shown; ``detail`` more text; ``status`` the
    state (an approval's outcome, a goal's phase, a subagent's outcome); ``childSession`` the header id of a child
    session the log names, ``label`` a subagent's label (how a served child session is found)."""

    kind: str
    seq: int
    time: int
    title: str
    turn: Any = UNSET
    detail: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    childSession: str | UnsetType = UNSET
    label: str | UnsetType = UNSET
