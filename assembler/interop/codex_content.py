"""What a Codex record's fields become in our event model (FORMATS.md §5.3, §5.7, §2.8): content parts as content
blocks, the kind of an injected context message (its ``form``), a tool output as the model saw it plus its ``meta``,
and token usage normalised to our disjoint ``TokenUsage``.

Rules: text is kept exactly as recorded (tool output envelopes included: the model saw them); only the text markers
Codex itself defines decide the kind of a context message (``_USER_MARKERS``, ``_DEVELOPER_MARKERS``, from the Codex
source's own contextual-message tests); an exit status comes only from a recorded field or the envelope's ``Process
exited with code N`` line. Pure and sans-I/O.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..tooltext import exit_code_of
from .codex_records import Part, TokenUsage

__all__ = ["blocks_of", "image_block", "context_form", "tool_output", "usage_of", "side_meta"]


def image_block(ref: str, *, local: bool = False) -> dict[str, Any]:
    """An ``image`` block for a data URL or URL (``input_image.image_url``, ``user_message.images``) or a local
    path (``local_images``); the media type of a data URL is kept beside it."""
    attachment: dict[str, Any] = {"path": ref} if local else {"url": ref}
    if not local and ref.startswith("data:"):
        media = ref[5:].split(";", 1)[0].split(",", 1)[0]
        if media:
            attachment["mediaType"] = media
    return {"type": "image", "attachment": attachment}


def blocks_of(parts: list[Part] | None, raw: Any, *, phase: str | None = None) -> list[dict[str, Any]]:
    """Content blocks of a message's parts: text parts as ``text`` (with the assistant ``phase``), images as
    ``image``, any other part passed through as recorded (``raw`` holds the parts as decoded)."""
    out: list[dict[str, Any]] = []
    raws = raw if type(raw) is list else []
    for i, part in enumerate(parts or ()):
        if part.type in ("input_text", "output_text", "text") and part.text is not None:
            block: dict[str, Any] = {"type": "text", "text": part.text}
            if phase is not None:
                block["phase"] = phase
            out.append(block)
        elif part.type == "input_image" and part.image_url is not None:
            out.append(image_block(part.image_url))
        elif i < len(raws) and type(raws[i]) is dict:
            out.append(raws[i])
    return out


def text_of(parts: list[Part] | None) -> str:
    """The text parts of a message joined (what its context markers are looked for in)."""
    return "".join(p.text for p in parts or () if p.text is not None)


# (marker at the start of the text, ignoring case and leading space) -> form
_USER_MARKERS: Final = (
    ("# agents.md instructions", "agents_md"),
    ("<environment_context>", "environment_context"),
    ("<user_instructions>", "user_instructions"),
    ("<skills_instructions>", "skills_instructions"),
    ("<skill>", "skill"),
    ("<user_shell_command>", "user_shell_command"),
    ("<subagent_notification>", "subagent_notification"),
    ("<turn_aborted>", "turn_aborted"),
    ("<context_update>", "context_update"),
    ("<instructions>", "instructions"),
)
_DEVELOPER_MARKERS: Final = (
    ("<permissions instructions>", "permissions"),
    ("<collaboration_mode>", "collaboration_mode"),
    ("<model_switch>", "model_switch"),
    ("<realtime_conversation>", "realtime_conversation"),
    ("<personality_spec>", "personality"),
    ("<environment_context>", "environment_context"),
)


def context_form(role: str, parts: list[Part] | None) -> str | None:
    """The form of an injected context message, or None for a user message without a context marker (a typed
    prompt's copy, or context whose marker was redacted: the caller decides by structure). Developer and system
    messages are always context."""
    text = text_of(parts).lstrip().lower()
    markers = _USER_MARKERS if role == "user" else _DEVELOPER_MARKERS
    for marker, form in markers:
        if text.startswith(marker):
            return form
    if role == "user":
        return None
    return role if role in ("developer", "system") else f"role:{role}"


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if type(value) is dict else None


def tool_output(output: str | list[dict[str, Any]] | dict[str, Any]) -> tuple[list[dict[str, Any]], bool, dict[str,
                                                                                                          Any]]:
    """``(content, isError, meta)`` of a ``*_output`` item. A JSON-string output ``{"output", "metadata"}`` shows
    ``output`` and puts ``metadata`` in ``meta`` (with its ``exit_code`` as ``exitCode``); a list of parts becomes
    text and image blocks; an older ``{content, success}`` object shows ``content`` (``success: false`` is an
    error). Any other text is shown as recorded, its envelope's exit status in ``meta``."""
    meta: dict[str, Any] = {}
    if type(output) is list:
        blocks: list[dict[str, Any]] = []
        for part in output:
            ptype = part.get("type")
            if ptype in ("input_text", "output_text", "text") and type(part.get("text")) is str:
                blocks.append({"type": "text", "text": part["text"]})
            elif ptype == "input_image" and type(part.get("image_url")) is str:
                blocks.append(image_block(part["image_url"]))
            else:
                blocks.append(part)
        return blocks, False, meta
    if type(output) is dict:
        content = output.get("content")
        error = output.get("success") is False
        if type(content) is str:
            return [{"type": "text", "text": content}], error, meta
        return [{"type": "text", "text": json.dumps(output, ensure_ascii=False)}], error, meta
    assert type(output) is str
    wrapped = _json_object(output)
    if wrapped is not None and type(wrapped.get("output")) is str and set(wrapped) <= {"output", "metadata"}:
        metadata = wrapped.get("metadata")
        if metadata is not None:
            meta["metadata"] = metadata
            code = metadata.get("exit_code") if type(metadata) is dict else None
            if type(code) is int:
                meta["exitCode"] = code
        return [{"type": "text", "text": wrapped["output"]}], False, meta
    code = exit_code_of(output)
    if code is not None:
        meta["exitCode"] = code
    return [{"type": "text", "text": output}], False, meta


# Fields of a completion event that repeat the output the model got (kept in the raw record, not copied to meta).
_REPEATS: Final = frozenset({"aggregated_output", "stdout", "stderr", "formatted_output", "type", "call_id"})
_META_KEY: Final = {"exec_command_end": "commandEnd", "patch_apply_end": "patchEnd", "web_search_end": "searchEnd"}


def side_meta(event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    """What a completion event (``exec_command_end``, ``patch_apply_end``, ``web_search_end``) adds to its
    result's ``meta``: the event's own fields under one key, and the command's ``exitCode``."""
    details = {k: v for k, v in payload.items() if k not in _REPEATS}
    meta: dict[str, Any] = {_META_KEY.get(event_type, event_type): details}
    if type(payload.get("exit_code")) is int:
        meta["exitCode"] = payload["exit_code"]
    return meta


def usage_of(usage: TokenUsage) -> dict[str, Any] | None:
    """Our disjoint ``TokenUsage`` from a Codex usage object (§2.8): cached input counted as cache reads,
    reasoning apart from output. None when the counts contradict themselves (more cached than input, more
    reasoning than output): no usage is better than a wrong one."""
    if usage.cached_input_tokens > usage.input_tokens or usage.reasoning_output_tokens > usage.output_tokens:
        return None
    out: dict[str, Any] = {"inputTokens": usage.input_tokens - usage.cached_input_tokens,
                           "outputTokens": usage.output_tokens - usage.reasoning_output_tokens,
                           "cacheReadTokens": usage.cached_input_tokens,
                           "reasoningTokens": usage.reasoning_output_tokens}
    return out
