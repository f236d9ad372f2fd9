"""What text a node holds: its sliceable text blocks, its short label, and the readers of node data (and the
formatters of its times and counts) the per-kind renderers share.

Rules: nodes arrive as plain dicts (the JSON form of a ``ViewNode``) of any shape; readers never raise on an
unexpected shape, they return "" or None. Block order here is the ``data-block`` index the page sends back. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .markdown import HIGHLIGHT_LIMIT

__all__ = [
    "node_text_blocks",
    "node_label",
    "node_data",
    "first_line",
    "content_text",
    "tool_call",
    "tool_texts",
    "input_role",
    "input_text",
    "failure_text",
    "command_texts",
    "clock_text",
    "duration_text",
    "token_count_text",
]

_SUMMARY_CHARS = 160


def first_line(text: str, limit: int = _SUMMARY_CHARS) -> str:
    """The first non-blank line of ``text``, stripped and cut to ``limit`` characters (ending in "…")."""
    for line in text.split("\n", 20):
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def content_text(content: Any) -> str:
    """Plain text of a content value: a string, a list of content blocks (wire ``type`` or view ``kind``), or a
    tool result holding either."""
    if type(content) is str:
        return content
    if type(content) is list:
        parts = []
        for block in content:
            if type(block) is dict:
                btype = block.get("type", block.get("kind"))
                if btype in ("text", "reasoning") and type(block.get("text")) is str:
                    parts.append(block["text"])
                elif btype == "tool-result":
                    parts.append(content_text(block.get("content")))
                elif btype == "image":
                    parts.append("[image]")
                elif btype == "other" and type(block.get("block")) is dict:
                    parts.append(content_text([block["block"]]))
            elif type(block) is str:
                parts.append(block)
        return "\n".join(parts)
    if type(content) is dict:
        for key in ("blocks", "content"):
            if key in content:
                return content_text(content[key])
        if type(content.get("text")) is str:
            return str(content["text"])
    return ""


def _pretty_json(raw: Any) -> tuple[str, bool]:
    """``(text, is_json)``: a JSON string pretty-printed (2 spaces) when it parses, else the raw text."""
    if type(raw) is not str:
        return json.dumps(raw, ensure_ascii=False, indent=2), True
    if len(raw) > HIGHLIGHT_LIMIT:
        return raw, False
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False, indent=2), True
    except ValueError:
        return raw, False


def node_data(node: Mapping[str, Any]) -> dict[str, Any]:
    """The node's ``data`` (an empty dict when it is missing or not a dict)."""
    data = node.get("data")
    return data if type(data) is dict else {}


def tool_call(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The call part of a tool node's data (the data itself when it holds no ``call`` dict)."""
    call = data.get("call")
    return call if type(call) is dict else data


def tool_texts(data: Mapping[str, Any]) -> tuple[str, bool, str | None]:
    """``(arguments pretty-printed, arguments are JSON, result text or None)`` of a tool node's data."""
    call = tool_call(data)
    args = call.get("arguments", call.get("argsRaw", call.get("args")))
    pretty, is_json = _pretty_json(args) if args not in (None, "") else ("", False)
    result = data.get("result")
    text = None if result is None else (result if type(result) is str else content_text(result))
    return pretty, is_json, text


def node_text_blocks(node: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The node's sliceable text blocks: ``(kind, text)`` with kind ``markdown``, ``plain`` or ``think``. The
    ``data-block`` of "Show more" and of lazily opened sections indexes this list."""
    kind = node.get("kind")
    data = node_data(node)
    if kind == "assistant-step":
        out: list[tuple[str, str]] = []
        for block in data.get("blocks") or []:
            if type(block) is not dict:
                continue
            bkind = block.get("kind")
            text = block.get("text")
            if bkind == "text" and type(text) is str:
                out.append(("markdown", text))
            elif bkind == "reasoning" and type(text) is str:
                out.append(("think", text))
        return out
    if kind == "tool":
        pretty, _, result = tool_texts(data)
        return [("plain", pretty), ("plain", result or "")]
    if kind == "compaction":
        summary = content_text(data.get("summary"))
        return [("markdown", summary)] if summary else []
    if kind == "input-message":
        text = input_text(data) or ""
        return [("markdown" if input_role(data) == "context" else "plain", text)]
    if kind == "command":
        line, output = command_texts(data)
        return [("plain", line), ("plain", output or "")]
    return []


def input_role(data: Mapping[str, Any]) -> str:
    """An input message's role (``user``, ``steering``, ``context`` …); "user" when the data names none."""
    role = data.get("role") or data.get("kind") or data.get("variant")
    return role if type(role) is str else "user"


def input_text(data: Mapping[str, Any]) -> str | None:
    """An input message's text, or None when its data holds no text field."""
    for key in ("blocks", "text", "content", "message"):
        if key in data:
            value = data[key]
            if type(value) is dict and key == "message":
                value = value.get("content")
            text = content_text(value)
            if text or value == "" or value == []:
                return text
    return None


def failure_text(data: Mapping[str, Any]) -> str:
    """The error message in a notice's data ("" when there is none)."""
    for key in ("message", "error", "failure"):
        value = data.get(key)
        if type(value) is str and value:
            return value
        if type(value) is dict:
            msg = value.get("message") or value.get("error")
            if type(msg) is str:
                return msg
    return ""


def command_texts(data: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(command line as typed, done text or None)`` of a command node's data; the line is "" when unknown."""
    line = data.get("input")
    if type(line) is not str:
        name = data.get("name")
        line = f"/{name}" if type(name) is str else ""
    outcome = data.get("outcome")
    text = outcome.get("text") if type(outcome) is dict else None
    return line, text if type(text) is str else None


def node_label(node: Mapping[str, Any]) -> str:
    """A short plain-text label for a node (used by placeholders and keyboard navigation)."""
    kind = str(node.get("kind", ""))
    data = node_data(node)
    if kind == "assistant-step":
        for block in data.get("blocks") or []:
            if type(block) is dict and block.get("kind") == "text" and type(block.get("text")) is str:
                line = first_line(block["text"], 80)
                if line:
                    return line
        return "Assistant"
    if kind == "command":
        line, _ = command_texts(data)
        return first_line(line, 80) or "Command"
    text = input_text(data)
    if text:
        return first_line(text, 80)
    return kind


def clock_text(ms: Any) -> str:
    """``HH:MM:SS`` (UTC) of a time in epoch milliseconds; "" for a missing or impossible time."""
    if type(ms) not in (int, float) or ms <= 0:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def duration_text(ms: Any) -> str:
    """A duration in milliseconds as "850 ms", "4.2 s", "3m 07s" or "1h 02m"; "" when it is not a duration."""
    if type(ms) not in (int, float) or ms < 0:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def token_count_text(n: Any) -> str:
    """A token count as "9,876" or "12.3K"; "?" when it is not a number."""
    if type(n) not in (int, float):
        return "?"
    if n >= 10_000:
        return f"{n / 1000:.1f}K"
    return f"{n:,.0f}"
