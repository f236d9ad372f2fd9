"""A folder opened in the page (picked with "Open folder…" or dropped): its session files described for the list,
read in the browser, nothing uploaded.

Rules: the worker keeps the ``File`` objects and reads them; this module decides what to read and in what order and
turns the bytes into list entries of the server's shape (``facts.entry_value``: one per session a file holds, with
``key`` naming a session of a file holding several). A candidate is a file whose name ends in a suffix of the format
table (``formats.SUFFIXES``), not a Claude Code sidecar (``.meta.json``): its content decides its format. The
Claude Code layout (``interop.claude_layout``) gives a file its context (the sidecar beside it, its parent session)
and its project: a project's files are read oldest first (by the first recorded time of their first bytes) and a
file's reader gets the uuids of the older files as ``seenUuids``, so a record copied from an older session is kept
raw as a duplicate, in the list as in the opened transcript (``context``). Records are counted as they arrive and
dropped (``facts.SessionMeta``); the first fault stops a file's read. A file of no known format is listed as damaged
with its error; a ``.json`` that is no session log, and a sidecar, are left out. Pure apart from the clock (an
entry's status).
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from ..errors import SessionFileError
from ..facts import SessionMeta, entry_value, lineage
from ..formats import SUFFIXES, Format
from ..interop.claude_layout import (
    HEAD_BYTES,
    SIDECAR,
    SIDECAR_MAX,
    ProjectUuids,
    first_time,
    layout_context,
    project_of,
    sidecar_of,
)
from ..logfile import DEFAULT_MAX_LINE_BYTES
from ..store.loader import AnyLoader
from .guard import CallOrderError

__all__ = ["LocalFolder", "FolderRead", "OpenFolder", "is_candidate"]

_FILE = msgspec.json.Decoder(list[dict[str, Any]])


def is_candidate(path: str) -> bool:
    """A file a folder scan reads: a suffix of the table's, not a sidecar."""
    return path.endswith(SUFFIXES) and not path.endswith(SIDECAR)


def _hidden(fmt: Format | None, path: str, error: Exception | None) -> bool:
    """Left out of the list: a file that says it is not a session (a sidecar), or a ``.json`` that is no log."""
    if fmt is not None:
        return not fmt.session
    return path.endswith(".json") and error is not None


