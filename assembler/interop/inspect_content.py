"""How the parts of an Inspect message become ours (FORMATS.md §6.2-6.4): content blocks, images, tool calls,
token usage, finish reasons, and the text of the notices that show scores, targets, limits and errors.

Rules: ``text`` -> text, ``reasoning`` -> reasoning (redacted: a placeholder, the summary when there is one),
``image`` -> an image block whose ``attachment`` names the image (its reference, its URL, or the JSON pointer of an
inline data URL) with its media type and decoded size, and carries the data URL itself only up to
``MEDIA_INLINE_MAX`` characters; any other block type (``audio``, ``video``, ``document``, ``data``, ``tool_use``
and those still to come) passes through with its references resolved (media data URLs stay references).
Tool-call arguments stored as an object are serialised once (``json_args``), a string is kept as written. Usage is
normalised into our disjoint ``TokenUsage`` from the recorded totals (§6.4). Every refused block is a warning and
stays in the source record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from .base import json_args, json_type
from .inspect_attachments import MEDIA_INLINE_MAX, Attachments, is_data_url
from .inspect_records import ImageRec, ReasoningRec, Refusal, TextRec, ToolCallRec, UsageRec, convert_at

__all__ = [
    "REDACTED",
    "Warn",
    "content_blocks",
    "image_block",
    "tool_call_block",
    "token_usage",
    "finish_reason",
    "value_text",
    "score_text",
    "provider_model",
]

Warn = Callable[[str, str], None]
"""``warn(pointer, message)``: record a warning about the value at ``pointer``."""

REDACTED: Final = "[reasoning redacted by the provider]"

_DATA_URL: Final = re.compile(r"data:([^;,]*)((?:;[^;,]*)*),")


def content_blocks(content: Any, ptr: str, att: Attachments, warn: Warn, *, keep_empty: bool) -> list[dict[str, Any]]:
    """Our blocks for a message's ``content`` (a string or a list of Inspect content parts). An empty string gives
    one empty text block when ``keep_empty`` (a prompt), none otherwise (an assistant turn of tool calls only)."""
    if type(content) is str:
        text = att.text(content, ptr)
        return [{"type": "text", "text": text}] if text or keep_empty else []
    blocks: list[dict[str, Any]] = []
    for i, part in enumerate(content):
        here = f"{ptr}/{i}"
        block = _block(part, here, att, warn)
        if block is not None:
            blocks.append(block)
    return blocks


def _block(part: Any, ptr: str, att: Attachments, warn: Warn) -> dict[str, Any] | None:
    if type(part) is not dict or type(part.get("type")) is not str:
        warn(ptr, f"content part is {json_type(part)} without a string type; not shown (kept in the source record)")
        return None
    ptype = part["type"]
    if ptype == "text":
        text = convert_at(part, TextRec, ptr)
        if isinstance(text, Refusal):
            warn(text.pointer, f"text part not understood ({text.reason}); not shown")
            return None
        return {"type": "text", "text": att.text(text.text, ptr + "/text")}
    if ptype == "reasoning":
        reasoning = convert_at(part, ReasoningRec, ptr)
        if isinstance(reasoning, Refusal):
            warn(reasoning.pointer, f"reasoning part not understood ({reasoning.reason}); not shown")
            return None
        if reasoning.redacted:
            summary = att.text(reasoning.summary, ptr + "/summary") if reasoning.summary else ""
            return {"type": "reasoning", "text": f"{REDACTED}\n\n{summary}" if summary else REDACTED,
                    "redacted": True}
        return {"type": "reasoning", "text": att.text(reasoning.reasoning, ptr + "/reasoning")}
    if ptype == "image":
        image = convert_at(part, ImageRec, ptr)
        if isinstance(image, Refusal):
            warn(image.pointer, f"image part not understood ({image.reason}); not shown")
            return None
        return image_block(image.image, image.detail, ptr + "/image", att)
    resolved: dict[str, Any] = att.resolve(part, ptr)
    return resolved


def image_block(image: str, detail: str | None, ptr: str, att: Attachments) -> dict[str, Any]:
    """An image block for Inspect's ``image`` value at ``ptr``: a reference, a data URL or a URL."""
    ref = att.hash_of(image)
    url: str | None = image
    attachment: dict[str, Any] = {}
    if ref is not None:
        attachment["attachmentId"] = image
        url = att.lookup(image, ptr)
    elif is_data_url(image):
        attachment["attachmentId"] = f"inspect:{ptr}"
    else:
        attachment["attachmentId"] = image
    if url is not None and is_data_url(url):
        found = _DATA_URL.match(url)
        if found is not None:
            if found.group(1):
                attachment["mediaType"] = found.group(1)
            if ";base64" in found.group(2):
                body = len(url) - found.end()
                pad = 2 if url.endswith("==") else 1 if url.endswith("=") else 0
                attachment["bytes"] = max(0, body * 3 // 4 - pad)
        if len(url) > MEDIA_INLINE_MAX:
            attachment["omitted"] = f"data URL of {len(url)} characters (over {MEDIA_INLINE_MAX}); kept in the source"
            url = None
    if url is not None:
        attachment["url"] = url
    if detail is not None:
        attachment["detail"] = detail
    return {"type": "image", "attachment": attachment}


def tool_call_block(call: ToolCallRec, ptr: str, att: Attachments) -> dict[str, Any]:
    """The ``tool-call`` block of one Inspect tool call (arguments serialised once, FORMATS §2.5)."""
    args = call.arguments
    if type(args) is str:
        arguments = args
    else:
        arguments = json_args(att.resolve(args, ptr + "/arguments") if args is not None else {})
    return {"type": "tool-call", "id": call.id, "name": call.function, "arguments": arguments}


def token_usage(usage: UsageRec, ptr: str, warn: Warn) -> dict[str, Any] | None:
    """Our disjoint ``TokenUsage`` from a model call's ``ModelUsage``, read as its recorded total says (§6.4)."""
    inp, out, total = usage.input_tokens, usage.output_tokens, usage.total_tokens
    cr = usage.input_tokens_cache_read or 0
    cw = usage.input_tokens_cache_write or 0
    rs = usage.reasoning_tokens or 0
    if min(inp, out, total, cr, cw, rs) < 0:
        warn(ptr, "negative token count; no usage shown for this step")
        return None
    caches = cr + cw
    # (caches inside input_tokens, reasoning inside output_tokens), tried in this order
    readings = ((False, True), (False, False), (True, True), (True, False))
    for inside, reasoning_inside in readings:
        if (inside and not caches) or (not reasoning_inside and not rs):
            continue
        expected = inp + out + (0 if inside else caches) + (0 if reasoning_inside else rs)
        if total == expected:
            break
    else:
        inside, reasoning_inside = False, True  # how recent versions write it
        if total:
            warn(ptr, f"total_tokens {total} matches no reading of the counts; read as separate cache counts "
                      "with reasoning inside output_tokens")
    input_tokens = inp - caches if inside else inp
    output_tokens = out - rs if reasoning_inside else out
    if input_tokens < 0 or output_tokens < 0:
        warn(ptr, "cache or reasoning counts exceed the totals they are part of; read as separate counts")
        input_tokens, output_tokens = inp, out
    result: dict[str, Any] = {"inputTokens": input_tokens, "outputTokens": output_tokens}
    if usage.input_tokens_cache_read is not None:
        result["cacheReadTokens"] = cr
    if usage.input_tokens_cache_write is not None:
        result["cacheWriteTokens"] = cw
    if usage.reasoning_tokens is not None:
        result["reasoningTokens"] = rs
    return result


_FINISH: Final[dict[str, dict[str, Any]]] = {
    "stop": {"kind": "stop"},
    "tool_calls": {"kind": "tool-calls"},
    "max_tokens": {"kind": "max-tokens"},
    "model_length": {"kind": "max-tokens"},
}


def finish_reason(stop_reason: str | None, error: str | None) -> dict[str, Any] | None:
    """Our ``FinishReason`` for a model call's ``stop_reason`` (None: ``unknown`` or not recorded)."""
    if error:
        return {"kind": "error", "error": {"message": error, "code": "model-error"}}
    if stop_reason is None:
        return None
    found = _FINISH.get(stop_reason)
    if found is not None:
        return dict(found)
    if stop_reason == "content_filter":
        return {"kind": "error", "error": {"message": "the provider's content filter stopped the response",
                                           "code": "content_filter"}}
    return None


def value_text(value: Any) -> str:
    """A score value, answer or target as one line of text."""
    if type(value) is str:
        return value
    if type(value) is list and all(type(v) is str for v in value):
        return ", ".join(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return repr(value)


def score_text(label: str, value: Any, answer: Any, explanation: Any) -> str:
    """``Score <label>: <value> (answer: …) — <explanation>``."""
    text = f"{label}: {value_text(value)}"
    if answer is not None:
        text += f" (answer: {value_text(answer)})"
    if explanation is not None and explanation != "":
        text += f" — {value_text(explanation)}"
    return text


def provider_model(name: str | None) -> tuple[str | None, str | None]:
    """``openai/gpt-4o`` -> (``openai``, ``gpt-4o``); a name without a provider -> (None, name)."""
    if not name:
        return None, None
    provider, sep, model = name.partition("/")
    return (provider, model) if sep and provider and model else (None, name)
