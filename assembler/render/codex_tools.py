"""What the tool rows need for Codex's own tools (FORMATS.md §5.3, §5.7), kept apart from the general tool kinds:
a shell command given as an argv list (``shell``, ``local_shell``), the exit status in a Codex output envelope
(``Process exited with code N``, or a process still running in a session), an ``update_plan`` plan as checklist
items, and an ``apply_patch`` patch (freeform ``input``, a JSON ``{"input"}``, or ``["apply_patch", patch]``)
as a coloured diff with its summary.

Rules: only recorded text is read (the patch and the envelope as the model saw them); anything that does not have
the expected shape gives None and the caller keeps its general body. Every string is escaped. Pure.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..tooltext import FilePatch, exit_code_of, parse_patch, patch_counts
from .markdown import escape

__all__ = ["command_of", "argv_command", "envelope_span", "plan_items", "patch_of", "patch_summary", "patch_html",
           "patch_text"]

_RUNNING = re.compile(r"^Process running with session ID (\S+)$", re.MULTILINE)


def argv_command(value: Any) -> str | None:
    """A command given as an argv list (``["bash", "-lc", "ls -la"]``), as one shell line."""
    if type(value) is not list or not value or any(type(v) is not str for v in value):
        return None
    argv: list[str] = value
    if len(argv) == 3 and argv[1] in ("-lc", "-c") and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
        return argv[2]  # the script the shell runs is the command
    return shlex.join(argv)


def command_of(args: dict[str, Any]) -> str | None:
    """A shell call's command: the first non-empty string of ``command``, ``cmd``, ``script``, ``input``, else
    ``command`` as an argv list (Codex ``shell``, ``local_shell``)."""
    for key in ("command", "cmd", "script", "input"):
        value = args.get(key)
        if type(value) is str and value:
            return value
    return argv_command(args.get("command"))


def envelope_span(output: str) -> str | None:
    """The terminal's end line for a Codex output envelope: ``exit status N`` (marked bad when not 0) or ``running
    in session N`` (``write_stdin`` polls it later); None when the output has no envelope."""
    code = exit_code_of(output)
    if code is not None:
        return f'<span class="exit{"" if code == 0 else " exit-bad"}">exit status {code}</span>'
    found = _RUNNING.search(output[:4096])
    if found is not None:
        return f'<span class="exit">running in session {escape(found.group(1))}</span>'
    return None


def plan_items(args: dict[str, Any]) -> list[dict[str, Any]] | None:
    """``update_plan``'s ``plan`` (``[{step, status}]``) as checklist items ``{content, status}``."""
    plan = args.get("plan")
    if type(plan) is not list:
        return None
    return [{"content": p.get("step"), "status": p.get("status")} for p in plan if type(p) is dict]


def patch_of(arguments: Any, args: dict[str, Any] | None) -> list[FilePatch] | None:
    """The file changes of an ``apply_patch`` call, from whichever form its arguments take."""
    if args is not None:
        for value in (args.get("input"), args.get("patch")):
            if type(value) is str:
                return parse_patch(value)
        command = args.get("command")
        if type(command) is list and len(command) == 2 and command[0] == "apply_patch" and type(command[1]) is str:
            return parse_patch(command[1])
        return None
    return parse_patch(arguments) if type(arguments) is str else None


def patch_text(files: list[FilePatch]) -> str:
    """A patch's file changes as a unified diff (for the Markdown export)."""
    out: list[str] = []
    for f in files:
        out += ["--- /dev/null" if f.op == "add" else f"--- a/{f.path}",
                "+++ /dev/null" if f.op == "delete" else f"+++ b/{f.move_to or f.path}"]
        for mark, line in f.lines:
            out.append((f"@@ {line} @@" if line else "@@ @@") if mark == "@" else mark + line)
    return "\n".join(out)


def patch_summary(files: list[FilePatch]) -> str:
    """``path +a −r`` for one file, ``N files +a −r`` for more."""
    added, removed = patch_counts(files)
    what = files[0].path if len(files) == 1 else f"{len(files)} files"
    return f"{what} +{added} −{removed}"


_OPS = {"add": "added", "delete": "deleted", "update": "updated"}


def patch_html(files: list[FilePatch]) -> str:
    """Each file of a patch as a diff block: a header (path, what happened, where it moved) and its lines."""
    parts = []
    for f in files:
        moved = f" → {escape(f.move_to)}" if f.move_to else ""
        rows = []
        for mark, line in f.lines:
            if mark == "@":
                rows.append(f'<span class="hunk">@@ {escape(line)}</span>' if line else '<span class="hunk">@@</span>')
            else:
                css = "add" if mark == "+" else "del" if mark == "-" else "ctx"
                rows.append(f'<span class="{css}">{escape(mark + line) or " "}</span>')
        parts.append(f'<div class="section-label">{escape(f.path)}{moved} ({_OPS[f.op]})</div>'
                     f'<pre class="diff" aria-label="Diff of {escape(f.path)}">{"".join(rows)}</pre>')
    return "".join(parts)