class FolderRead:
    """One file of the folder being read: ``feed`` its bytes in order (False: stop, the parse has failed), then
    ``finish`` for its entries."""

    def __init__(self, folder: LocalFolder, path: str) -> None:
        self.folder = folder
        self.path = path
        self.size, self.mtime_ms = folder.files[path]
        self.loader = AnyLoader(path.rsplit("/", 1)[-1], max_line_bytes=DEFAULT_MAX_LINE_BYTES, pack_deltas=True,
                                context=folder.context(path))
        self.main = SessionMeta()
        self.sessions: list[SessionMeta] = [self.main]

    def feed(self, data: bytes | bytearray | memoryview) -> bool:
        loader = self.loader
        loader.feed(data)
        if not loader.needs_path:
            result = loader.result
            self.main.header, self.main.error, self.main.event_count = result.header, result.error, result.event_count
            self.main.note(result.records)
            loader.drop_records()
        return loader.result.error is None

    def finish(self) -> list[dict[str, Any]]:
        loader = self.loader
        if loader.needs_path:
            self._database(loader.database_bytes())
        elif loader.result.error is None:
            result = loader.finish()
            if loader.sessions and (loader.format is None or loader.format.container != "lines"):
                self.sessions = [SessionMeta.of_log(log) for log in loader.sessions]
            else:
                self.main.header, self.main.error, self.main.event_count = (result.header, result.error,
                                                                            result.event_count)
                self.main.note(result.records)
                self.sessions += map(SessionMeta.of_log, loader.children())  # inline sidechains: sessions of their own
        else:
            self.main.error = loader.result.error
        reader = loader.reader
        uuids = getattr(reader, "uuids", None)
        if type(uuids) is list:
            self.folder.project(self.path).add(self.path, uuids)
        titles = getattr(reader, "titles", None)
        if type(titles) is list:
            self.folder.summaries.setdefault(project_of(self.path), []).extend(titles)
        entries = self.entries()
        self.folder.listed[self.path] = entries
        return entries

    def _database(self, data: bytes) -> None:
        from ..store.sqlite import StoreError, read_sqlite_image  # sqlite3 only when a database is listed

        try:
            self.main.take(read_sqlite_image(self.path, bytearray(data)))
        except StoreError as exc:
            self.main.error = SessionFileError(str(exc))

    def entries(self) -> list[dict[str, Any]]:
        fmt = self.loader.format
        header = self.main.header
        if _hidden(fmt, self.path, self.main.error) or (type(header) is dict and header.get("summaryOnly") is True):
            return []  # a summary-only Claude Code file gives titles to other sessions, it is none itself
        now = time.time()
        out = []
        for meta in self.sessions:
            sid = f"{self.path}/{meta.key}" if meta.key else self.path
            entry = entry_value(sid, file=self.path.rsplit("/", 1)[-1], path=self.path, facts=meta.facts,
                                event_count=meta.event_count, problem=meta.problem, size=self.size,
                                mtime_s=self.mtime_ms / 1000, now_s=now, fmt=fmt, label=meta.label,
                                header=meta.header)
            entry.update(lineage(meta.header, meta.subagent_label))
            if meta.facts.title is None and meta.label is None and not meta.key:
                self.folder.untitled.add(sid)
            entry["local"] = {"path": self.path, "key": meta.key or None}
            out.append(entry)
        return out


class LocalFolder:
    """The files of a folder the page opened, by their path in it (``webkitRelativePath``): what to read first
    (``needs``: sidecars whole, the heads of ``.jsonl`` files), the order to read the candidates in, and each
    file's reader context."""

    def __init__(self, files: list[dict[str, Any]]) -> None:
        self.files: dict[str, tuple[int, float]] = {}
        for f in files:
            path, size, mtime = f.get("path"), f.get("size"), f.get("lastModified")
            if type(path) is str and path:
                when = float(mtime) if isinstance(mtime, (int, float)) else 0.0
                self.files[path] = (size if type(size) is int else 0, when)
        self.candidates = sorted(p for p in self.files if is_candidate(p))
        self.sidecars: dict[str, bytes] = {}
        self._projects: dict[str, ProjectUuids] = {}
        self.listed: dict[str, list[dict[str, Any]]] = {}  # path -> its entries, as read
        self.summaries: dict[str, list[tuple[str, str]]] = {}  # project -> (leafUuid, title) of its summaries
        self.untitled: set[str] = set()  # entries with no title record of their own

    def needs(self) -> dict[str, Any]:
        """``{sidecars: [path], sidecarBytes, heads: [path], headBytes, candidates}``: what to ``give`` before
        ``order`` (at most ``sidecarBytes`` of a sidecar, one more than is read: a larger one is ignored)."""
        sidecars = [s for p in self.candidates if (s := sidecar_of(p)) is not None and s in self.files]
        heads = [p for p in self.candidates if p.endswith(".jsonl")]
        return {"sidecars": sidecars, "sidecarBytes": SIDECAR_MAX + 1, "heads": heads, "headBytes": HEAD_BYTES,
                "candidates": len(self.candidates)}

    def project(self, path: str) -> ProjectUuids:
        key = project_of(path)
        found = self._projects.get(key)
        if found is None:
            found = self._projects[key] = ProjectUuids()
        return found

    def give_sidecar(self, path: str, data: bytes | bytearray | memoryview) -> None:
        self.sidecars[path] = bytes(data)

    def give_head(self, path: str, data: bytes | bytearray | memoryview) -> None:
        self.project(path).rank(path, first_time(data), self.files[path][1] if path in self.files else 0.0)

    def order(self) -> list[str]:
        """The candidates in reading order: by project, each project's files oldest first."""
        by_project: dict[str, list[str]] = {}
        for path in self.candidates:
            by_project.setdefault(project_of(path), []).append(path)
        out: list[str] = []
        for key in sorted(by_project):
            out += self.project(by_project[key][0]).order(by_project[key])
        return out

    def entries(self) -> list[dict[str, Any]]:
        """Every entry read so far, a Claude Code ``summary`` in another file of the project titling the session
        that holds its leaf when that session has no title record of its own (FORMATS §4.8)."""
        titled: dict[str, str] = {}
        for project, pairs in self.summaries.items():
            uuids = self._projects.get(project)
            for leaf, title in pairs:
                holder = uuids.holder(leaf) if uuids is not None else None
                if holder is not None and holder in self.untitled:
                    titled[holder] = title  # the last summary of a leaf wins, as it does inside one file
        out = []
        for path in self.order():
            for entry in self.listed.get(path, ()):
                found = titled.get(entry["id"])
                out.append({**entry, "title": found} if found is not None else entry)
        return out

    def context(self, path: str) -> dict[str, Any] | None:
        """The reader context of ``path``: its Claude Code layout and the uuids of its project's older files."""
        side = sidecar_of(path)
        context = dict(layout_context(path, self.sidecars.get(side) if side is not None else None) or {})
        if path.endswith(".jsonl"):
            context["seenUuids"] = self.project(path).before(path)
        return context or None


