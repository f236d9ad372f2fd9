"""Per-file metadata for the session list: what a listing needs, never the records.

Rules: ``FileMeta`` reads a session file of any format in the table (``store.loader.AnyLoader``: the content decides)
in bounded pieces and keeps only counts and a few values per session it holds (header, the list's ``SessionFacts``,
the subagent label, the first fault); the records are dropped as they are counted. A file of a format that grows by
appending (ours, Claude Code, Codex, Gemini JSONL) that grew is read on from where it stopped (the parser carries a
partial line); one rewritten in place (``identity``) is read again from the start; a compressed file, a SQLite
database or a whole-document format (Inspect, SWE-agent, OpenHands, ...) is read again whole when it changes. A file
holding several sessions (an Inspect log) has one ``SessionMeta`` per session. Blocking: call ``refresh_sync`` in a
worker thread. The ``Catalog`` holds one ``FileMeta`` per path and forgets paths no longer scanned.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import AssemblerError
from ..facts import SessionMeta, describe_problem
from ..formats import Format
from ..logfile import DEFAULT_MAX_LINE_BYTES
from ..store.loader import AnyLoader
from ..store.sqlite import is_sqlite_path
from .confine import open_in_root
from .identity import Identity, compare, identity_of
from .listing import SessionFacts

__all__ = ["FileMeta", "SessionMeta", "Catalog", "READ_PIECE", "TAIL_IDLE_S", "describe_problem", "appends",
           "named_database"]

READ_PIECE = 1 << 20
"""Bytes read from a file at a time (a zstd file: compressed bytes)."""
TAIL_IDLE_S = 10.0
"""An append-only log of another harness not written for this long has its newest response closed (Claude Code
writes a response block by block and never marks its end; ``AnyLoader.close_tail``), in the list as in pages."""


def appends(loader: AnyLoader) -> bool:
    """The file is read on from where it stopped when it grows (a plain line format); otherwise it is read again
    whole when it changes (compressed, SQLite, a document or zip format, or a format not known yet)."""
    fmt = loader.format
    return fmt is not None and fmt.container == "lines" and not loader.compressed


def named_database(path: Path, loader: AnyLoader) -> bool:
    """A file named as a database whose content is of no known format: SQLite's reader says what it is instead."""
    return loader.format is None and loader.result.error is not None and is_sqlite_path(path)


