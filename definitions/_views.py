"""View-node data shapes: msgspec Structs with a fixed field order, so the JSON encoding is deterministic.

Rules: optional fields default to ``UNSET`` and are omitted; fields the reference always emits (``partial``,
``firstTokenTime`` ...) are present, ``null`` when empty. Blocks are a tagged union on ``kind``. Floats appear only
where the spec has them (synthetic anchors such as ``seq - 0.9``, ``tokensPerSecond``). ASSEMBLY 5.3-5.6.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, Struct, UnsetType

__all__ = [
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
]


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


class TurnTailData(Struct, frozen=True, omit_defaults=True):
    """``turn-tail`` turn data (ASSEMBLY 5.4); ``closing`` is a reference rather than a copy of the step data."""

    turn: Any
    seq: int
    time: int
    closing: StepRef | None
    branchUnavailable: bool
    ttftMs: int | float | UnsetType = UNSET
    tokensPerSecond: int | float | UnsetType = UNSET
    tokenUsage: TokenUsage | UnsetType = UNSET


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
