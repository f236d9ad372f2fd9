"""Roots and ids: the served roots (files and folders), the session files found by scanning them, and the lookup of
an id to its ``SessionSource``.

Rules: an id is only ever looked up among the scanned files, so it can never reach outside the roots (``..``,
absolute ids and symlinks resolving outside a root are refused with 404). Each source knows its root, and every
open checks the file against it again (``confine.open_in_root``): a file swapped for a symlink after the scan is
refused (403), never served.

Memory and the event loop: the session list is built from per-file metadata
(``catalog``), never from records; the parsed sessions pages come from are an LRU cache bounded by ``cache_bytes``
of file bytes (a followed session is never evicted). An unknown id rescans the roots in a worker thread, at most
once per ``RESCAN_INTERVAL`` seconds (a request waits for the next one), shared by the requests waiting for it.
A file whose reading fails in a way no rule foresaw is listed as damaged with that error; the others are listed as
usual. A root in object storage (``s3://...``: ``remote_root``) is listed from the store at each scan and each of its
objects is fetched into a private spool file before the list or a page reads it; its sessions are never followed.
Over 400 lines: the roots, the scan and the lookups are one concept (the only way from an id to a file).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException

from ..errors import SessionFileError
from ..formats import SUFFIXES, strip_suffix
from ..interop.claude_layout import SIDECAR, SIDECAR_MAX, layout_context, project_of, sidecar_of
from ..logfile import DEFAULT_MAX_LINE_BYTES
from ..store.remote import RemoteError, is_remote
from .catalog import Catalog, ServedFile
from .projects import Projects
from .remote_root import RemoteRoot
from .source import SessionSource

log = logging.getLogger("assembler.server")  # one logger for the whole server package

__all__ = [
    "SessionRegistry",
    "session_id_is_safe",
    "RESCAN_INTERVAL",
    "DEFAULT_CACHE_BYTES",
]

RESCAN_INTERVAL = 1.0
"""Seconds between two rescans of the roots for an unknown id."""
DEFAULT_CACHE_BYTES = 64 << 20
"""File bytes of parsed sessions kept for pages (``serve --cache MB``)."""


def context_of(path: Path) -> dict[str, Any] | None:
    """What a reader knows from beside ``path`` (``interop.claude_layout.layout_context``): a Claude Code subagent's
    ``agent-X.meta.json`` (its description), and the parent session id a ``<session>/subagents/agent-X.jsonl``
    belongs to."""
    name = sidecar_of(path.name)
    sidecar: bytes | None = None
    if name is not None:
        side = path.with_name(name)
        try:
            if side.is_file() and side.stat().st_size <= SIDECAR_MAX:
                sidecar = side.read_bytes()
        except OSError:
            pass
    return layout_context(path.as_posix(), sidecar)


def session_id_is_safe(session_id: str) -> bool:
    """An id shape that can be looked up at all: relative, no ``..`` or ``.`` segment, no backslash or NUL."""
    if not session_id or session_id.startswith("/") or "\\" in session_id or "\x00" in session_id:
        return False
    return all(part not in ("", ".", "..") for part in session_id.split("/"))


def _suffix_rank(name: str) -> int:
    """Which of two files sharing a base name keeps the bare id: the one whose suffix comes first in the table."""
    return next((i for i, suffix in enumerate(SUFFIXES) if name.endswith(suffix)), len(SUFFIXES))


def _candidate(name: str) -> bool:
    """A file name a scan looks at: a suffix of the table's, not a sidecar (its content decides the rest)."""
    return name.endswith(SUFFIXES) and not name.endswith(SIDECAR)


def _session_files(root: Path) -> Iterator[tuple[str, Path]]:
    """``(path relative to root, resolved path)`` of every candidate file under ``root`` (already resolved): folders
    in name order, files by id then suffix rank; a folder link is not followed, a file link only when it resolves to
    a regular file inside the root. Plain directory entries need no resolving (the root is resolved and no folder
    link is followed), so a folder of 10,000 sessions costs one ``scandir`` per folder, not a ``realpath`` per file."""
    stack = [(str(root), "")]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        dirs, files = [], []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(entry.name)
                elif _candidate(entry.name):
                    files.append(entry)
            except OSError:
                continue
        files.sort(key=lambda e: (strip_suffix(e.name), _suffix_rank(e.name), e.name))
        for entry in files:
            rel = f"{rel_folder}{entry.name}"
            try:
                if entry.is_symlink():
                    resolved = Path(entry.path).resolve()
                    if not resolved.is_relative_to(root) or not resolved.is_file():
                        continue
                elif entry.is_file(follow_symlinks=False):
                    resolved = Path(entry.path)
                else:
                    continue
            except OSError:
                continue
            yield rel, resolved
        for name in sorted(dirs, reverse=True):  # popped in name order
            stack.append((os.path.join(folder, name), f"{rel_folder}{name}/"))