class FileMeta:
    """What the session list shows of one file (one session, or several), kept up to date from its new bytes."""

    def __init__(self, path: Path, root: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 context: dict[str, Any] | None = None) -> None:
        self.path = path
        self.root = root
        self.max_line_bytes = max_line_bytes
        self.context = context
        self._reset()

    def _reset(self) -> None:
        self.main = SessionMeta()
        self.sessions: list[SessionMeta] = [self.main]
        self.size = 0
        self.mtime_ns = 0
        self._loader = AnyLoader(self.path.name, max_line_bytes=self.max_line_bytes, pack_deltas=True,
                                 context=self.context)
        self._identity: Identity | None = None
        self._tail_closed = False

    # The file's only (or first) session, as the listing of a one-session file reads it.
    @property
    def header(self) -> dict[str, Any] | None:
        return self.main.header

    @property
    def facts(self) -> SessionFacts:
        return self.main.facts

    @property
    def subagent_label(self) -> str | None:
        return self.main.subagent_label

    @property
    def event_count(self) -> int:
        return self.main.event_count

    @property
    def error(self) -> AssemblerError | None:
        return self.main.error

    @property
    def problem(self) -> str | None:
        return self.main.problem

    @property
    def format(self) -> Format | None:
        return self._loader.format

    @property
    def uuids(self) -> list[str] | None:
        """The uuids the file's reader has read so far, first copies in file order (a Claude Code file), for its
        project (``projects``); None for another format."""
        value = getattr(self._loader.reader, "uuids", None)
        return value if type(value) is list else None

    def refresh_sync(self) -> None:
        """Read what changed (blocking).

        Raises:
            OutsideRootError: the file is no longer a regular file inside its root.
            OSError: it cannot be read.
        """
        if self._unchanged():
            return
        with open_in_root(self.path, self.root) as stream:
            fd = stream.fileno()
            st = os.fstat(fd)
            change = compare(self._identity, fd, st)
            if change == "unchanged":
                if appends(self._loader) and self._close_idle_tail(st.st_mtime):
                    self._children()
                return
            if change == "rewritten" or not appends(self._loader):
                self._reset()
            self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
            loader = self._loader
            offset = self._identity.offset if self._identity is not None else 0
            while loader.result.error is None and not loader.needs_path:
                piece = os.pread(fd, READ_PIECE, offset)
                if not piece:
                    break
                offset += len(piece)
                loader.feed(piece)
                self._tail_closed = False
                self._counted()
            if loader.needs_path or named_database(self.path, loader):
                self._read_database(stream)
            elif not appends(loader):
                self._finish()
            else:
                self._close_idle_tail(st.st_mtime)
                self._children()
            self._identity = identity_of(fd, offset, st)

    def _unchanged(self) -> bool:
        """The file is the one read and as it was read (device, inode, size and time by ``lstat``, nothing opened)
        and no idle tail is due to close: a listing of a quiet folder costs a stat per file. Anything else goes
        through the confined open, which decides as before (a symlink or another file put in its place has another
        inode); so does a line-format file idle long enough for its tail to close (due by the clock, not a change)."""
        old = self._identity
        if old is None:
            return False
        try:
            st = os.lstat(self.path)
        except OSError:
            return False
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != (old.dev, old.ino, old.size, old.mtime_ns):
            return False
        return self._tail_closed or not appends(self._loader) or time.time() - st.st_mtime < TAIL_IDLE_S

    @property
    def read_once(self) -> bool:
        """The file has been read (up to where it was when it was): its entry can be listed."""
        return self._identity is not None

    def _close_idle_tail(self, mtime_s: float) -> bool:
        """A line-format file not written for ``TAIL_IDLE_S``: its newest response is complete (pages close it the
        same way), once per idle spell. True when it was closed now."""
        if self._tail_closed or time.time() - mtime_s < TAIL_IDLE_S:
            return False
        self._tail_closed = True
        self._loader.close_tail()
        self._counted()
        return True

    def _counted(self) -> None:
        """Note the records the loader completed, then forget them."""
        loader, main = self._loader, self.main
        result = loader.result
        main.header, main.error, main.event_count = result.header, result.error, result.event_count
        main.note(result.records)
        loader.drop_records()

    def _children(self) -> None:
        """The sessions a line format's reader routed out of the file (Claude Code's inline sidechains): each
        listed with its own facts (their records are kept by the reader; the main log's are dropped)."""
        children = self._loader.children()
        self.sessions = [self.main]
        for log in children:
            meta = SessionMeta(log.key, log.label)
            meta.take(log.result)
            self.sessions.append(meta)

    def _finish(self) -> None:
        """A file read whole: every session it holds."""
        loader = self._loader
        result = loader.finish()
        if loader.sessions:
            self.sessions = []
            for log in loader.sessions:
                meta = SessionMeta(log.key, log.label)
                meta.take(log.result)
                self.sessions.append(meta)
            self.main = self.sessions[0]
            return
        self.main.take(result)

    def _read_database(self, stream: BinaryIO) -> None:
        from .database import read_served_database

        # through the checked descriptor
        self.main.take(read_served_database(self.path, self.root, stream, max_line_bytes=self.max_line_bytes))


class Catalog:
    """``FileMeta`` by path, for every scanned session file."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._files: dict[Path, FileMeta] = {}

    def meta(self, path: Path, root: Path, context: dict[str, Any] | None = None) -> FileMeta:
        """The (possibly not yet refreshed) metadata of ``path``."""
        meta = self._files.get(path)
        if meta is None or meta.root != root or meta.context != context:
            meta = self._files[path] = FileMeta(path, root, self.max_line_bytes, context)
        return meta

    def known(self, path: Path) -> FileMeta | None:
        """The metadata of ``path`` if the list has read it (at least once: it may be older than the file)."""
        meta = self._files.get(path)
        return meta if meta is not None and meta.read_once else None

    def keep_only(self, paths: Iterable[Path]) -> None:
        """Forget every path not in ``paths`` (files gone since the last scan)."""
        keep = set(paths)
        # A snapshot of the keys (one C-level copy under the GIL): a listing reading on in another thread may add
        # metadata while the scan forgets files.
        for path in [p for p in list(self._files) if p not in keep]:
            self._files.pop(path, None)
