"""One chat node → HTML, one renderer per node kind, and the lazy pieces the page asks for later (a "Show more"
slice, a collapsed row's body).

Rules (DESIGN rules 7-8): every string is escaped or goes through ``markdown``; text goes through ``slices`` so it is
bounded; a collapsed row renders its body only when not ``lazy``. Unknown kinds, and any node whose data has an
unexpected shape, render as a generic row, never an error. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET

from ..views import (
    ActivityData,
    AssistantStepData,
    CommandData,
    CompactionData,
    EventData,
    ImageBlockView,
    InputMessageData,
    NodeDisplay,
    NoticeData,
    ReasoningBlockView,
    TextBlockView,
    ToolCallBlockView,
    ToolData,
    TurnTailData,
    ViewNode,
    is_recorded_time,
)
from .activity import activity_html, overflow_html
from .images import image_html
from .markdown import HIGHLIGHT_LIMIT, code_html, escape
from .slices import SLICE_CHARS, sliced
from .texts import (
    blocks_text,
    clock_text,
    command_texts,
    duration_text,
    first_line,
    input_display_text,
    input_role,
    json_text,
    node_text_blocks,
    plural,
    think_split,
    token_count_text,
    usage_parts,
)
from .toolrows import streamed_call_html, tool_row_html, tool_section_html

__all__ = [
    "render_node",
    "render_block_slice",
    "render_section",
]


_NO_DISPLAY = NodeDisplay()


# --- node renderers ----------------------------------------------------------------------------------------------

def think_body_offset(text: str) -> int:
    """Where a Think row's body starts (``texts.think_split``): the body never repeats what the title shows."""
    return think_split(text)[1]


def _think(key: str, block: int, text: str, *, limit: int | None, lazy: bool) -> str:
    shown, offset, continued = think_split(text)
    title = escape(shown) or "…"
    css = "think-body md think-continued" if continued else "think-body md"
    if lazy:
        body = f'<div class="{css}" data-think-block="{block}" data-pending="1"></div>'
    elif offset >= len(text):
        body = f'<div class="{css}"></div>'
    else:
        body = (f'<div class="{css}">'
                f'{sliced(text, markdown=True, key=key, block=block, offset=offset, limit=limit)}</div>')
    return (f'<details class="think" data-block="{block}"><summary><span class="row-label">Think</span> '
            f'<span class="think-title">{title}</span></summary>{body}</details>')


def _render_assistant(node: ViewNode, data: AssistantStepData, display: NodeDisplay, limit: int | None,
                      lazy: bool = True) -> str:
    key = node.key
    parts: list[str] = []
    text_index = 0
    for block in data.blocks:
        t = type(block)
        if t is TextBlockView:
            text = block.text  # type: ignore[union-attr]
            if text.strip():
                parts.append(f'<div class="assistant-text md">'
                             f'{sliced(text, markdown=True, key=key, block=text_index, limit=limit)}</div>')
            text_index += 1
        elif t is ReasoningBlockView:
            text = block.text  # type: ignore[union-attr]
            if text.strip():
                parts.append(_think(key, text_index, text, limit=limit, lazy=lazy))
            text_index += 1
        elif t is ToolCallBlockView:
            call_id = block.callId  # type: ignore[union-attr]
            if type(call_id) is str and type(display.hiddenCalls) is list and call_id in display.hiddenCalls:
                continue
            parts.append(streamed_call_html(block.name, block.argsRaw))  # type: ignore[union-attr]
        elif t is ImageBlockView:
            parts.append(image_html(block.attachment))  # type: ignore[union-attr]
        else:
            inner = getattr(block, "block", None)
            btype = inner.get("type") if type(inner) is dict else None
            parts.append(f'<div class="other-block">[{escape(btype or "content block")}]</div>')
    status = data.status
    if status == "interrupted" and display.quietInterruption is not True:
        parts.append('<p class="notice notice-interrupted">Interrupted</p>')
    elif status == "running":
        parts.append('<p class="notice notice-running" aria-label="streaming">…</p>')
    return "".join(parts)


