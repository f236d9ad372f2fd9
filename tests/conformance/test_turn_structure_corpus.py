"""Turn structure and honest numbers on every real log: the turn tail is the last row of its turn, one
"Interrupted" per interruption, usage shown wherever the log records it, no durations from rebuilt times."""

from __future__ import annotations

import json

import pytest
from conversation_support import assemble_page, page
from corpus import corpus_params, require_corpus

from assembler.display import displays_of
from assembler.render import render_node
from assembler.store.jsonl import read_session
from assembler.views import hidden_by_default, is_recorded_time


def _fold(path):
    result = read_session(path)
    return result, assemble_page(page(result.records, "packed"))


@pytest.mark.parametrize("path", corpus_params())
def test_turn_tail_is_the_last_row_of_its_turn(path):
    require_corpus()
    _, t = _fold(path)
    shown = [n for n in t.chat if not hidden_by_default(n)]
    for i, node in enumerate(shown):
        if node.kind != "turn-tail":
            continue
        later = [n.kind for n in shown[i + 1:] if n.location.turn == node.location.turn]
        assert later == [], f"turn {node.location.turn}: rows after its tail: {later}"


@pytest.mark.parametrize("path", corpus_params())
def test_one_interrupted_per_interruption_and_honest_tails(path):
    require_corpus()
    result, t = _fold(path)
    ctx = displays_of(t.chat, {})
    html = {n.key: render_node(n, display=ctx.get(n.key)) for n in t.chat if not hidden_by_default(n)}
    by_turn: dict[object, int] = {}
    for n in t.chat:
        if n.key in html:
            by_turn[n.location.turn] = by_turn.get(n.location.turn, 0) + html[n.key].count(">Interrupted<")
    assert all(c <= 1 for c in by_turn.values()), by_turn
    recorded = any(is_recorded_time(getattr(r, "time", None)) for r in result.records)
    for n in t.chat:
        if n.kind == "turn-tail" and not recorded:
            assert "Ran for" not in html[n.key] and "TTFT" not in html[n.key] and "tok/s" not in html[n.key]


@pytest.mark.parametrize("path", corpus_params())
def test_usage_shows_wherever_an_ended_turn_records_it(path):
    require_corpus()
    _, t = _fold(path)
    ended = {n.location.turn for n in t.chat if n.kind == "turn-tail"}
    recorded_turns = set()
    with open(path, encoding="utf-8") as f:
        for line in list(f)[1:]:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            d = e.get("data") if isinstance(e, dict) else None
            if (e.get("type") == "assistant/message" and e.get("surfaceOp") == "append" and isinstance(d, dict)
                    and isinstance(d.get("usage"), dict) and isinstance(d["usage"].get("outputTokens"), int)):
                recorded_turns.add(d.get("turn"))
    ctx = displays_of(t.chat, {})
    for n in t.chat:
        if n.kind == "turn-tail" and n.location.turn in recorded_turns & ended:
            assert "Output " in render_node(n, display=ctx.get(n.key)), f"turn {n.location.turn} records usage"
