"""What a comparison of two sessions is (``compare.compare`` computes it): plain typed structs, and the grouping of
view nodes into turns, on the layer of the view nodes so that the renderer (``render.compare``) and the edges take a
comparison without importing the engine that computes it. Pure.

The JSON of a ``Comparison`` (``msgspec.json.encode``; keys in this order, every key always present, ``null`` where
a value is not recorded or does not apply)::

    {"session": {                          # the whole session
        "turns": {"a": N, "b": N, "samePrompt": N, "position": N, "onlyA": N, "onlyB": N, "differing": N},
        "a": SIDE_TOTALS, "b": SIDE_TOTALS,
        "tools": [{"name": S, "a": N, "b": N}, ...],      # calls by name, in order of first call (A, then B)
        "finalText": {"a": S|null, "b": S|null},          # each side's last final assistant text
        "finalTextDiff": [[OP, TEXT], ...]|null,           # OP: "equal" | "delete" (A only) | "insert" (B only)
        "differences": [ASPECT, ...]},                   # aspects that differ in any turn (below)
     "turns": [{                           # one per aligned turn, in order
        "index": N, "match": "same-prompt"|"position"|"only-a"|"only-b",
        "a": TURN_SIDE|null, "b": TURN_SIDE|null,          # null on the side the turn is missing from
        "tools": [{"name": S, "a": N, "b": N}, ...],
        "sequences": {"a": [NAME, ...], "b": [NAME, ...]}|null,   # the call names in order, when they differ
        "reordered": BOOL,                                 # same calls by name, in another order
        "argumentDiffs": [{"position": N, "name": S, "a": ARGS, "b": ARGS}, ...],  # same name, same position
        "finalTextDiff": [[OP, TEXT], ...]|null,           # null unless both sides have the turn
        "differences": [ASPECT, ...]}, ...]}

    TURN_SIDE   = {"turn": N, "prompt": S|null, "steps": N, "toolCalls": N, "toolErrors": N, "retries": N,
                   "tokens": TOKENS, "durationMs": N|null, "finalText": S|null}
    SIDE_TOTALS = {"turns": N, "steps": N, "toolCalls": N, "toolErrors": N, "retries": N, "tokens": TOKENS,
                   "durationMs": N|null, "turnsWithUsage": N, "turnsWithDuration": N}
    TOKENS      = {"input": N|null, "output": N|null, "cacheRead": N|null, "cacheWrite": N|null}

Session totals sum the turns that record a value (``turnsWithUsage``/``turnsWithDuration`` say how many), null when
none does. ASPECT is one of ``DIFFERENCE_ASPECTS`` (``turns``: the turn is on one side only; at session level, some
turn is not ``same-prompt``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from msgspec import UNSET, Struct

from .textdiff import Op
from .views import ViewNode

__all__ = [
    "DIFFERENCE_ASPECTS", "Match", "Tokens", "TurnSide", "SideTotals", "ToolCount", "Sequences", "ArgumentDiff",
    "TurnComparison", "TurnCounts", "FinalTexts", "SessionComparison", "Comparison", "Turn", "turns_of",
]

DIFFERENCE_ASPECTS = ("turns", "prompt", "steps", "toolCalls", "toolSequence", "arguments", "toolErrors", "retries",
                      "tokens", "duration", "finalText")
Match = Literal["same-prompt", "position", "only-a", "only-b"]


class Tokens(Struct, frozen=True):
    input: int | None = None
    output: int | None = None
    cacheRead: int | None = None
    cacheWrite: int | None = None


class TurnSide(Struct, frozen=True):
    turn: Any
    prompt: str | None
    steps: int
    toolCalls: int
    toolErrors: int
    retries: int
    tokens: Tokens
    durationMs: int | float | None
    finalText: str | None


class SideTotals(Struct, frozen=True):
    turns: int
    steps: int
    toolCalls: int
    toolErrors: int
    retries: int
    tokens: Tokens
    durationMs: int | float | None
    turnsWithUsage: int
    turnsWithDuration: int


class ToolCount(Struct, frozen=True):
    name: str
    a: int
    b: int


class Sequences(Struct, frozen=True):
    a: list[str]
    b: list[str]


class ArgumentDiff(Struct, frozen=True):
    position: int
    name: str
    a: Any
    b: Any


class TurnComparison(Struct, frozen=True):
    index: int
    match: Match
    a: TurnSide | None
    b: TurnSide | None
    tools: list[ToolCount]
    sequences: Sequences | None
    reordered: bool
    argumentDiffs: list[ArgumentDiff]
    finalTextDiff: list[tuple[Op, str]] | None
    differences: list[str]


class TurnCounts(Struct, frozen=True):
    a: int
    b: int
    samePrompt: int
    position: int
    onlyA: int
    onlyB: int
    differing: int


class FinalTexts(Struct, frozen=True):
    a: str | None
    b: str | None


class SessionComparison(Struct, frozen=True):
    turns: TurnCounts
    a: SideTotals
    b: SideTotals
    tools: list[ToolCount]
    finalText: FinalTexts
    finalTextDiff: list[tuple[Op, str]] | None
    differences: list[str]


class Comparison(Struct, frozen=True):
    session: SessionComparison
    turns: list[TurnComparison]


class Turn(Struct, frozen=True):
    """One turn of one side: its number and its nodes in chat order."""

    turn: Any
    nodes: list[ViewNode]


def turns_of(nodes: Iterable[ViewNode]) -> list[Turn]:
    """The nodes grouped by ``location.turn``, turns in order of their first node; nodes outside a turn left out."""
    groups: dict[Any, list[ViewNode]] = {}
    for node in nodes:
        turn = node.location.turn
        if turn is UNSET:
            continue
        key = (type(turn).__name__, turn) if type(turn) is not int else turn  # 1 and "1" stay apart
        groups.setdefault(key, []).append(node)
    return [Turn(group[0].location.turn, group) for group in groups.values()]
