"""View nodes → GitHub-flavoured Markdown: the ``export --format md`` document and the page's Markdown export.

Rules: a ``## Turn N`` heading opens each turn; ``### User`` / ``### Assistant`` headings before each run of user or
assistant rows; assistant text as the Markdown the model wrote; Think rows, context injections and tool calls as
``<details>`` blocks (tool arguments and results in fenced code whose fence is longer than any backtick run
inside); notices (errors, retries, interruptions, compaction, activity rows) as blockquotes; the turn tail as an
italic line with the same honest figures the page shows. Transcript text is untrusted: outside code, anything that
would open an HTML tag (``<x``, ``</x``, ``<!``, ``<?``) is escaped as ``&lt;``, and text inside ``<summary>`` is
HTML-escaped. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from ..views import (
    ActivityData,
    AssistantStepData,
    CommandData,
    CompactionData,
    InputMessageData,
    NodeDisplay,
    NoticeData,
    ReasoningBlockView,
    TextBlockView,
    ToolData,
    TurnTailData,
    ViewNode,
    hidden_by_default,
    is_recorded_time,
)
from .activity import activity_markdown
from .markdown import escape
from .texts import (
    blocks_text,
    command_texts,
    duration_text,
    input_role,
    input_text,
    plural,
    think_split,
    tool_texts,
    usage_parts,
)
from .toolbodies import tool_text_parts
from .toolrows import approval_text
from .tools import tool_summary

__all__ = ["render_markdown", "md_text", "fenced"]

_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def md_text(text: str) -> str:
    """Markdown text with raw HTML neutralised outside fenced code blocks and inline code spans."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m is not None and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m is not None:
            fence = m.group(1)
            out.append(line)
            continue
        parts = line.split("`")
        for i in range(0, len(parts), 2):  # even pieces are outside inline code spans
            parts[i] = _TAG_OPEN.sub("&lt;", parts[i])
        out.append("`".join(parts))
    return "\n".join(out)


