"""What a Codex tool call's recorded text says, read the same way by the Codex reader and by the renderer: the
``apply_patch`` grammar as file changes, and the exit status in a tool output's envelope.

The patch grammar (the ``input`` of a ``custom_tool_call`` named ``apply_patch``, or the patch argument of older
shell and function forms): ``*** Begin Patch``, then per file ``*** Add File: P`` (every line ``+``), ``*** Delete
File: P`` or ``*** Update File: P`` (optionally ``*** Move to: Q``) with chunks opened by ``@@`` (optionally followed
by a context line) whose lines start with `` ``, ``-`` or ``+``, and ``*** End of File``; then ``*** End Patch``.
The output envelope: a few header lines (``Process exited with code N``, ...) before ``Output:``.

Rules: the patch records no line numbers, so hunk headers carry its ``@@`` context instead of ranges; a line inside
an update chunk without a prefix counts as context (Codex's own parser is as lenient); anything before
``*** Begin Patch`` (a shell heredoc) is skipped. Text that is not a patch or an envelope gives None, never an
exception. Pure: only text in, so readers and render both import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FilePatch", "parse_patch", "patch_counts", "find_patch", "exit_code_of"]

Op = Literal["add", "delete", "update"]
_BEGIN = "*** Begin Patch"
_END = "*** End Patch"
_HEADS: dict[str, Op] = {"*** Add File: ": "add", "*** Delete File: ": "delete", "*** Update File: ": "update"}


@dataclass
class FilePatch:
    """One file's change: ``lines`` are ``(mark, text)`` with mark ``@`` (a hunk header holding its context),
    `` `` (context), ``-`` or ``+``."""

    op: Op
    path: str
    move_to: str | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(1 for mark, _ in self.lines if mark == "+")

    @property
    def removed(self) -> int:
        return sum(1 for mark, _ in self.lines if mark == "-")


def find_patch(text: str) -> str | None:
    """The patch inside ``text`` (from ``*** Begin Patch`` on), or None when there is none."""
    start = text.find(_BEGIN)
    if start == -1 or (start > 0 and text[start - 1] != "\n" and text[:start].strip()):
        return None
    return text[start:]


def parse_patch(text: str) -> list[FilePatch] | None:
    """The file changes of a patch, in order; None when ``text`` holds no patch or no file in it."""
    body = find_patch(text)
    if body is None:
        return None
    files: list[FilePatch] = []
    current: FilePatch | None = None
    for raw in body.split("\n")[1:]:
        line = raw[:-1] if raw.endswith("\r") else raw
        if line.startswith(_END):
            break
        head = next((h for h in _HEADS if line.startswith(h)), None)
        if head is not None:
            current = FilePatch(_HEADS[head], line[len(head):].strip())
            files.append(current)
            continue
        if current is None:
            continue
        if line.startswith("*** Move to: ") and current.op == "update":
            current.move_to = line[len("*** Move to: "):].strip()
        elif line.startswith("*** End of File"):
            continue
        elif current.op == "add":
            current.lines.append(("+", line[1:] if line.startswith("+") else line))
        elif current.op == "update":
            if line.startswith("@@"):
                current.lines.append(("@", line[2:].strip()))
            elif line[:1] in ("+", "-", " "):
                current.lines.append((line[0], line[1:]))
            elif line or current.lines:
                current.lines.append((" ", line))
    return files or None


def patch_counts(files: list[FilePatch]) -> tuple[int, int]:
    """(lines added, lines removed) over every file of a patch."""
    return sum(f.added for f in files), sum(f.removed for f in files)


_ENVELOPE_END = "\nOutput:\n"
_EXITED = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)


def exit_code_of(text: str) -> int | None:
    """The exit status in a tool output's envelope header (the lines before ``Output:``)."""
    end = text.find(_ENVELOPE_END)
    head = text if end == -1 else text[:end]
    if len(head) > 4096:
        return None  # not an envelope: a header is a few short lines
    found = _EXITED.search(head)
    return int(found.group(1)) if found is not None else None
