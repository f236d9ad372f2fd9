"""The Trajectory and Model-context views as the page lays them out: plain JSON values built from the window's view
nodes and entries (the page renders them with ``textContent``; no HTML here).

Rules: the trajectory has one row per Trajectory Assistant step (request status, model, TTFT, duration, tokens, the
output's first line, its tool calls with the status of their chat rows) and one per failed turn end; a step's
timeline bar is a fraction of its turn's span and is present only when every time it uses was recorded (a
time rebuilt from a counter fails ``views.is_recorded_time``: no duration is computed from it). The context is the
surface (``surface.derive_messages``) of the window's surface events: each message with its role and text, a
compaction's replacement with the messages it shadowed, and for each message the chat rows of its source events.
Pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from ..conversation import ConversationAssembler, Entry
from ..locations import TurnLocation
from ..records import EventRecord
from ..render.texts import first_line
from ..render.toolrows import tool_error
from ..surface import SURFACE_TYPES, SurfaceError, SurfaceManager, derive_messages, message_of
from ..views import (
    AssistantNode,
    BlockView,
    ReasoningBlockView,
    TextBlockView,
    ToolCallBlockView,
    ToolData,
    TrajectoryAssistantData,
    TrajectoryTurnEndData,
    ViewNode,
    is_recorded_time,
)

__all__ = ["trajectory_rows", "context_rows", "chat_keys_by_seq", "full_text", "PREVIEW_CHARS"]

PREVIEW_CHARS = 4000
"""A context message's text is sent up to this many characters; the rest on request."""


def _v(value: Any) -> Any:
    return None if value is UNSET else value


def _span(start: Any, end: Any) -> int | None:
    return end - start if is_recorded_time(start) and is_recorded_time(end) and end >= start else None


def _usage(value: Any) -> dict[str, Any] | None:
    if type(value) is not dict:
        return None
    out = {k: value[k] for k in ("inputTokens", "outputTokens", "reasoningTokens", "cacheReadTokens")
           if type(value.get(k)) in (int, float)}
    return out or None


def _model(*sources: Any) -> str | None:
    for source in sources:
        if source is not UNSET and source is not None:
            model = getattr(source, "model", None)
            if type(model) is str and model:
                return model
    return None


def _summary(blocks: Sequence[BlockView]) -> str:
    for kind in (TextBlockView, ReasoningBlockView):
        for block in blocks:
            if type(block) is kind:
                line = first_line(block.text, 200)
                if line:
                    return line
    return ""


def _tool_calls(blocks: Sequence[BlockView], tools: Mapping[str, ViewNode]) -> list[dict[str, Any]]:
    out = []
    for block in blocks:
        if type(block) is not ToolCallBlockView:
            continue
        call_id = block.callId if type(block.callId) is str else None
        node = tools.get(call_id) if call_id is not None else None
        status = "streamed"
        ended = None
        if node is not None and type(node.data) is ToolData:
            data = node.data
            status = "error" if tool_error(data) else str(data.status)  # as the chat row says it
            if data.result is not UNSET and is_recorded_time(data.result.time):
                ended = data.result.time
        out.append({"name": block.name if type(block.name) is str else "tool", "callId": call_id, "status": status,
                    "key": None if node is None else node.key, "endedAt": ended})
    return out


def _turn_span(turn: TurnLocation | None) -> tuple[int, int] | None:
    if turn is None or turn.start is None or turn.end is None:
        return None
    start, end = turn.start.time, turn.end.time
    return (start, end) if _span(start, end) else None


def _scalar(value: Any) -> bool:
    """A turn or step number usable as a key (a malformed event may carry a list or an object there)."""
    return value is None or type(value) in (int, float, str, bool)


