"""Claude Code tool results' side copies (``toolUseResult``) as the ``meta`` of our ``tool/result`` (FORMATS §2.5,
§4.9), the ``todo/write`` of a TodoWrite call, and the subagent address of a Task/Agent result (§4.7).

The ``meta`` shape (what a renderer may use; the result's ``content`` is always what the model got):

* ``toolUseResult``: the side copy exactly as recorded (an object, or a bare error string);
* ``view``: a normalised form by tool, present when the side copy has the fields it needs:
  ``{kind:'diff', path, old?, new?, edits?:[{old,new}], create?, patch?}`` (Edit, MultiEdit, Write; ``patch`` is
  the recorded ``structuredPatch``: ``[{oldStart, oldLines, newStart, newLines, lines:['-…','+…',' …']}]``),
  ``{kind:'shell', stdout, stderr, interrupted?, exitCode?, status?}`` (Bash, BashOutput),
  ``{kind:'read', path, startLine?, numLines?, totalLines?, fileType?}`` (Read: the numbered lines are the result
  text itself, ``     1→…`` as recorded), ``{kind:'todo', todos:[{content,status}], oldTodos?}`` (TodoWrite),
  ``{kind:'subagent', agentId?, status?, totalDurationMs?, totalTokens?, totalToolUseCount?}`` (Task/Agent),
  ``{kind:'error', text}`` (a bare string side copy: the CLI's error text);
* ``subagent``: ``{kind:'subagent', parentSessionId, childSessionId, mode:'one-shot'}`` when the child is known.

Rules: never raises on any decoded JSON value (the side copy is free-form); a field of an unexpected type is left
out of ``view``. Pure.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["result_meta", "todos_of", "agent_id_of", "AGENT_TOOLS", "TODO_TOOLS"]

AGENT_TOOLS: Final = frozenset({"Task", "Agent"})
TODO_TOOLS: Final = frozenset({"TodoWrite"})
_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})
_AGENT_LINE = re.compile(r"agentId: ([A-Za-z0-9_-]+)")


def _str(d: dict[str, Any], key: str) -> str | None:
    v = d.get(key)
    return v if type(v) is str else None


def _int(d: dict[str, Any], key: str) -> int | None:
    v = d.get(key)
    return v if type(v) is int else None


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def todos_of(items: Any) -> list[dict[str, str]] | None:
    """``[{content, status}]`` of a TodoWrite list (a status we do not know reads as ``pending``); None when
    ``items`` is not a list of todo objects."""
    if type(items) is not list:
        return None
    out = []
    for item in items:
        if type(item) is not dict or type(item.get("content")) is not str:
            return None
        status = item.get("status")
        out.append({"content": item["content"], "status": status if status in _STATUSES else "pending"})
    return out


def _patch(d: dict[str, Any]) -> list[Any] | None:
    patch = d.get("structuredPatch")
    return patch if type(patch) is list else None


def _view(name: str | None, tur: Any) -> dict[str, Any] | None:
    if type(tur) is str:
        return {"kind": "error", "text": tur}
    if type(tur) is not dict:
        return None
    view: dict[str, Any]
    if name == "Edit":
        view = {"kind": "diff"}
        _put(view, "path", _str(tur, "filePath"))
        _put(view, "old", _str(tur, "oldString"))
        _put(view, "new", _str(tur, "newString"))
        _put(view, "patch", _patch(tur))
        return view if len(view) > 1 else None
    if name == "MultiEdit":
        view = {"kind": "diff"}
        _put(view, "path", _str(tur, "filePath"))
        edits = tur.get("edits")
        if type(edits) is list:
            pairs = [{"old": e["old_string"], "new": e["new_string"]} for e in edits
                     if type(e) is dict and type(e.get("old_string")) is str and type(e.get("new_string")) is str]
            if pairs:
                view["edits"] = pairs
        _put(view, "patch", _patch(tur))
        return view if len(view) > 1 else None
    if name == "Write":
        view = {"kind": "diff"}
        _put(view, "path", _str(tur, "filePath"))
        _put(view, "new", _str(tur, "content"))
        if tur.get("type") == "create":
            view["create"] = True
        _put(view, "patch", _patch(tur))
        return view if len(view) > 1 else None
    if name in ("Bash", "BashOutput"):
        if type(tur.get("stdout")) is not str and type(tur.get("stderr")) is not str:
            return None
        view = {"kind": "shell", "stdout": _str(tur, "stdout") or "", "stderr": _str(tur, "stderr") or ""}
        if type(tur.get("interrupted")) is bool:
            view["interrupted"] = tur["interrupted"]
        _put(view, "exitCode", _int(tur, "exitCode"))
        _put(view, "status", _str(tur, "status"))
        return view
    if name == "Read":
        file = tur.get("file")
        if type(file) is not dict:
            return None
        view = {"kind": "read"}
        _put(view, "path", _str(file, "filePath"))
        for key in ("startLine", "numLines", "totalLines"):
            _put(view, key, _int(file, key))
        _put(view, "fileType", _str(tur, "type"))
        return view
    if name in TODO_TOOLS:
        todos = todos_of(tur.get("newTodos"))
        if todos is None:
            return None
        view = {"kind": "todo", "todos": todos}
        _put(view, "oldTodos", todos_of(tur.get("oldTodos")))
        return view
    if name in AGENT_TOOLS:
        view = {"kind": "subagent"}
        _put(view, "agentId", _str(tur, "agentId"))
        _put(view, "status", _str(tur, "status"))
        for key in ("totalDurationMs", "totalTokens", "totalToolUseCount"):
            _put(view, key, _int(tur, key))
        return view
    return None


def agent_id_of(tur: Any, result_text: str | None) -> str | None:
    """The subagent's id of a Task/Agent result: ``toolUseResult.agentId`` (2.0.x and later), else the
    ``agentId: <id>`` line the 2.1.x result text ends with."""
    if type(tur) is dict and type(tur.get("agentId")) is str and tur["agentId"]:
        return tur["agentId"]  # type: ignore[no-any-return]
    if result_text:
        found = _AGENT_LINE.findall(result_text[-2000:])
        if found:
            return found[-1]  # type: ignore[no-any-return]
    return None


def result_meta(name: str | None, tur: Any, subagent: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``meta`` of a tool result (shape in the module docstring), or None when there is nothing to add."""
    meta: dict[str, Any] = {}
    if tur is not None:
        meta["toolUseResult"] = tur
        view = _view(name, tur)
        if view is not None:
            meta["view"] = view
    if subagent is not None:
        meta["subagent"] = subagent
    return meta or None
