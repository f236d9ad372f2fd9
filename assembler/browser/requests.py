"""The model requests of a window, one per attempt: what the request inspector and the context meter show.

Rules: one pass over the window's entries in seq order (a packed row is one entry, never expanded). A request
(an *attempt*) starts at ``step/start``, at ``llm/retry-started`` (or the first chunk after an ``llm/retry``) and at
the first chunk, row or message of a step whose last attempt failed with a ``finish`` error (the request re-sent
after a compaction, say). It ends with its ``assistant/message`` (complete, or interrupted), an error ``finish``
chunk or an ``llm/retry`` (failed). Its *prompt* is the surface (``surface.SurfaceManager``) as it stood at its first
response event (the producer logs the step's input messages after ``step/start``); ``changes`` are the surface
events between the previous attempt's prompt and this one's (appended messages, and a compaction's replacement with
the messages it shadowed): what changed in the prompt. Its ``request/header`` and ``request/context`` are the last
ones logged before its first response event. Conversation sizes are estimates (characters / 4, per message, kept
incrementally); input sizes are recorded usage only (``inputTokens + cacheReadTokens + cacheWriteTokens``, the
counts do not overlap: PROTOCOL 1.2). Times are kept as logged; whoever computes a duration checks them with
``views.is_recorded_time``. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ..conversation import Entry
from ..surface import SURFACE_TYPES, SurfaceError, SurfaceManager, message_of

__all__ = ["Attempt", "Change", "collect_attempts", "estimate_tokens", "message_preview", "CHARS_PER_TOKEN"]

CHARS_PER_TOKEN = 4
"""The estimate's density: a message's text (and its tool calls' JSON) over this many characters per token."""

_DELTAS = frozenset({"text-delta", "reasoning-delta", "tool-call-delta"})


def estimate_tokens(chars: int) -> int:
    """Tokens estimated from a character count (rounded up)."""
    return -(-chars // CHARS_PER_TOKEN)


def _content_chars(content: Any) -> int:
    if type(content) is str:
        return len(content)
    if type(content) is not list:
        return 0 if content is None else len(json.dumps(content, ensure_ascii=False))
    total = 0
    for block in content:
        if type(block) is dict and block.get("type") in ("text", "reasoning") and type(block.get("text")) is str:
            total += len(block["text"])
        elif type(block) is dict and block.get("type") == "tool-result":
            total += _content_chars(block.get("content", block.get("output")))
        else:
            total += len(json.dumps(block, ensure_ascii=False))
    return total


def message_preview(message: Mapping[str, Any], limit: int = 160) -> str:
    """The first non-blank line of a message's text (tool calls and results named), cut to ``limit`` characters."""
    content = message.get("content")
    parts: list[str] = []
    for block in content if type(content) is list else [content]:
        if type(block) is str:
            parts.append(block)
        elif type(block) is dict:
            btype = block.get("type")
            if btype in ("text", "reasoning") and type(block.get("text")) is str:
                parts.append(block["text"])
            elif btype == "tool-call":
                parts.append(f"[tool call {block.get('name', block.get('toolName', '?'))}]")
            elif btype == "tool-result":
                parts.append(f"[tool result] {message_preview({'content': block.get('content')}, limit)}")
            elif btype is not None:
                parts.append(f"[{btype}]")
        if sum(len(p) for p in parts) > limit:
            break
    for line in " ".join(parts).splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[:limit - 1] + "…"
    return ""


class Change:
    """One surface event between two prompts: ``event`` appended, or put in place of the events ``replaced``.
    ``value()`` is its JSON value (previews made on request: most changes are never looked at)."""

    __slots__ = ("event", "chars", "replaced")

    def __init__(self, event: Mapping[str, Any], chars: int, replaced: list[Mapping[str, Any]]) -> None:
        self.event, self.chars, self.replaced = event, chars, replaced

    @property
    def seq(self) -> int:
        return int(self.event["seq"])

    def value(self) -> dict[str, Any]:
        message = message_of(self.event)
        return {"seq": self.seq, "role": str(message.get("role", "?")), "type": str(self.event.get("type")),
                "preview": message_preview(message), "chars": self.chars,
                "replaced": [_old_value(old) for old in self.replaced]}


def _old_value(event: Mapping[str, Any]) -> dict[str, Any]:
    message = message_of(event)
    return {"seq": event.get("seq"), "role": str(message.get("role", "?")), "preview": message_preview(message),
            "chars": _content_chars(message.get("content"))}


def _shallow(event: Any) -> dict[str, Any]:
    """A surface event as the dict ``SurfaceManager`` reads, without converting its (already plain) payload."""
    out: dict[str, Any] = {"type": event.type, "seq": event.seq, "time": event.time, "data": event.data}
    if event.surfaceOp is not msgspec.UNSET:
        out["surfaceOp"] = msgspec.to_builtins(event.surfaceOp)
    if event.sourceEventSeqs is not msgspec.UNSET:
        out["sourceEventSeqs"] = list(event.sourceEventSeqs)
    return out


class Attempt:
    """One model request. ``seq``: the event that started it (unique per attempt); ``anchor``: its step's first seq
    (the trajectory row's ``seq``); ``cause``: how it started (``step``, ``retry``, ``resent`` or ``stream``)."""

    __slots__ = ("seq", "anchor", "turn", "step", "cause", "started", "first_token", "ended", "end_seq", "status",
                 "failure", "retry", "usage", "header", "context", "provider", "model", "prompt_seq", "changes",
                 "messages", "conversation", "evidence", "finish")

    def __init__(self, seq: int, anchor: int, turn: Any, step: Any, cause: str, time: Any) -> None:
        self.seq, self.anchor, self.turn, self.step, self.cause = seq, anchor, turn, step, cause
        self.started = time
        self.first_token: Any = None
        self.ended: Any = None
        self.end_seq: int | None = None
        self.status = "running"
        self.failure: dict[str, Any] | None = None
        self.retry: dict[str, Any] | None = None
        self.usage: dict[str, Any] | None = None
        self.header: tuple[int, dict[str, Any]] | None = None
        self.context: tuple[int, dict[str, Any]] | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.prompt_seq: int | None = None  # the event before which the prompt was read
        self.changes: list[Change] = []
        self.messages = 0
        self.conversation = 0  # estimated tokens of the prompt's messages
        self.evidence = False  # a response event was seen
        self.finish: str | None = None

    @property
    def open(self) -> bool:
        return self.status == "running"

    def input_tokens(self) -> int | None:
        """The recorded size of the prompt (input + cache read + cache write), or None without recorded usage."""
        usage = self.usage
        if usage is None or type(usage.get("inputTokens")) not in (int, float):
            return None
        return int(sum(usage[k] for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
                       if type(usage.get(k)) in (int, float)))


def _add_usage(current: dict[str, Any] | None, nxt: Any) -> dict[str, Any] | None:
    if type(nxt) is not dict:
        return current
    out = dict(current or {})
    for key, value in nxt.items():
        if type(value) in (int, float) and type(out.get(key, 0)) in (int, float):
            out[key] = out.get(key, 0) + value
    return out


def _failure(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        return {"message": "" if value is None else str(value)}
    out: dict[str, Any] = {"message": value["message"] if type(value.get("message")) is str else json.dumps(value)}
    for key in ("code", "status", "providerRetryAfterMs", "requestId"):
        if type(value.get(key)) in (str, int, float):
            out[key] = value[key]
    return out


def _turn_step(data: Any) -> tuple[Any, Any] | None:
    if type(data) is dict:
        turn, step = data.get("turn"), data.get("step")
    else:
        turn, step = getattr(data, "turn", None), getattr(data, "step", None)
    if type(turn) not in (int, float, str) or type(step) not in (int, float, str):
        return None
    return turn, step


class _Fold:
    """The single pass (``collect_attempts``)."""

    def __init__(self) -> None:
        self.attempts: list[Attempt] = []
        self.by_step: dict[tuple[Any, Any], Attempt] = {}  # the last attempt of each step
        self.running: dict[tuple[Any, Any], Attempt] = {}  # the attempts not ended yet
        self.anchors: dict[tuple[Any, Any], int] = {}
        self.pending_retry: dict[tuple[Any, Any], dict[str, Any]] = {}
        self.header: tuple[int, dict[str, Any]] | None = None
        self.context: tuple[int, dict[str, Any]] | None = None
        self.log: list[dict[str, Any]] = []
        self.surface = SurfaceManager(self.log, on_invalid=lambda exc: None)
        self.sizes: dict[int, int] = {}  # estimated tokens of each message on the surface
        self.conversation = 0
        self.changes: list[Change] = []

    def begin(self, key: tuple[Any, Any], seq: int, time: Any, cause: str) -> Attempt:
        anchor = self.anchors.setdefault(key, seq)
        attempt = Attempt(seq, anchor, key[0], key[1], cause, time)
        attempt.retry = self.pending_retry.pop(key, None)
        attempt.header, attempt.context = self.header, self.context
        self.attempts.append(attempt)
        self.by_step[key] = attempt
        self.running[key] = attempt
        return attempt

    def responding(self, key: tuple[Any, Any], seq: int, time: Any) -> Attempt:
        """The attempt a response event of step ``key`` belongs to (a new one after a failed or settled attempt)."""
        attempt = self.by_step.get(key)
        if attempt is None or not attempt.open:
            cause = "stream" if attempt is None else "retry" if key in self.pending_retry else "resent"
            attempt = self.begin(key, seq, time, cause)
        if not attempt.evidence:
            attempt.evidence = True
            self.capture(attempt, seq)
        return attempt

    def capture(self, attempt: Attempt, seq: int | None) -> None:
        """The attempt's prompt is the surface as it stands now (read once, at its first response event)."""
        if attempt.prompt_seq is not None:
            return
        attempt.prompt_seq = -1 if seq is None else seq
        attempt.header, attempt.context = self.header, self.context  # logged after step/start
        attempt.changes, self.changes = self.changes, []
        attempt.messages = len(self.sizes)
        attempt.conversation = self.conversation

    def end(self, attempt: Attempt, seq: int, time: Any, status: str) -> None:
        self.running.pop((attempt.turn, attempt.step), None)
        self.capture(attempt, seq)
        attempt.status, attempt.ended, attempt.end_seq = status, time, seq

    def boundary(self, seq: int, time: Any, turn: Any, step: Any = None) -> None:
        """``step/end`` or ``turn/end``: an attempt still open there ended without its message."""
        for key, attempt in list(self.running.items()):
            if key[0] == turn and (step is None or key[1] == step):
                self.end(attempt, seq, time, "interrupted")

    def surface_event(self, event: dict[str, Any]) -> None:
        seq = event.get("seq")
        if type(seq) is not int:
            return
        try:
            gone = self.surface.check(event)
        except SurfaceError:
            self.log.append(event)  # refused by the surface (its own callback keeps it off)
            return
        self.log.append(event)
        if seq not in self.surface:
            return
        chars = _content_chars(message_of(event).get("content"))
        size = estimate_tokens(chars) + 4  # the role's framing
        for node in gone:
            self.conversation -= self.sizes.pop(node.seq, 0)
        self.sizes[seq] = size
        self.conversation += size
        self.changes.append(Change(event, chars, [node.event for node in gone]))

    def event(self, event: Any) -> None:
        etype, seq, time = event.type, event.seq, event.time
        if etype in SURFACE_TYPES:
            self._response(event)  # an assistant/message settles its attempt before it joins the surface
            self.surface_event(_shallow(event))
            return
        data = event.data
        if etype == "request/header" and type(data) is dict and type(data.get("header")) is dict:
            self.header = (seq, data["header"])
        elif etype == "request/context" and type(data) is dict:
            self.context = (seq, data)
        elif etype == "step/start":
            key = _turn_step(data)
            if key is not None:
                self.anchors[key] = seq
                self.begin(key, seq, time, "step")
        elif etype == "llm/retry":
            key = _turn_step(data)
            if key is not None and type(data) is dict:
                info = {k: data[k] for k in ("retry", "maxRetries", "delayMs", "mode") if k in data}
                attempt = self.by_step.get(key)
                if attempt is not None and attempt.open:
                    attempt.failure = _failure(data.get("failure"))
                    self.end(attempt, seq, time, "error")
                self.pending_retry[key] = info
        elif etype in ("step/end", "turn/end") and type(data) is dict:
            self.boundary(seq, time, data.get("turn"), data.get("step") if etype == "step/end" else None)
        elif etype == "llm/retry-started":
            key = _turn_step(data)
            if key is not None and key in self.pending_retry:
                self.begin(key, seq, time, "retry")
        elif etype == "assistant/chunk":
            if not self._settled_delta(data):
                self._response(event)
        elif etype.startswith("chunkrow/"):
            self._response(event)

    def _settled_delta(self, data: Any) -> bool:
        """The common case, decided fast: a chunk of a running attempt that changes nothing (a delta after the first
        token, a block's start or end)."""
        if type(data) is not dict:
            return False
        chunk = data.get("chunk")
        kind = chunk.get("type") if type(chunk) is dict else None
        if kind == "usage" or kind == "finish" or type(kind) is not str:
            return False
        key = _turn_step(data)
        attempt = self.running.get(key) if key is not None else None
        return attempt is not None and attempt.evidence and (attempt.first_token is not None or kind not in _DELTAS)

    def _response(self, event: Any) -> None:
        etype = event.type
        if etype == "tool/result" or (etype == "user/message"):
            return
        key = _turn_step(event.data)
        if key is None:
            return
        seq, time, data = event.seq, event.time, event.data
        attempt = self.responding(key, seq, time)
        if etype == "assistant/message":
            if type(data) is not dict:
                return
            if attempt.usage is None and type(data.get("usage")) is dict:
                attempt.usage = dict(data["usage"])
            message = data.get("message")
            source = message.get("source") if type(message) is dict else data.get("provenance")
            if type(source) is dict:
                attempt.provider = source.get("provider") if type(source.get("provider")) is str else None
                attempt.model = source.get("model") if type(source.get("model")) is str else None
            self.end(attempt, seq, time, "interrupted" if data.get("interrupted") is True else "complete")
            return
        if etype.startswith("chunkrow/"):
            if attempt.first_token is None:
                attempt.first_token = time
            return
        chunk = data.get("chunk") if type(data) is dict else None
        kind = chunk.get("type") if type(chunk) is dict else None
        if type(kind) is not str:
            return
        if kind in _DELTAS and attempt.first_token is None:
            attempt.first_token = time
        elif kind == "usage":
            attempt.usage = _add_usage(attempt.usage, chunk.get("usage"))  # type: ignore[union-attr]
        elif kind == "finish":
            reason = chunk.get("reason")  # type: ignore[union-attr]
            finish = reason.get("kind") if type(reason) is dict else None
            attempt.finish = finish if type(finish) is str else None
            if finish == "error" and type(reason) is dict:
                attempt.failure = _failure(reason.get("failure"))
                self.end(attempt, seq, time, "error")


def collect_attempts(entries: Iterable[Entry]) -> list[Attempt]:
    """Every model request of ``entries`` (seq order), each with its prompt's changes, sizes, usage and times."""
    fold = _Fold()
    for entry in entries:
        fold.event(entry.event)
    for attempt in fold.attempts:
        if attempt.open:  # not answered yet: its prompt is the surface as it stands
            fold.capture(attempt, None)
    return fold.attempts