def _render_turn_tail(node: ViewNode, data: TurnTailData, display: NodeDisplay, limit: int | None,
                      lazy: bool = True) -> str:
    """The end of a turn. Durations, TTFT and throughput only from recorded times (``is_recorded_time``); counts
    (steps, tool calls) always; token usage as recorded (any subset) and the model."""
    bits: list[str] = []
    end = data.time
    recorded = is_recorded_time(end)
    if recorded:
        bits.append(f'<span class="tail-clock">{clock_text(end)}</span>')
    start = display.turnStart if type(display.turnStart) is int else None
    if type(data.durationMs) in (int, float):  # the log records the turn's duration itself
        bits.append(f'<span class="tail-ran" title="as the log records it">Ran for {duration_text(data.durationMs)}'
                    '</span>')
    elif recorded and is_recorded_time(start) and end >= start:  # type: ignore[operator]  # both checked numbers
        bits.append(f'<span class="tail-ran">Ran for {duration_text(end - start)}</span>')  # type: ignore[operator]
    ttft = data.ttftMs if type(data.ttftMs) in (int, float) else data.turnTtftMs
    if type(ttft) in (int, float):
        bits.append(f'<span class="tail-ttft">TTFT {duration_text(ttft)}</span>')
    tps = data.tokensPerSecond
    if type(tps) in (int, float):
        bits.append(f'<span class="tail-tps">{tps:.1f} tok/s</span>')
    counts = []
    if type(data.steps) is int:
        counts.append(plural(data.steps, "step"))
    if type(data.toolCalls) is int and data.toolCalls:
        counts.append(plural(data.toolCalls, "tool call"))
    if counts:
        bits.append(f'<span class="tail-counts">{" · ".join(counts)}</span>')
    use = usage_parts(data)
    if use:
        bits.append(f'<span class="tail-usage">{escape(" · ".join(use))}</span>')
    if type(data.models) is list and data.models:
        bits.append(f'<span class="tail-model">{escape(", ".join(str(m) for m in data.models))}</span>')
    return f'<div class="turn-tail">{" ".join(bits)}</div>'


def _source_label(source: Any) -> str:
    if type(source) is not dict:
        return ""
    for key in ("plugin", "form", "name", "kind"):
        value = source.get(key)
        if type(value) is str and value:
            return value
    return ""


def _render_input(node: ViewNode, data: InputMessageData, display: NodeDisplay, limit: int | None,
                  lazy: bool = True) -> str:
    key = node.key
    role = input_role(data)
    text = input_display_text(data)
    images = "".join(image_html(b.attachment) for b in data.blocks if type(b) is ImageBlockView)
    if role == "context":
        who = _source_label(data.source)
        title = f'<span class="row-label">Context injection</span> <span class="context-source">{escape(who)}</span>'
        if lazy:
            body = '<div class="context-body md" data-think-block="0" data-pending="1"></div>' if text else ""
        else:
            body = (f'<div class="context-body md">{sliced(text, markdown=True, key=key, block=0, limit=limit)}'
                    "</div>") if text else ""
        return f'<details class="context" data-block="0"><summary>{title}</summary>{body}{images}</details>'
    label = "Steering" if role == "steering" else "User"
    clock = clock_text(data.time)
    stamp = f' <span class="message-clock">{clock}</span>' if clock else ""
    shown = sliced(text, markdown=False, key=key, block=0, limit=limit) if text or not images else ""
    return (f'<div class="user-message role-{escape(role)}"><div class="role-label">{label}{stamp}</div>'
            f'{shown}{images}</div>')


def _render_tool(node: ViewNode, data: ToolData, display: NodeDisplay, limit: int | None,
                 lazy: bool = True) -> str:
    return tool_row_html(node, data, limit, lazy)


def _notice(css: str, label: str, text: str) -> str:
    body = f' <span class="notice-text">{escape(text)}</span>' if text else ""
    return f'<div class="notice {css}"><span class="row-label">{escape(label)}</span>{body}</div>'


_ABORT_REASONS = {"user": "by the user", "parent": "by the parent agent", "disposed": "(session closed)",
                  "legacy": ""}


def _notice_message(data: NoticeData) -> str:
    return data.message if type(data.message) is str else ""


def _render_turn_notice(node: ViewNode, data: NoticeData, display: NodeDisplay, limit: int | None,
                        lazy: bool = True) -> str:
    kind = data.kind
    code = data.code
    if kind == "max-tokens":
        return _notice("notice-max-tokens", "Max tokens", "The response stopped at the output token limit.")
    if kind == "interrupted":
        reason = data.reason
        if type(reason) is dict:
            why = reason.get("reason") if reason.get("kind") == "hook" else _ABORT_REASONS.get(str(reason.get("kind")))
            text = " ".join(x for x in ("The turn was aborted", str(why or "")) if x) + "."
        else:
            text = "The turn was interrupted."
        return _notice("notice-interrupted", "Interrupted", text)
    if kind == "blocked":
        return _notice("notice-interrupted", "Blocked", "The turn was blocked.")
    label = "Error" + (f" ({code})" if type(code) is str and code else "")
    own = data.errorMessage if type(data.errorMessage) is str else ""
    return _notice("notice-error", label, _notice_message(data) or own or "The turn ended with an error.")


def _value(value: Any) -> Any:
    return None if value is UNSET else value


