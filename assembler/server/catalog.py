"""One reader per served file (``ServedFile``): what the session list shows of it and what its opened sessions'
pages and followers get, from one pass over its bytes.

Rules: a ``ServedFile`` reads a session file of any format in the table (``store.loader.AnyLoader``: the content
decides) in bounded pieces, through the descriptor ``confine.open_in_root`` checked. For the list it keeps counts and
a few values per session the file holds (``SessionMeta``: header, ``SessionFacts``, subagent label, first fault);
the records are dropped as they are counted unless a session of the file is open (``attach``): an open session
(``Opened``: a page's source) gets every record of its key as it is read, once. A file of a format that grows by
appending (ours, Claude Code, Codex, Gemini JSONL) that grew is read on from where it stopped (the parser carries a
partial line); one rewritten in place (``identity``) is read again from the start, and its open sessions start over
(their followers are cut off); a compressed file, a SQLite database or a whole-document format (Inspect, SWE-agent,
OpenHands, ...) is read again whole when it changes. A file holding several sessions (an Inspect log) has one
``SessionMeta`` per session. While one of its sessions is followed, a row our own log's run of delta lines is read
into keeps those lines (``AnyLoader.keep_runs``): a live block reaches the followers as the file holds it, the
history keeps the row. A listing of a quiet folder costs
an ``lstat`` per file (``_unchanged``). Blocking: call ``refresh_sync`` in a worker thread; the file's ``lock`` is
held for every read and every use of an open session's index. The ``Catalog`` holds one ``ServedFile`` per path and
forgets paths no longer scanned.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from ..errors import AssemblerError, SessionFileError
from ..facts import SessionMeta, describe_problem
from ..formats import Format
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from ..records import StorageRecord
from ..store.feed import Piece, feed_all
from ..store.loader import AnyLoader
from ..store.sqlite import is_sqlite_path
from .confine import open_in_root
from .identity import Identity, compare, identity_of
from .listing import SessionFacts

__all__ = ["ServedFile", "Opened", "SessionMeta", "Catalog", "READ_PIECE", "TAIL_IDLE_S", "describe_problem"]

READ_PIECE = 1 << 20
"""Bytes read from a file at a time (a zstd file: compressed bytes)."""
TAIL_IDLE_S = 10.0
"""An append-only log of another harness not written for this long has its newest response closed (Claude Code
writes a response block by block and never marks its end; ``AnyLoader.close_tail``), in the list as in pages."""


class Opened(Protocol):
    """An open session of a served file (``source.SessionSource``): what it is told as the file is read."""

    key: str | None
    closed: bool  # no longer served: forgotten at the file's next look

    def following(self) -> bool:
        """Someone follows it now (its file is then read line by line)."""

    def take(self, result: LoadResult, records: list[StorageRecord], lines: list[bytes | None] | None) -> None:
        """``records`` (new, in order) of the session ``result`` reads; header and fault are ``result``'s.
        ``lines``: beside each record, the lines a row was read from when they were kept (``keep_runs``)."""

    def restart(self, cut: bool) -> None:
        """The file is read again from its start; ``cut``: it had been read (its followers must reconnect)."""


class _Share:
    """How far an open session has taken its result's records."""

    __slots__ = ("result", "seen")

    def __init__(self) -> None:
        self.result: LoadResult | None = None
        self.seen = 0


