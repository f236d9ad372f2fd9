"""The served Claude Code projects (FORMATS §4.8): each record shown once, in the oldest file of its project holding
it, in the list and in pages.

Rules: a project is the folder holding a session file (``interop.claude_layout.project_of``). A ``.jsonl`` file is
ranked once, by the first recorded time of its first ``HEAD_BYTES`` (then its mtime, then its name), read through
``confine.open_in_root``; files are listed oldest first within their project, and a file's reader gets, as
``seenUuids``, the live view of the uuids its project's older files hold (``ProjectUuids.before``): filled from the
readers the list keeps (``ServedFile.uuids``) as it reads them, so no file is read twice for it (only the heads once
more). A page's source gets the same view; the project's older files are listed first (``prime``) when the list has
not read them yet. Blocking: call from a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..interop.claude_layout import HEAD_BYTES, ProjectUuids, first_time, project_of
from .catalog import ServedFile
from .confine import open_in_root

__all__ = ["Projects"]


QUICK_HEAD_BYTES = 8 << 10
"""The first read of a file's head when ranking it (``HEAD_BYTES`` only when these hold no recorded time)."""


class Projects:
    """The uuids of every served project, by file (see the module rules)."""

    def __init__(self) -> None:
        self._projects: dict[str, ProjectUuids] = {}
        self._ranked: set[Path] = set()
        self._taken: dict[Path, int] = {}  # uuids of a file's reader already added to its project

    def project(self, path: Path) -> ProjectUuids:
        key = project_of(path.as_posix())
        found = self._projects.get(key)
        if found is None:
            found = self._projects[key] = ProjectUuids()
        return found

    def rank(self, path: Path, root: Path) -> None:
        """Rank ``path`` in its project by its head, once (a file that cannot be read ranks last)."""
        if path in self._ranked or not path.name.endswith(".jsonl"):
            return
        self._ranked.add(path)
        try:
            with open_in_root(path, root) as stream:
                # Most files record a time in their first lines: a short read first, the whole head only if not.
                head = os.pread(stream.fileno(), QUICK_HEAD_BYTES, 0)
                first = first_time(head)
                if first is None and len(head) == QUICK_HEAD_BYTES:
                    first = first_time(os.pread(stream.fileno(), HEAD_BYTES, 0))
                mtime = os.fstat(stream.fileno()).st_mtime
        except OSError:
            first, mtime = None, 0.0
        self.project(path).rank(str(path), first, mtime)

    def context(self, path: Path, root: Path, base: dict[str, Any] | None) -> dict[str, Any] | None:
        """``base`` (the file's layout context) with ``seenUuids`` for a ``.jsonl`` file."""
        if not path.name.endswith(".jsonl"):
            return base
        self.rank(path, root)
        return {**(base or {}), "seenUuids": self.project(path).before(str(path))}

    def order(self, paths: Iterable[tuple[Path, Path]]) -> list[Path]:
        """``(path, root)`` pairs' paths by project, each project's oldest first (files of other kinds as given)."""
        groups: dict[str, list[Path]] = {}
        for path, root in paths:
            self.rank(path, root)
            groups.setdefault(project_of(path.as_posix()), []).append(path)
        out: list[Path] = []
        for group in groups.values():
            project = self.project(group[0])
            ranked = project.order(str(p) for p in group)
            by_name = {str(p): p for p in group}
            out += [by_name[name] for name in ranked]
        return out

    def take(self, path: Path, meta: ServedFile) -> None:
        """Add the uuids the list's reader of ``path`` has read since the last call to its project."""
        uuids = meta.uuids
        if uuids is None:
            return
        start = self._taken.get(path, 0)
        if start > len(uuids):
            start = 0  # the file was read again from its start (rewritten)
        self.project(path).add(str(path), uuids[start:])
        self._taken[path] = len(uuids)
