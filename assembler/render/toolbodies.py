"""Tool-aware bodies: what an opened tool row shows by tool kind (HTML), and the same as labelled plain-text parts
for the Markdown export.

Rules: a body renders only when the arguments have the fields its kind needs (``tools.tool_kind``); otherwise the
caller keeps the generic body (arguments as pretty JSON, the result as text). Edits and writes are unified diffs
(``difflib``, or the patch a reader recorded), reads are numbered lines, shell commands a terminal block (command,
output, exit status; a reader's structured side copy shows stdout and stderr apart), code-mode programs highlighted
with their nested calls, todo lists a checklist, web search/fetch a card whose URL links only with a safe scheme,
questions with their answer, plan reviews with the review, JSON results pretty-printed. Every string is escaped.
Pure.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from msgspec import UNSET

from ..jsontext import loads_text
from ..views import ToolData, ToolSubcall
from .ansi import ansi_html, strip_ansi
from .codex_tools import command_of, envelope_span, patch_html, patch_of, patch_text, plan_items
from .markdown import HIGHLIGHT_LIMIT, code_html, escape, is_safe_link
from .texts import blocks_text
from .toolcards import fetched_html, fetched_text, plan_html, plan_text, question_html, question_text
from .tools import (
    EXIT_STATUS,
    NUMBERED_LINE,
    edit_pair,
    result_view,
    string_arg,
    subcall_summary,
    tool_arguments,
    tool_kind,
)

__all__ = ["tool_kind_body", "tool_text_parts", "numbered_html"]


def _side(prefix: str, path: str) -> str:
    """``a/x.py`` for a relative path, ``a/abs/x.py`` for an absolute one (no doubled slash)."""
    return f"{prefix}/{path.lstrip('/')}"


def _diff_html(old: str, new: str, path: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), fromfile=_side("a", path),
                                      tofile=_side("b", path), lineterm="", n=3))
    out = []
    for line in lines[2:] if len(lines) > 2 else lines:
        css = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else (
            "del" if line.startswith("-") else "ctx")
        out.append(f'<span class="{css}">{escape(line) or " "}</span>')
    return f'<pre class="diff" aria-label="Diff of {escape(path)}">{"".join(out)}</pre>'


def numbered_html(text: str, start: int = 1) -> str:
    """Lines in a table with their numbers: the numbers a read result printed (``12: text``), else counted."""
    rows = []
    lines = text.split("\n")
    numbered = sum(1 for line in lines if NUMBERED_LINE.match(line)) >= max(1, len(lines) // 2)
    for i, line in enumerate(lines):
        m = NUMBERED_LINE.match(line) if numbered else None
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
        exit_match = EXIT_STATUS.search(output)
        shown = EXIT_STATUS.sub("", output).rstrip("\n") if exit_match else output.rstrip("\n")
        parts.append(ansi_html(shown))
        if exit_match is not None:
            code = exit_match.group(1)
            parts.append(f'<span class="exit{"" if code == "0" else " exit-bad"}">exit status {escape(code)}</span>')
        elif error:
            parts.append('<span class="exit exit-bad">failed</span>')
        else:  # a Codex output envelope says how the process ended
            parts.append(envelope_span(output) or '<span class="exit">done</span>')
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
    url = string_arg(args, "url", "href")
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


def _shell_view_html(command: str, view: dict[str, Any]) -> str:
    """A terminal from a reader's structured side copy: stdout, stderr apart, the exit status and an interruption
    as recorded (the model got the result text; this is what the terminal showed)."""
    parts = [f'<span class="prompt">$ </span>{escape(command)}\n']
    stdout, stderr = view.get("stdout"), view.get("stderr")
    if type(stdout) is str and stdout:
        parts.append(ansi_html(stdout.rstrip("\n")) + "\n")
    if type(stderr) is str and stderr:
        parts.append(f'<span class="stderr">{ansi_html(stderr.rstrip(chr(10)))}</span>\n')
    code = view.get("exitCode")
    if view.get("interrupted") is True:
        parts.append('<span class="exit exit-bad">interrupted</span>')
    elif type(code) is int:
        parts.append(f'<span class="exit{"" if code == 0 else " exit-bad"}">exit status {code}</span>')
    else:
        parts.append('<span class="exit">done</span>')
    return f'<pre class="terminal" aria-label="Terminal">{"".join(parts)}</pre>'


def _patch_html(patch: list[Any], path: str) -> str | None:
    """A recorded structured patch (``[{oldStart, oldLines, newStart, newLines, lines}]``) as a unified diff."""
    out = []
    for hunk in patch:
        if type(hunk) is not dict or type(hunk.get("lines")) is not list:
            return None
        nums = [hunk.get(k) for k in ("oldStart", "oldLines", "newStart", "newLines")]
        if all(type(n) is int for n in nums):
            out.append(f'<span class="hunk">@@ -{nums[0]},{nums[1]} +{nums[2]},{nums[3]} @@</span>')
        for line in hunk["lines"]:
            if type(line) is not str:
                continue
            css = "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
            out.append(f'<span class="{css}">{escape(line) or " "}</span>')
    if not out:
        return None
    return f'<pre class="diff" aria-label="Diff of {escape(path)}">{"".join(out)}</pre>'


def _edits_html(args: dict[str, Any], view: dict[str, Any], path: str) -> str | None:
    """Several edits of one file (MultiEdit's ``edits``, or the result view's): one diff each; else the
    recorded patch."""
    edits = args.get("edits")
    pairs = []
    if type(edits) is list:
        for e in edits:
            if type(e) is dict:
                old = e.get("old_string", e.get("old_str", e.get("oldText")))
                new = e.get("new_string", e.get("new_str", e.get("newText")))
                if type(old) is str and type(new) is str:
                    pairs.append((old, new))
    if not pairs and type(view.get("edits")) is list:
        pairs = [(e["old"], e["new"]) for e in view["edits"]
                 if type(e) is dict and type(e.get("old")) is str and type(e.get("new")) is str]
    if pairs:
        return "".join(_diff_html(old, new, path) for old, new in pairs)
    if type(view.get("patch")) is list:
        return _patch_html(view["patch"], path)
    return None


def tool_kind_body(data: ToolData, result: str | None, *, error: bool) -> str | None:
    """The expanded body by tool kind, or None when the generic body should be used (unknown tool, or arguments
    without the fields the kind needs). Bounded: callers pass results already cut to their size limit."""
    kind = tool_kind(data.name)
    args = tool_arguments(data.arguments)
    files = patch_of(data.arguments, args) if kind == "edit" else None  # Codex apply_patch
    if files is None and (kind == "generic" or args is None):
        return None
    view = result_view(data)
    res = "" if result is None else _section("Error" if error else "Result", _result_html(result, error=error),
                                             "tool-result is-error" if error else "tool-result")
    if files is not None or args is None:  # (no arguments object only for a patch)
        return patch_html(files or []) + res
    if kind == "shell":
        command = command_of(args)
        if command is None:
            return None
        if view.get("kind") == "shell":
            return _shell_view_html(command, view)
        return _terminal_html(command, result, error=error)
    if kind in ("write", "edit"):
        pair = edit_pair(args)
        path = string_arg(args, "path", "file_path", "filePath", "filename") or "file"
        if pair is None:
            several = _edits_html(args, view, path)
            return None if several is None else several + res
        return _diff_html(pair[0], pair[1], path) + res
    if kind == "read":
        if result is None or error:
            return None  # nothing to number: the generic body shows the arguments and the error
        return _section("Lines", numbered_html(_read_content(result)))
    if kind == "code":
        code = string_arg(args, "code", "source", "program")
        if code is None:
            return None
        language = string_arg(args, "language", "lang") or "javascript"
        subcalls = _subcalls_html(data.subcalls) if data.subcalls is not UNSET and data.subcalls else ""
        return _section("Program", code_html(code.strip("\n"), language)) + subcalls + res
    if kind == "todo":
        todos = args.get("todos") if type(args.get("todos")) is list else plan_items(args)
        if type(todos) is not list:
            return None
        return _checklist_html(todos) + res
    if kind == "web":
        card = _web_html(args)
        if result is not None and _fetched(args, result):  # a fetched page: its Markdown rendered
            return card + fetched_html(result, error=error)
        return (card + res) if card else None
    if kind == "question":
        return question_html(args, result, error=error)
    if kind == "plan":
        return plan_html(args, result, error=error)
    return None


def _fetched(args: dict[str, Any], result: str) -> bool:
    """A fetch's result (the call names a URL) that is page text, not a JSON document."""
    return string_arg(args, "url", "href") is not None and not result.lstrip().startswith(("{", "["))


