"""Test-only session builders: small, deterministic session logs written with our own generator (``assembler.demo``).

``Session`` collects logical events (dense seqs, a fake clock) turn by turn; ``to_bytes`` packs delta runs into
chunk rows exactly as a live writer would.
"""

from __future__ import annotations

from typing import Any

from assembler.chunk_rows import pack_chunk_runs
from assembler.demo import DemoBuilder
from assembler.records import encode

__all__ = ["Session", "jsonl"]


def jsonl(header: dict[str, Any], records: list[dict[str, Any]]) -> bytes:
    return b"\n".join([encode(header), *(encode(r) for r in records)]) + b"\n"


class Session:
    """A session built turn by turn: ``user``, ``assistant`` (reasoning/text/tool calls streamed as deltas),
    ``tool_result``, ``end_turn``."""

    def __init__(self, session_id: str = "test-session", *, start_time: int = 1_767_225_600_000) -> None:
        self.header = {"type": "session", "version": 0, "id": session_id, "createdAt": start_time}
        self.b = DemoBuilder(start_time)
        self.turn = 0
        self.step = 0

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.b.events

    def user(self, text: str, *, source: dict[str, Any] | None = None) -> int:
        """Starts a turn with a user message (or, with ``source``, an injected context message)."""
        self.turn += 1
        self.step = 0
        self.b.add("turn/start", {"turn": self.turn})
        return self.b.add("user/message", {
            "id": f"user-{self.turn}-{len(self.events)}", "role": "user",
            "content": [{"type": "text", "text": text}], "source": source or {"kind": "user"},
        }, surfaceOp="append")

    def assistant(self, blocks: list[tuple[str, str]], *, calls: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
                  pieces: list[str] | None = None, retry: dict[str, Any] | None = None) -> int:
        """One model step: ``blocks`` are ``(kind, text)`` streamed as deltas (``pieces`` overrides the split),
        ``calls`` are ``(call id, name, arguments)`` tool calls; ``retry`` (an ``llm/retry`` payload without
        turn/step) is written first, with its ``llm/retry-started``. Returns the message seq."""
        self.step += 1
        turn, step, b = self.turn, self.step, self.b
        b.add("step/start", {"turn": turn, "step": step})
        if retry is not None:
            b.add("llm/retry", {"turn": turn, "step": step, **retry})
            b.add("llm/retry-started", {"retryId": retry.get("retryId"), "turn": turn, "step": step,
                                        "retry": retry.get("retry")})
        seqs: list[int] = []
        content = []
        index = 0
        for kind, text in blocks:
            if pieces is not None:
                seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                    "type": "block-start", "index": index, "blockType": kind}}))
                for piece in pieces:
                    seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                        "type": f"{kind}-delta", "index": index, "text": piece}}, gap=1))
                block = {"type": kind, "text": "".join(pieces)}
                seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {
                    "type": "block-end", "index": index, "block": block}}))
            else:
                block = b.stream_block(turn, step, index, kind, text, seqs)
            content.append(block)
            index += 1
        for call_id, name, args in calls:
            content.append(b.stream_block(turn, step, index, "tool-call", args, seqs, call=(call_id, name)))
            index += 1
        usage = {"inputTokens": 100, "outputTokens": 20, "cacheReadTokens": 0, "cacheWriteTokens": 0}
        seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": "usage", "usage": usage}}))
        seqs.append(b.add("assistant/chunk", {"turn": turn, "step": step, "chunk": {
            "type": "finish", "reason": {"kind": "tool-calls" if calls else "stop"}}}))
        seq = b.add("assistant/message", {"turn": turn, "step": step, "message": {
            "role": "assistant", "content": content, "source": {"kind": "model", "provider": "test", "model": "m"},
            "id": f"assistant-{turn}-{step}"}, "usage": usage}, sourceEventSeqs=seqs, surfaceOp="append")
        for call_id, name, args in calls:
            b.add("tool/call", {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": args})
        return seq

    def tool_result(self, call_id: str, text: str, *, is_error: bool = False) -> int:
        return self.b.add("tool/result", {"turn": self.turn, "step": self.step, "message": {
            "role": "tool", "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}],
                         "isError": is_error}]}}, surfaceOp="append")

    def end_step(self) -> None:
        self.b.add("step/end", {"turn": self.turn, "step": self.step})

    def end_turn(self, reason: dict[str, Any] | None = None) -> None:
        self.b.add("turn/end", {"turn": self.turn, "reason": reason or {"kind": "completed"}})

    def to_bytes(self, *, packed: bool = True) -> bytes:
        records = pack_chunk_runs(self.events) if packed else list(self.events)
        return jsonl(self.header, records)
