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
from .markdown import HIGHLIGHT_LIMIT, code_html, escape, is_safe_link
from .texts import blocks_text, first_line

__all__ = ["tool_kind", "tool_arguments", "tool_summary", "subcall_summary", "tool_kind_body", "TOOL_ICONS",
           "diff_counts", "subagent_label"]

_KINDS = {
    "shell": ("bash", "sh", "shell", "pwsh", "powershell", "exec", "run_command", "terminal_send", "execute"),
    "read": ("read", "read_file", "view", "view_file", "cat", "read_image"),
    "write": ("write", "write_file", "create_file", "write_remote"),
    "edit": ("edit", "edit_file", "str_replace", "str_replace_editor", "str_replace_based_edit_tool", "multi_edit",
             "multiedit", "apply_patch"),
    "code": ("run_code",),
    "todo": ("todo_write", "todowrite", "todo", "update_todos"),
    "web": ("web_search", "web_fetch", "fetch", "websearch", "webfetch", "search_web", "browse"),
    "search": ("glob", "grep", "find", "search", "rg", "ls", "list_files"),
    "agent": ("subagent", "subagent_codex", "subagent_fork", "task", "agent", "workflow", "send_message"),
    "question": ("ask_user_question", "ask_user", "askuserquestion", "request_user_input", "ask_question"),
    "plan": ("exit_plan_mode", "exitplanmode", "submit_plan", "plan_review", "propose_plan"),
}
_KIND_OF = {name: kind for kind, names in _KINDS.items() for name in names}
TOOL_ICONS = {"shell": "$", "read": "≡", "write": "✎", "edit": "±", "code": "λ", "todo": "☑", "web": "⌕",
              "search": "⌕", "agent": "⇢", "question": "?", "plan": "☰", "generic": "⚙"}
_EXIT = re.compile(r"\[exit code: (-?\d+)\]")
_NUMBERED = re.compile(r"^\s*(\d+)[:\t|] ?(.*)$")
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


def _s(args: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if type(value) is str and value:
            return value
    return None


def _n(args: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = args.get(key)
        if type(value) is int:
            return value
    return None


def _edit_pair(args: dict[str, Any]) -> tuple[str, str] | None:
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
    start = _n(args, "start_line", "line_start")
    end = _n(args, "end_line", "line_end")
    if start is not None and end is not None:
        return f" (lines {start}–{end})"
    offset, limit = _n(args, "offset"), _n(args, "limit")
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
    if args is None:
        raw = arguments if type(arguments) is str else ""
        if raw.lstrip().startswith(("{", "[")):
            return label  # JSON that did not parse (still streaming, or cut): not shown raw
        return f"{label}: {first_line(raw, _SUMMARY)}" if raw.strip() else label
    kind = tool_kind(name)
    what = ""
    if kind == "shell":
        what = first_line(_s(args, "command", "cmd", "script", "input") or "", _SUMMARY)
    elif kind in ("read", "write", "edit"):
        path = _s(args, "path", "file_path", "filePath", "filename") or ""
        if kind == "read" or args.get("command") == "view":
            what = path + _read_range(args)
        else:
            pair = _edit_pair(args)
            if pair is not None:
                added, removed = diff_counts(*pair)
                what = f"{path} +{added} −{removed}"
            else:
                what = " ".join(x for x in (_s(args, "command") or "", path) if x)
    elif kind == "code":
        what = first_line(_s(args, "description") or _s(args, "code") or "", _SUMMARY)
    elif kind == "todo":
        todos = args.get("todos")
        if type(todos) is list:
            done = sum(1 for t in todos if type(t) is dict and t.get("status") in ("completed", "done"))
            what = f"{len(todos)} item{'s' if len(todos) != 1 else ''}, {done} done"
    elif kind == "web":
        queries = args.get("queries")
        if type(queries) is list:
            what = "; ".join(str(q) for q in queries if type(q) is str)
        what = first_line(what or _s(args, "url", "query", "q") or "", _SUMMARY)
    elif kind == "search":
        pattern = _s(args, "pattern", "query", "regex", "glob") or ""
        path = _s(args, "path", "dir", "directory") or ""
        what = pattern + (f" in {path}" if path and pattern else path)
    elif kind == "question":
        what = "; ".join(_questions(args))
    elif kind == "plan":
        what = first_line(_s(args, "plan", "summary", "title") or "", _SUMMARY)
    elif kind == "agent":
        what = first_line(_s(args, "description", "prompt", "message", "task") or "", _SUMMARY)
        if not what and type(args.get("meta")) is dict:
            what = first_line(_s(args["meta"], "name", "description") or "", _SUMMARY)
    if not what:
        what = _plain_args(args)
    return f"{label}: {first_line(what, _SUMMARY)}" if what else label


def _questions(args: dict[str, Any]) -> list[str]:
    qs = args.get("questions")
    if type(qs) is not list:
        qs = [args]
    out = []
    for q in qs:
        if type(q) is dict:
            text = _s(q, "question", "text", "prompt")
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
    return _s(args, "description", "label") if args is not None else None


def subcall_summary(call: ToolSubcall) -> str:
    return tool_summary(call.name, call.arguments)


# --- bodies ------------------------------------------------------------------------------------------------------

def _diff_html(old: str, new: str, path: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), fromfile=f"a/{path}", tofile=f"b/{path}",
                                      lineterm="", n=3))
    out = []
    for line in lines[2:] if len(lines) > 2 else lines:
        css = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else (
            "del" if line.startswith("-") else "ctx")
        out.append(f'<span class="{css}">{escape(line) or " "}</span>')
    return f'<pre class="diff" aria-label="Diff of {escape(path)}">{"".join(out)}</pre>'


