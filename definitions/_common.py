"""Helpers shared by the Definitions: payload accessors over both payload generations, append-origin, failures.

Rules: accessors never raise on odd payloads (unknown shapes pass through as ``None``/empty); ids follow JS
``String(...)``; the synthetic anchor offsets are the reference's ``CHAT_SYNTHETIC_SEQ_OFFSETS`` (ASSEMBLY 5.3).
"""

from __future__ import annotations

from typing import Any

import msgspec

from assembler.definition import Context, Match
from assembler.records import CHUNK_ROW_TYPES, SessionEvent
from assembler.text import js_number_str
from assembler.views import Provenance

__all__ = [
    "OFFSETS",
    "ROW_TYPES",
    "data_of",
    "is_append",
    "turn_step_id",
    "turn_id",
    "message_of",
    "message_content",
    "message_id",
    "message_provenance",
    "display_failure",
    "closed_boundary",
    "is_scalar",
]

OFFSETS = {
    "interruptedAssistant": -0.9,
    "interruptedFollowup": -0.8,
    "processControl": -0.1,
    "maxTokensNotice": 0.05,
    "finalizedFollowup": 0.1,
    "turnTail": 0.5,
}
ROW_TYPES = CHUNK_ROW_TYPES
"""The wire row tags (``chunkrow/*``): the only packed entries a Definition sees."""
_encode = msgspec.json.Encoder().encode


def is_scalar(event: Any) -> bool:
    return type(event) is SessionEvent


def data_of(event: Any) -> dict[str, Any]:
    """A scalar event's ``data`` when it is an object, else ``{}``."""
    data = event.data
    return data if type(data) is dict else {}


def is_append(event: Any) -> bool:
    """Append-origin (``isAppendSurfaceEvent``): the human transcript source (PROTOCOL 1.1)."""
    return type(event) is SessionEvent and event.surfaceOp == "append"


def turn_step_id(event: Any) -> str | None:
    """``"turn:step"`` from a scalar event's data or a row's data; None when either is missing."""
    if type(event) is SessionEvent:
        data = event.data
        if type(data) is not dict or "turn" not in data or "step" not in data:
            return None
        return f"{js_number_str(data['turn'])}:{js_number_str(data['step'])}"
    data = event.data
    return f"{js_number_str(data.turn)}:{js_number_str(data.step)}"


def turn_id(event: Any) -> str | None:
    if type(event) is SessionEvent:
        data = event.data
        if type(data) is not dict or "turn" not in data:
            return None
        return js_number_str(data["turn"])
    return js_number_str(event.data.turn)


def message_of(data: dict[str, Any]) -> dict[str, Any] | None:
    message = data.get("message")
    return message if type(message) is dict else None


def message_content(data: dict[str, Any]) -> Any:
    """``message.content`` (current payloads) or the flat ``content`` (older ones)."""
    message = message_of(data)
    if message is not None:
        return message.get("content")
    return data.get("content")


def message_id(data: dict[str, Any]) -> Any:
    message = message_of(data)
    return message.get("id") if message is not None else None


def message_provenance(data: dict[str, Any]) -> Provenance | None:
    """``{provider, model}`` from the message source, or the older flat ``provenance``."""
    message = message_of(data)
    source = message.get("source") if message is not None else data.get("provenance")
    if type(source) is not dict:
        return None
    return Provenance(source.get("provider"), source.get("model"))


def display_failure(failure: Any) -> tuple[str, str | None]:
    """``displayFailure``: ``(message, code)``; AUTH messages are blanked, non-objects are stringified."""
    if type(failure) is not dict:
        if type(failure) is str:
            return failure, None
        return ("" if failure is None else _encode(failure).decode()), None
    code = failure.get("code")
    code = code if type(code) is str else None
    message = failure.get("message")
    if code == "AUTH":
        return "", code
    if type(message) is not str:
        message = _encode(failure).decode()
    return message, code


def closed_boundary(context: Context, step_end: Match | None = None) -> Any:
    """The event closing a Context's step or turn: ``step_end`` first, then the location of the start Match
    (else the last Match): a closed step gives ``step/end``, else a closed turn gives ``turn/end``. ASSEMBLY 5.3."""
    if step_end is not None:
        return step_end.event
    if context.start is not None:
        location = context.start.location
    elif context.matches:
        location = context.matches[-1].location
    else:
        return None
    if location.kind == "step" and location.step is not None and location.step.end is not None:
        return location.step.end
    if location.kind in ("step", "turn") and location.turn is not None and location.turn.end is not None:
        return location.turn.end
    return None

