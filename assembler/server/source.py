"""One session file: ``SessionSource`` (its header, message index and first fault, refreshed from its new bytes) and
the ``Follower`` outboxes its polling watcher feeds while anyone follows it.

Rules: a growing ``.jsonl`` file is polled and only its new bytes are parsed; each appended storage record reaches
followers as its member events, one ``event`` frame each, never packed. A ``.jsonl.zst`` file is re-read whole when
it changes and never followed live, and so is a SQLite session (``.sqlite``, ``.sqlite3``, ``.db``, read by
``store.sqlite.read_sqlite``). A file rewritten in place (``identity``: another inode, shorter than what was read, or
its first KiB or the KiB before the read offset changed) is read again from the start and its followers are cut off
(they reconnect to a fresh snapshot); stale records and a stale fault are never kept. Files are read in
bounded pieces. State changes only under the source's ``lock``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..chunk_rows import expand_records, is_storage_row
from ..errors import AssemblerError, SessionFileError
from ..formats import Format
from ..history import MessageIndex
from ..logfile import DEFAULT_MAX_LINE_BYTES
from ..records import StorageRecord, encode
from ..store.loader import AnyLoader
from .catalog import READ_PIECE, TAIL_IDLE_S, appends, describe_problem, named_database
from .confine import open_in_root
from .database import read_served_database
from .identity import Identity, compare, identity_of
from .listing import SessionFacts

__all__ = [
    "NOT_FOLLOWED",
    "Follower",
    "SessionSource",
    "event_frames",
]

log = logging.getLogger("assembler.server")  # one logger for the whole server package

_MAX_FOLLOWER_BUFFER = 32 << 20


class Follower:
    """One follow stream's outbox: encoded SSE frames waiting to be sent, and a wake-up event."""

    __slots__ = ("chunks", "size", "wake", "closed")

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.wake = asyncio.Event()
        self.closed = False

    def push(self, chunk: bytes) -> None:
        if self.closed:
            return
        self.chunks.append(chunk)
        self.size += len(chunk)
        if self.size > _MAX_FOLLOWER_BUFFER:
            # A client this far behind reconnects and gets a fresh snapshot instead.
            self.close()
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        self.size = 0
        self.wake.clear()
        return data


NOT_FOLLOWED = {"error": "not-followed", "line": None, "seq": None, "following": False,
                "detail": "a session in object storage is read as the object was when listed and is not followed "
                          "(reload the page for a newer copy)"}
"""The follow stream's ``event: error`` for a snapshot source: it cannot be followed."""


def event_frames(events: Iterable[dict[str, Any]]) -> bytes:
    """SSE frames for live events: ``id:`` is the seq (a reconnecting EventSource sends it as Last-Event-ID)."""
    return b"".join(b"id: %d\ndata: %s\n\n" % (e["seq"], encode({"type": "event", "event": e})) for e in events)