def _render_retry(node: ViewNode, data: NoticeData, display: NodeDisplay, limit: int | None,
                  lazy: bool = True) -> str:
    retry, max_retries = _value(data.retry), _value(data.maxRetries)
    count = f"attempt {retry}/{max_retries}" if retry is not None and max_retries is not None else (
        f"attempt {retry}" if retry is not None else "")
    delay = data.delayMs
    wait = f"after {duration_text(delay)}" if type(delay) in (int, float) else ""
    code = _value(data.code)
    failure = _notice_message(data)
    why = f"{code}: {failure}" if type(code) is str and code and failure else (failure or str(code or ""))
    text = " ".join(x for x in (count, wait, "—" if why else "", why) if x)
    return _notice("notice-retry", "Retrying", text)


def _render_record_notice(node: ViewNode, data: NoticeData, display: NodeDisplay, limit: int | None,
                          lazy: bool = True) -> str:
    """A raw record of another harness's log that its reader marked for the chat (a score, a queued prompt, a
    rewind): its text; the record type in a tooltip."""
    code = data.code if type(data.code) is str and data.code else ""
    html = _notice("notice-record", "Note", data.message if type(data.message) is str else "")
    return html.replace('<div class="notice notice-record">',
                        f'<div class="notice notice-record" title="{escape(code)}">', 1) if code else html


def _render_compaction(node: ViewNode, data: CompactionData, display: NodeDisplay, limit: int | None,
                       lazy: bool = True) -> str:
    rng = data.shadowedRange
    tokens = data.shadowedTokenCount
    count = None
    if type(rng) is dict and type(rng.get("start")) is int and type(rng.get("end")) is int:
        count = rng["end"] - rng["start"] + 1
    bits = [f"Compacted {plural(count, 'history item')}" if count is not None else
            ("Pruned history" if data.kind == "prune" else "Compacting history")]
    if type(tokens) in (int, float):
        bits.append(f"(~{token_count_text(tokens)} tokens)")
    status = data.status
    if status == "running":
        bits.append("…")
    error = data.error
    css = "notice-compaction"
    if status == "error":
        css += " notice-error"
        bits.append("failed" + (f": {error}" if type(error) is str else
                                f": {error.get('message')}" if type(error) is dict and error.get("message") else ""))
    head = _notice(css, "compact", " ".join(bits))
    summary = blocks_text(data.summary)
    if not summary:
        return head
    key = node.key
    if lazy:
        body = '<div class="context-body md" data-think-block="0" data-pending="1"></div>'
    else:
        body = f'<div class="context-body md">{sliced(summary, markdown=True, key=key, block=0, limit=limit)}</div>'
    return (f'{head}<details class="context" data-block="0"><summary><span class="row-label">Summary</span> '
            f'<span class="think-title">{escape(first_line(summary))}</span></summary>{body}</details>')


def _render_event(node: ViewNode, data: EventData, display: NodeDisplay, limit: int | None,
                  lazy: bool = True) -> str:
    return (f'<div class="event-row"><span class="row-label">{escape(data.type)}</span> '
            f'<code class="event-summary">{escape(data.summary)}</code></div>')


_COMMAND_STATUSES = frozenset({"running", "success", "error", "done"})


def _render_command(node: ViewNode, data: CommandData, display: NodeDisplay, limit: int | None,
                    lazy: bool = True) -> str:
    key = node.key
    line, output = command_texts(data)
    status = data.status if type(data.status) is str and data.status in _COMMAND_STATUSES else "done"
    if status == "error":
        badge = ' <span class="badge badge-error">Failed</span>'
    elif status == "running":
        badge = ' <span class="badge">running</span>'
    else:
        badge = ""
    if line:
        shown = f'<div class="command-line">{sliced(line, markdown=False, key=key, block=0, limit=limit)}</div>'
    else:  # the command/run is outside the loaded history: only its id is known
        shown = f'<span class="command-id">{escape(data.commandId)}</span>'
    head = (f'<div class="command-input" role="group" aria-label="Command input">'
            f'<span class="row-label command-label">Command</span>{badge}{shown}</div>')
    body = ""
    if output:
        body = (f'<div class="command-output">'
                f'{sliced(output, markdown=False, key=key, block=1, limit=limit)}</div>')
    return f'<div class="command-row command-{status}">{head}{body}</div>'