class OpenFolder:
    """The folder the page opened last and the file of it being read (``web/worker.mjs`` drives it through the
    wire API): ``open`` (the files' ``[{path, size, lastModified}]`` as JSON bytes) → what to read first; ``give``
    each; ``order``; then per file ``read_begin``, ``read_feed`` (``{go: false}`` once its parse has failed: read no
    more of it) and ``read_finish`` → its entries; ``entries`` → all of them, titled across files. ``context`` is a
    file's reader context when it is opened."""

    def __init__(self) -> None:
        self.folder: LocalFolder | None = None
        self.read: FolderRead | None = None

    def open(self, files: bytes | bytearray | memoryview) -> dict[str, Any]:
        self.folder = LocalFolder(_FILE.decode(bytes(files)))
        self.read = None
        return self.folder.needs()

    def _opened(self) -> LocalFolder:
        if self.folder is None:
            raise CallOrderError("a folder call before folder_open")
        return self.folder

    def give(self, kind: str, path: str, data: bytes | bytearray | memoryview) -> None:
        folder = self._opened()
        if kind == "sidecar":
            folder.give_sidecar(path, data)
        else:
            folder.give_head(path, data)

    def order(self) -> list[str]:
        return self._opened().order()

    def read_begin(self, path: str) -> None:
        folder = self._opened()
        if path not in folder.files:
            raise CallOrderError(f"{path!r} is not a file of the open folder")
        self.read = FolderRead(folder, path)

    def read_feed(self, data: bytes | bytearray | memoryview) -> dict[str, bool]:
        if self.read is None:
            raise CallOrderError("folder_read_feed before folder_read_begin")
        return {"go": self.read.feed(data)}

    def read_finish(self) -> list[dict[str, Any]]:
        read = self.read
        if read is None:
            raise CallOrderError("folder_read_finish before folder_read_begin")
        self.read = None
        return read.finish()

    def entries(self) -> list[dict[str, Any]]:
        """Every entry of the files read (``LocalFolder.entries``), in reading order."""
        return self._opened().entries()

    def context(self, path: str) -> dict[str, Any] | None:
        """The reader context of ``path`` when it is a file of the open folder, else None."""
        return self.folder.context(path) if self.folder is not None and path in self.folder.files else None
