"""The built-in demo session: a deterministic two-turn agent session written by our own generator (no copied data).

It has what a transcript shows: a user prompt, streamed reasoning and text, a streamed tool call with its result,
usage and finish chunks, surface markers with provenance, and a second turn that answers in markdown. ``make run``
writes it (``perf.demo``); the viewer's worker folds it while idle after boot (``browser.warmup``). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DemoBuilder", "demo_session", "tokens", "usage"]

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
_TOKEN = re.compile(r"\s*\S+|\s+")


def tokens(text: str) -> list[str]:
    """Split text into token-sized fragments (whitespace kept with the following word)."""
    return _TOKEN.findall(text)


class DemoBuilder:
    """Appends events with dense seqs and a deterministic clock; collects batches the way a live writer would."""

    def __init__(self, start_time: int = T0) -> None:
        self.events: list[dict[str, Any]] = []
        self.batches: list[list[dict[str, Any]]] = [[]]
        self.time = start_time
        self._tick = 0

    def _advance(self, gap: int | None) -> int:
        if gap is None:
            self._tick += 1
            gap = (7, 23, 31, 12, 45)[self._tick % 5]
        self.time += gap
        return self.time

    def add(self, etype: str, data: Any, *, gap: int | None = None, **extra: Any) -> int:
        seq = len(self.events)
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": self._advance(gap), "data": data, **extra}
        self.events.append(event)
        self.batches[-1].append(event)
        return seq

    def flush(self) -> None:
        if self.batches[-1]:
            self.batches.append([])

    def stream_block(self, turn: int, step: int, index: int, kind: str, text: str, chunk_seqs: list[int],
                     *, call: tuple[str, str] | None = None) -> dict[str, Any]:
        """Stream one content block as block-start, deltas and block-end; returns the final block."""
        def chunk(c: dict[str, Any], gap: int | None = None) -> None:
            chunk_seqs.append(self.add("assistant/chunk", {"turn": turn, "step": step, "chunk": c}, gap=gap))

        chunk({"type": "block-start", "index": index, "blockType": kind})
        if kind == "tool-call":
            assert call is not None
            call_id, name = call
            for k, piece in enumerate(tokens(text)):
                delta: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
                if k == 0:
                    delta["name"] = name
                delta["argumentsDelta"] = piece
                chunk(delta)
            block: dict[str, Any] = {"type": "tool-call", "id": call_id, "name": name, "arguments": text}
        else:
            for piece in tokens(text):
                chunk({"type": f"{kind}-delta", "index": index, "text": piece})
            block = {"type": kind, "text": text}
        chunk({"type": "block-end", "index": index, "block": block})
        return block


def usage(inp: int, out: int, cache_read: int, reasoning: int) -> dict[str, int]:
    return {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": cache_read, "cacheWriteTokens": 0,
            "reasoningTokens": reasoning}


def demo_session(copies: int = 1) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The demo header and its append batches (logical events with seq and time). ``copies``: its two turns that many
    times over, each copy's turns, message and call ids after the last one's (the worker's warm-up session)."""
    header = {"type": "session", "version": 0, "id": "demo-0001", "createdAt": T0, "cwd": "/demo/project"}
    b = DemoBuilder()
    for copy in range(copies):
        _two_turns(b, 2 * copy + 1)
    return header, [batch for batch in b.batches if batch]


def _two_turns(b: DemoBuilder, first: int) -> None:
    """The demo's two turns, numbered ``first`` and ``first + 1``: a tool call and its result, then markdown."""
    model = {"kind": "model", "provider": "demo", "model": "demo-model-1"}

    def user_turn(turn: int, prompt: str) -> None:
        b.add("turn/start", {"turn": turn})
        b.add("user/message", {"id": f"user-{turn}", "role": "user", "content": [{"type": "text", "text": prompt}],
                               "source": {"kind": "user"}}, surfaceOp="append")
        b.flush()

    def assistant_step(turn: int, step: int, blocks: list[tuple[str, str, tuple[str, str] | None]],
                       usage: dict[str, int], finish: str) -> list[dict[str, Any]]:
        b.add("step/start", {"turn": turn, "step": step}, gap=120)
        seqs: list[int] = []
        content = [b.stream_block(turn, step, i, kind, text, seqs, call=call)
                   for i, (kind, text, call) in enumerate(blocks)]
        seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}))
        seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step,
                                              "chunk": {"type": "finish", "reason": {"kind": finish}}}))
        b.add("assistant/message", {"turn": turn, "step": step,
                                    "message": {"role": "assistant", "content": content, "source": model,
                                                "id": f"assistant-{turn}-{step}"}, "usage": usage},
              sourceEventSeqs=seqs, surfaceOp="append")
        return content

    t, call_id = first, f"call-{first}"
    user_turn(t, "How many lines does `README.md` have? Count them with a tool.")
    args = '{"command": "wc -l README.md", "description": "Count lines in README.md"}'
    assistant_step(t, 1, [
        ("reasoning", "The user wants a line count. I should run wc -l on README.md rather than guess.", None),
        ("text", "Let me count them.", None),
        ("tool-call", args, (call_id, "bash")),
    ], usage(1210, 64, 0, 18), "tool-calls")
    call_seq = b.add("tool/call", {"turn": t, "step": 1, "callId": call_id, "name": "bash", "arguments": args})
    b.add("tool/result", {"turn": t, "step": 1, "message": {
        "role": "tool", "source": {"kind": "tool", "callId": call_id},
        "content": [{"type": "tool-result", "toolCallId": call_id,
                     "content": [{"type": "text", "text": "42 README.md"}], "isError": False}]}},
        gap=300, sourceEventSeqs=[call_seq], surfaceOp="append")
    b.add("step/end", {"turn": t, "step": 1})
    b.flush()
    assistant_step(t, 2, [
        ("reasoning", "The tool says 42 lines. Report it plainly.", None),
        ("text", "`README.md` has **42 lines**.", None),
    ], usage(40, 21, 1216, 9), "stop")
    b.add("step/end", {"turn": t, "step": 2})
    b.add("turn/end", {"turn": t, "reason": {"kind": "completed"}})
    b.flush()

    t += 1
    user_turn(t, "Summarise what a packed chunk row is, with a tiny example.")
    answer = (
        "A **packed chunk row** stores a run of streamed deltas of one block as a single record:\n\n"
        "1. `texts` keeps every fragment exactly as it arrived (token boundaries are data);\n"
        "2. `dt` keeps the time gap between consecutive fragments;\n"
        "3. `seq0` and `time0` name the first member, so every member's seq and time can be rebuilt.\n\n"
        "```json\n"
        '{"type": "text-chunks", "seq0": 7, "time0": 1000,\n'
        ' "data": {"turn": 1, "step": 1, "index": 0, "dt": [3, 5], "texts": ["Hel", "lo", "!"]}}\n'
        "```\n\n"
        "See the [format notes](https://example.com/chunk-rows) for the full rules."
    )
    assistant_step(t, 1, [
        ("reasoning", "Explain the row shape: fragments, gaps, first seq and time. Add a short JSON example.", None),
        ("text", answer, None),
    ], usage(1302, 187, 1024, 22), "stop")
    b.add("step/end", {"turn": t, "step": 1})
    b.add("turn/end", {"turn": t, "reason": {"kind": "completed"}})
    b.flush()
