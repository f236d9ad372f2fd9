"""One Gemini CLI chat message (FORMATS.md §7.2-7.3) as our events: the msgspec Structs of a message record and
the ``Messages`` mapper the JSON and JSONL readers (``gemini``) share.

Rules: a ``user`` message is a prompt (``turn/start`` + ``user/message``), unless its parts are
``functionResponse``s (newer CLIs record the tool responses sent to the model as a ``user`` message): those are
results of calls not answered yet (else nothing new), its other parts plugin context. A ``gemini`` message is one
step: a reasoning block per thought (its subject the first line, the block's title; the description as recorded,
literal ``\\n`` kept), the content's text (parts marked ``thought`` are reasoning), a ``tool-call`` block per tool
call, usage from ``tokens`` (§2.8: input = ``input - cached + tool``, cache reads ``cached``, output ``output``,
reasoning ``thoughts``), then a ``tool/call`` per call (a call recorded only as a ``functionCall`` part is answered
by a later response) and a ``tool/result`` from each ``functionResponse`` (``output``, or ``error`` with
``isError``), with ``status``, ``resultDisplay``, ``displayName`` and ``description`` in ``meta`` (UI text, never
what the model got); a call with no result yet stays a call without result. A call naming a subagent (``agentId``)
is linked by ``tool-workflow/agent-start``/``agent-end`` (the child session id). ``info``, ``error`` and ``warning``
messages are notices. Times are the recorded ``timestamp``s (thoughts and tool calls have their own). Pure.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Struct

from .base import LogBuilder, iso_ms, json_args
from .documents import distinct_ids

__all__ = ["Message", "Messages", "NOTICE_TYPES", "parts_of", "text_of"]

NOTICE_TYPES = frozenset({"info", "error", "warning"})


class Thought(Struct, kw_only=True):
    subject: str | None = None
    description: str | None = None
    timestamp: str | None = None


class ToolCall(Struct, kw_only=True):
    id: str
    name: str
    args: dict[str, Any] | None = None
    result: Any = None
    status: str | None = None
    timestamp: str | None = None
    resultDisplay: Any = None  # the recorded field names (camelCase)
    displayName: str | None = None
    description: str | None = None
    agentId: str | None = None


class Tokens(Struct, kw_only=True):
    input: int = 0
    output: int = 0
    cached: int = 0
    thoughts: int | None = None
    tool: int | None = None
    total: int | None = None


class Message(Struct, kw_only=True):
    id: str
    type: str
    timestamp: str | None = None
    content: str | dict[str, Any] | list[Any] | None = None  # a PartListUnion
    model: str | None = None
    thoughts: list[Thought] | None = None
    toolCalls: list[ToolCall] | None = None
    tokens: Tokens | None = None


def parts_of(content: Any) -> list[Any]:
    """A ``PartListUnion`` as a list of parts (a string is one text part)."""
    if type(content) is str:
        return [{"text": content}] if content else []
    if type(content) is dict:
        return [content]
    if type(content) is list:
        return [{"text": p} if type(p) is str else p for p in content]
    return []


def text_of(content: Any) -> str:
    """The text parts of a content joined (the text a notice shows)."""
    return "".join(p["text"] for p in parts_of(content) if type(p) is dict and type(p.get("text")) is str)


def _part_block(part: Any) -> dict[str, Any] | None:
    """A content block for a part that is not text, a call or a response: images as image blocks, anything else
    typed by its key and passed through."""
    if type(part) is not dict or not part:
        return None
    inline = part.get("inlineData")
    if type(inline) is dict:
        return {"type": "image", "attachment": {"mediaType": inline.get("mimeType"), "data": inline.get("data")}}
    key = next(iter(part))
    return {"type": key, **part}


def usage_of(tokens: Tokens) -> dict[str, Any]:
    usage: dict[str, Any] = {"inputTokens": tokens.input - tokens.cached + (tokens.tool or 0),
                             "outputTokens": tokens.output, "cacheReadTokens": tokens.cached}
    if tokens.thoughts is not None:
        usage["reasoningTokens"] = tokens.thoughts
    return usage


def result_of(result: Any) -> tuple[list[dict[str, Any]], bool] | None:
    """The content blocks and error flag of a tool call's recorded ``result`` (None when there is none yet)."""
    if result is None:
        return None
    blocks: list[dict[str, Any]] = []
    error = False
    for part in parts_of(result):
        response = part.get("functionResponse") if type(part) is dict else None
        if type(response) is dict:
            body = response.get("response")
            if type(body) is dict and type(body.get("error")) is str:
                blocks.append({"type": "text", "text": body["error"]})
                error = True
            elif type(body) is dict and type(body.get("output")) is str:
                blocks.append({"type": "text", "text": body["output"]})
            elif body is not None:
                blocks.append({"type": "text", "text": json_args(body)})
        elif type(part) is dict and type(part.get("text")) is str:
            blocks.append({"type": "text", "text": part["text"]})
        else:
            block = _part_block(part)
            if block is not None:
                blocks.append(block)
    return blocks, error


