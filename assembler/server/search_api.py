"""``GET /api/search?q=…&limit=…``: text search across the served sessions, from the index the indexer keeps.

Answer: ``{query, results: [{session, seq, key, title, snippet, marks}], total, more, indexing: {done, pending}}``
— ``session`` a listed id (``FILE_ID`` or ``FILE_ID/KEY``), ``seq`` the row's anchor seq (open it with
``#session=ID&seq=N``), ``key`` its chat node key, ``snippet`` plain text (the page escapes it) and ``marks`` the
``[start, end)`` spans of the matches in it, in UTF-16 code units (JavaScript string indices); ``total`` counts the
matching rows up to ``COUNT_CAP`` (``more`` when there are more); ``indexing`` the files indexed and still to index.

Rules: the query language is ``search_query`` (phrases, trailing ``*``; everything else literal); a query it
refuses, or one FTS5 still refuses, is 400 with the reason, never a 500. Rows of a file no longer listed are left
out even before the indexer drops them. Without an index (``serve --no-index``) the route is 404 saying so. Each
request thread reads through its own read-only connection.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from .indexer import SearchIndexer, index_key
from .responses import error_response, json_response
from .search_index import search
from .search_query import QueryError, fts_query
from .site_search import COUNT_CAP  # one cap for both answers

__all__ = ["search_sessions", "COUNT_CAP", "DEFAULT_LIMIT", "MAX_LIMIT"]

DEFAULT_LIMIT = 20
MAX_LIMIT = 100

_local = threading.local()


def _reader(indexer: SearchIndexer) -> sqlite3.Connection:
    con: sqlite3.Connection | None = getattr(_local, "con", None)
    if con is None or getattr(_local, "path", None) != indexer.path:
        con = indexer.store.reader()
        _local.con, _local.path = con, indexer.path
    return con


def _listed_ids(registry: Any) -> dict[str, str]:
    """``index key -> its listed id`` of the registry's last scan (the key: a file's path, or an object's location:
    ``indexer.index_key``)."""
    keys = ((index_key(registry, path), sid) for sid, path in registry.listed_ids.items())
    return {key: sid for key, sid in keys if key is not None}


def _answer(indexer: SearchIndexer, registry: Any, query: str, limit: int) -> tuple[int, dict[str, Any]]:
    try:
        match = fts_query(query)
    except QueryError as exc:
        return 400, {"error": "bad-query", "detail": str(exc)}
    try:
        hits, total = search(_reader(indexer), match, limit, COUNT_CAP)
    except sqlite3.OperationalError as exc:  # the rules should leave FTS5 nothing to refuse; if it does, say so
        return 400, {"error": "bad-query", "detail": f"the index cannot answer this query: {exc}"}
    ids = _listed_ids(registry)
    results = []
    for hit in hits:
        file_id = ids.get(hit.path)
        if file_id is None:
            continue
        results.append({"session": f"{file_id}/{hit.session_key}" if hit.session_key else file_id, "seq": hit.seq,
                        "key": hit.key, "title": hit.title or Path(hit.path).name, "snippet": hit.snippet,
                        "marks": [list(m) for m in hit.marks]})
    return 200, {"query": query, "results": results, "total": min(total, COUNT_CAP), "more": total > COUNT_CAP,
                 "indexing": indexer.progress()}


async def search_sessions(request: Request) -> Response:
    indexer: SearchIndexer | None = request.app.state.indexer
    if indexer is None:
        return error_response(404, "not-found", "search across sessions is off (serve was started with --no-index)")
    if indexer.error is not None:
        return error_response(503, "unavailable", indexer.error)
    query = request.query_params.get("q", "")
    raw_limit = request.query_params.get("limit", str(DEFAULT_LIMIT))
    if not (raw_limit.isascii() and raw_limit.isdigit() and len(raw_limit) <= 3 and 1 <= int(raw_limit) <= MAX_LIMIT):
        return error_response(400, "bad-request",
                              f"limit must be a number from 1 to {MAX_LIMIT}, got {raw_limit[:40]!r}")
    status, value = await run_in_threadpool(_answer, indexer, request.app.state.registry, query, int(raw_limit))
    if status != 200:
        return error_response(status, value["error"], value["detail"])
    return json_response(value)