def _json_title(data: Any) -> str:
    """A title for raw node data: its input text (``blocks``/``text``/``content``/``message``), else its failure."""
    if type(data) is not dict:
        return ""
    for key in ("blocks", "text", "content", "message"):
        if key in data:
            value = data[key]
            if type(value) is dict and key == "message":
                value = value.get("content")
            text = json_text(value)
            if text or value == "" or value == []:
                if text:
                    return text
                break
    for key in ("message", "error", "failure"):
        value = data.get(key)
        if type(value) is str and value:
            return value
        if type(value) is dict:
            msg = value.get("message") or value.get("error")
            if type(msg) is str:
                return msg
    return ""


def _render_generic(node: ViewNode, data: Any, display: NodeDisplay, limit: int | None,
                    lazy: bool = True) -> str:
    """Any node the per-kind renderers do not take (unknown kind, unexpected data): its kind and its data as JSON."""
    value = msgspec.to_builtins(data)
    if type(value) is not dict:
        value = {}
    raw = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    title = first_line(_json_title(value), 120)
    body = code_html(raw if len(raw) <= HIGHLIGHT_LIMIT else raw[:HIGHLIGHT_LIMIT] + "\n…", "json")
    return (f'<details class="generic"><summary><span class="row-label">{escape(node.kind)}</span> '
            f'<span class="generic-title">{escape(title)}</span></summary>{body}</details>')


def _render_activity(node: ViewNode, data: ActivityData, display: NodeDisplay, limit: int | None,
                     lazy: bool = True) -> str:
    return activity_html(data)


def _render_overflow(node: ViewNode, data: NoticeData, display: NodeDisplay, limit: int | None,
                     lazy: bool = True) -> str:
    return overflow_html(data)


_Renderer = Callable[[ViewNode, Any, NodeDisplay, "int | None", bool], str]
_RENDERERS: dict[str, tuple[type, _Renderer]] = {
    "assistant-step": (AssistantStepData, _render_assistant),
    "turn-tail": (TurnTailData, _render_turn_tail),
    "input-message": (InputMessageData, _render_input),
    "tool": (ToolData, _render_tool),
    "turn-notice": (NoticeData, _render_turn_notice),
    "retry-notice": (NoticeData, _render_retry),
    "compaction": (CompactionData, _render_compaction),
    "command": (CommandData, _render_command),
    "event": (EventData, _render_event),
    "approval": (ActivityData, _render_activity),
    "goal": (ActivityData, _render_activity),
    "hook-block": (ActivityData, _render_activity),
    "subagent": (ActivityData, _render_activity),
    "overflow-notice": (NoticeData, _render_overflow),
    "record-notice": (NoticeData, _render_record_notice),
}
"""Node kind -> (the data Struct it must carry, its renderer)."""


def render_node(node: ViewNode, *, display: NodeDisplay | None = None, limit: int | None = SLICE_CHARS,
                lazy: bool = True) -> str:
    """The inner HTML of one chat node. ``limit`` bounds each text block (None renders everything); ``lazy``
    leaves collapsed bodies empty (``render_section`` fills them when opened)."""
    shown = display or _NO_DISPLAY
    turn = shown.turnHeading if type(shown.turnHeading) is int else None
    divider = "" if turn is None else (f'<div class="turn-divider" role="separator" aria-label="Turn {turn}">'
                                       f'<span>Turn {turn}</span></div>')
    entry = _RENDERERS.get(node.kind)
    if entry is None or type(node.data) is not entry[0]:
        return divider + _render_generic(node, node.data, shown, limit, lazy)
    try:
        return divider + entry[1](node, node.data, shown, limit, lazy)
    except (KeyError, TypeError, ValueError, AttributeError):
        # An unexpected value inside the data must never break the page: show it as data instead.
        return divider + _render_generic(node, node.data, shown, limit, lazy)


def render_block_slice(node: ViewNode, block: int, offset: int, *, limit: int = SLICE_CHARS) -> str:
    """The HTML of text block ``block`` of ``node`` from ``offset`` on (one slice, and "Show more" if needed)."""
    blocks = node_text_blocks(node)
    if not 0 <= block < len(blocks) or not 0 <= offset <= len(blocks[block][1]):
        return ""
    kind, text = blocks[block]
    return sliced(text, markdown=kind != "plain", key=node.key, block=block, offset=offset, limit=limit)


def render_section(node: ViewNode, section: int, *, limit: int = SLICE_CHARS) -> str:
    """The body of a collapsed row (Think, context injection, compaction summary, tool), rendered when opened.
    ``section`` is the row's ``data-block``."""
    if node.kind == "tool" and type(node.data) is ToolData:
        return tool_section_html(node, node.data, limit)
    blocks = node_text_blocks(node)
    offset = 0
    if 0 <= section < len(blocks) and blocks[section][0] == "think":
        offset = think_body_offset(blocks[section][1])
        if offset >= len(blocks[section][1]):
            return ""
    return render_block_slice(node, section, offset, limit=limit)
