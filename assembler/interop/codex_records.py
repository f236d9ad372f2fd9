"""The records of an OpenAI Codex rollout (FORMATS.md §5.2) as msgspec Structs, and the one function that turns a
decoded line into what it is: ``classify``.

Rules: a line of 0.4x and later is an envelope ``{timestamp, type, payload}``; before 0.4x the first line is a bare
SessionMeta and the others are bare ResponseItems or ``{"record_type":"state"}``. A payload is validated against the
Struct its ``(type, payload.type)`` names in ``_TABLE``; a type the table does not name is an unknown record (kept
raw, no warning: Codex adds record types). Structs never forbid unknown fields (a newer Codex adds them); a field of
the wrong type raises ``msgspec.ValidationError`` whose path starts at the line (``$.payload...``), so the loader
keeps the line raw with a warning naming the field. Pure and sans-I/O.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec

from ..jsontext import convert

__all__ = [
    "Part",
    "Message",
    "Reasoning",
    "FunctionCall",
    "CustomToolCall",
    "LocalShellCall",
    "WebSearchCall",
    "ToolOutput",
    "SessionMeta",
    "TurnContext",
    "Compacted",
    "UserMessage",
    "AgentText",
    "TaskStarted",
    "TaskComplete",
    "TurnAborted",
    "TokenCount",
    "TokenUsage",
    "ToolEnd",
    "ThreadName",
    "Notice",
    "Kind",
    "classify",
    "is_tui_recording",
]

Count = Annotated[int, msgspec.Meta(ge=0)]


class _Record(msgspec.Struct, frozen=True, kw_only=True):
    """A source record: unknown fields are ignored, never refused (schemas grow by adding fields)."""


# -- response items ----------------------------------------------------------------------------------------------

class Part(_Record, frozen=True):
    """One content part: ``input_text``/``output_text`` (``text``), ``input_image`` (``image_url``), others kept."""

    type: str
    text: str | None = None
    image_url: str | None = None


class Message(_Record, frozen=True):
    role: str
    content: list[Part] | None = None
    phase: str | None = None
    id: str | None = None


class SummaryPart(_Record, frozen=True):
    type: str = "summary_text"
    text: str = ""


class Reasoning(_Record, frozen=True):
    summary: list[SummaryPart] | None = None
    content: list[Part] | None = None
    encrypted_content: str | None = None
    id: str | None = None


class FunctionCall(_Record, frozen=True):
    name: str
    arguments: str
    call_id: str
    namespace: str | None = None
    id: str | None = None


class CustomToolCall(_Record, frozen=True):
    name: str
    input: str
    call_id: str
    status: str | None = None
    id: str | None = None


class LocalShellCall(_Record, frozen=True):
    action: dict[str, Any]
    call_id: str | None = None
    id: str | None = None
    status: str | None = None


class WebSearchCall(_Record, frozen=True):
    action: dict[str, Any] | None = None
    call_id: str | None = None
    id: str | None = None
    status: str | None = None


class ToolOutput(_Record, frozen=True):
    """``function_call_output`` / ``custom_tool_call_output`` / ``local_shell_call_output``: a string (the common
    case), a list of content parts (images from MCP tools), or an older ``{content, success}`` object."""

    call_id: str
    output: str | list[dict[str, Any]] | dict[str, Any]


# -- other envelope types -------------------------------------------------------------------------------------

class BaseInstructions(_Record, frozen=True):
    text: str | None = None


class SessionMeta(_Record, frozen=True):
    """``session_meta`` (and the bare first line before 0.4x: ``id``, ``timestamp``, ``instructions``, ``git``)."""

    id: str
    timestamp: str | None = None
    cwd: str | None = None
    originator: str | None = None
    cli_version: str | None = None
    source: str | dict[str, Any] | None = None
    model_provider: str | None = None
    model: str | None = None
    base_instructions: BaseInstructions | None = None
    instructions: str | None = None
    agent_nickname: str | None = None
    agent_role: str | None = None


class TurnContext(_Record, frozen=True):
    turn_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    effort: str | None = None


class Compacted(_Record, frozen=True):
    message: str = ""
    replacement_history: list[dict[str, Any]] | None = None


# -- event_msg payloads ---------------------------------------------------------------------------------------

class UserMessage(_Record, frozen=True):
    message: str = ""
    images: list[str] | None = None
    local_images: list[str] | None = None
    kind: str | None = None


class AgentText(_Record, frozen=True):
    """``agent_message`` (``message``, ``phase``) and ``agent_reasoning``/``agent_reasoning_raw_content`` (``text``)."""

    message: str | None = None
    text: str | None = None
    phase: str | None = None


class TaskStarted(_Record, frozen=True):
    turn_id: str | None = None
    model_context_window: Count | None = None


class TaskComplete(_Record, frozen=True):
    turn_id: str | None = None
    duration_ms: Count | None = None
    time_to_first_token_ms: Count | None = None
    last_agent_message: str | None = None


class TurnAborted(_Record, frozen=True):
    turn_id: str | None = None
    reason: str | None = None


class TokenUsage(_Record, frozen=True):
    """Codex usage: ``input_tokens`` includes the cached ones, ``output_tokens`` the reasoning ones (§5.2)."""

    input_tokens: Count = 0
    cached_input_tokens: Count = 0
    output_tokens: Count = 0
    reasoning_output_tokens: Count = 0
    total_tokens: Count = 0


class TokenInfo(_Record, frozen=True):
    total_token_usage: TokenUsage
    last_token_usage: TokenUsage | None = None
    model_context_window: Count | None = None


class TokenCount(_Record, frozen=True):
    info: TokenInfo | None = None


class ToolEnd(_Record, frozen=True):
    """``exec_command_end`` / ``patch_apply_end`` / ``web_search_end``: completion details of a call."""

    call_id: str
    exit_code: int | None = None
    success: bool | None = None


class ThreadName(_Record, frozen=True):
    thread_id: str | None = None
    thread_name: str | None = None


class Notice(_Record, frozen=True):
    """``error`` / ``warning`` / ``stream_error``: what the harness told the user."""

    message: str | None = None


class _Empty(_Record, frozen=True):
    pass


# -- classification --------------------------------------------------------------------------------------------

Kind = tuple[str, str]
"""What a line is: ``(envelope type, payload type)``, e.g. ``("response_item", "message")``, ``("event_msg",
"token_count")``, ``("session_meta", "")``; bare lines are ``("bare", item type)``, ``("bare", "session_meta")``
and ``("bare", "state")``."""

_ITEMS: Final[dict[str, type[_Record]]] = {
    "message": Message, "reasoning": Reasoning, "function_call": FunctionCall, "custom_tool_call": CustomToolCall,
    "local_shell_call": LocalShellCall, "web_search_call": WebSearchCall, "function_call_output": ToolOutput,
    "custom_tool_call_output": ToolOutput, "local_shell_call_output": ToolOutput,
}
_EVENTS: Final[dict[str, type[_Record]]] = {
    "user_message": UserMessage, "agent_message": AgentText, "agent_reasoning": AgentText,
    "agent_reasoning_raw_content": AgentText, "task_started": TaskStarted, "task_complete": TaskComplete,
    "turn_aborted": TurnAborted, "token_count": TokenCount, "exec_command_end": ToolEnd,
    "patch_apply_end": ToolEnd, "web_search_end": ToolEnd, "thread_name_updated": ThreadName,
    "context_compacted": _Empty, "error": Notice, "warning": Notice, "stream_error": Notice,
}
_TABLE: Final[dict[str, dict[str, type[_Record]]]] = {"response_item": _ITEMS, "event_msg": _EVENTS}
_WHOLE: Final[dict[str, type[_Record]]] = {"session_meta": SessionMeta, "turn_context": TurnContext,
                                           "compacted": Compacted}


def _checked(value: Any, struct: type[_Record], where: str) -> Any:
    """``value`` as ``struct``; a refusal names its path from the line (``where`` is the payload's own path)."""
    try:
        return convert(value, struct)
    except msgspec.ValidationError as exc:
        text = str(exc)
        if where != "$":
            text = text.replace("at `$", f"at `{where}", 1) if "at `$" in text else f"{text} - at `{where}`"
        raise msgspec.ValidationError(text) from None


def classify(value: dict[str, Any]) -> tuple[Kind, Any, Any]:
    """``(kind, record, payload)`` of one decoded line: ``record`` is the payload as its Struct (None for a type
    this reader does not know), ``payload`` the decoded payload dict (the line itself for a bare line).

    Raises:
        msgspec.ValidationError: a known record with a field of the wrong type (the path names the field).
    """
    rtype = value.get("type")
    if "payload" in value and type(rtype) is str:
        payload = value["payload"]
        table = _TABLE.get(rtype)
        if table is not None:
            if type(payload) is not dict:
                raise msgspec.ValidationError(f"Expected `object`, got `{type(payload).__name__}` - at `$.payload`")
            ptype = payload.get("type")
            if type(ptype) is not str:
                raise msgspec.ValidationError("Object missing required field `type` - at `$.payload`")
            struct = table.get(ptype)
            return (rtype, ptype), None if struct is None else _checked(payload, struct, "$.payload"), payload
        whole = _WHOLE.get(rtype)
        return (rtype, ""), None if whole is None else _checked(payload, whole, "$.payload"), payload
    if "record_type" in value:
        return ("bare", "state"), None, value
    if type(rtype) is str:
        struct = _ITEMS.get(rtype)
        return ("bare", rtype), None if struct is None else _checked(value, struct, "$"), value
    if "id" in value and "timestamp" in value and rtype is None:
        return ("bare", "session_meta"), _checked(value, SessionMeta, "$"), value
    return ("bare", "?"), None, value


def is_tui_recording(value: dict[str, Any]) -> bool:
    """A line of a Codex TUI debugging recording (``CODEX_TUI_RECORD_SESSION``: ``{ts, dir, kind, ...}`` with key
    presses, redraws and ``codex_event`` records), which is not a rollout."""
    return "kind" in value and ("ts" in value or "dir" in value) and "type" not in value and "payload" not in value