LIST_BUDGET_S = 0.5
"""How long one listing of a big folder reads files before it answers with what it has (the rest is read on in the
background)."""
SCAN_FRESH_S = 1.0
"""A budgeted listing this soon after a scan uses that scan's files (a file created since shows a second later)."""
LIST_BUDGET_FILES = 1000
"""A folder of at most this many files is listed whole by every listing."""


class SessionRegistry:
    """The served roots (files and folders) and the sessions found under them, by id.

    Ids are relative paths without the session suffix (``.jsonl``, ``.jsonl.zst``, ``.sqlite``, ``.sqlite3``,
    ``.db``); when two files in a folder share a base name, the later one (in suffix order) keeps its whole file name.
    Ids are prefixed with the root's name when more than one root is served or the root is a file.
    """

    def __init__(self, roots: Sequence[str | os.PathLike[str]], poll_interval: float = 0.2, *,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self.cache_bytes = cache_bytes
        self.catalog = Catalog(max_line_bytes)
        self.projects = Projects()  # Claude Code projects: a record shown once, in the oldest file holding it
        self._reading = threading.Lock()  # one thread at a time reads the list's files (listing, priming a page)
        self.stopping = False  # the server is shutting down: a listing in progress stops reading files
        self._reading_on: asyncio.Task[Any] | None = None  # the listing that reads the files a budgeted one left
        self._last_rescan = -RESCAN_INTERVAL  # the last scan an unknown id caused (listing and start-up do not count)
        self._rescan_done = -RESCAN_INTERVAL
        self._scan_lock: asyncio.Lock | None = None
        self.roots: list[tuple[str, Path]] = []
        labels: set[str] = set()
        self.remote: dict[Path, RemoteRoot] = {}  # spool folder -> the object storage prefix it mirrors
        for root in roots:
            if isinstance(root, str) and is_remote(root):
                spool = RemoteRoot(root, _candidate)
                self.remote[spool.path] = spool
            path = spool.path if isinstance(root, str) and is_remote(root) else Path(root).resolve()
            base = strip_suffix(path.name) if path.is_file() else path.name or "root"
            label, k = base, 2
            while label in labels:
                label, k = f"{base}-{k}", k + 1
            labels.add(label)
            self.roots.append((label, path))
        self.poll_interval = poll_interval
        self.sources: OrderedDict[tuple[Path, str | None], SessionSource] = OrderedDict()  # least recently used first
        self._ids: dict[str, Path] = {}
        self._scanned_at = -SCAN_FRESH_S
        self._scanned_from = -SCAN_FRESH_S  # when the scan whose result stands started
        self._scan_result = threading.Lock()  # a scan's result is put in place whole
        self._scanning: asyncio.Future[dict[str, Path]] | None = None  # the listing scan under way, if any
        self._root_of: dict[Path, Path] = {}  # scanned file -> the root it was found under (checked at each open)
        self._orders: tuple[dict[Path, Path], dict[str, list[Path]]] = ({}, {})  # a scan's projects' file orders
        self.scan()

    def scan(self) -> dict[str, Path]:
        """Find every session file under the roots (symlinks pointing outside their root are skipped). Scans run in
        worker threads and may overlap (a listing's, an unknown id's): a scan that started before the one whose
        result stands never replaces it (it could miss a file the later one found), it returns the later result."""
        started = time.monotonic()
        ids, root_of = self.walk()
        with self._scan_result:
            if started < self._scanned_from:
                return self._ids
            self._scanned_from = started
            self._scanned_at = time.monotonic()
            self._ids = ids
            self._root_of = root_of
            self.catalog.keep_only(root_of)
        return ids

    def walk(self) -> tuple[dict[str, Path], dict[Path, Path]]:
        """The session files under the roots now: ``(id -> file, file -> its root)``; changes nothing (the search
        indexer walks from its own thread)."""
        ids: dict[str, Path] = {}
        root_of: dict[Path, Path] = {}
        prefix = len(self.roots) > 1 or any(root.is_file() for _, root in self.roots)
        for label, root in self.roots:
            if root.is_file():
                if _candidate(root.name):
                    ids[label] = root
                    root_of[root] = root
                continue
            for rel, resolved in self._files(root):
                sid = strip_suffix(rel)
                if (f"{label}/{sid}" if prefix else sid) in ids:
                    sid = rel  # a.jsonl and a.jsonl.zst side by side: the second keeps its file name
                ids[f"{label}/{sid}" if prefix else sid] = resolved
                root_of.setdefault(resolved, root)
        return ids, root_of

    def _files(self, root: Path) -> Iterator[tuple[str, Path]]:
        """A root's session files: a folder's scan, or the listing of an object storage prefix (a prefix that
        cannot be listed now lists nothing, with a warning: the others stand)."""
        spool = self.remote.get(root)
        if spool is None:
            return _session_files(root)
        try:
            return spool.files()
        except RemoteError as exc:
            log.warning("cannot list %s: %s", spool.shown, exc.strerror)
            return iter(())

    def remote_root(self, path: Path, root: Path | None = None) -> RemoteRoot | None:
        """The object storage root a file is the spool copy of (``root``: the one a walk found it under; else the
        last scan's), None for a local file."""
        return self.remote.get(root if root is not None else self._root_of.get(path, path))

    def fetch(self, path: Path, root: Path | None = None) -> None:
        """Bring a file of an object storage root up to its listed version (nothing for a local file). Blocking.

        Raises:
            RemoteError: the object cannot be read now.
        """
        spool = self.remote_root(path, root)
        if spool is not None:
            spool.ensure(path)

    def location(self, path: Path, root: Path | None = None) -> str | None:
        """Where a file of an object storage root lives (``s3://bucket/key``), to name it in messages; None for a
        local file."""
        spool = self.remote_root(path, root)
        return spool.location_of(path) if spool is not None else None

    async def rescan(self) -> dict[str, Path]:
        """Scan the roots again in a worker thread, at most once per ``RESCAN_INTERVAL``: a caller who asked after
        the last scan ended waits for the next one (sleeping out the interval); callers who asked before a scan
        ended share it."""
        asked = time.monotonic()
        if self._scan_lock is None:
            self._scan_lock = asyncio.Lock()
        async with self._scan_lock:
            if self._rescan_done < asked:  # no scan has ended since this caller asked
                wait = self._last_rescan + RESCAN_INTERVAL - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                self._last_rescan = time.monotonic()
                await asyncio.to_thread(self.scan)
                self._rescan_done = time.monotonic()
        return self._ids

    @property
    def listed_ids(self) -> dict[str, Path]:
        """``listed id -> file`` of the last scan (a later scan replaces the dict, never changes it)."""
        return self._ids

    async def find(self, session_id: str) -> SessionSource:
        """The source for ``session_id``; an unknown id first waits for a (rate-limited) rescan in a thread.

        Raises:
            HTTPException: 404 when the id is unsafe or unknown.
        """
        found = self._known(session_id)
        if found is None:
            await self.rescan()
            found = self._resolve(session_id)
        if found is not None and found not in self.sources and found[0] in self._root_of:
            await asyncio.to_thread(self.prime, found[0])
        if found is not None and self.remote:
            await asyncio.to_thread(self._fetched, session_id, found[0])
        return self._found(session_id, found)

    def lookup(self, session_id: str, *, listed: bool = False) -> SessionSource:
        """``find`` for a caller off the request path (start-up, tests, publish): an unknown id rescans here, at
        once. ``listed``: the caller's listing has just read every file (publish), so no older file of the session's
        project is read again (``prime``).

        Raises:
            HTTPException: 404 when the id is unsafe or unknown.
        """
        found = self._known(session_id)
        if found is None:
            self.scan()
            found = self._resolve(session_id)
        if found is not None and found not in self.sources and found[0] in self._root_of and not listed:
            self.prime(found[0])
        if found is not None and self.remote:
            self._fetched(session_id, found[0])
        return self._found(session_id, found)

    def _known(self, session_id: str) -> tuple[Path, str | None] | None:
        """The path (and session key) of a listed id (None when not listed); an unsafe id is a 404 at once."""
        if not session_id_is_safe(session_id):
            raise HTTPException(404, f"unknown session {session_id!r}")
        return self._resolve(session_id)

    def _resolve(self, session_id: str) -> tuple[Path, str | None] | None:
        """A file's id, or ``FILE_ID/KEY`` naming one session of a file holding several (an Inspect log)."""
        path = self._ids.get(session_id)
        if path is not None:
            return path, None
        file_id, _, key = session_id.rpartition("/")
        path = self._ids.get(file_id)
        if path is None or not key:
            return None
        meta = self.catalog.known(path)
        if meta is not None and meta.format is not None and key not in {s.key for s in meta.sessions}:
            return None  # a file read by the list that holds no such session
        return path, key

    def _fetched(self, session_id: str, path: Path) -> None:
        try:
            self.fetch(path)
        except RemoteError as exc:
            raise HTTPException(502, f"cannot read session {session_id!r} from object storage: {exc.strerror}"
                                ) from None

    def _found(self, session_id: str, found: tuple[Path, str | None] | None) -> SessionSource:
        if found is None or not found[0].is_file():
            raise HTTPException(404, f"unknown session {session_id!r}")
        return self._source(*found)

    def _context(self, path: Path) -> dict[str, Any] | None:
        """A file's reader context: its Claude Code layout and its project's older uuids (``projects``)."""
        return self.projects.context(path, self._root_of[path], context_of(path))

    def search_context(self, path: Path, root: Path) -> dict[str, Any] | None:
        """The reader context the list gives ``path`` (``_context``), for the search indexer's thread: taken under
        the list's reading lock, as the project's known uuids change while the list reads."""
        with self._reading:
            return self.projects.context(path, root, context_of(path))

    def prime(self, path: Path) -> None:
        """Read (in the list's catalog) the files of ``path``'s project older than it that the list has not read
        yet, so a page of ``path`` shows each record once, in the oldest file holding it. Blocking."""
        if not path.name.endswith(".jsonl"):
            return
        with self._reading:
            for older in self._project_order(path):
                if older == path:
                    break
                self._read_meta(older)

    def older_in_project(self, path: Path) -> list[Path]:
        """The scanned files of ``path``'s project ranked before it (a record they hold is shown there, not in
        ``path``: ``projects``); none for a file of another kind. Blocking."""
        if not path.name.endswith(".jsonl") or path not in self._root_of:
            return []
        order = self._project_order(path)
        return order[:order.index(path)] if path in order else []

    def _project_order(self, path: Path) -> list[Path]:
        """The last scan's files of ``path``'s project, oldest first (``projects.order``; once per scan: a file is
        ranked once, so the order changes only when the files do)."""
        project, root_of = project_of(path.as_posix()), self._root_of
        if self._orders[0] is not root_of:
            self._orders = (root_of, {})
        order = self._orders[1].get(project)
        if order is None:
            same = [(p, root) for p, root in root_of.items() if project_of(p.as_posix()) == project]
            order = self._orders[1][project] = self.projects.order(same)
        return order

    def _read_meta(self, path: Path, root: Path | None = None) -> ServedFile | None:
        """Read ``path`` into its list metadata; ``root`` as the listing's scan found it (a later scan may have
        dropped the file from ``_root_of`` while this listing reads on)."""
        root = root if root is not None else self._root_of.get(path)
        if root is None:
            return None
        try:
            self.fetch(path)
        except OSError as exc:  # an object that cannot be fetched now is not listed, as an unreadable file is not
            log.warning("cannot read %s: %s", self.location(path), exc.strerror)
            return None
        meta = self.catalog.file(path, root, self.projects.context(path, root, context_of(path)))
        try:
            meta.refresh_sync()
        except OSError:
            return None
        except Exception as exc:  # one file no reader rule foresaw: listed as damaged, the list stands
            log.exception("cannot read %s", path)
            meta.fail(SessionFileError(f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})"))
            return meta
        self.projects.take(path, meta)
        return meta

    def _source(self, path: Path, key: str | None = None) -> SessionSource:
        """The open session ``key`` of ``path``, served by the file's one reader (the list's)."""
        source = self.sources.get((path, key))
        if source is None or source.file is not self.catalog.current(path):
            served = self.catalog.file(path, self._root_of[path], self._context(path))
            if source is not None and source.file is not served:
                source.close()
                source = None
            if source is None:
                source = self.sources[(path, key)] = SessionSource(served, key, self.poll_interval)
                source.snapshot = self._root_of[path] in self.remote
        self.sources.move_to_end((path, key))
        return source

    def trim(self) -> None:
        """Evict least recently used sessions until the parsed ones hold at most ``cache_bytes`` of file bytes; a
        followed or busy session, and the most recent one, stay."""
        total = sum(s.file.bytes_read for s in self.sources.values())
        for path, source in list(self.sources.items())[:-1]:
            if total <= self.cache_bytes:
                break
            if source.subscribers or source.lock.locked():
                continue
            total -= source.file.bytes_read
            del self.sources[path]
            source.close()

    async def listing(self, budget_s: float | None = LIST_BUDGET_S) -> tuple[list[tuple[str, ServedFile]], int]:
        """The sessions with their metadata, brought up to date in a worker thread (records are not kept), and how
        many files are still to be read. Reading stops after ``budget_s`` (None: reads them all): what was read
        before stands in for a file not reached (it may be older than the file), a file never read is pending, and
        one background task reads on, so the next listing has more. A big folder answers at once and fills in."""
        if self._scanning is not None and not self._scanning.done():
            ids = await asyncio.shield(self._scanning)  # a scan under way (the start-up listing's): share it
        elif (budget_s is not None and len(self._ids) > LIST_BUDGET_FILES
                and time.monotonic() - self._scanned_at < SCAN_FRESH_S):
            ids = self._ids  # a big folder scanned a moment ago (at start-up, by the listing before): no second walk
        else:
            self._scanning = asyncio.ensure_future(asyncio.to_thread(self.scan))
            ids = await asyncio.shield(self._scanning)
        root_of = self._root_of  # this scan's (a later one replaces the dict, never changes it)
        if len(ids) <= LIST_BUDGET_FILES:
            budget_s = None  # a folder of this size is read whole within the budget anyway: one complete answer

        def refresh() -> tuple[list[tuple[str, ServedFile]], int, int]:
            deadline = None if budget_s is None else time.monotonic() + budget_s
            read: dict[Path, ServedFile] = {}
            pending = skipped = 0
            # Budgeted, a listing never waits for one reading on: it answers with what that one has read so far.
            got = self._reading.acquire(timeout=-1 if budget_s is None else 0)
            # A project's files oldest first: each one's older uuids are known when it is read (ranking a file reads
            # its head; a listing that reads nothing, another reading on, lists what is known in scan order).
            try:
                paths = (self.projects.order((p, root_of[p]) for p in ids.values() if p in root_of) if got
                         else list(ids.values()))
                for path in paths:
                    if self.stopping:
                        break
                    if got and (deadline is None or time.monotonic() < deadline):
                        meta = self._read_meta(path, root_of[path])
                    else:
                        meta = self.catalog.known(path)
                        skipped += 1
                        pending += meta is None
                    if meta is not None:
                        read[path] = meta
            finally:
                if got:
                    self._reading.release()
            return [(sid, read[path]) for sid, path in ids.items() if path in read], pending, skipped

        entries, pending, skipped = await asyncio.to_thread(refresh)
        if skipped and not self.stopping and (self._reading_on is None or self._reading_on.done()):
            self._reading_on = asyncio.create_task(self.listing(None))  # reads the rest; the next listing has it
        return entries, pending

    def stop_reading(self) -> None:
        """The server is shutting down: a listing in progress stops at its next file."""
        self.stopping = True
        if self._reading_on is not None:
            self._reading_on.cancel()

    def close_followers(self) -> None:
        """End every follow stream (the server is shutting down): each stream sends what it has and closes."""
        for source in self.sources.values():
            for follower in list(source.subscribers):
                follower.close()

    def active_watchers(self) -> int:
        """Watcher tasks still running (0 when no one follows)."""
        return sum(1 for s in self.sources.values() if s.watcher is not None and not s.watcher.done())

    def follower_count(self) -> int:
        return sum(len(s.subscribers) for s in self.sources.values())