class Emitted:
    """What was written for a message id: its step, the calls written and the calls answered (a later copy of the
    message adds only what is new)."""

    __slots__ = ("msg", "turn", "step", "calls", "answered", "origin", "surface")

    def __init__(self, msg: Message, turn: int, step: int, origin: dict[str, Any]) -> None:
        self.msg = msg
        self.turn = turn
        self.step = step
        self.calls: set[str] = set()
        self.answered: set[str] = set()
        self.origin = origin
        self.surface: list[int] = []


class Messages:
    """Writes Gemini messages into ``out`` and remembers, per message id, what was written (``emitted``, in
    conversation order)."""

    def __init__(self, out: LogBuilder) -> None:
        self.out = out
        self.emitted: dict[str, Emitted] = {}
        self.pending: dict[str, Emitted] = {}  # call id -> the message whose call has no result yet

    def write(self, msg: Message, origin: dict[str, Any]) -> str | None:
        """The events of one message's final copy; returns a notice text for a notice message (no events)."""
        out = self.out
        time = iso_ms(msg.timestamp)
        first = out.next_seq
        if msg.type in NOTICE_TYPES:
            return text_of(msg.content) or msg.type
        if msg.type == "user":
            parts = parts_of(msg.content)
            responses = [p["functionResponse"] for p in parts
                         if type(p) is dict and type(p.get("functionResponse")) is dict]
            if responses:
                self.responses(responses, time)
                rest = [b for b in (_part_block(p) if type(p) is not dict or type(p.get("text")) is not str
                                    else {"type": "text", "text": p["text"]} for p in parts
                                    if not (type(p) is dict and "functionResponse" in p)) if b is not None]
                if rest:  # what the CLI sent beside the responses: context the model saw
                    out.user_message(rest, time=time, message_id=msg.id,
                                     source={"kind": "plugin", "plugin": "gemini-cli", "form": "tool-response"})
            else:
                out.start_turn(time)
                blocks = [{"type": "text", "text": p["text"]} if type(p) is dict and type(p.get("text")) is str
                          else _part_block(p) for p in parts]
                out.user_message([b for b in blocks if b is not None], time=time, message_id=msg.id)
            self.remember(msg, origin, first, 0)
        elif msg.type == "gemini":
            inline = self.gemini(msg, time)
            self.remember(msg, origin, first, out.step, inline)
        return None

    def remember(self, msg: Message, origin: dict[str, Any], first: int, step: int,
                 inline: list[str] | None = None) -> None:
        entry = Emitted(msg, self.out.turn, step, origin)
        entry.surface = [s for s in range(first, self.out.next_seq)
                         if (self.out.event(s) or {}).get("surfaceOp") is not None]
        for call_id in inline or ():  # calls recorded only as functionCall parts: a later response answers them
            entry.calls.add(call_id)
            self.pending[call_id] = entry
        for call in msg.toolCalls or ():
            entry.calls.add(call.id)
            if result_of(call.result) is not None:
                entry.answered.add(call.id)
            else:
                self.pending[call.id] = entry
        self.emitted[msg.id] = entry

    def responses(self, responses: list[dict[str, Any]], time: int) -> None:
        """Function responses recorded as a ``user`` message: a result for each call that has none yet."""
        for response in responses:
            call_id = response.get("id")
            entry = self.pending.pop(call_id, None) if type(call_id) is str else None
            if entry is None:
                continue  # the call's own record already holds this result (the model-visible copy)
            blocks, error = result_of({"functionResponse": response}) or ([], False)
            entry.answered.add(call_id)  # type: ignore[arg-type]
            self.result_at(entry, call_id, blocks, error, time, None)  # type: ignore[arg-type]

    def gemini(self, msg: Message, time: int) -> list[str]:
        """The step of a ``gemini`` message; returns the ids of the calls recorded only as ``functionCall``
        parts."""
        out = self.out
        thoughts = msg.thoughts or []
        start = iso_ms(thoughts[0].timestamp) if thoughts else 0
        out.start_step(start or time)
        for thought in thoughts:
            subject, description = thought.subject or "", thought.description or ""
            text = f"{subject}\n\n{description}" if subject else description
            out.block({"type": "reasoning", "text": text}, iso_ms(thought.timestamp) or time)
        recorded = msg.toolCalls or []
        calls = [c if c.id == i else msgspec.structs.replace(c, id=i)
                 for c, i in zip(recorded, distinct_ids(out, [c.id for c in recorded]), strict=True)]
        msg.toolCalls = calls or msg.toolCalls
        inline: list[tuple[str, str, str]] = []  # calls recorded only as functionCall parts
        for k, part in enumerate(parts_of(msg.content)):
            if type(part) is not dict:
                continue
            if type(part.get("text")) is str:
                if part["text"]:
                    out.block({"type": "reasoning" if part.get("thought") is True else "text",
                               "text": part["text"]}, time)
            elif type(part.get("functionCall")) is dict:
                call = part["functionCall"]
                if not calls and type(call.get("name")) is str:
                    cid = call.get("id") if type(call.get("id")) is str else f"{msg.id}#{k}"
                    inline.append((cid, call["name"], json_args(call.get("args") or {})))
            else:
                block = _part_block(part)
                if block is not None:
                    out.block(block, time)
        for call in calls:
            out.block({"type": "tool-call", "id": call.id, "name": call.name, "arguments": json_args(call.args or {})},
                      time)
        inline = [(i, n, a) for i, (_, n, a) in zip(distinct_ids(out, [c[0] for c in inline]), inline, strict=True)]
        for cid, name, arguments in inline:
            out.block({"type": "tool-call", "id": cid, "name": name, "arguments": arguments}, time)
        usage = usage_of(msg.tokens) if msg.tokens is not None else None
        if usage is not None:
            out.usage(usage, time)
        out.message(time=time, model=msg.model, message_id=msg.id, usage=usage)
        for cid, name, arguments in inline:
            out.tool_call(cid, name, arguments, time)
        for call in calls:
            self.call(call, time)
        out.end_step(time)
        return [c[0] for c in inline]

    def call(self, call: ToolCall, time: int, at: Emitted | None = None) -> None:
        """A recorded tool call: its ``tool/call``, the subagent link, and its result when it has one. ``at`` is
        the step an earlier copy of the message was written in (a call a later copy added)."""
        out = self.out
        seq = out.tool_call(call.id, call.name, json_args(call.args or {}), time)
        event = out.event(seq)
        if at is not None and event is not None:
            event["data"].update(turn=at.turn, step=at.step)
        if call.agentId:
            out.emit("tool-workflow/agent-start", {"runId": call.id, "seq": 1, "label": call.displayName or call.name,
                                                   "childId": call.agentId, "turn": at.turn if at else out.turn},
                     time=time)
        found = result_of(call.result)
        if found is not None:
            self.result_at(at, call.id, found[0], found[1], iso_ms(call.timestamp) or time, call)

    def result_at(self, at: Emitted | None, call_id: str, blocks: list[dict[str, Any]], error: bool, time: int,
                  call: ToolCall | None) -> None:
        out = self.out
        meta: dict[str, Any] = {}
        if call is not None:
            for key in ("status", "resultDisplay", "displayName", "description"):
                value = getattr(call, key)
                if value is not None:
                    meta[key] = value
        seq = out.tool_result(call_id, blocks, is_error=error or (call is not None and call.status == "error"),
                              time=time, meta=meta or None)
        event = out.event(seq)
        if at is not None and event is not None:
            event["data"].update(turn=at.turn, step=at.step)
        if call is not None and call.agentId:
            outcome = call.status or "done"
            out.emit("tool-workflow/agent-end", {"runId": call_id, "seq": 1, "outcome": outcome,
                                                 "turn": at.turn if at else out.turn}, time=time)

    def update(self, msg: Message) -> tuple[bool, bool]:
        """A later copy of a message already written (following a live file): the calls it adds and the results
        that arrived are written; returns (anything written, anything else changed that cannot be added)."""
        entry = self.emitted[msg.id]
        wrote = False
        for call in msg.toolCalls or ():
            found = result_of(call.result)
            if call.id not in entry.calls and not self.out.has_call(call.id):
                entry.calls.add(call.id)
                self.call(call, iso_ms(msg.timestamp), entry)
                wrote = True
                if found is not None:
                    entry.answered.add(call.id)
                else:
                    self.pending[call.id] = entry
            elif call.id not in entry.answered and found is not None:
                entry.answered.add(call.id)
                self.pending.pop(call.id, None)
                self.result_at(entry, call.id, found[0], found[1], iso_ms(call.timestamp) or iso_ms(msg.timestamp),
                               call)
                wrote = True
        old = entry.msg
        changed = (old.content != msg.content or old.thoughts != msg.thoughts or old.tokens != msg.tokens
                   or old.type != msg.type)
        entry.msg = msg
        return wrote, changed
