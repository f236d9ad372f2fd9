"""Tool-aware rows: a one-line human summary of a tool call and, expanded, a body by tool kind.

Rules: the kind comes from the tool's name (``tool_kind``) and renders only when the arguments have the fields that
kind needs; otherwise (and for every unknown tool) the caller keeps the generic body (arguments as pretty JSON, the
result as text). Summaries are plain text, never raw JSON: ``bash: grep -rn 'x' src/``, ``read: src/a.py (lines
10–80)``, ``edit: src/a.py +3 −1``. Bodies: edits and writes as a unified diff (``difflib``), reads with line
numbers, shell commands as a terminal block (command, exit status, output), code-mode programs as highlighted code
with their nested calls, todo lists as a checklist, web search/fetch as a card whose URL links only with a safe
scheme, questions to the user with their answer, plan reviews with the review, JSON results pretty-printed. Every
string is escaped. Pure.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from msgspec import UNSET

from ..jsontext import loads_text
from ..views import ToolData, ToolSubcall
from .codex_tools import command_of, patch_of, patch_summary, plan_items
from .markdown import HIGHLIGHT_LIMIT
from .texts import first_line

__all__ = ["tool_kind", "tool_arguments", "tool_summary", "subcall_summary", "TOOL_ICONS", "result_view",
           "diff_counts", "subagent_label", "questions", "string_arg", "int_arg", "edit_pair", "EXIT_STATUS",
           "TRAILING_EXIT", "NUMBERED_LINE"]

_KINDS = {
    "shell": ("bash", "sh", "shell", "pwsh", "powershell", "exec", "run_command", "terminal_send", "execute",
              "exec_command", "shell_command", "local_shell"),
    "read": ("read", "read_file", "view", "view_file", "cat", "read_image"),
    "write": ("write", "write_file", "create_file", "write_remote"),
    "edit": ("edit", "edit_file", "str_replace", "str_replace_editor", "str_replace_based_edit_tool", "multi_edit",
             "multiedit", "apply_patch"),
    "code": ("run_code",),
    "todo": ("todo_write", "todowrite", "todo", "update_todos", "update_plan"),
    "web": ("web_search", "web_fetch", "fetch", "websearch", "webfetch", "search_web", "browse"),
    "search": ("glob", "grep", "find", "search", "rg", "ls", "list_files"),
    "agent": ("subagent", "subagent_codex", "subagent_fork", "task", "agent", "workflow", "send_message"),
    "question": ("ask_user_question", "ask_user", "askuserquestion", "request_user_input", "ask_question"),
    "plan": ("exit_plan_mode", "exitplanmode", "submit_plan", "plan_review", "propose_plan"),
}
_KIND_OF = {name: kind for kind, names in _KINDS.items() for name in names}
TOOL_ICONS = {"shell": "$", "read": "≡", "write": "✎", "edit": "±", "code": "λ", "todo": "☑", "web": "⌕",
              "search": "⌕", "agent": "⇢", "question": "?", "plan": "☰", "generic": "⚙"}
EXIT_STATUS = re.compile(r"\[exit code: (-?\d+)\]")
TRAILING_EXIT = re.compile(r"\[exit code: (-?\d+)\]\s*$")  # the marker a result ends with: the call's own status
NUMBERED_LINE = re.compile(r"^\s*(\d+)(?:[:\t|] ?|\u2192)(.*)$")  # \u2192: Claude Code's `cat -n` arrow
_SUMMARY = 120


def tool_kind(name: Any) -> str:
    """``shell``, ``read``, ``write``, ``edit``, ``code``, ``todo``, ``web``, ``search``, ``agent`` or
    ``generic`` (any other tool)."""
    if type(name) is not str:
        return "generic"
    return _KIND_OF.get(name.lower(), "generic")


def tool_arguments(arguments: Any) -> dict[str, Any] | None:
    """The arguments as an object: a dict as it is, a JSON string that parses to an object, else None."""
    if type(arguments) is dict:
        return arguments
    if type(arguments) is str and len(arguments) <= HIGHLIGHT_LIMIT * 4:
        try:
            value = loads_text(arguments)
        except ValueError:
            return None
        return value if type(value) is dict else None
    return None


def string_arg(args: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if type(value) is str and value:
            return value
    return None


def int_arg(args: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = args.get(key)
        if type(value) is int:
            return value
    return None


def edit_pair(args: dict[str, Any]) -> tuple[str, str] | None:
    """(old text, new text) of an edit or write, when the arguments hold them."""
    old = args.get("old_str", args.get("old_string", args.get("oldText")))
    new = args.get("new_str", args.get("new_string", args.get("newText")))
    if type(old) is str and type(new) is str:
        return old, new
    content = args.get("file_text", args.get("content", args.get("contents")))
    if type(content) is str and type(args.get("path", args.get("file_path"))) is str:
        if args.get("command") not in (None, "create"):
            return None
        return "", content
    return None


def diff_counts(old: str, new: str) -> tuple[int, int]:
    """(lines added, lines removed) between two texts."""
    added = removed = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def _read_range(args: dict[str, Any]) -> str:
    rng = args.get("view_range")
    if type(rng) is list and len(rng) == 2 and all(type(x) is int for x in rng):
        return f" (lines {rng[0]}–{rng[1]})" if rng[1] >= 0 else f" (from line {rng[0]})"
    start = int_arg(args, "start_line", "line_start")
    end = int_arg(args, "end_line", "line_end")
    if start is not None and end is not None:
        return f" (lines {start}–{end})"
    offset, limit = int_arg(args, "offset"), int_arg(args, "limit")
    if offset is not None and limit is not None:
        return f" (lines {offset}–{offset + limit - 1})" if offset > 0 else f" (lines 1–{limit})"
    if offset is not None:
        return f" (from line {offset})"
    return ""


def _plain_args(args: dict[str, Any]) -> str:
    parts = []
    for key, value in args.items():
        if type(value) is str:
            parts.append(f"{key}={first_line(value, 60)}")
        elif type(value) in (int, float, bool):
            parts.append(f"{key}={json.dumps(value)}")
        elif type(value) is list:
            parts.append(f"{key}=[{len(value)}]")
        elif type(value) is dict:
            parts.append(f"{key}={{…}}")
        if sum(len(p) for p in parts) > _SUMMARY:
            break
    return ", ".join(parts)


def tool_summary(name: Any, arguments: Any) -> str:
    """One line for the collapsed row: ``name: what it does``, never raw JSON."""
    label = name if type(name) is str and name else "tool"
    args = tool_arguments(arguments)
    if tool_kind(name) == "edit" and (files := patch_of(arguments, args)) is not None:  # Codex apply_patch
        return f"{label}: {patch_summary(files)}"
    if args is None:
        raw = arguments if type(arguments) is str else ""
        if raw.lstrip().startswith(("{", "[")):
            return label  # JSON that did not parse (still streaming, or cut): not shown raw
        return f"{label}: {first_line(raw, _SUMMARY)}" if raw.strip() else label
    kind = tool_kind(name)
    what = ""
    if kind == "shell":
        what = first_line(command_of(args) or "", _SUMMARY)
    elif kind in ("read", "write", "edit"):
        path = string_arg(args, "path", "file_path", "filePath", "filename") or ""
        if kind == "read" or args.get("command") == "view":
            what = path + _read_range(args)
        else:
            pair = edit_pair(args)
            if pair is not None:
                added, removed = diff_counts(*pair)
                what = f"{path} +{added} −{removed}"
            else:
                what = " ".join(x for x in (string_arg(args, "command") or "", path) if x)
    elif kind == "code":
        what = first_line(string_arg(args, "description") or string_arg(args, "code") or "", _SUMMARY)
    elif kind == "todo":
        todos = args.get("todos") if type(args.get("todos")) is list else plan_items(args)
        if type(todos) is list:
            done = sum(1 for t in todos if type(t) is dict and t.get("status") in ("completed", "done"))
            what = f"{len(todos)} item{'s' if len(todos) != 1 else ''}, {done} done"
    elif kind == "web":
        queries = args.get("queries")
        if type(queries) is list:
            what = "; ".join(str(q) for q in queries if type(q) is str)
        what = first_line(what or string_arg(args, "url", "query", "q") or "", _SUMMARY)
    elif kind == "search":
        pattern = string_arg(args, "pattern", "query", "regex", "glob") or ""
        path = string_arg(args, "path", "dir", "directory") or ""
        what = pattern + (f" in {path}" if path and pattern else path)
    elif kind == "question":
        what = "; ".join(questions(args))
    elif kind == "plan":
        plan = (string_arg(args, "plan", "summary", "title") or "").lstrip()
        what = first_line(plan.lstrip("#").lstrip() if plan.startswith("#") else plan, _SUMMARY)  # "## Plan": its words
    elif kind == "agent":
        what = first_line(string_arg(args, "description", "prompt", "message", "task") or "", _SUMMARY)
        if not what and type(args.get("meta")) is dict:
            what = first_line(string_arg(args["meta"], "name", "description") or "", _SUMMARY)
    if not what:
        what = _plain_args(args)
    return f"{label}: {first_line(what, _SUMMARY)}" if what else label


def questions(args: dict[str, Any]) -> list[str]:
    qs = args.get("questions")
    if type(qs) is not list:
        qs = [args]
    out = []
    for q in qs:
        if type(q) is dict:
            text = string_arg(q, "question", "text", "prompt")
            if text:
                out.append(text)
        elif type(q) is str and q:
            out.append(q)
    return out


def subagent_label(name: Any, arguments: Any) -> str | None:
    """The label a subagent call gives its child (its ``description``): how the child session names itself."""
    if tool_kind(name) != "agent":
        return None
    args = tool_arguments(arguments)
    return string_arg(args, "description", "label") if args is not None else None


def subcall_summary(call: ToolSubcall) -> str:
    return tool_summary(call.name, call.arguments)


def result_view(data: ToolData) -> dict[str, Any]:
    """The normalised display form of the call's result (``ToolResultView.view``), or ``{}``."""
    result = data.result
    view = result.view if result is not UNSET else UNSET
    return view if type(view) is dict else {}
