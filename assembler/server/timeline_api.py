"""``GET /api/sessions/{id}/timeline``: the trajectory overview of the WHOLE session (``browser.timeline.run_timeline``
over its every record), for a page that has loaded only the newest pages; ``publish`` writes the same value as the
session's ``timeline.json``.

Rules: the value is the page's own timeline value (``timeline_of``), ``scope`` ``"run"`` and ``last`` the last seq it
covers; it is folded in a worker thread and kept per session by the file's size and modification time (as the list
keeps its per-file facts), so a reader who opens the Trajectory view again, or another reader, gets it without a
second fold; a request for a file version being folded waits for that fold. At most ``KEEP`` sessions are kept
(least recently asked for dropped). A session that stopped parsing gets the timeline of its valid part. The value
is kept gzipped too and sent so to a client that accepts it (a 5,000-turn session's 2.1 MB is 0.24 MB on the wire;
a published site's ``timeline.json`` has its ``.gz`` and ``.br`` beside it).
"""

from __future__ import annotations

import asyncio
import gzip
import os
from collections import OrderedDict
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ..browser.timeline import run_timeline
from ..records import encode
from .registry import SessionRegistry
from .source import SessionSource

__all__ = ["KEEP", "TimelineCache", "session_timeline", "timeline_bytes"]

KEEP = 16
"""Sessions whose whole-run timeline is kept."""


def timeline_bytes(records: Any, has_more: bool, last: int) -> bytes:
    """The encoded whole-run timeline of a page's records (blocking: a fold of them all)."""
    return encode(run_timeline(records, has_more, last))


def _both(records: Any, has_more: bool, last: int) -> tuple[bytes, bytes]:
    data = timeline_bytes(records, has_more, last)
    return data, gzip.compress(data, 6)


class TimelineCache:
    """Whole-run timelines by session id, each with the file version (size, mtime) it was folded from."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._values: OrderedDict[str, tuple[tuple[int, int, int], asyncio.Task[tuple[bytes, bytes]]]] = OrderedDict()

    async def get(self, sid: str, source: SessionSource) -> tuple[bytes, bytes]:
        """The timeline of ``source`` as its file is now (plain and gzipped): kept, being folded, or folded now.

        Raises:
            OSError: the file cannot be read; AssemblerError: its records break the assembler contract.
        """
        async with source.lock:
            await source.update_locked()
            stat = await run_in_threadpool(os.stat, source.path)
            version = (stat.st_size, stat.st_mtime_ns, source.index.last_seq)
            kept = self._values.get(sid)
            if kept is not None and kept[0] == version and not (kept[1].done() and kept[1].exception()):
                self._values.move_to_end(sid)
                task = kept[1]
            else:
                last = source.index.last_seq
                page = await run_in_threadpool(source.with_index, lambda index: index.session_page(None, None, None))
                task = asyncio.ensure_future(run_in_threadpool(_both, page.records, page.hasMore, last))
                self._values[sid] = (version, task)
                self._values.move_to_end(sid)
                while len(self._values) > self.keep:
                    self._values.popitem(last=False)
        return await asyncio.shield(task)


async def session_timeline(request: Request) -> Response:
    """The whole session's timeline (see the module doc)."""
    registry: SessionRegistry = request.app.state.registry
    sid = request.path_params["sid"]
    source = await registry.find(sid)
    data, packed = await request.app.state.timelines.get(sid, source)
    registry.trim()
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(packed, media_type="application/json",
                        headers={"content-encoding": "gzip", "vary": "Accept-Encoding"})
    return Response(data, media_type="application/json", headers={"vary": "Accept-Encoding"})