def fenced(text: str, lang: str = "") -> str:
    """``text`` in a fenced code block whose fence is longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{escape(summary)}</summary>\n\n{body}\n\n</details>"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _tool(data: ToolData) -> str:
    pretty, is_json, result = tool_texts(data)
    summary = tool_summary(data.name, data.arguments)
    error = data.status in ("error", "failed") or (data.result is not UNSET and data.result.isError)
    if error:
        summary += " (failed)"
    elif data.status in ("running", "interrupted"):
        summary += f" ({data.status})"
    parts = []
    asked = approval_text(data)
    if asked is not None:
        summary += " (needed approval)"
        parts.append(md_text(asked))
    by_kind = tool_text_parts(data, result, error=error)
    if by_kind is not None:
        for label, text, lang in by_kind:
            body = md_text(text) if lang in ("list", "markdown") else fenced(text, lang)
            parts.append(f"{label}:\n\n{body}")
        return _details(summary, "\n\n".join(parts))
    if pretty:
        parts.append("Arguments:\n\n" + fenced(pretty, "json" if is_json else ""))
    if data.subcalls is not UNSET and data.subcalls:
        calls = "\n".join(f"- {md_text(tool_summary(c.name, c.arguments))} ({c.status})" for c in data.subcalls)
        parts.append("Nested calls:\n\n" + calls)
    if result is not None:
        parts.append(("Error:" if error else "Result:") + "\n\n" + fenced(result))
    return _details(summary, "\n\n".join(parts) or "(no arguments)")


def _assistant(data: AssistantStepData) -> str:
    parts = []
    for block in data.blocks:
        if type(block) is TextBlockView and block.text.strip():
            parts.append(md_text(block.text.strip("\n")))
        elif type(block) is ReasoningBlockView and block.text.strip():
            title, offset, continued = think_split(block.text)
            rest = block.text[offset:].strip("\n")
            parts.append(_details(f"Think: {title}", md_text(("…" if continued else "") + rest) if rest else ""))
    if data.status == "interrupted":
        parts.append(_quote("**Interrupted**"))
    return "\n\n".join(parts)


def _notice(node: ViewNode) -> str:
    data = node.data
    t = type(data)
    if t is NoticeData:
        label = {"turn-error": "Error", "max-tokens": "Max tokens", "interrupted": "Interrupted",
                 "blocked": "Blocked", "retry": "Retrying", "context-overflow": "Context overflow",
                 "record": "Note"}.get(data.kind, data.kind)
        if type(data.code) is str and data.code and data.kind != "record":
            label += f" ({data.code})"
        message = data.message if type(data.message) is str and data.message else ""
        if not message and type(data.errorMessage) is str:
            message = data.errorMessage
        return _quote(f"**{label}**" + (f" {md_text(message)}" if message else ""))
    if t is CompactionData:
        rng = data.shadowedRange
        count = None
        if type(rng) is dict and type(rng.get("start")) is int and type(rng.get("end")) is int:
            count = rng["end"] - rng["start"] + 1
        text = f"Compacted {plural(count, 'history item')}" if count is not None else "Compacted history"
        summary = blocks_text(data.summary)
        body = _quote(f"**Compaction** {text}")
        return body + ("\n\n" + _details("Summary", md_text(summary)) if summary else "")
    return ""


def _tail(data: TurnTailData, display: NodeDisplay | None) -> str:
    bits = []
    start = display.turnStart if display is not None else UNSET
    if type(data.steps) is int:
        bits.append(plural(data.steps, "step"))
    if type(data.toolCalls) is int and data.toolCalls:
        bits.append(plural(data.toolCalls, "tool call"))
    if type(data.durationMs) in (int, float):
        bits.append(f"Ran for {duration_text(data.durationMs)}")
    elif type(start) is int and is_recorded_time(start) and is_recorded_time(data.time) and data.time >= start:
        bits.append(f"Ran for {duration_text(data.time - start)}")  # the same figure the page shows
    ttft = data.ttftMs if type(data.ttftMs) in (int, float) else data.turnTtftMs
    if type(ttft) in (int, float):
        bits.append(f"TTFT {duration_text(ttft)}")
    bits.extend(usage_parts(data))
    if type(data.models) is list and data.models:
        bits.append(", ".join(str(m) for m in data.models))
    return f"_{' · '.join(bits)}_" if bits else ""


def _generic(node: ViewNode) -> str:
    value = msgspec.to_builtins(node.data)
    return _details(node.kind, fenced(json.dumps(value, ensure_ascii=False, indent=2, default=str), "json"))


def render_markdown(nodes: Iterable[ViewNode], *, title: str, displays: Mapping[str, NodeDisplay] | None = None,
                    banner: str = "") -> str:
    """A whole transcript as GitHub-flavoured Markdown (hidden rows left out), each node with the display the
    assembler decided for it (``displays``: the turn start for "Ran for")."""
    shown = displays or {}
    out = [f"# {md_text(title)}"]
    if banner:
        out.append(_quote(f"**Note:** {md_text(banner)}"))
    turn: Any = None
    speaker = ""
    for node in nodes:
        if hidden_by_default(node):
            continue
        nturn = node.location.turn
        if type(nturn) is int and nturn != turn:
            turn = nturn
            out.append(f"## Turn {turn}")
            speaker = ""
        data = node.data
        kind = node.kind
        block = ""
        if kind == "input-message" and type(data) is InputMessageData:
            role = input_role(data)
            text = input_text(data) or ""
            if role == "context":
                block = _details("Context injection", md_text(text))
            else:
                who = "Steering" if role == "steering" else "User"
                if speaker != who:
                    out.append(f"### {who}")
                    speaker = who
                block = md_text(text)
        elif kind == "assistant-step" and type(data) is AssistantStepData:
            block = _assistant(data)
            if block and speaker != "Assistant":
                out.append("### Assistant")
                speaker = "Assistant"
        elif kind == "tool" and type(data) is ToolData:
            if speaker != "Assistant":
                out.append("### Assistant")
                speaker = "Assistant"
            block = _tool(data)
        elif kind == "command" and type(data) is CommandData:
            line, output = command_texts(data)
            out.append("### Command")
            speaker = "Command"
            block = fenced(line or f"/{data.commandId}") + (f"\n\n{fenced(output)}" if output else "")
        elif kind == "turn-tail" and type(data) is TurnTailData:
            block = _tail(data, shown.get(node.key))
        elif type(data) in (NoticeData, CompactionData):
            block = _notice(node)
        elif type(data) is ActivityData:
            block = _quote(md_text(activity_markdown(data)))
        else:
            block = _generic(node)
        if block:
            out.append(block)
    return "\n\n".join(out) + "\n"
