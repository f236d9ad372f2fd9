"""Two sessions compared turn by turn, from their chat view nodes: the turns aligned by the user's prompt
and, per aligned turn and for the whole session, what differs.

Rules: computed from the view nodes only (never by re-reading a log; packed rows are never expanded); pure. A turn
is the nodes of one ``location.turn`` (nodes outside any turn are left out); its prompt is the text of its first
user input message. Turns are aligned by their prompt texts (``difflib.SequenceMatcher``, no junk heuristic): equal
prompts are matched ``same-prompt``, inside a replaced block turns are paired by position (``position``), the rest
are ``only-a``/``only-b``. Turns without a user prompt match each other (``prompt`` null on both sides), never a
prompt. Tokens come only from the turn tails' recorded usage (``TurnTailData.usage``; a turn without a tail has
none) and durations only from a tail that records one (``durationMs``): never rebuilt from times. A tool call failed
by ``failed`` (the edge passes ``render.toolrows.tool_error``; by default an error status or an error result).

The result is a ``comparison.Comparison`` (its JSON is described there): plain typed data the renderer
(``render.compare``) and the edges take without importing this module. ``finalText`` is the text blocks of the turn's
last assistant step that has text; its diff is ``textdiff.word_diff``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from typing import Any

from msgspec import UNSET, Struct

from .comparison import (
    DIFFERENCE_ASPECTS,
    ArgumentDiff,
    Comparison,
    FinalTexts,
    Match,
    Sequences,
    SessionComparison,
    SideTotals,
    Tokens,
    ToolCount,
    Turn,
    TurnComparison,
    TurnCounts,
    TurnSide,
    turns_of,
)
from .jsontext import loads_text
from .textdiff import Op, word_diff
from .views import AssistantStepData, InputMessageData, NoticeData, TextBlockView, ToolData, TurnTailData, ViewNode

__all__ = ["compare", "default_failed"]


def default_failed(data: ToolData) -> bool:
    """A tool call failed: an error status or an error result (the edge passes the renderer's fuller test)."""
    result = data.result
    return data.status in ("error", "failed") or (result is not UNSET and (result.isError or bool(result.error)))


def _text(blocks: Any) -> str:
    if type(blocks) is not list:
        return ""
    return "\n".join(b.text for b in blocks if type(b) is TextBlockView)


def _prompt(turn: Turn) -> str | None:
    for node in turn.nodes:
        data = node.data
        if type(data) is InputMessageData and data.kind == "user":
            return _text(data.blocks)
    return None


def _name(value: Any) -> str:
    return value if type(value) is str else json.dumps(value, ensure_ascii=False)


class _Facts(Struct, frozen=True):
    side: TurnSide
    calls: list[ToolData]
    usage_recorded: bool


def _facts(turn: Turn, failed: Callable[[ToolData], bool]) -> _Facts:
    steps: set[Any] = set()
    calls: list[ToolData] = []
    retries = 0
    final: str | None = None
    tail: TurnTailData | None = None
    for node in turn.nodes:
        data = node.data
        t = type(data)
        if t is AssistantStepData:
            steps.add(node.location.step)
            text = _text(data.blocks)
            if text:
                final = text
        elif t is ToolData:
            calls.append(data)
        elif t is NoticeData and node.kind == "retry-notice":
            retries += 1
        elif t is TurnTailData:
            tail = data
    usage = tail.usage if tail is not None else UNSET
    if usage is UNSET:
        tokens = Tokens()
    else:
        tokens = Tokens(*(None if v is UNSET else v for v in (usage.inputTokens, usage.outputTokens,
                                                              usage.cacheReadTokens, usage.cacheWriteTokens)))
    duration = tail.durationMs if tail is not None and tail.durationMs is not UNSET else None
    side = TurnSide(turn=turn.turn, prompt=_prompt(turn), steps=len(steps), toolCalls=len(calls),
                    toolErrors=sum(1 for c in calls if failed(c)), retries=retries, tokens=tokens,
                    durationMs=duration, finalText=final)
    return _Facts(side, calls, tokens != Tokens())


def _tool_counts(a: Sequence[str], b: Sequence[str]) -> list[ToolCount]:
    counts: dict[str, list[int]] = {}
    for name in a:
        counts.setdefault(name, [0, 0])[0] += 1
    for name in b:
        counts.setdefault(name, [0, 0])[1] += 1
    return [ToolCount(name, n_a, n_b) for name, (n_a, n_b) in counts.items()]


def _canonical(args: Any) -> str:
    """Arguments compared as JSON values when they parse (key order and spacing do not count), else as text."""
    value = args
    if type(args) is str:
        try:
            value = loads_text(args)
        except ValueError:
            return "t:" + args
    try:
        return "j:" + json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return "r:" + repr(value)


def _final_diff(a: str | None, b: str | None) -> list[tuple[Op, str]] | None:
    if a is None and b is None:
        return None
    return word_diff(a or "", b or "")


def _pair(index: int, match: Match, fa: _Facts | None, fb: _Facts | None) -> TurnComparison:
    names_a = [_name(c.name) for c in fa.calls] if fa is not None else []
    names_b = [_name(c.name) for c in fb.calls] if fb is not None else []
    tools = _tool_counts(names_a, names_b)
    if fa is None or fb is None:
        return TurnComparison(index, match, fa.side if fa else None, fb.side if fb else None, tools, None, False, [],
                              None, ["turns"])
    a, b = fa.side, fb.side
    sequences = Sequences(names_a, names_b) if names_a != names_b else None
    reordered = sequences is not None and sorted(names_a) == sorted(names_b)
    argument_diffs = [ArgumentDiff(k, na, ca.arguments, cb.arguments)
                      for k, (na, nb, ca, cb) in enumerate(zip(names_a, names_b, fa.calls, fb.calls, strict=False))
                      if na == nb and _canonical(ca.arguments) != _canonical(cb.arguments)]
    checks = [("prompt", a.prompt != b.prompt), ("steps", a.steps != b.steps),
              ("toolCalls", a.toolCalls != b.toolCalls), ("toolSequence", sequences is not None),
              ("arguments", bool(argument_diffs)), ("toolErrors", a.toolErrors != b.toolErrors),
              ("retries", a.retries != b.retries), ("tokens", a.tokens != b.tokens),
              ("duration", a.durationMs != b.durationMs), ("finalText", a.finalText != b.finalText)]
    differences = [aspect for aspect, differs in checks if differs]
    return TurnComparison(index, match, a, b, tools, sequences, reordered, argument_diffs,
                          _final_diff(a.finalText, b.finalText), differences)


def _align(prompts_a: Sequence[Any], prompts_b: Sequence[Any]) -> list[tuple[Match, int | None, int | None]]:
    pairs: list[tuple[Match, int | None, int | None]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, prompts_a, prompts_b, autojunk=False).get_opcodes():
        if op == "equal":
            pairs.extend(("same-prompt", i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        common = min(i2 - i1, j2 - j1)
        pairs.extend(("position", i1 + k, j1 + k) for k in range(common))
        pairs.extend(("only-a", i, None) for i in range(i1 + common, i2))
        pairs.extend(("only-b", None, j) for j in range(j1 + common, j2))
    return pairs


def _totals(facts: Sequence[_Facts]) -> SideTotals:
    sides = [f.side for f in facts]
    with_usage = [s.tokens for f, s in zip(facts, sides, strict=True) if f.usage_recorded]

    def total(values: Iterable[int | None]) -> int | None:
        recorded = [v for v in values if v is not None]
        return sum(recorded) if recorded else None

    tokens = Tokens(total(t.input for t in with_usage), total(t.output for t in with_usage),
                    total(t.cacheRead for t in with_usage), total(t.cacheWrite for t in with_usage))
    durations = [s.durationMs for s in sides if s.durationMs is not None]
    return SideTotals(turns=len(sides), steps=sum(s.steps for s in sides), toolCalls=sum(s.toolCalls for s in sides),
                      toolErrors=sum(s.toolErrors for s in sides), retries=sum(s.retries for s in sides),
                      tokens=tokens, durationMs=sum(durations) if durations else None,
                      turnsWithUsage=len(with_usage), turnsWithDuration=len(durations))


def _last_final(facts: Sequence[_Facts]) -> str | None:
    for f in reversed(facts):
        if f.side.finalText is not None:
            return f.side.finalText
    return None


_NO_PROMPT = ("no-prompt",)


def compare(nodes_a: Iterable[ViewNode], nodes_b: Iterable[ViewNode], *,
            failed: Callable[[ToolData], bool] = default_failed) -> Comparison:
    """The comparison of two sessions' chat view nodes (A the reference, B the other): see the module docstring."""
    facts_a = [_facts(t, failed) for t in turns_of(nodes_a)]
    facts_b = [_facts(t, failed) for t in turns_of(nodes_b)]
    # Turns without a prompt (a background report, a continuation) match each other, never a prompt's text.
    keys_a = [f.side.prompt if f.side.prompt is not None else _NO_PROMPT for f in facts_a]
    keys_b = [f.side.prompt if f.side.prompt is not None else _NO_PROMPT for f in facts_b]
    turns = [_pair(index, match, None if i is None else facts_a[i], None if j is None else facts_b[j])
             for index, (match, i, j) in enumerate(_align(keys_a, keys_b))]
    matches = [t.match for t in turns]
    differing = sum(1 for t in turns if t.differences)
    counts = TurnCounts(a=len(facts_a), b=len(facts_b), samePrompt=matches.count("same-prompt"),
                        position=matches.count("position"), onlyA=matches.count("only-a"),
                        onlyB=matches.count("only-b"), differing=differing)
    seen = {aspect for t in turns for aspect in t.differences}
    if any(m != "same-prompt" for m in matches):
        seen.add("turns")
    a_totals, b_totals = _totals(facts_a), _totals(facts_b)
    names_a = [_name(c.name) for f in facts_a for c in f.calls]
    names_b = [_name(c.name) for f in facts_b for c in f.calls]
    final = FinalTexts(_last_final(facts_a), _last_final(facts_b))
    if final.a != final.b:
        seen.add("finalText")
    session = SessionComparison(turns=counts, a=a_totals, b=b_totals, tools=_tool_counts(names_a, names_b),
                                finalText=final, finalTextDiff=_final_diff(final.a, final.b),
                                differences=[aspect for aspect in DIFFERENCE_ASPECTS if aspect in seen])
    return Comparison(session, turns)
