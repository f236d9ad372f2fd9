"""Hypothesis strategies for whole sessions (shared by the packed = scalar and the live repacking properties):
whitespace-only and empty fragments, tool-call names appearing mid-run, retries mid-step, block starts and ends,
several blocks interleaved, usage chunks, and steps left open by the turn end."""

from __future__ import annotations

from typing import Any

from conversation_support import Session
from hypothesis import strategies as st

FRAGMENTS = st.sampled_from(["", " ", "  ", "\n", "\t", "\ufeff", "\u0085", "\u00a0", "\u2028", "\x1c",
                             "a", "b c", "x", " y ", "é"])
USAGE = st.fixed_dictionaries({"inputTokens": st.integers(0, 50), "outputTokens": st.integers(0, 50)},
                              optional={"cacheReadTokens": st.integers(0, 9), "cacheWriteTokens": st.integers(0, 9),
                                        "reasoningTokens": st.integers(0, 5)})


@st.composite
def steps_ops(draw: Any, s: Session, turn: int, step: int) -> str:
    """Stream ops for one step; returns how the step ends."""
    for _ in range(draw(st.integers(0, 7))):
        op = draw(st.sampled_from(["run", "run", "run", "interleave", "start", "end", "usage", "retry", "finish"]))
        index = draw(st.integers(0, 2))
        dt = draw(st.integers(0, 3))
        if op == "run":
            btype = draw(st.sampled_from(["text", "reasoning", "tool"]))
            n = draw(st.integers(1, 9))
            if btype == "tool":
                call_id = draw(st.sampled_from(["", "call_a", "call_b"]))
                name_from = draw(st.integers(0, n))  # the name appears mid-run
                name = draw(st.sampled_from(["bash", ""]))
                for i in range(n):
                    if draw(st.integers(0, 9)) == 0:
                        call_id = draw(st.sampled_from(["", "call_a", "call_b"]))
                    s.tool_delta(turn, step, index, call_id, draw(FRAGMENTS),
                                 name=name if i >= name_from else None, dt=draw(st.integers(0, 3)))
            else:
                for _ in range(n):
                    s.text(turn, step, index, draw(FRAGMENTS), kind=btype, dt=draw(st.integers(0, 3)))
        elif op == "interleave":
            for _ in range(draw(st.integers(2, 8))):
                s.text(turn, step, draw(st.integers(0, 2)), draw(FRAGMENTS),
                       kind=draw(st.sampled_from(["text", "reasoning"])), dt=dt)
        elif op == "start":
            s.chunk(turn, step, {"type": "block-start", "index": index,
                                 "blockType": draw(st.sampled_from(["text", "reasoning", "tool-call", "image"]))})
        elif op == "end":
            s.chunk(turn, step, {"type": "block-end", "index": index,
                                 "block": {"type": "text", "text": draw(FRAGMENTS)}})
        elif op == "usage":
            s.usage(turn, step, draw(USAGE))
        elif op == "retry":
            s.retry(turn, step)
            if draw(st.booleans()):
                s.add("llm/retry-started", {"retryId": "r", "turn": turn, "step": step, "retry": 1})
        else:
            s.chunk(turn, step, {"type": "finish", "reason": {"kind": draw(st.sampled_from(["stop", "error"]))}})
    return draw(st.sampled_from(["message", "message", "interrupted-message", "step-end", "open"]))


@st.composite
def sessions(draw: Any) -> list[dict[str, Any]]:
    s = Session()
    for turn in range(1, draw(st.integers(1, 2)) + 1):
        s.turn_start(turn)
        if draw(st.booleans()):
            s.user(draw(FRAGMENTS) + "question")
        open_step = False
        for step in range(1, draw(st.integers(1, 3)) + 1):
            s.step_start(turn, step)
            ending = draw(steps_ops(s, turn, step))
            if ending in ("message", "interrupted-message"):
                content = [{"type": draw(st.sampled_from(["text", "reasoning"])), "text": draw(FRAGMENTS)}]
                s.message(turn, step, content, usage=draw(st.none() | USAGE),
                          interrupted=ending == "interrupted-message")
            if ending == "open":
                open_step = True  # interrupted by the turn end
                break
            s.step_end(turn, step)
        if not open_step or draw(st.booleans()):
            s.turn_end(turn, draw(st.sampled_from([{"kind": "completed"}, {"kind": "aborted"},
                                                   {"kind": "error", "error": {"message": "m", "code": "X"}}])))
    return s.events
