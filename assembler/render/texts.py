"""What text a node holds: its sliceable text blocks, its short label, the text of content blocks, and the formatters
of times and counts the per-kind renderers share.

Rules: nodes are typed (``views.ViewNode`` whose ``data`` is the Struct of its kind); a node whose data is not the
Struct its kind names has no text blocks and a label from its kind, never an error. Raw JSON (an ``other`` block's
original value, the data of an unknown kind) is read by ``json_text``, which never raises either. Block order here
is the ``data-block`` index the page sends back. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from msgspec import UNSET

from ..jsontext import loads_text
from ..views import (
    ActivityData,
    AssistantStepData,
    BlockView,
    CommandData,
    CommandOutcome,
    CompactionData,
    ImageBlockView,
    InputMessageData,
    NoticeData,
    OtherBlockView,
    ReasoningBlockView,
    TextBlockView,
    ToolData,
    ViewNode,
)
from .images import image_label
from .markdown import HIGHLIGHT_LIMIT

__all__ = [
    "node_text_blocks",
    "node_label",
    "first_line",
    "blocks_text",
    "json_text",
    "tool_texts",
    "input_role",
    "input_text",
    "input_display_text",
    "command_texts",
    "clock_text",
    "duration_text",
    "think_split",
    "token_count_text",
    "plural",
    "usage_parts",
]

_SUMMARY_CHARS = 160


def think_split(text: str, limit: int = _SUMMARY_CHARS) -> tuple[str, int, bool]:
    """A Think row's title and where its body starts: ``(title, offset, continued)``. The title is the first
    non-blank line; when it fits, the body starts after it; when it does not, the title shows it up to a word
    boundary with "…" and the body goes on from there (``continued``), so no text is shown twice and none is lost."""
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    line = text[start:end].rstrip()
    if len(line) <= limit:
        return line, min(len(text), end + 1), False
    cut = line.rfind(" ", 0, limit - 1)
    if cut < limit // 2:
        cut = limit - 1
    return line[:cut].rstrip() + "…", start + cut, True


def first_line(text: str, limit: int = _SUMMARY_CHARS) -> str:
    """The first non-blank line of ``text``, stripped and cut to ``limit`` characters (ending in "…"): the pieces
    of ``text.split("\n", 20)``, found one by one, so a long text is not copied past its first non-blank line."""
    start = 0
    for _ in range(20):
        end = text.find("\n", start)
        if end < 0:
            break
        line = text[start:end].strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
        start = end + 1
    line = text[start:].strip()  # the last piece: the rest of the text
    return line if len(line) <= limit else line[: limit - 1] + "…"


def json_text(content: Any) -> str:
    """Plain text of raw JSON content: a string, a list of content blocks (wire ``type`` or view ``kind``), or an
    object holding ``blocks``/``content``/``text``."""
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
                    parts.append(json_text(block.get("content")))
                elif btype == "image":
                    parts.append(image_label(block.get("attachment")))
                elif btype == "other" and type(block.get("block")) is dict:
                    parts.append(json_text([block["block"]]))
            elif type(block) is str:
                parts.append(block)
        return "\n".join(parts)
    if type(content) is dict:
        for key in ("blocks", "content"):
            if key in content:
                return json_text(content[key])
        if type(content.get("text")) is str:
            return str(content["text"])
    return ""


def blocks_text(blocks: Any, *, images: bool = True) -> str:
    """Plain text of view blocks: text and reasoning, an image's label (``[image: image/png, 12 KB]``; left out with
    ``images=False``, where the HTML shows the image itself), an ``other`` block's raw text; tool calls give
    nothing."""
    if type(blocks) is not list:
        return ""
    parts = []
    for block in blocks:
        t = type(block)
        if t is TextBlockView or t is ReasoningBlockView:
            parts.append(block.text)
        elif t is ImageBlockView:
            if images:
                parts.append(image_label(block.attachment))
        elif t is OtherBlockView and type(block.block) is dict:
            parts.append(json_text([block.block]))
    return "\n".join(parts)


def _pretty_json(raw: Any) -> tuple[str, bool]:
    """``(text, is_json)``: a JSON string pretty-printed (2 spaces) when it parses, else the raw text."""
    if type(raw) is not str:
        return json.dumps(raw, ensure_ascii=False, indent=2), True
    if len(raw) > HIGHLIGHT_LIMIT:
        return raw, False
    try:
        return json.dumps(loads_text(raw), ensure_ascii=False, indent=2), True
    except ValueError:
        return raw, False


def tool_texts(data: ToolData) -> tuple[str, bool, str | None]:
    """``(arguments pretty-printed, arguments are JSON, result text or None)`` of a tool node's data."""
    args = data.arguments
    pretty, is_json = _pretty_json(args) if args not in (None, "") else ("", False)
    result = data.result
    return pretty, is_json, None if result is UNSET else blocks_text(result.blocks)


