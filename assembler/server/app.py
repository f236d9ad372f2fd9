"""The Starlette app: ``create_app`` wires the routes (session list, page, follow, raw, the whole-run timeline of
``timeline_api``, and the static viewer at ``/``), the exception handlers and the security headers around a
``SessionRegistry``.

Rules: pages come from the no-expansion pager (``history.MessageIndex``); bad query parameters (anything but ASCII
digits) are ``PageRequestError`` (400); a session that stopped parsing is still served, with its fault in the body.
Every request passes the ``Host`` check (421 otherwise); every file is opened through ``confine.open_in_root``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..facts import lineage
from ..history import DEFAULT_MAX_MESSAGES, PageRequestError, check_max_messages, check_page_request
from ..logfile import DEFAULT_MAX_LINE_BYTES
from .catalog import ServedFile
from .confine import open_in_root
from .csp import CSP, SecurityHeaders, viewer_csp
from .hosts import HostCheck, check_allowed
from .indexer import SearchIndexer, index_file_name, index_roots
from .listing import session_entry, sort_entries
from .registry import DEFAULT_CACHE_BYTES, SessionRegistry
from .responses import EXCEPTION_HANDLERS, json_response
from .search_api import search_sessions
from .site import find_site
from .source import SessionSource
from .sse import EventStreamResponse
from .timeline_api import TimelineCache, session_timeline

__all__ = [
    "create_app",
    "list_entries",
    "list_sessions",
    "page_answer",
    "session_follow",
    "session_page",
    "session_raw",
]

log = logging.getLogger("assembler.server")  # one logger for the whole server package

_RAW_CHUNK = 1 << 20


def _header_safe(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii").replace("\r", " ").replace("\n", " ")[:1000]


_INTEGER = re.compile(r"-?[0-9]{1,16}")
"""A query integer: ASCII digits only (``int()`` also takes ``1_0``, ``+5``, `` 5`` and non-ASCII digits)."""


def _strict_int(name: str, raw: str) -> int:
    if not _INTEGER.fullmatch(raw):
        raise PageRequestError(name, f"must be an integer (ASCII digits, an optional leading -), got {raw!r}")
    return int(raw)


def _int_param(request: Request, name: str, minimum: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    value = _strict_int(name, raw)
    if value < minimum:
        raise PageRequestError(name, f"must be >= {minimum}, got {value}")
    return value


def _hidden(meta: ServedFile) -> bool:
    """A scanned file the list leaves out: a ``.json`` file that is no session log (any JSON document may sit in a
    served folder) or a file that says it is not one (a sidecar). Other files of no known format are listed as
    damaged, with the formats tried."""
    fmt = meta.format
    if fmt is not None:
        return not fmt.session
    return meta.path.name.endswith(".json") and meta.error is not None


def list_entries(listing: Sequence[tuple[str, ServedFile]]) -> list[dict[str, Any]]:
    """The list's entries for ``SessionRegistry.listing()``'s answer, newest activity first (the entry contract:
    ``listing.py``). ``GET /api/sessions`` answers them; ``publish`` writes them as the site's catalog."""
    out = []
    for sid, meta in listing:
        if _hidden(meta):
            continue
        for session in meta.sessions:
            sid_k = f"{sid}/{session.key}" if session.key else sid
            try:
                entry = session_entry(sid_k, meta.path, facts=session.facts, event_count=session.event_count,
                                      mtime_s=meta.mtime_ns / 1e9 if meta.read_once else None,
                                      problem=session.problem, size=meta.size, fmt=meta.format, label=session.label,
                                      header=session.header)
                entry.update(lineage(session.header, session.subagent_label))
            except OSError:
                continue
            except Exception as exc:  # one entry's facts no rule foresaw: it is damaged, the list stands
                log.exception("cannot list %s", meta.path)
                entry = {"id": sid_k, "title": None, "file": meta.path.name, "path": str(meta.path),
                         "lastActivity": None, "lastActivitySource": None, "eventCount": 0, "turnCount": 0,
                         "model": None, "status": "damaged",
                         "error": f"cannot be listed ({type(exc).__name__}: {str(exc)[:200]})", "bytes": meta.size}
            out.append(entry)
    return sort_entries(out)


