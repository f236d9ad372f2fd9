"""HTTP edge: serves session logs from folders as history pages, a follow stream (SSE) and raw files (Starlette).

Rules: a session id is only ever looked up among the files found by scanning the served roots, so an id can never
reach outside them (``..``, absolute ids and symlinks resolving outside a root are refused with 404). Pages come
from the no-expansion pager (``history.MessageIndex``). A growing ``.jsonl`` file is polled and only its new bytes
are parsed; each appended storage record reaches followers as its member events, one ``event`` frame each, never
packed. ``.jsonl.zst`` files are served for page and raw, and their follow stream is the snapshot only (a compressed
file is re-read whole when it changes, never followed live). Every error is JSON ``{error, detail}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .chunk_rows import expand_records, is_storage_row, row_last_time
from .errors import AssemblerError, SessionFileError
from .history import DEFAULT_MAX_MESSAGES, MessageIndex, PageRequestError, check_max_messages, check_page_request
from .logfile import SessionLogParser
from .records import encode
from .store import zstd
from .store.jsonl import read_session

__all__ = [
    "CSP",
    "DEFAULT_STATIC_DIR",
    "SessionSource",
    "SessionRegistry",
    "Follower",
    "create_app",
    "session_id_is_safe",
    "viewer_csp",
]

log = logging.getLogger("assembler.server")

CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; "
       "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'")
"""The Content-Security-Policy of ``web/index.html``, also sent as a header (the served build's own meta CSP wins)."""

_CSP_META = re.compile(rb'http-equiv="Content-Security-Policy"\s+content="([^"]+)"', re.IGNORECASE)


def viewer_csp(static_dir: Path) -> str:
    """The CSP declared by ``static_dir/index.html`` (so header and page never disagree), else ``CSP``."""
    try:
        match = _CSP_META.search((static_dir / "index.html").read_bytes())
    except OSError:
        return CSP
    return match.group(1).decode("ascii", "replace") if match else CSP

DEFAULT_STATIC_DIR = Path(__file__).resolve().parents[1] / "build" / "site"
_SUFFIXES = (".jsonl.zst", ".jsonl")
_HEARTBEAT_S = 15.0
_MAX_FOLLOWER_BUFFER = 32 << 20


class _Gone(Exception):
    """The client went away."""


# ---------------------------------------------------------------------------------------------------------------
# One session file


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


def event_frames(events: Iterable[dict[str, Any]]) -> bytes:
    """SSE frames for live events: ``id:`` is the seq (a reconnecting EventSource sends it as Last-Event-ID)."""
    return b"".join(b"id: %d\ndata: %s\n\n" % (e["seq"], encode({"type": "event", "event": e})) for e in events)


class SessionSource:
    """A session file and what has been parsed of it so far: header, message index, the first fault.

    ``refresh`` reads only the bytes appended since the last call (a partial last line waits for its newline);
    a replaced or truncated file is re-read from the start and its followers are closed. Mutations happen under
    ``lock``; new records are fanned out to the followers in ``subscribers`` as scalar event frames.
    """

    def __init__(self, path: Path, poll_interval: float = 0.2) -> None:
        self.path = path
        self.compressed = zstd.is_zstd_path(path)
        self.poll_interval = poll_interval
        self.lock = asyncio.Lock()
        self.subscribers: set[Follower] = set()
        self.watcher: asyncio.Task[None] | None = None
        self._reset()

    def _reset(self) -> None:
        self.index = MessageIndex()
        self.header: dict[str, Any] | None = None
        self.error: AssemblerError | None = None
        self.warnings: list[str] = []
        self.title: str | None = None
        self.last_time: Any = None
        self._parser = SessionLogParser(source=str(self.path))
        self._offset = 0
        self._partial = b""
        self._lineno = 0
        self._stat: tuple[int, int, int] | None = None

    @property
    def bytes_read(self) -> int:
        """How many bytes of the file have been read (a partial last line included)."""
        return self._offset

    # -- reading (blocking; called in a worker thread under ``lock``) ------------------------------------------

    def refresh_sync(self) -> tuple[list[dict[str, Any]], bool]:
        """Read what is new. Returns ``(new storage records, reset)``; ``reset`` means the file was replaced.

        Raises:
            OSError: the file cannot be read.
        """
        st = os.stat(self.path)
        stat = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self.compressed:
            if stat == self._stat:
                return [], False
            reset = self._stat is not None
            self._reset()
            self._stat = stat
            result = read_session(self.path)
            self._absorb(result.records)
            self.header, self.error, self.warnings = result.header, result.error, result.warnings
            return [], reset
        reset = False
        if self._stat is not None and (st.st_ino != self._stat[0] or st.st_size < self._offset):
            self._reset()
            reset = True
        self._stat = stat
        if st.st_size == self._offset:
            return [], reset
        with open(self.path, "rb") as stream:
            stream.seek(self._offset)
            data = stream.read()
        self._offset += len(data)
        return self._feed(data), reset

    def _feed(self, data: bytes) -> list[dict[str, Any]]:
        data = self._partial + data if self._partial else data
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        parser = self._parser
        records = parser.result.records
        before = len(records)
        if parser.result.error is None:
            for line in data[:cut].split(b"\n")[:-1]:
                self._lineno += 1
                if line.endswith(b"\r"):
                    line = line[:-1]
                if not parser.feed_line(line, self._lineno):
                    break
        self.header = parser.result.header
        self.error = parser.result.error
        self.warnings = parser.result.warnings
        new = records[before:]
        self._absorb(new)
        return new

    def _absorb(self, records: list[dict[str, Any]]) -> None:
        self.index.extend(records)
        for record in records:
            if record.get("type") == "session/title" and type(record.get("data")) is dict:
                title = record["data"].get("title")
                if type(title) is str:
                    self.title = title
        if records:
            last = records[-1]
            self.last_time = row_last_time(last) if is_storage_row(last) else last.get("time")

    # -- async API ----------------------------------------------------------------------------------------------

    async def update(self) -> None:
        """Read what is new and fan it out to followers.

        Raises:
            OSError: the file cannot be read.
        """
        async with self.lock:
            await self._update_locked()

    async def _update_locked(self) -> None:
        new, reset = await run_in_threadpool(self.refresh_sync)
        if reset:
            for follower in list(self.subscribers):
                follower.close()
            self.subscribers.clear()
        elif new and self.subscribers:
            chunk = await run_in_threadpool(event_frames, expand_records(new))
            for follower in self.subscribers:
                follower.push(chunk)

    def problem(self) -> str | None:
        """The fault that stopped the parse (with its line), or a missing header, as text."""
        if self.error is not None:
            return str(self.error)
        if self.header is None:
            return str(SessionFileError("no session header", line=1))
        return None

    async def subscribe(self, follower: Follower, max_messages: int) -> bytes:
        """Register ``follower`` and return its snapshot frame; no event can fall between the two."""
        async with self.lock:
            await self._update_locked()
            header = self.header or {}
            value = await run_in_threadpool(self.index.snapshot, header, max_messages)
            problem = self.problem()
            if problem is not None:
                value["error"] = {"error": "malformed-session", "detail": problem}
            frame = b"id: %d\ndata: %s\n\n" % (value["cursor"], encode(value)) if value["cursor"] >= 0 else (
                b"data: %s\n\n" % encode(value))
            if not self.compressed:
                self.subscribers.add(follower)
                if self.watcher is None or self.watcher.done():
                    self.watcher = asyncio.get_running_loop().create_task(self._watch(), name=f"watch {self.path}")
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


# ---------------------------------------------------------------------------------------------------------------
# Roots and ids


def session_id_is_safe(session_id: str) -> bool:
    """An id shape that can be looked up at all: relative, no ``..`` or ``.`` segment, no backslash or NUL."""
    if not session_id or session_id.startswith("/") or "\\" in session_id or "\x00" in session_id:
        return False
    return all(part not in ("", ".", "..") for part in session_id.split("/"))


def _strip_suffix(name: str) -> str:
    if name.endswith(".jsonl.zst"):
        return name[: -len(".jsonl.zst")] + ".zst"
    return name[: -len(".jsonl")]


class SessionRegistry:
    """The served roots (files and folders) and the sessions found under them, by id.

    Ids are relative paths without ``.jsonl`` (``.jsonl.zst`` becomes ``.zst``), prefixed with the root's name when
    more than one root is served or the root is a file.
    """

    def __init__(self, roots: Sequence[str | os.PathLike[str]], poll_interval: float = 0.2) -> None:
        self.roots: list[tuple[str, Path]] = []
        labels: set[str] = set()
        for root in roots:
            path = Path(root).resolve()
            base = _strip_suffix(path.name) if path.is_file() else path.name or "root"
            label, k = base, 2
            while label in labels:
                label, k = f"{base}-{k}", k + 1
            labels.add(label)
            self.roots.append((label, path))
        self.poll_interval = poll_interval
        self.sources: dict[Path, SessionSource] = {}
        self._ids: dict[str, Path] = {}
        self.scan()

    def scan(self) -> dict[str, Path]:
        """Find every session file under the roots (symlinks pointing outside their root are skipped)."""
        ids: dict[str, Path] = {}
        prefix = len(self.roots) > 1 or any(root.is_file() for _, root in self.roots)
        for label, root in self.roots:
            if root.is_file():
                if root.name.endswith(_SUFFIXES):
                    ids[label] = root
                continue
            for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
                dirnames.sort()
                for name in sorted(filenames):
                    if not name.endswith(_SUFFIXES):
                        continue
                    path = Path(dirpath) / name
                    resolved = path.resolve()
                    if not resolved.is_relative_to(root) or not resolved.is_file():
                        continue
                    rel = path.relative_to(root).as_posix()
                    sid = _strip_suffix(rel)
                    ids[f"{label}/{sid}" if prefix else sid] = resolved
        self._ids = ids
        return ids

    def lookup(self, session_id: str) -> SessionSource:
        """The source for ``session_id``.

        Raises:
            HTTPException: 404 when the id is unsafe or unknown.
        """
        if not session_id_is_safe(session_id):
            raise HTTPException(404, f"unknown session {session_id!r}")
        path = self._ids.get(session_id)
        if path is None:
            path = self.scan().get(session_id)
        if path is None or not path.is_file():
            raise HTTPException(404, f"unknown session {session_id!r}")
        source = self.sources.get(path)
        if source is None:
            source = self.sources[path] = SessionSource(path, self.poll_interval)
        return source

    def active_watchers(self) -> int:
        """Watcher tasks still running (0 when no one follows)."""
        return sum(1 for s in self.sources.values() if s.watcher is not None and not s.watcher.done())

    def follower_count(self) -> int:
        return sum(len(s.subscribers) for s in self.sources.values())


# ---------------------------------------------------------------------------------------------------------------
# Responses


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(encode(value), status_code=status, media_type="application/json", headers=headers)


def _error(status: int, code: str, detail: str) -> Response:
    return _json({"error": code, "detail": detail}, status)


def _header_safe(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii").replace("\r", " ").replace("\n", " ")[:1000]


def _int_param(request: Request, name: str, minimum: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        value = int(raw.strip(), 10)
    except ValueError:
        raise PageRequestError(name, f"must be an integer, got {raw!r}") from None
    if value < minimum:
        raise PageRequestError(name, f"must be >= {minimum}, got {value}")
    return value


class EventStreamResponse(Response):
    """``text/event-stream``: the snapshot frame, then live frames, with heartbeats; stops when the client leaves.

    The client's disconnect is watched on ``receive`` whatever the server's ASGI version, so a departed follower is
    unsubscribed at once and leaves no task behind.
    """

    def __init__(self, source: SessionSource, max_messages: int) -> None:
        super().__init__(media_type="text/event-stream")
        self.source = source
        self.max_messages = max_messages

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        follower = Follower()
        source = self.source
        try:
            try:
                snapshot = await source.subscribe(follower, self.max_messages)
            except OSError as exc:
                response = _error(404, "not-found", f"cannot read session: {exc.strerror or exc}")
                await response(scope, receive, send)
                return
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no")]})
            await self._send(send, snapshot)
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch_disconnect, receive, group.cancel_scope)
                await self._pump(follower, send)
                group.cancel_scope.cancel()
            with contextlib.suppress(_Gone):
                await self._send(send, b"", more=False)
        except _Gone:
            pass
        finally:
            source.unsubscribe(follower)

    @staticmethod
    async def _send(send: Callable[[Any], Awaitable[None]], body: bytes, more: bool = True) -> None:
        try:
            await send({"type": "http.response.body", "body": body, "more_body": more})
        except OSError:
            raise _Gone from None

    async def _pump(self, follower: Follower, send: Callable[[Any], Awaitable[None]]) -> None:
        while True:
            with anyio.move_on_after(_HEARTBEAT_S):
                await follower.wake.wait()
            chunk = follower.take()
            if chunk:
                await self._send(send, chunk)
            elif follower.closed:
                return
            else:
                await self._send(send, b": keep-alive\n\n")
            if follower.closed and not follower.chunks:
                return

    @staticmethod
    async def _watch_disconnect(receive: Callable[[], Awaitable[Any]], scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                scope.cancel()
                return


# ---------------------------------------------------------------------------------------------------------------
# Endpoints


async def list_sessions(request: Request) -> Response:
    registry: SessionRegistry = request.app.state.registry
    out = []
    for sid, path in (await run_in_threadpool(registry.scan)).items():
        source = registry.lookup(sid)
        try:
            await source.update()
            mtime_ms = int(os.stat(path).st_mtime * 1000)
        except OSError:
            continue
        last_time = source.last_time
        out.append({
            "id": sid,
            "title": source.title,
            "eventCount": source.index.event_count,
            "lastActivity": last_time if type(last_time) is int and last_time > 0 else mtime_ms,
            "bytes": source.bytes_read if not source.compressed else os.stat(path).st_size,
            "error": source.problem(),
        })
    return _json({"sessions": out})


async def session_page(request: Request) -> Response:
    registry: SessionRegistry = request.app.state.registry
    source = registry.lookup(request.path_params["sid"])
    through = _int_param(request, "throughSeq", -1)
    before = _int_param(request, "beforeSeq", 0)
    max_messages = _int_param(request, "maxMessages", 1)
    max_messages = DEFAULT_MAX_MESSAGES if max_messages is None else max_messages
    async with source.lock:
        await source._update_locked()
        last = source.index.last_seq
        through = last if through is None else through
        check_page_request(through, before, max_messages, last)
        value = await run_in_threadpool(source.index.page, through, before, max_messages)
        problem = source.problem()
    headers = None
    if problem is not None:
        value["error"] = {"error": "malformed-session", "detail": problem}
        headers = {"X-Session-Error": _header_safe(problem)}
    return _json(value, headers=headers)


async def session_follow(request: Request) -> Response:
    registry: SessionRegistry = request.app.state.registry
    source = registry.lookup(request.path_params["sid"])
    max_messages = _int_param(request, "maxMessages", 1)
    check_max_messages(DEFAULT_MAX_MESSAGES if max_messages is None else max_messages)
    last_event_id = request.headers.get("last-event-id")
    if last_event_id is not None:
        # Resuming needs no replay: the snapshot always ends at the current end of the log (>= the client's
        # last seen seq), and the client's journal accepts it as a reconnect and dedupes what it already has.
        try:
            if int(last_event_id) < -1:
                raise ValueError
        except ValueError:
            raise PageRequestError("Last-Event-ID", f"must be a seq, got {last_event_id!r}") from None
    return EventStreamResponse(source, DEFAULT_MAX_MESSAGES if max_messages is None else max_messages)


async def session_raw(request: Request) -> Response:
    registry: SessionRegistry = request.app.state.registry
    source = registry.lookup(request.path_params["sid"])
    media = "application/zstd" if source.compressed else "application/x-ndjson"
    return FileResponse(source.path, media_type=media)


_CODES = {400: "bad-request", 404: "not-found", 405: "method-not-allowed"}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, _CODES.get(exc.status_code, "http-error"), str(exc.detail))


async def _bad_request(request: Request, exc: Exception) -> Response:
    return _error(400, "bad-request", str(exc))


async def _assembler_error(request: Request, exc: Exception) -> Response:
    return _error(400, "bad-session", str(exc))


async def _os_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OSError)
    return _error(404, "not-found", f"cannot read session: {exc.strerror or exc}")


async def _internal(request: Request, exc: Exception) -> Response:
    log.exception("internal error", exc_info=exc)
    return _error(500, "internal", f"{type(exc).__name__}: {exc}")


class _SecurityHeaders:
    """Adds the CSP and ``nosniff`` to every response."""

    def __init__(self, app: Any, csp: str = CSP) -> None:
        self.app = app
        self.csp = csp.encode("ascii", "replace")

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"content-security-policy", self.csp))
                headers.append((b"x-content-type-options", b"nosniff"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(roots: Sequence[str | os.PathLike[str]], *, static_dir: str | os.PathLike[str] | None = None,
               serve_static: bool = True, poll_interval: float = 0.2) -> Starlette:
    """The Starlette app serving ``roots`` (session files and folders). ``static_dir`` (default ``build/site``) is
    served at ``/`` when it exists. ``app.state.registry`` is the ``SessionRegistry``."""
    routes: list[Any] = [
        Route("/api/sessions", list_sessions),
        Route("/api/sessions/{sid:path}/page", session_page),
        Route("/api/sessions/{sid:path}/follow", session_follow),
        Route("/api/sessions/{sid:path}/raw", session_raw),
    ]
    static = Path(static_dir) if static_dir is not None else DEFAULT_STATIC_DIR
    csp = CSP
    if serve_static and static.is_dir():
        routes.append(Mount("/", StaticFiles(directory=static, html=True)))
        csp = viewer_csp(static)
    app = Starlette(routes=routes, exception_handlers={
        HTTPException: _http_error,
        PageRequestError: _bad_request,
        AssemblerError: _assembler_error,
        OSError: _os_error,
        Exception: _internal,
    })
    app.add_middleware(_SecurityHeaders, csp=csp)
    app.state.registry = SessionRegistry(roots, poll_interval)
    return app
