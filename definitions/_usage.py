"""``deriveTurnTokenUsage``: a strict per-attempt lifecycle fold over a turn's scalar events (ASSEMBLY 5.4).

Rules: the fold is incremental (one ``feed`` per scalar Match, O(1)); anything inconsistent makes the result
unavailable for good. Rows never carry usage and are not fed. Deviation, for packed = scalar: text, reasoning and
tool-call *delta* chunks are not fed either (they are exactly what rows hold, and they carry no usage).
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from assembler.records import MAX_SAFE_INTEGER
from assembler.views import Provenance, TokenUsage

__all__ = ["UsageFold"]

_DELTAS = frozenset({"text-delta", "reasoning-delta", "tool-call-delta"})


def _count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER or (
        type(value) is float and value.is_integer() and 0 <= value <= MAX_SAFE_INTEGER)


class UsageFold:
    """States: ``idle``, ``open``, ``finish-closed``, ``settled-message``, ``settled-retry``; ``dead`` is final."""

    __slots__ = ("phase", "step", "sample", "attempts", "began", "ended")

    def __init__(self) -> None:
        self.phase = "none"
        self.step: Any = None
        self.sample: Any = None
        self.attempts: list[tuple[int, int, Any, Any, Any, int, Provenance | None]] = []
        self.began = False
        self.ended = False

    def _die(self) -> None:
        self.phase = "dead"

    def _close(self, route: Provenance | None) -> bool:
        usage = self.sample
        if type(usage) is not dict:
            return False
        inp: Any = usage.get("inputTokens")
        out: Any = usage.get("outputTokens")
        if not _count(inp) or not _count(out):
            return False
        cr: Any = usage.get("cacheReadTokens")
        cw: Any = usage.get("cacheWriteTokens")
        rs: Any = usage.get("reasoningTokens")
        for v in (cr, cw, rs):
            if v is not None and not _count(v):
                return False
        if rs is not None and rs > out:
            return False
        total: Any = usage.get("totalTokens")
        base = inp + (cr or 0) + (cw or 0)
        if total is not None:
            if not _count(total) or total - out < base:
                return False
            if cr is not None and cw is not None and total - out != base:
                return False
        else:
            if cr is None or cw is None:
                return False
            total = base + out
        self.attempts.append((int(inp), int(out), cr, cw, rs, int(total), route))
        return True

    def feed(self, event: Any) -> None:
        """One scalar event of the turn, in seq order."""
        phase = self.phase
        if phase == "dead":
            return
        etype = event.type
        data = event.data if type(event.data) is dict else {}
        if etype == "assistant/chunk":
            chunk = data.get("chunk")
            if type(chunk) is dict and chunk.get("type") in _DELTAS:
                return
        if self.ended:
            return self._die()
        if etype == "turn/start":
            if self.began:
                return self._die()
            self.began = True
            self.phase = "idle"
            return
        if not self.began:
            return self._die()
        step = data.get("step")
        if etype == "step/start":
            if phase != "idle":
                return self._die()
            self.phase, self.step, self.sample = "open", step, None
        elif etype == "llm/retry-started":
            if phase != "settled-retry" or step != self.step:
                return self._die()
            self.phase, self.sample = "open", None
        elif etype == "assistant/chunk":
            if phase != "open" or step != self.step:
                return self._die()
            chunk = data.get("chunk")
            ctype = chunk.get("type") if type(chunk) is dict else None
            if ctype == "usage":
                self.sample = chunk.get("usage")  # type: ignore[union-attr]
            elif ctype == "finish":
                reason = chunk.get("reason")  # type: ignore[union-attr]
                if type(reason) is dict and reason.get("kind") in ("error", "aborted"):
                    if not self._close(None):
                        return self._die()
                    self.phase = "finish-closed"
        elif etype == "assistant/message":
            if phase != "open" or step != self.step:
                return self._die()
            if data.get("usage") is not None:
                self.sample = data.get("usage")
            message = data.get("message")
            source = message.get("source") if type(message) is dict else None
            route = None
            if type(source) is dict and source.get("provider") and source.get("model"):
                route = Provenance(source["provider"], source["model"])
            if not self._close(route):
                return self._die()
            self.phase = "settled-message"
        elif etype == "llm/retry":
            if phase in ("idle", "settled-message", "settled-retry") or step != self.step:
                return self._die()
            if phase == "open" and not self._close(None):
                return self._die()
            self.phase = "settled-retry"
        elif etype == "step/end":
            if phase == "idle" or step != self.step:
                return self._die()
            if phase == "open" and not self._close(None):
                return self._die()
            self.phase = "idle"
        elif etype == "turn/end":
            if phase != "idle":
                return self._die()
            self.ended = True

    def result(self) -> TokenUsage | None:
        if self.phase == "dead" or not self.ended or not self.attempts:
            return None
        attempts = self.attempts
        inp = sum(a[0] for a in attempts)
        out = sum(a[1] for a in attempts)
        total = sum(a[5] for a in attempts)
        optional: list[Any] = []
        for i in (2, 3, 4):
            optional.append(sum(a[i] for a in attempts) if all(a[i] is not None for a in attempts) else None)
        for v in (inp, out, total, *optional):
            if v is not None and v > MAX_SAFE_INTEGER:
                return None
        routes: list[Provenance] | None = None
        if all(a[6] is not None for a in attempts):
            seen: dict[tuple[Any, Any], Provenance] = {}
            for a in attempts:
                r = a[6]
                assert r is not None
                seen.setdefault((r.provider, r.model), r)
            routes = list(seen.values())
        return TokenUsage(
            uncachedInputTokens=inp, outputTokens=out, totalTokens=total,
            cacheReadTokens=UNSET if optional[0] is None else int(optional[0]),
            cacheWriteTokens=UNSET if optional[1] is None else int(optional[1]),
            reasoningTokens=UNSET if optional[2] is None else int(optional[2]),
            routes=UNSET if routes is None else routes)