def _step_row(node: ViewNode, data: TrajectoryAssistantData, chat_steps: Mapping[tuple[Any, Any], str],
              tools: Mapping[str, ViewNode], turns: Mapping[Any, TurnLocation]) -> dict[str, Any]:
    request = data.request if data.request is not UNSET else None
    settled: AssistantNode | None = data.node if data.node is not UNSET else None
    blocks = settled.blocks if settled is not None else data.partial.blocks if data.partial is not None else []
    turn = request.turn if request is not None else settled.turn if settled is not None else node.location.turn
    step = request.step if request is not None else settled.step if settled is not None else node.location.step
    status = "complete" if settled is not None else "running"
    if request is not None:
        status = request.status
        if status == "complete" and request.error is not UNSET:
            status = "retried"
    elif settled is not None and settled.interrupted is True:
        status = "error"
    started = request.startedAt if request is not None else None
    completed = request.completedAt if request is not None else settled.time if settled is not None else None
    first_token = settled.timing.firstTokenTime if settled is not None and settled.timing is not UNSET else None
    row: dict[str, Any] = {
        "key": node.key, "kind": "step", "seq": node.anchorSeq, "turn": _v(turn), "step": _v(step), "status": status,
        "model": _model(request.provenance if request is not None else None,
                        settled.provenance if settled is not None else None),
        "ttftMs": _span(started, first_token), "durationMs": _span(started, completed),
        "tokens": _usage(request.usage if request is not None and request.usage is not UNSET else
                         settled.usage if settled is not None else None),
        "summary": _summary(blocks), "tools": _tool_calls(blocks, tools),
        "chatKey": chat_steps.get((turn, step)) if _scalar(turn) and _scalar(step) else None, "bar": None,
        # for the overview (browser/timeline.py): recorded times only
        "startedAt": started if is_recorded_time(started) else None,
        "endedAt": completed if is_recorded_time(completed) else None,
    }
    if request is not None and request.error is not UNSET:
        row["error"] = request.error
        if request.retry is not UNSET:
            row["retry"] = _v(request.retry)
    span = _turn_span(turns.get(turn)) if _scalar(turn) else None
    if span is not None and row["durationMs"] is not None:
        t0, t1 = span
        total = t1 - t0
        left = max(0, min(started - t0, total)) if type(started) is int else 0
        width = max(0, min(row["durationMs"], total - left))
        row["bar"] = {"left": left / total, "width": width / total}
    return row


_END_STATUS = {"completed": "complete", "aborted": "cancelled", "interrupted": "interrupted", "blocked": "blocked",
               "max-tokens": "max-tokens"}


def _end_status(turn: TurnLocation | None) -> str:
    """How the turn ended, as its ``turn/end`` reason says (PROTOCOL 1.2): a cancelled turn never reads complete."""
    data = turn.end.data if turn is not None and turn.end is not None else None
    reason = data.get("reason") if type(data) is dict else None
    kind = reason.get("kind") if type(reason) is dict else None
    return _END_STATUS.get(kind, "complete") if type(kind) is str else "complete"


def trajectory_rows(trajectory: Iterable[ViewNode], chat: Iterable[ViewNode],
                    turns: Mapping[Any, TurnLocation]) -> list[dict[str, Any]]:
    """The trajectory view's rows in display order (``trajectory`` ordered by anchor)."""
    chat_steps: dict[tuple[Any, Any], str] = {}
    tools: dict[str, ViewNode] = {}
    for n in chat:
        if n.kind == "assistant-step":
            chat_steps.setdefault((n.location.turn, n.location.step), n.key)
        elif n.kind == "tool" and type(n.id) is str:
            tools[n.id] = n
    rows: list[dict[str, Any]] = []
    for node in trajectory:
        data = node.data
        if type(data) is TrajectoryAssistantData:
            rows.append(_step_row(node, data, chat_steps, tools, turns))
        elif type(data) is TrajectoryTurnEndData:
            tl = turns.get(data.turn) if _scalar(data.turn) else None
            span = _turn_span(tl)
            rows.append({"key": node.key, "kind": "turn-end", "seq": node.anchorSeq, "turn": _v(data.turn),
                         "status": "error" if data.error is not UNSET else _end_status(tl),
                         "error": None if data.error is UNSET else data.error,
                         "durationMs": None if span is None else span[1] - span[0]})
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Model context


def chat_keys_by_seq(assembler: ConversationAssembler, chat: Mapping[str, ViewNode]) -> dict[int, str]:
    """For every scalar event the chat's Contexts matched, the key of the chat row it was folded into."""
    out: dict[int, str] = {}
    for ctx in assembler.contexts.values():
        if ctx.definition.target != "chat":
            continue
        key = ctx.key if ctx.key in chat else next((k for k in ctx.current if k in chat), None)
        if key is None:
            continue
        for m in ctx.matches:
            if not m.packed:
                out.setdefault(m.seq, key)
    return out


