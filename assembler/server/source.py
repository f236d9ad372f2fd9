"""One open session of a served file: ``SessionSource`` (its header, message index and first fault, taken from the
file's one reader, ``catalog.ServedFile``) and the ``Follower`` outboxes its polling watcher feeds while anyone
follows it.

Rules: a growing line-format file is polled and only its new bytes are read, by the file's reader (which the session
list reads through too: each byte is read once for both). Each appended event reaches followers as one ``event``
frame: the lines of a run of deltas as the file holds them (the index keeps the row they were read into), any other
event as decoded once, a row the file holds as its member events (the page's worker repacks closed blocks). A
compressed file, a SQLite session or a document format is read again whole when it changes and never followed live.
A file rewritten in place is read again from the start and its followers are cut off (they reconnect to a fresh
snapshot); stale records and a stale fault are never kept. The index is used under the file's ``lock`` (the list may
read the file in another thread); the async side changes under the source's ``lock``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

from starlette.concurrency import run_in_threadpool

from ..chunk_rows import expand_records
from ..errors import AssemblerError, SessionFileError
from ..history import MessageIndex
from ..logfile import LoadResult
from ..records import StorageRecord, encode
from .catalog import ServedFile, describe_problem

__all__ = [
    "NOT_FOLLOWED",
    "Follower",
    "SessionSource",
    "live_frames",
]

log = logging.getLogger("assembler.server")  # one logger for the whole server package

_MAX_FOLLOWER_BUFFER = 32 << 20
_T = TypeVar("_T")


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


def live_frames(new: Iterable[tuple[StorageRecord, bytes | None]]) -> bytes:
    """SSE frames for live records, one per event: ``id:`` is the seq (a reconnecting client sends it as
    Last-Event-ID). A row with the lines it was read from sends those lines as they are."""
    out: list[bytes] = []
    for record, lines in new:
        if lines is not None:
            first = cast(Any, record).seq
            for i, line in enumerate(lines.rstrip(b"\n").split(b"\n")):
                out.append(b'id: %d\ndata: {"type":"event","event":%s}\n\n' % (first + i, line))
            continue
        for event in expand_records((record,)):
            out.append(b"id: %d\ndata: %s\n\n" % (event["seq"], encode({"type": "event", "event": event})))
    return b"".join(out)


class SessionSource:
    """One session of a served file (``key``: one of a file holding several) as opened for pages and followers:
    header, message index, the first fault, taken from the file's reader as it reads (``ServedFile.attach``, at the
    first ``refresh_sync``, in a worker thread: the event loop never waits for the file's lock).

    ``update`` has the file read what is new and fans the new records out to the followers in ``subscribers`` as
    scalar event frames; a file read again from its start closes them instead. Async state changes under ``lock``.
    """

    def __init__(self, file: ServedFile, key: str | None = None, poll_interval: float = 0.2) -> None:
        self.file = file
        self.path = file.path
        self.root = file.root  # every open is checked against it (``confine``)
        self.key = key
        self.poll_interval = poll_interval
        self.lock = asyncio.Lock()
        self.subscribers: set[Follower] = set()
        self.watcher: asyncio.Task[None] | None = None
        self.snapshot = False  # a copy of an object in object storage (``remote_root``): read, never followed
        self.index = MessageIndex()
        self.header: dict[str, Any] | None = None
        self.error: AssemblerError | None = None
        self._new: list[tuple[StorageRecord, bytes | None]] = []  # for followers, not sent yet (file's lock)
        self._cut = False  # the file was read again from its start: followers are cut off at the next update
        self._attached = False  # the file's reader gives this session its records (from the first read on)
        self.closed = False
        self.version = 0  # moves on whenever what the file's reader told changes (records, header, fault)
        self._last_frame: tuple[int, int, bytes] | None = None  # (max_messages, version, snapshot frame): reused

    @property
    def followable(self) -> bool:
        """New records can arrive while followed: a plain line format (its growth is read on), not a snapshot."""
        return not self.snapshot and self.file.appends

    # -- what the file's reader tells (under the file's lock) ---------------------------------------------------

    def following(self) -> bool:
        return bool(self.subscribers)

    def take(self, result: LoadResult, records: list[StorageRecord], lines: list[bytes | None] | None) -> None:
        self.version += 1
        self.header, self.error = result.header, result.error
        if records:
            self.index.extend(records)
            if self.subscribers:
                self._new += zip(records, lines or [None] * len(records), strict=True)

    def restart(self, cut: bool) -> None:
        self.version += 1
        self.index = MessageIndex()
        self.header = self.error = None
        self._new = []
        self._cut = self._cut or cut

    def with_index(self, use: Callable[[MessageIndex], _T]) -> _T:
        """``use(index)`` under the file's lock (blocking: call it in a worker thread)."""
        with self.file.lock:
            return use(self.index)

    def refresh_sync(self) -> tuple[list[tuple[StorageRecord, bytes | None]], bool]:
        """Have the file read what is new; ``(records for followers, cut)`` (blocking)."""
        if not self._attached:
            self.file.attach(self)
            self._attached = True
        try:
            self.file.refresh_sync(quick=False)
        except OSError:
            raise
        except Exception as exc:  # a file no reader rule foresaw: this session is damaged, not a 500
            log.exception("cannot read %s", self.path)
            self.file.fail(SessionFileError(f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})"))
        with self.file.lock:
            new, self._new = self._new, []
            cut, self._cut = self._cut, False
        return new, cut

    def close(self) -> None:
        """The source is no longer served (evicted, or its file is read by another reader now): the file forgets it
        at its next look, without this waiting for a read under way."""
        self.closed = True
        for follower in list(self.subscribers):
            follower.close()
        self.subscribers.clear()

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
        new, cut = await run_in_threadpool(self.refresh_sync)
        if cut:
            # Rewritten in place: every follower is cut off; the page reconnects and gets a fresh snapshot
            # of what the file holds now (the viewer's reconnect path), never the stale records.
            for follower in list(self.subscribers):
                follower.close()
            self.subscribers.clear()
            return
        if new and self.subscribers:
            chunk = await run_in_threadpool(live_frames, new)
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
        """The SSE snapshot frame of the file as parsed now (under ``lock``). The last one made is reused while the
        reader has told nothing new (``version``): a session opened again, or by another reader, is not encoded
        again (a big session's frame is megabytes). The version is read first, so a frame made while the reader
        told something new is never reused for it."""
        version = self.version
        last = self._last_frame
        if last is not None and last[0] == max_messages and last[1] == version:
            return last[2]
        header = self.header or {}
        value = await run_in_threadpool(self.with_index, lambda index: index.snapshot(header, max_messages))
        fault = self.fault()
        if fault is not None:
            value["error"] = fault
        data = encode(value)
        frame = b"id: %d\ndata: %s\n\n" % (value["cursor"], data) if value["cursor"] >= 0 else b"data: %s\n\n" % data
        self._last_frame = (max_messages, version, frame)
        return frame

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