class ServedFile:
    """One served file (one session, or several), read once for the list and the open sessions alike."""

    def __init__(self, path: Path, root: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 context: dict[str, Any] | None = None) -> None:
        self.path = path
        self.root = root
        self.max_line_bytes = max_line_bytes
        self.context = context
        self.lock = threading.Lock()
        self._opened: dict[Opened, _Share] = {}
        self._reset()

    def _reset(self) -> None:
        self.main = SessionMeta()
        self.sessions: list[SessionMeta] = [self.main]
        self.size = 0
        self.mtime_ns = 0
        self._loader = AnyLoader(self.path.name, max_line_bytes=self.max_line_bytes, pack_deltas=True,
                                 context=self.context)
        self._database: LoadResult | None = None
        self._identity: Identity | None = None
        self._tail_closed = False
        self._noted = 0  # main records already counted for the list
        self._dropped = False  # main records were dropped: an open main session needs the file read again
        for opened, share in self._opened.items():
            opened.restart(share.result is not None)
            self._opened[opened] = _Share()

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
    def compressed(self) -> bool:
        return self._loader.compressed

    @property
    def database(self) -> bool:
        return self._loader.needs_path

    @property
    def appends(self) -> bool:
        """New records can arrive by appending (a plain line format; a file of no format known yet may become one)."""
        return self._loader.live or self._loader.format is None

    @property
    def bytes_read(self) -> int:
        """How many bytes of the file have been read (a partial last line included)."""
        return self._identity.offset if self._identity is not None else 0

    @property
    def uuids(self) -> list[str] | None:
        """The uuids the file's reader has read so far, first copies in file order (a Claude Code file), for its
        project (``projects``); None for another format."""
        value = getattr(self._loader.reader, "uuids", None)
        return value if type(value) is list else None

    @property
    def read_once(self) -> bool:
        """The file has been read (up to where it was when it was): its entry can be listed."""
        return self._identity is not None

    # -- open sessions -----------------------------------------------------------------------------------------

    def attach(self, opened: Opened) -> None:
        """Give ``opened`` every record of its session from now on (the file is read again from its start when the
        list has dropped them). Blocking: it waits for a read under way."""
        with self.lock:
            self._opened[opened] = _Share()
            if self._identity is not None and self._dropped and opened.key is None:
                self._reset()  # read again from the start: the list kept counts, not records
            else:
                self._share()

    def _prune(self) -> None:
        """Forget the open sessions closed since the last look (closing one never waits for a read)."""
        closed = [opened for opened in self._opened if opened.closed]
        for opened in closed:
            del self._opened[opened]
        if closed:
            self._forget()

    def fail(self, error: SessionFileError) -> None:
        """A failure no reader rule foresaw: the file's (and each open session's) fault."""
        with self.lock:
            self.main.error = self._loader.result.error = error
            self._share()

    # -- reading (blocking) ------------------------------------------------------------------------------------

    def refresh_sync(self, *, quick: bool = True) -> None:
        """Read what changed (blocking). ``quick``: a file whose ``lstat`` shows it as read is not opened (the
        list); a page looks through the checked descriptor every time.

        Raises:
            OutsideRootError: the file is no longer a regular file inside its root.
            OSError: it cannot be read.
        """
        with self.lock:
            self._prune()
            if quick and self._unchanged():
                return
            with open_in_root(self.path, self.root) as stream:
                self._read(stream)

    def _read(self, stream: BinaryIO) -> None:
        fd = stream.fileno()
        st = os.fstat(fd)
        change = compare(self._identity, fd, st)
        if change == "unchanged":
            if self._loader.live:
                self._close_idle_tail(st.st_mtime)
            return
        # Read again from the start: a rewritten file, a whole-file format, or a file read to its end as complete
        # (one that was empty, or whose first line was not whole yet) which has grown since.
        old = self._loader
        if self._identity is not None and (change == "rewritten" or not old.live or old.finished):
            self._reset()
        self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
        loader = self._loader
        loader.keep_runs(any(opened.following() for opened in self._opened))
        offset = self._identity.offset if self._identity is not None else 0

        def read() -> bytes:
            nonlocal offset
            piece = os.pread(fd, READ_PIECE, offset)
            offset += len(piece)
            return piece

        def feed(piece: Piece) -> None:
            loader.feed(piece)
            self._tail_closed = False
            self._counted()

        feed_all(read, feed, more=lambda: loader.result.error is None and not loader.needs_path)
        if loader.needs_path or self._named_database():
            # through the checked descriptor
            from .database import read_served_database

            self._database = read_served_database(self.path, self.root, stream, max_line_bytes=self.max_line_bytes)
            self.main.take(self._database)
            self._share()
            self._forget()
        elif not loader.live:
            self._finish()
        else:
            self._close_idle_tail(st.st_mtime)
            self._children()
        self._identity = identity_of(fd, offset, st)

    def _named_database(self) -> bool:
        """A file named as a database whose content is of no known format: SQLite's reader says what it is."""
        loader = self._loader
        return loader.format is None and loader.result.error is not None and is_sqlite_path(self.path)

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
        return self._tail_closed or not self._loader.live or time.time() - st.st_mtime < TAIL_IDLE_S

    def _close_idle_tail(self, mtime_s: float) -> None:
        """A line-format file not written for ``TAIL_IDLE_S``: its newest response is complete, once per idle
        spell (new bytes open it again)."""
        if self._tail_closed or time.time() - mtime_s < TAIL_IDLE_S:
            return
        self._tail_closed = True
        self._loader.close_tail()
        self._counted()
        self._children()

    def _counted(self) -> None:
        """Give the open sessions their new records, count the main log's for the list, then forget them unless
        the main session is open."""
        self._share()
        loader, main = self._loader, self.main
        result = loader.result
        main.header, main.error, main.event_count = result.header, result.error, result.event_count
        main.note(result.records[self._noted:])
        self._noted = len(result.records)
        self._forget()

    def _forget(self) -> None:
        """Drop the main session's records, counted already, unless it is open (the list keeps no records)."""
        if any(opened.key is None for opened in self._opened):
            return
        if self._database is not None:
            self._database, self._dropped = None, True
        result = self._loader.result
        if result.records:
            self._loader.drop_records()
            self._dropped, self._noted = True, 0
            for share in self._opened.values():
                if share.result is result:
                    share.seen = 0

    def _share(self) -> None:
        kept = self._loader.lines_read()
        for opened, share in self._opened.items():
            key = opened.key
            result = self._database if self._database is not None and key is None else self._loader.session(key)
            if result is not share.result:
                share.result, share.seen = result, 0
            start = share.seen
            new = result.records[start:]
            share.seen = len(result.records)
            lines = [kept.get(i) for i in range(start, share.seen)] if kept and result is self._loader.result \
                else None
            opened.take(result, new, lines)

    def _children(self) -> None:
        """The sessions a line format's reader routed out of the file (Claude Code's inline sidechains): each
        listed with its own facts (their records are kept by the reader; the main log's are dropped)."""
        self.sessions = [self.main, *map(SessionMeta.of_log, self._loader.children())]

    def _finish(self) -> None:
        """A file read whole: every session it holds."""
        loader = self._loader
        loader.finish()
        if loader.format is not None and loader.format.container == "lines":
            self._counted()
            self._children()
            return
        self._share()
        if loader.sessions:
            self.sessions = [SessionMeta.of_log(log) for log in loader.sessions]
            self.main = self.sessions[0]
        else:
            self.main.take(loader.result)


class Catalog:
    """``ServedFile`` by path, for every scanned session file."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._files: dict[Path, ServedFile] = {}

    def file(self, path: Path, root: Path, context: dict[str, Any] | None = None) -> ServedFile:
        """The (possibly not yet read) served file ``path``."""
        served = self._files.get(path)
        if served is None or served.root != root or served.context != context:
            served = self._files[path] = ServedFile(path, root, self.max_line_bytes, context)
        return served

    def current(self, path: Path) -> ServedFile | None:
        """The served file ``path`` as last made (read or not)."""
        return self._files.get(path)

    def known(self, path: Path) -> ServedFile | None:
        """The served file ``path`` if it has been read (at least once: it may be older than the file)."""
        served = self._files.get(path)
        return served if served is not None and served.read_once else None

    def keep_only(self, paths: Iterable[Path]) -> None:
        """Forget every path not in ``paths`` (files gone since the last scan)."""
        keep = set(paths)
        # A snapshot of the keys (one C-level copy under the GIL): a listing reading on in another thread may add
        # files while the scan forgets them.
        for path in [p for p in list(self._files) if p not in keep]:
            self._files.pop(path, None)