class SessionSource:
    """A session file (or one session of a file holding several: ``key``) and what has been parsed of it so far:
    header, message index, the first fault.

    ``refresh`` reads only the bytes appended since the last call (a partial last line waits for its newline) when
    the format grows by appending; a replaced or truncated file, or a file of another format that changed, is
    re-read from the start and its followers are closed. ``close_tail`` closes what an idle end of another
    harness's log leaves open (its newest response). Mutations happen under ``lock``; new records are fanned out to
    the followers in ``subscribers`` as scalar event frames.
    """

    def __init__(self, path: Path, poll_interval: float = 0.2, *, root: Path | None = None,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, key: str | None = None,
                 context: dict[str, Any] | None = None) -> None:
        self.max_line_bytes = max_line_bytes
        self.path = path
        self.root = path if root is None else root  # every open is checked against it (``confine``)
        self.key = key
        self.context = context
        self.poll_interval = poll_interval
        self.lock = asyncio.Lock()
        self.subscribers: set[Follower] = set()
        self.watcher: asyncio.Task[None] | None = None
        self.snapshot = False  # a copy of an object in object storage (``remote_root``): read, never followed
        self._reset()

    def _reset(self) -> None:
        self.index = MessageIndex()
        self.header: dict[str, Any] | None = None
        self.error: AssemblerError | None = None
        self.warnings: list[str] = []
        self.title: str | None = None
        self.subagent_label: str | None = None  # a child session's own label (its subagent/descriptor)
        self.last_time: Any = None
        self.facts = SessionFacts()  # what the session list says about it (listing.py)
        # Runs of delta lines come as rows (pages repack anyway, followers get rows expanded): an unpacked log is
        # held as one row per block.
        self._loader = AnyLoader(self.path.name, max_line_bytes=self.max_line_bytes, pack_deltas=True,
                                 context=self.context, key=self.key)
        self._offset = 0
        self._identity: Identity | None = None
        self._tail_closed = False
        self._seen = 0  # records of the loader's result already taken into the index

    @property
    def compressed(self) -> bool:
        return self._loader.compressed

    @property
    def database(self) -> bool:
        return self._loader.needs_path

    @property
    def format(self) -> Format | None:
        return self._loader.format

    @property
    def followable(self) -> bool:
        """New records can arrive while followed: a plain line format (its growth is read on), not a snapshot."""
        return not self.snapshot and (appends(self._loader) or self._loader.format is None)

    @property
    def bytes_read(self) -> int:
        """How many bytes of the file have been read (a partial last line included)."""
        return self._offset

    # -- reading (blocking; called in a worker thread under ``lock``) ------------------------------------------

    def refresh_sync(self) -> tuple[list[StorageRecord], bool]:
        """Read what is new. Returns ``(new storage records, reset)``; ``reset`` means the file was replaced.

        Raises:
            OutsideRootError: the file is no longer a regular file inside its root (swapped for a symlink).
            OSError: the file cannot be read.
        """
        with open_in_root(self.path, self.root) as stream:
            fd = stream.fileno()
            change = compare(self._identity, fd)
            if change == "unchanged":
                return [], False
            whole = self._identity is not None and not appends(self._loader)
            reset = self._identity is not None and (change == "rewritten" or whole)
            if change == "rewritten" or whole:
                self._reset()
            new: list[StorageRecord] = []
            offset = self._offset
            loader = self._loader
            while loader.result.error is None and not loader.needs_path:
                piece = os.pread(fd, READ_PIECE, offset)
                if not piece:
                    break
                offset += len(piece)
                new += self._feed(piece)
            self._offset = offset
            self._identity = identity_of(fd, offset)
            database = loader.needs_path or named_database(self.path, loader)
            if database or not appends(loader):
                before = loader.result
                result = (read_served_database(self.path, self.root, stream, max_line_bytes=self.max_line_bytes)
                          if database else loader.finish())
                # A compressed log parsed as it was decompressed: only its tail is new here.
                self._absorb(result.records[self._seen:] if result is before else result.records)
                self.header, self.error, self.warnings = result.header, result.error, result.warnings
                return [], reset
        return new, reset

    def _idle(self) -> bool:
        """The file has not changed for ``TAIL_IDLE_S`` seconds (by its mtime)."""
        identity = self._identity
        return identity is not None and time.time() - identity.mtime_ns / 1e9 >= TAIL_IDLE_S

    def close_tail_sync(self) -> list[StorageRecord]:
        """Close what the end of an idle line-format file leaves open (another harness's newest response): the
        records that adds. Once per idle spell: new bytes open it again."""
        if self._tail_closed or not appends(self._loader):
            return []
        self._tail_closed = True
        added = self._loader.close_tail()
        return self._taken(added)

    def _feed(self, data: bytes) -> list[StorageRecord]:
        """Parse new bytes (the parser carries a partial last line until its newline arrives)."""
        if self._loader.result.error is not None:
            return []
        self._tail_closed = False
        return self._taken(self._loader.feed(data))

    def _taken(self, added: int) -> list[StorageRecord]:
        result = self._loader.result
        self._seen = len(result.records)
        self.header = result.header
        self.error = result.error
        self.warnings = result.warnings
        new = result.records[len(result.records) - added:] if added else []
        self._absorb(new)
        return new

    def _absorb(self, records: list[StorageRecord]) -> None:
        self.index.extend(records)
        self.facts.absorb(records)
        for record in records:
            if type(record) is dict and record.get("type") == "session/title" and type(record.get("data")) is dict:
                title = record["data"].get("title")
                if type(title) is str:
                    self.title = title
            elif type(record) is dict and record.get("type") == "subagent/descriptor" and \
                    type(record.get("data")) is dict and type(record["data"].get("label")) is str:
                self.subagent_label = record["data"]["label"]
        if records:
            last = records[-1]
            self.last_time = last.last_time if is_storage_row(last) else last.get("time")  # type: ignore

    # -- async API ----------------------------------------------------------------------------------------------

    async def update(self) -> None:
        """Read what is new and fan it out to followers.

        Raises:
            OSError: the file cannot be read.
        """
        async with self.lock:
            await self.update_locked()

    async def update_locked(self) -> None:
        """``update`` for a caller that holds ``lock`` already (a page answer reads the index under the same lock)."""
        had_error = self.error is not None
        try:
            new, reset = await run_in_threadpool(self.refresh_sync)
        except OSError:
            raise
        except Exception as exc:  # a file no reader rule foresaw: this session is damaged, not a 500
            log.exception("cannot read %s", self.path)
            self.error = self._loader.result.error = SessionFileError(
                f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})")
            new, reset = [], False
        if reset:
            # Rewritten in place: every follower is cut off; its EventSource reconnects and gets a fresh snapshot
            # of what the file holds now (the viewer's reconnect path), never the stale records.
            for follower in list(self.subscribers):
                follower.close()
            self.subscribers.clear()
            return
        if not new and self._idle():
            new = await run_in_threadpool(self.close_tail_sync)
        if new and self.subscribers:
            chunk = await run_in_threadpool(event_frames, expand_records(new))
            for follower in self.subscribers:
                follower.push(chunk)
        fault = self.fault() if self.error is not None and not had_error else None
        if fault is not None and self.subscribers:
            # A bad line arrived while followed: say so (the stream stays open, nothing more will come).
            frame = b"event: error\ndata: %s\n\n" % encode(fault)
            for follower in self.subscribers:
                follower.push(frame)

    def fault(self) -> dict[str, Any] | None:
        """The fault as the page gets it (a page's or snapshot's ``error``, the follow stream's ``event: error``):
        ``{error, detail, line, seq, following}``. ``following`` is false: the parse stops at a fault, so nothing
        after it reaches followers."""
        problem = self.problem()
        if problem is None:
            return None
        line = getattr(self.error, "line", None) if self.error is not None else 1
        seq = getattr(self.error, "seq", None) if self.error is not None else None
        return {"error": "malformed-session", "detail": problem, "line": line if type(line) is int else None,
                "seq": seq if type(seq) is int else None, "following": False}

    def problem(self) -> str | None:
        """The fault that stopped the parse (with its line), or a missing header, as text."""
        return describe_problem(self.error, self.header)

    async def subscribe(self, follower: Follower, max_messages: int) -> bytes:
        """Register ``follower`` and return its snapshot frame; no event can fall between the two."""
        async with self.lock:
            await self.update_locked()
            frame = await self._snapshot_frame(max_messages)
            if self.snapshot:  # the stream says so and ends, rather than stay open with nothing ever to come
                follower.push(b"event: error\ndata: %s\n\n" % encode(NOT_FOLLOWED))
                follower.close()
            elif self.followable:
                self.subscribers.add(follower)
                if self.watcher is None or self.watcher.done():
                    self.watcher = asyncio.get_running_loop().create_task(self._watch(), name=f"watch {self.path}")
            return frame

    async def _snapshot_frame(self, max_messages: int) -> bytes:
        """The SSE snapshot frame of the file as parsed now (under ``lock``)."""
        value = await run_in_threadpool(self.index.snapshot, self.header or {}, max_messages)
        fault = self.fault()
        if fault is not None:
            value["error"] = fault
        data = encode(value)
        return b"id: %d\ndata: %s\n\n" % (value["cursor"], data) if value["cursor"] >= 0 else b"data: %s\n\n" % data

    def unsubscribe(self, follower: Follower) -> None:
        """Forget ``follower``; the watcher stops with the last one."""
        follower.close()
        self.subscribers.discard(follower)
        if not self.subscribers and self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None

    async def _watch(self) -> None:
        try:
            while self.subscribers:
                await asyncio.sleep(self.poll_interval)
                await self.update()
        except OSError as exc:
            log.warning("stopped following %s: %s", self.path, exc)
            for follower in list(self.subscribers):
                follower.close()
            self.subscribers.clear()