def _content_text(content: Any) -> str:
    if type(content) is str:
        return content
    if type(content) is not list:
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    parts = []
    for block in content:
        if type(block) is not dict:
            parts.append(json.dumps(block, ensure_ascii=False))
            continue
        btype = block.get("type")
        if btype in ("text", "reasoning") and type(block.get("text")) is str:
            parts.append(block["text"] if btype == "text" else f"[reasoning] {block['text']}")
        elif btype == "tool-call":
            args = block.get("input", block.get("arguments", block.get("args")))
            shown = args if type(args) is str else json.dumps(args, ensure_ascii=False)
            parts.append(f"[tool call {block.get('toolName', block.get('name', '?'))}] {shown}")
        elif btype == "tool-result":
            parts.append(f"[tool result] {_content_text(block.get('content', block.get('output')))}")
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)


def _message_value(event: Mapping[str, Any], links: Mapping[int, str],
                   message: Mapping[str, Any] | None = None) -> dict[str, Any]:
    if message is None:
        message = message_of(event)
    seq = event.get("seq")
    text = _content_text(message.get("content"))
    sources = event.get("sourceEventSeqs")
    cited = [s for s in sources if type(s) is int] if type(sources) is list else []
    keys: list[str] = []
    for s in [seq, *cited]:
        key = links.get(s) if type(s) is int else None
        if key is not None and key not in keys:
            keys.append(key)
    return {"seq": seq, "type": event.get("type"), "role": str(message.get("role", "?")),
            "text": text[:PREVIEW_CHARS], "chars": len(text), "links": keys, "sources": cited, "shadowed": []}


_TODO_STATES = frozenset({"pending", "in_progress", "completed"})


def latest_todos(entries: Sequence[Entry]) -> dict[str, Any] | None:
    """The last ``todo/write`` of the window as ``{seq, todos}`` (PROTOCOL 1.2; a malformed item is left out, an
    unknown status reads ``pending``), or None when the window holds none."""
    for entry in reversed(entries):
        if type(entry) is not EventRecord or entry.event.type != "todo/write":
            continue
        data = msgspec.to_builtins(entry.event.data)
        items = data.get("todos") if type(data) is dict else None
        todos = []
        for item in items if type(items) is list else []:
            if type(item) is dict and type(item.get("content")) is str:
                status = item.get("status")
                todos.append({"content": item["content"], "status": status if status in _TODO_STATES else "pending"})
        return {"seq": entry.event.seq, "todos": todos}
    return None


def surface_events(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """The window's surface-eligible events as plain dicts (what ``SurfaceManager`` folds)."""
    return [msgspec.to_builtins(e.event) for e in entries
            if type(e) is EventRecord and e.event.type in SURFACE_TYPES]


def context_rows(entries: Iterable[Entry], links: Mapping[int, str]) -> dict[str, Any]:
    """The model context of the window: ``{messages, problems}``. ``messages`` is ``derive_messages`` of the window's
    surface, each with the messages a compaction shadowed under it; ``problems`` lists the markers the window cannot
    fold (a replace whose range starts before the loaded window), by seq."""
    log: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    surface = SurfaceManager(log, on_invalid=lambda exc: problems.append({"seq": exc.seq, "reason": exc.reason}))
    shadowed: dict[int, list[dict[str, Any]]] = {}
    for event in surface_events(entries):
        try:
            gone = surface.check(event)
        except SurfaceError:
            gone = []
        if gone:
            shadowed[event["seq"]] = [_message_value(n.event, links) | {"shadowed": shadowed.get(n.seq, [])}
                                      for n in gone]
        log.append(event)
    messages = []
    nodes = list(surface)
    for node, message in zip(nodes, derive_messages(nodes), strict=True):
        value = _message_value(node.event, links, message)
        value["shadowed"] = shadowed.get(node.seq, [])
        messages.append(value)
    return {"messages": messages, "problems": problems}


def full_text(entries: Iterable[Entry], seq: int) -> str:
    """The whole text of the surface event ``seq`` of the window ("" when there is none)."""
    for event in surface_events(entries):
        if event.get("seq") == seq:
            return _content_text(message_of(event).get("content"))
    return ""
