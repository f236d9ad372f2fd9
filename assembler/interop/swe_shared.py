"""What the SWE-agent and mini-swe-agent readers share (FORMATS.md §8.2, §9.3): how an exit status ends the one
turn of a trajectory, the submission notice, and the tool call a bare command becomes.

Rules: an exit status starting ``submitted`` (any case: SWE-agent ``submitted``, ``submitted (exit_cost)``,
mini-swe-agent ``Submitted``) completes the turn; any other recorded status ends it with an error carrying the
status as message and code; no status recorded leaves the turn open. The submission is a raw record shown as a
notice (``interop/raw`` with ``notice``): it is what the harness did with the run, not something the model saw,
so it never enters the model-context surface. Pure.
"""

from __future__ import annotations

import re
from typing import Any

from .base import json_args

__all__ = ["exit_reason", "submission_notice", "command_call", "model_name"]

_TICKS = re.compile(r"`+")


def exit_reason(status: str) -> dict[str, Any]:
    """The ``turn/end`` reason of a recorded exit status."""
    if status.lower().startswith("submitted"):
        return {"kind": "completed"}
    return {"kind": "error", "error": {"message": status, "code": status}}


def submission_notice(submission: str, status: str | None) -> str:
    """The notice text of a submission: a heading line, then the patch in a code fence longer than any run of
    backticks inside it (so a Markdown view shows the patch verbatim and a plain view stays readable)."""
    fence = "`" * max([3] + [len(m.group()) + 1 for m in _TICKS.finditer(submission)])
    head = f"Submission (exit status: {status})" if status else "Submission"
    body = submission if submission.endswith("\n") else submission + "\n"
    return f"{head}\n\n{fence}\n{body}{fence}"


def command_call(action: str) -> tuple[str, str]:
    """The tool call a bare command is (SWE-agent 0.x, FORMATS §8.2): named by its first word, arguments
    ``{"command": action}`` with the action as recorded."""
    words = action.split(None, 1)
    return (words[0] if words else "command"), json_args({"command": action})


def model_name(config: Any, *path: str) -> str | None:
    """The string at ``path`` inside nested dicts (``None`` when any step is missing or of another type)."""
    value = config
    for key in path:
        if type(value) is not dict:
            return None
        value = value.get(key)
    return value if type(value) is str and value else None