# --- plain-text bodies (Markdown export) -------------------------------------------------------------------------

def _diff_text(old: str, new: str, path: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), fromfile=_side("a", path), tofile=_side("b", path),
                                 lineterm="", n=3)
    return "\n".join(lines)


def _patch_text(patch: list[Any]) -> str | None:
    out = []
    for hunk in patch:
        if type(hunk) is not dict or type(hunk.get("lines")) is not list:
            return None
        nums = [hunk.get(k) for k in ("oldStart", "oldLines", "newStart", "newLines")]
        if all(type(n) is int for n in nums):
            out.append(f"@@ -{nums[0]},{nums[1]} +{nums[2]},{nums[3]} @@")
        out.extend(line for line in hunk["lines"] if type(line) is str)
    return "\n".join(out) or None


def tool_text_parts(data: ToolData, result: str | None, *, error: bool) -> list[tuple[str, str, str]] | None:
    """The body of a tool call as labelled plain-text parts ``(label, text, language)`` by tool kind (a diff for an
    edit, the terminal for a command, the program for code, a checklist for todos; ``language`` ``"list"`` is
    Markdown list text, not code), or None for the generic body (arguments as JSON)."""
    kind = tool_kind(data.name)
    args = tool_arguments(data.arguments)
    tail = [] if result is None else [("Error" if error else "Result", result, "")]
    files = patch_of(data.arguments, args) if kind == "edit" else None  # Codex apply_patch
    if files is not None:
        return [("Diff", patch_text(files), "diff"), *tail]
    if kind == "generic" or args is None:
        return None
    view = result_view(data)
    if kind == "shell":
        command = command_of(args)
        if command is None:
            return None
        lines = [f"$ {command}"]
        if view.get("kind") == "shell":
            for key in ("stdout", "stderr"):
                text = view.get(key)
                if type(text) is str and text:
                    lines.append(strip_ansi(text.rstrip("\n")))
            code = view.get("exitCode")
            if view.get("interrupted") is True:
                lines.append("(interrupted)")
            elif type(code) is int:
                lines.append(f"(exit status {code})")
        elif result is not None:
            lines.append(strip_ansi(result.rstrip("\n")))
        return [("Terminal", "\n".join(lines), "console")]
    if kind in ("write", "edit"):
        path = string_arg(args, "path", "file_path", "filePath", "filename") or "file"
        pair = edit_pair(args)
        diffs: list[str] = []
        if pair is not None:
            diffs.append(_diff_text(pair[0], pair[1], path))
        elif type(args.get("edits")) is list:
            for e in args["edits"]:
                if type(e) is dict:
                    old = e.get("old_string", e.get("old_str", e.get("oldText")))
                    new = e.get("new_string", e.get("new_str", e.get("newText")))
                    if type(old) is str and type(new) is str:
                        diffs.append(_diff_text(old, new, path))
        if not diffs and type(view.get("patch")) is list:
            patch = _patch_text(view["patch"])
            if patch:
                diffs.append(patch)
        if not diffs:
            return None
        return [("Diff", "\n".join(diffs), "diff"), *tail]
    if kind == "code":
        code = string_arg(args, "code", "source", "program")
        if code is None:
            return None
        return [("Program", code.strip("\n"), string_arg(args, "language", "lang") or "javascript"), *tail]
    if kind == "question":
        return question_text(args, result, error=error)
    if kind == "plan":
        return plan_text(args, result, error=error)
    if kind == "web" and result is not None and _fetched(args, result):
        url = string_arg(args, "url", "href") or ""
        return [("URL", url, ""), fetched_text(result, error=error)]
    if kind == "todo":
        todos = args.get("todos")
        if type(todos) is not list:
            return None
        items = []
        for t in todos:
            if type(t) is dict:
                text = t.get("content", t.get("text", t.get("title")))
                status = t.get("status")
                mark = "x" if status in ("completed", "done") else " "
                extra = " (in progress)" if status == "in_progress" else ""
                items.append(f"- [{mark}] {text}{extra}")
        return [("Todos", "\n".join(items), "list"), *tail]
    return None