async def list_sessions(request: Request) -> Response:
    """Every session under the roots, newest activity first (the entry contract: ``listing.py``)."""
    registry: SessionRegistry = request.app.state.registry
    listed, pending = await registry.listing()  # per-file metadata, refreshed in a thread; no records kept
    return json_response({"sessions": list_entries(listed), "pending": pending})


async def page_answer(source: SessionSource, through: int | None, before: int | None, max_messages: int,
                      from_seq: int | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The page ``GET .../page`` answers, read through ``through`` (default: the last seq), and the session's fault
    (also in the value's ``error``). ``publish`` writes the same value as a file. ``from_seq`` (a deep link's row):
    the page reaches back to the message holding it in one answer, ``max_messages`` being the cap.

    Raises:
        PageRequestError: a field breaks its rule (``history.check_page_request``).
    """
    async with source.lock:
        await source.update_locked()
        last = source.index.last_seq
        through = last if through is None else through
        check_page_request(through, before, max_messages, last)
        value = await run_in_threadpool(
            source.with_index, lambda index: index.page(through, before, max_messages, from_seq=from_seq))
        fault = source.fault()
    if fault is not None:
        value["error"] = fault
    return value, fault


async def session_page(request: Request) -> Response:
    registry: SessionRegistry = request.app.state.registry
    source = await registry.find(request.path_params["sid"])
    through = _int_param(request, "throughSeq", -1)
    before = _int_param(request, "beforeSeq", 0)
    max_messages = _int_param(request, "maxMessages", 1)
    max_messages = DEFAULT_MAX_MESSAGES if max_messages is None else max_messages
    from_seq = _int_param(request, "fromSeq", 0)
    value, fault = await page_answer(source, through, before, max_messages, from_seq)
    registry.trim()
    headers = None
    if fault is not None:
        headers = {"X-Session-Error": _header_safe(fault["detail"])}
    return json_response(value, headers=headers)


async def session_follow(request: Request) -> Response:
    registry: SessionRegistry = request.app.state.registry
    source = await registry.find(request.path_params["sid"])
    max_messages = _int_param(request, "maxMessages", 1)
    check_max_messages(DEFAULT_MAX_MESSAGES if max_messages is None else max_messages)
    last_event_id = request.headers.get("last-event-id")
    if last_event_id is not None:
        # Resuming needs no replay: the snapshot always ends at the current end of the log (>= the client's
        # last seen seq), and the client's journal accepts it as a reconnect and dedupes what it already has.
        if not _INTEGER.fullmatch(last_event_id) or int(last_event_id) < -1:
            raise PageRequestError("Last-Event-ID", f"must be a seq, got {last_event_id!r}")
    return EventStreamResponse(source, DEFAULT_MAX_MESSAGES if max_messages is None else max_messages)


async def session_raw(request: Request) -> Response:
    """The file as stored, from a descriptor checked against its root (``confine.open_in_root``)."""
    registry: SessionRegistry = request.app.state.registry
    source = await registry.find(request.path_params["sid"])
    media = ("application/zstd" if source.file.compressed else "application/vnd.sqlite3" if source.file.database
             else "application/x-ndjson")
    stream = await run_in_threadpool(open_in_root, source.path, source.root)
    size = os.fstat(stream.fileno()).st_size

    async def body() -> AsyncIterator[bytes]:
        try:
            left = size  # the size at open: a file that grows meanwhile is sent as it was then
            while left > 0:
                chunk = await run_in_threadpool(stream.read, min(left, _RAW_CHUNK))
                if not chunk:
                    return
                left -= len(chunk)
                yield chunk
        finally:
            stream.close()

    return StreamingResponse(body(), media_type=media, headers={"content-length": str(size)})


@contextlib.asynccontextmanager
async def _warm_listing(app: Starlette) -> AsyncIterator[None]:
    """The list's files are read once as the server starts, while the browser loads the page: its first
    ``/api/sessions`` then finds them read (a file that changes later is read again when listed). Shutting down
    stops a listing still in progress."""
    registry: SessionRegistry = app.state.registry

    async def warm() -> None:
        try:
            await registry.listing(None)
        except Exception:  # the request that lists them reports what is wrong
            log.debug("warming the session list failed", exc_info=True)

    task = asyncio.create_task(warm())
    indexer: SearchIndexer | None = app.state.indexer
    if indexer is not None:
        indexer.start()
    try:
        yield
    finally:
        registry.stop_reading()
        task.cancel()
        if indexer is not None:
            await asyncio.to_thread(indexer.stop)


def create_app(roots: Sequence[str | os.PathLike[str]], *, static_dir: str | os.PathLike[str] | None = None,
               serve_static: bool = True, poll_interval: float = 0.2, allowed_hosts: Sequence[str] = (),
               bound_host: str | None = None, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
               cache_bytes: int = DEFAULT_CACHE_BYTES, index_dir: str | os.PathLike[str] | None = None,
               index_interval: float = 2.0) -> Starlette:
    """The Starlette app serving ``roots`` (session files and folders). ``static_dir`` (default: ``site.find_site()``,
    the checkout's ``build/site`` or the installed package's site) is served at ``/`` when it exists.
    ``app.state.registry`` is the ``SessionRegistry``; ``app.state.site`` the folder served at ``/`` (or None).

    Requests must name this server in ``Host`` (``hosts.HostCheck``): ``localhost``, ``127.0.0.1``, ``[::1]`` or
    ``bound_host`` on the port they arrived at, or a name in ``allowed_hosts`` (``NAME`` or ``NAME:PORT``); any
    other is 421. A log line longer than ``max_line_bytes`` stops that file's parse with an error naming it; parsed
    sessions kept for pages hold at most ``cache_bytes`` of file bytes (least recently used evicted).

    ``index_dir``: keep the cross-session search index (``indexer``) in this folder, one file per set of roots (an
    object storage root named by its location, so a restart finds its index), indexed by a thread that runs while the
    app does (its lifespan) and looks for changes every ``index_interval`` seconds; ``app.state.indexer`` (None without
    ``index_dir``: ``/api/search`` is then 404).

    Raises:
        ValueError: a malformed ``allowed_hosts`` name.
        search_index.SearchUnavailable: no FTS5 in this SQLite, or ``index_dir`` cannot be written."""
    routes: list[Any] = [
        Route("/api/sessions", list_sessions),
        Route("/api/search", search_sessions),
        Route("/api/sessions/{sid:path}/page", session_page),
        Route("/api/sessions/{sid:path}/follow", session_follow),
        Route("/api/sessions/{sid:path}/raw", session_raw),
        Route("/api/sessions/{sid:path}/timeline", session_timeline),
    ]
    static = Path(static_dir) if static_dir is not None else find_site()
    csp = CSP
    site = static if serve_static and static is not None and static.is_dir() else None
    if site is not None:
        routes.append(Mount("/", StaticFiles(directory=site, html=True)))
        csp = viewer_csp(site)
    check_allowed(allowed_hosts)  # a malformed name is an error now, not a 500 for every request (lazy middleware)
    app = Starlette(routes=routes, exception_handlers=dict(EXCEPTION_HANDLERS), lifespan=_warm_listing)
    app.add_middleware(HostCheck, allowed=list(allowed_hosts), bound=bound_host)
    app.add_middleware(SecurityHeaders, csp=csp)  # outermost: a 421 carries the security headers too
    app.state.site = site
    app.state.timelines = TimelineCache()
    registry = app.state.registry = SessionRegistry(roots, poll_interval, max_line_bytes=max_line_bytes,
                                                    cache_bytes=cache_bytes)
    app.state.indexer = None if index_dir is None else SearchIndexer(
        registry, Path(index_dir) / index_file_name(index_roots(registry)), interval=index_interval)
    return app
