"""A deterministic many-turn session (our own generator): ``turns`` turns, each a user prompt, one step streaming
reasoning, text and a tool call, the step's ``assistant/message``, the tool result and the turn end, with recorded
times. Used by the view benchmarks and the viewer's DOM-bound test (5,000 turns).

    .venv/bin/python -m perf.turns OUT.jsonl [--turns N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from assembler.chunk_rows import pack_chunk_runs
from assembler.demo import DemoBuilder
from assembler.records import encode

__all__ = ["many_turns", "many_turns_bytes", "main"]

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
          "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")


def _sentence(turn: int, salt: int, n: int) -> str:
    return " ".join(_WORDS[(turn * 7 + salt * 3 + i * 11) % len(_WORDS)] for i in range(n)) + "."


def many_turns(turns: int = 5000) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The header and the append batches (one per turn part, as a live writer appends them)."""
    header = {"type": "session", "version": 0, "id": f"turns-{turns}", "createdAt": 1_767_225_600_000}
    b = DemoBuilder()
    model = {"kind": "model", "provider": "demo", "model": "demo-model-1"}
    for turn in range(1, turns + 1):
        b.add("turn/start", {"turn": turn})
        b.add("user/message", {"id": f"user-{turn}", "role": "user",
                               "content": [{"type": "text", "text": f"Question {turn}: {_sentence(turn, 0, 8)}"}],
                               "source": {"kind": "user"}}, surfaceOp="append")
        b.flush()
        b.add("step/start", {"turn": turn, "step": 1}, gap=150)
        cited: list[int] = []
        call_id = f"call-{turn}"
        blocks = [
            b.stream_block(turn, 1, 0, "reasoning", _sentence(turn, 1, 12), cited),
            b.stream_block(turn, 1, 1, "text", f"Answer {turn}: {_sentence(turn, 2, 20)}", cited),
            b.stream_block(turn, 1, 2, "tool-call", json.dumps({"command": f"echo {_WORDS[turn % 20]} {turn}"}),
                           cited, call=(call_id, "bash")),
        ]
        b.add("assistant/message", {"turn": turn, "step": 1, "message": {
            "role": "assistant", "content": blocks, "source": model, "id": f"msg-{turn}"},
            "usage": {"inputTokens": 100 + turn, "outputTokens": 40}}, surfaceOp="append", sourceEventSeqs=cited)
        args = blocks[2]["arguments"]
        call_seq = b.add("tool/call", {"turn": turn, "step": 1, "callId": call_id, "name": "bash", "arguments": args})
        b.add("tool/result", {"turn": turn, "step": 1, "callId": call_id,
                              "content": [{"type": "text", "text": f"{_WORDS[turn % 20]} {turn}\n"}],
                              "isError": False}, gap=300, sourceEventSeqs=[call_seq], surfaceOp="append")
        b.add("step/end", {"turn": turn, "step": 1})
        b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        b.flush()
    return header, [batch for batch in b.batches if batch]


def many_turns_bytes(turns: int = 5000) -> bytes:
    """The session as packed JSONL bytes (rows packed per append batch)."""
    header, batches = many_turns(turns)
    records = [r for batch in batches for r in pack_chunk_runs(batch)]
    return b"\n".join([encode(header), *(encode(r) for r in records)]) + b"\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.turns", description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--turns", type=int, default=5000)
    args = parser.parse_args(argv)
    tmp = f"{args.output}.tmp"
    with open(tmp, "wb") as stream:
        stream.write(many_turns_bytes(args.turns))
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