def _numbered_html(text: str, start: int = 1) -> str:
    """Lines in a table with their numbers: the numbers a read result printed (``12: text``), else counted."""
    rows = []
    lines = text.split("\n")
    numbered = sum(1 for line in lines if _NUMBERED.match(line)) >= max(1, len(lines) // 2)
    for i, line in enumerate(lines):
        m = _NUMBERED.match(line) if numbered else None
        if numbered and m is None:
            rows.append(f'<tr><td class="ln"></td><td>{escape(line)}</td></tr>')
            continue
        number, body = (m.group(1), m.group(2)) if m is not None else (str(start + i), line)
        rows.append(f'<tr><td class="ln">{number}</td><td>{escape(body)}</td></tr>')
    return f'<table class="lines"><tbody>{"".join(rows)}</tbody></table>'


def _read_content(text: str) -> str:
    """The file part of a read result (``<content>…</content>``), else the whole text."""
    start = text.find("<content>\n")
    end = text.rfind("</content>")
    if start >= 0 and end > start:
        return text[start + len("<content>\n"):end].rstrip("\n")
    return text


def _terminal_html(command: str, output: str | None, *, error: bool) -> str:
    parts = [f'<span class="prompt">$ </span>{escape(command)}\n']
    if output is not None:
        exit_match = _EXIT.search(output)
        shown = _EXIT.sub("", output).rstrip("\n") if exit_match else output.rstrip("\n")
        parts.append(escape(shown))
        if exit_match is not None:
            code = exit_match.group(1)
            parts.append(f'<span class="exit{"" if code == "0" else " exit-bad"}">exit status {escape(code)}</span>')
        elif error:
            parts.append('<span class="exit exit-bad">failed</span>')
        else:
            parts.append('<span class="exit">done</span>')
    else:
        parts.append('<span class="exit">no result yet</span>')
    return f'<pre class="terminal" aria-label="Terminal">{"".join(parts)}</pre>'


def _checklist_html(todos: list[Any]) -> str:
    items = []
    for t in todos:
        if type(t) is not dict:
            continue
        status = t.get("status")
        text = t.get("content", t.get("text", t.get("title")))
        mark = "☑" if status in ("completed", "done") else "◐" if status == "in_progress" else "☐"
        css = "done" if status in ("completed", "done") else "todo"
        items.append(f'<li class="{css}" data-status="{escape(status)}">{mark} {escape(text)}</li>')
    return f'<ul class="checklist">{"".join(items)}</ul>'


def _web_html(args: dict[str, Any]) -> str:
    bits = []
    url = _s(args, "url", "href")
    if url is not None:
        if is_safe_link(url) and not url.startswith(("#", "mailto:")):
            bits.append(f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer nofollow">'
                        f'{escape(url)}</a>')
        else:
            bits.append(f'<span class="unsafe-url">{escape(url)}</span>')
    queries = args.get("queries")
    if type(queries) is not list:
        queries = [args.get("query", args.get("q"))]
    for q in queries:
        if type(q) is str and q:
            bits.append(f'<div class="web-query">⌕ {escape(q)}</div>')
    return f'<div class="web-card">{"".join(bits)}</div>' if bits else ""


def _result_html(result: str, *, error: bool) -> str:
    stripped = result.strip()
    if stripped.startswith(("{", "[")) and len(stripped) <= HIGHLIGHT_LIMIT:
        try:
            pretty = json.dumps(loads_text(stripped), ensure_ascii=False, indent=2)
        except ValueError:
            pretty = None
        if pretty is not None:
            return code_html(pretty, "json")
    return f'<div class="plain-pre{" is-error" if error else ""}">{escape(result)}</div>'


def _section(label: str, inner: str, css: str = "") -> str:
    return (f'<div class="tool-section{(" " + css) if css else ""}"><div class="section-label">{escape(label)}</div>'
            f'{inner}</div>')


def _subcalls_html(calls: list[ToolSubcall]) -> str:
    rows = []
    for call in calls:
        text = blocks_text(call.blocks) if call.blocks is not UNSET else ""
        status = call.status if call.status in ("running", "done", "error") else "done"
        body = f'<div class="plain-pre">{escape(text)}</div>' if text else ""
        rows.append(f'<div class="subcall"><span class="dot dot-{status}" aria-label="{status}"></span>'
                    f'<span class="tool-summary">{escape(subcall_summary(call))}</span>{body}</div>')
    return f'<div class="subcalls" aria-label="Nested calls">{"".join(rows)}</div>'


def tool_kind_body(data: ToolData, result: str | None, *, error: bool) -> str | None:
    """The expanded body by tool kind, or None when the generic body should be used (unknown tool, or arguments
    without the fields the kind needs). Bounded: callers pass results already cut to their size limit."""
    kind = tool_kind(data.name)
    args = tool_arguments(data.arguments)
    if kind == "generic" or args is None:
        return None
    res = "" if result is None else _section("Error" if error else "Result", _result_html(result, error=error),
                                             "tool-result is-error" if error else "tool-result")
    if kind == "shell":
        command = _s(args, "command", "cmd", "script", "input")
        if command is None:
            return None
        return _terminal_html(command, result, error=error)
    if kind in ("write", "edit"):
        pair = _edit_pair(args)
        path = _s(args, "path", "file_path", "filePath", "filename") or "file"
        if pair is None:
            return None
        return _diff_html(pair[0], pair[1], path) + res
    if kind == "read":
        if result is None or error:
            return None  # nothing to number: the generic body shows the arguments and the error
        return _section("Lines", _numbered_html(_read_content(result)))
    if kind == "code":
        code = _s(args, "code", "source", "program")
        if code is None:
            return None
        language = _s(args, "language", "lang") or "javascript"
        subcalls = _subcalls_html(data.subcalls) if data.subcalls is not UNSET and data.subcalls else ""
        return _section("Program", code_html(code.strip("\n"), language)) + subcalls + res
    if kind == "todo":
        todos = args.get("todos")
        if type(todos) is not list:
            return None
        return _checklist_html(todos) + res
    if kind == "web":
        card = _web_html(args)
        return (card + res) if card else None
    if kind == "question":
        asked = _questions(args)
        if not asked:
            return None
        items = "".join(f"<li>{escape(q)}</li>" for q in asked)
        answer = "" if result is None else _section("Error" if error else "Answer",
                                                    f'<div class="plain-pre">{escape(result)}</div>')
        return _section("Asked", f'<ul class="questions">{items}</ul>') + answer
    if kind == "plan":
        plan = _s(args, "plan", "summary")
        if plan is None:
            return None
        review = "" if result is None else _section("Rejected" if error else "Review",
                                                    f'<div class="plain-pre">{escape(result)}</div>')
        return _section("Plan", f'<div class="plain-pre">{escape(plan)}</div>') + review
    return None