def input_role(data: InputMessageData) -> str:
    """An input message's role (``user``, ``steering``, ``context`` …); "user" when the data names none."""
    return data.kind if type(data.kind) is str and data.kind else "user"


def input_text(data: InputMessageData) -> str | None:
    """An input message's text, or None when its blocks hold no text at all."""
    text = blocks_text(data.blocks)
    return text if text or not data.blocks else None


def input_display_text(data: InputMessageData) -> str:
    """An input message's text as its row shows it: its images are shown beside it (``images.image_html``)."""
    return blocks_text(data.blocks, images=False)


def command_texts(data: CommandData) -> tuple[str, str | None]:
    """``(command line as typed, done text or None)`` of a command node's data; the line is "" when unknown."""
    line = data.input
    if type(line) is not str:
        line = f"/{data.name}" if type(data.name) is str else ""
    outcome = data.outcome
    text = outcome.text if type(outcome) is CommandOutcome else None
    return line, text if type(text) is str else None


def _assistant_blocks(blocks: Sequence[BlockView]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for block in blocks:
        t = type(block)
        if t is TextBlockView:
            out.append(("markdown", block.text))  # type: ignore[union-attr]
        elif t is ReasoningBlockView:
            out.append(("think", block.text))  # type: ignore[union-attr]
    return out


def node_text_blocks(node: ViewNode) -> list[tuple[str, str]]:
    """The node's sliceable text blocks: ``(kind, text)`` with kind ``markdown``, ``plain`` or ``think``. The
    ``data-block`` of "Show more" and of lazily opened sections indexes this list."""
    kind, data = node.kind, node.data
    t = type(data)
    if kind == "assistant-step" and t is AssistantStepData:
        return _assistant_blocks(data.blocks)
    if kind == "tool" and t is ToolData:
        pretty, _, result = tool_texts(data)
        return [("plain", pretty), ("plain", result or "")]
    if kind == "compaction" and t is CompactionData:
        summary = blocks_text(data.summary)
        return [("markdown", summary)] if summary else []
    if kind == "input-message" and t is InputMessageData:
        text = input_display_text(data)
        return [("markdown" if input_role(data) == "context" else "plain", text)]
    if kind == "command" and t is CommandData:
        line, output = command_texts(data)
        return [("plain", line), ("plain", output or "")]
    if t is ActivityData:
        return [("plain", "\n".join(x for x in (data.title, data.detail) if type(x) is str))]
    if t is NoticeData:
        return [("plain", "\n".join(x for x in (data.message, data.errorMessage) if type(x) is str and x))]
    return []


def node_label(node: ViewNode) -> str:
    """A short plain-text label for a node (used by placeholders and keyboard navigation)."""
    kind, data = node.kind, node.data
    t = type(data)
    if kind == "assistant-step" and t is AssistantStepData:
        for block in data.blocks:
            if type(block) is TextBlockView:
                line = first_line(block.text, 80)
                if line:
                    return line
        return "Assistant"
    if kind == "command" and t is CommandData:
        line, _ = command_texts(data)
        return first_line(line, 80) or "Command"
    if t is InputMessageData:
        text = input_text(data)
        if text:
            return first_line(text, 80)
    elif t is NoticeData:
        for text in (data.message, data.errorMessage):
            if type(text) is str and text:
                return first_line(text, 80)
    elif t is ActivityData:
        return first_line(data.title, 80)
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
    """A token count as "9,876", "12.3K" or "4.2M"; "?" when it is not a number."""
    if type(n) not in (int, float):
        return "?"
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.1f}K"
    return f"{n:,.0f}"


def plural(n: int, noun: str) -> str:
    """``"1 step"``, ``"3 steps"``, ``"1,204 history items"``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


_USAGE_LABELS = (("inputTokens", "Input"), ("outputTokens", "Output"), ("cacheReadTokens", "Cache read"),
                 ("cacheWriteTokens", "Cache write"), ("reasoningTokens", "Reasoning"))


def usage_parts(data: Any) -> list[str]:
    """Token usage of a turn tail (or a session summary) as labelled figures, any recorded subset: the tail's
    ``usage`` (as recorded) when present, else the strict ``tokenUsage``."""
    usage = getattr(data, "usage", UNSET)
    if usage is not UNSET and usage is not None:
        return [f"{label} {token_count_text(getattr(usage, f))} tok" for f, label in _USAGE_LABELS
                if type(getattr(usage, f, UNSET)) is int]
    strict = getattr(data, "tokenUsage", UNSET)
    if strict is UNSET or strict is None:
        return []
    out = [f"Input {token_count_text(strict.uncachedInputTokens)} tok",
           f"Output {token_count_text(strict.outputTokens)} tok"]
    for f, label in _USAGE_LABELS[2:]:
        if type(getattr(strict, f)) is int:
            out.append(f"{label} {token_count_text(getattr(strict, f))} tok")
    return out
