"""Packed = scalar (DESIGN rule 2): folding deltas as rows or one event at a time gives identical output.

Hypothesis builds sessions with whitespace-only and empty fragments, tool-call names appearing mid-run, retries
mid-step, interruption by turn end, several blocks interleaved, and paged windows that cut steps in half. On a
failure Hypothesis prints the falsifying example and the seed/blob to reproduce it.
"""

from __future__ import annotations

from typing import Any

from conversation_support import both, page
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from session_strategies import sessions

from assembler.conversation import ConversationAssembler
from definitions import core_definitions


@settings(max_examples=500, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.none() | st.integers(1, 3))
def test_packed_and_scalar_give_identical_output(events: list[dict[str, Any]], max_messages: int | None) -> None:
    packed, scalar = both(events, max_messages)
    assert packed == scalar


@settings(max_examples=120, deadline=None, print_blob=True)
@given(sessions())
def test_packed_and_scalar_give_identical_stream_state(events: list[dict[str, Any]]) -> None:
    """The folded Chat/Trajectory state itself agrees, not only what the nodes show."""
    states = []
    for mode in ("packed", "scalar"):
        asm = ConversationAssembler(core_definitions())
        asm.replace_window(page(events, mode).records, False)
        snapshot = {}
        for (kind, id), ctx in asm.contexts.items():
            state = ctx.state
            if state is None or not hasattr(state, "stream"):
                continue
            stream = state.stream
            snapshot[(kind, id)] = (stream.visible_blocks, stream.first_visible_seq, stream.first_visible_time,
                                    stream.first_token_time, [repr(v) for v in stream.views()])
        states.append(snapshot)
    assert states[0] == states[1]
