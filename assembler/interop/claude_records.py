"""Claude Code session records as msgspec Structs (FORMATS §4.2), and the pure mappings of their parts onto ours:
content blocks, usage (§2.8), stop reasons, image attachments.

Rules: the envelope decodes into ``Record`` (every field optional but ``type``; unknown fields ignored, so a newer
CLI's additions pass); a field of another type than the one named here is a ``msgspec.ValidationError``, which the
line loader keeps as a raw record with a warning. Content blocks are validated by ``blocks`` before anything is
written (a record either maps whole or is refused whole): known block types become typed Structs, unknown ones stay
the decoded dicts and pass through. Pure.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec

__all__ = [
    "Usage",
    "Message",
    "Record",
    "TextBlock",
    "ThinkingBlock",
    "RedactedThinkingBlock",
    "ToolUseBlock",
    "ToolResultBlock",
    "ImageSource",
    "ImageBlock",
    "Block",
    "ToolResult",
    "Item",
    "DECODER",
    "blocks",
    "usage_of",
    "finish_of",
    "image_attachment",
    "PROVIDER",
    "PLACEHOLDER",
]

PROVIDER: Final = "anthropic"
PLACEHOLDER: Final = "(no content)"
"""An assistant text block whose whole text is this is a placeholder (FORMATS §4.4): kept raw, not shown."""


class Usage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class Message(msgspec.Struct):
    role: str | None = None
    id: str | None = None
    model: str | None = None
    content: str | list[dict[str, Any]] | None = None
    stop_reason: str | None = None
    usage: Usage | None = None


class Record(msgspec.Struct):
    """One line of a Claude Code session file: the envelope of every record type (FORMATS §4.2)."""

    type: str
    uuid: str | None = None
    parentUuid: str | None = None
    logicalParentUuid: str | None = None
    timestamp: str | None = None
    sessionId: str | None = None
    isSidechain: bool | None = None
    isMeta: bool | None = None
    isCompactSummary: bool | None = None
    isVisibleInTranscriptOnly: bool | None = None
    isApiErrorMessage: bool | None = None
    version: str | None = None
    cwd: str | None = None
    gitBranch: str | None = None
    agentId: str | None = None
    requestId: str | None = None
    message: Message | None = None
    toolUseResult: Any = None
    subtype: str | None = None
    content: Any = None  # system: a string; queue-operation: a string or blocks
    level: str | None = None
    durationMs: int | float | None = None
    compactMetadata: dict[str, Any] | None = None
    summary: str | None = None
    leafUuid: str | None = None
    customTitle: str | None = None
    aiTitle: str | None = None
    operation: str | None = None
    attachment: dict[str, Any] | None = None


DECODER: Final = msgspec.json.Decoder(Record)


class TextBlock(msgspec.Struct, tag="text", tag_field="type"):
    text: str


class ThinkingBlock(msgspec.Struct, tag="thinking", tag_field="type"):
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(msgspec.Struct, tag="redacted_thinking", tag_field="type"):
    data: str | None = None


class ToolUseBlock(msgspec.Struct, tag="tool_use", tag_field="type"):
    id: str
    name: str
    input: Any = None


class ImageSource(msgspec.Struct):
    type: str | None = None
    media_type: str | None = None
    data: str | None = None
    url: str | None = None


class ImageBlock(msgspec.Struct, tag="image", tag_field="type"):
    source: ImageSource


class ToolResultBlock(msgspec.Struct, tag="tool_result", tag_field="type"):
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


Block = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ImageBlock | ToolResultBlock
_KNOWN: Final = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "image", "tool_result"})


class ToolResult(NamedTuple):
    """A checked ``tool_result`` block: its content already as blocks (a string is one text block)."""

    tool_use_id: str
    content: list[Block | dict[str, Any]]
    is_error: bool


Item = Block | ToolResult | dict[str, Any]
"""A content block of a record as ``blocks`` gives it: typed when known, else the decoded dict."""


def _known(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return type(kind) is str and kind in _KNOWN


def _typed(value: dict[str, Any], where: str) -> Item:
    try:
        block: Block = msgspec.convert(value, Block)
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError(f"{exc} - at `{where}`") from None
    if type(block) is ToolResultBlock:
        inner = block.content
        content: list[Block | dict[str, Any]] = []
        if isinstance(inner, str):
            if inner:
                content.append(TextBlock(inner))
        elif inner is not None:
            for j, sub in enumerate(inner):
                item = _typed(sub, f"{where}.content[{j}]") if _known(sub) else sub
                if type(item) is ToolResult:  # a result inside a result: kept as the decoded dict
                    item = sub
                content.append(item)  # type: ignore[arg-type]
        return ToolResult(block.tool_use_id, content, bool(block.is_error))
    return block


def blocks(content: Any) -> list[Item]:
    """A message's content as blocks: a string is one text block; known block types are checked and typed (a
    ``tool_result`` with its content), others stay the decoded dicts (they pass through).

    Raises:
        msgspec.ValidationError: a known block with a field of the wrong type (the path names the block).
    """
    if content is None:
        return []
    if type(content) is str:
        return [TextBlock(content)]
    items: list[dict[str, Any]] = content
    return [_typed(block, f"$.message.content[{i}]") if _known(block) else block
            for i, block in enumerate(items)]


def usage_of(usage: Usage | None) -> dict[str, int] | None:
    """Our disjoint ``TokenUsage`` from an Anthropic usage (FORMATS §2.8): input excludes cache reads and writes
    already, so the fields map one to one. None when neither input nor output is recorded."""
    if usage is None or (usage.input_tokens is None and usage.output_tokens is None):
        return None
    out = {"inputTokens": usage.input_tokens or 0, "outputTokens": usage.output_tokens or 0}
    if usage.cache_read_input_tokens is not None:
        out["cacheReadTokens"] = usage.cache_read_input_tokens
    if usage.cache_creation_input_tokens is not None:
        out["cacheWriteTokens"] = usage.cache_creation_input_tokens
    return out


_FINISH: Final = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool-calls", "max_tokens": "max-tokens"}


def finish_of(stop_reason: str | None) -> dict[str, str] | None:
    """The finish reason of a recorded ``stop_reason``; None (no finish chunk) for null or a reason we do not map
    (``pause_turn``, ``refusal``: kept in the source record)."""
    kind = _FINISH.get(stop_reason) if stop_reason is not None else None
    return None if kind is None else {"kind": kind}


def _b64_bytes(data: str) -> int:
    """How many bytes a base64 string decodes to (without decoding it)."""
    n = len(data)
    pad = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
    return max(0, n * 3 // 4 - pad)


def image_attachment(source: ImageSource, attachment_id: str) -> dict[str, Any]:
    """Our ``ImageAttachmentRef`` for an image block: ``{attachmentId, mediaType?, bytes?, encoding?, data?, url?}``.

    Base64 data is kept (the same string, not a copy) only for an ``image/*`` media type, with ``encoding:'base64'``
    and its decoded size in ``bytes``, so a renderer can build a ``data:`` URL after its own checks (media type
    allow-list, size cap); any other media type keeps no data (``omitted: true``; the source record still has it).
    A ``url`` source is kept as it is: a renderer never loads it."""
    out: dict[str, Any] = {"attachmentId": attachment_id}
    if source.media_type is not None:
        out["mediaType"] = source.media_type
    if source.data is not None:
        if source.media_type is not None and source.media_type.startswith("image/"):
            out["bytes"] = _b64_bytes(source.data)
            out["encoding"] = "base64"
            out["data"] = source.data
        else:
            out["omitted"] = True
    if source.url is not None:
        out["url"] = source.url
    return out
