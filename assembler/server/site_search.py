"""A published site's text search, answered in the page's worker (Pyodide) from the index shards ``publish`` wrote
(``site_index``): the same query rules (``search_query``), the same SQL (``search_index.count_matches`` and
``top_hits``) and the same answer as ``GET /api/search`` (``search_api``), over one shard or several.

Rules: a shard is opened from its bytes (``sqlite3`` ``deserialize`` into an in-memory database, read-only), so
nothing is written anywhere, in Pyodide or on CPython. Over several shards the total is the sum of their counts
(``COUNT_CAP`` at most, ``more`` beyond); hits are best first (bm25 ``rank``) when the total is at most
``RANKED_MAX`` (each shard's bm25 weighs a word by its frequency in that shard, so with several shards the order is
close to, not exactly, one index's), else in shard order, newest-indexed first within each. A query the rules refuse,
or one FTS5 still refuses, answers status 400 with the reason, never an exception. A shard's ``sessions.path`` is the
session's listed id (``site_index``). No I/O: the worker fetches the bytes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from .search_index import RANKED_MAX, SearchUnavailable, StoredHit, count_matches, top_hits
from .search_query import QueryError, fts_query

__all__ = ["COUNT_CAP", "answer", "open_shard", "shard_sessions"]

COUNT_CAP = 10_000
"""Matching rows counted at most (``GET /api/search`` uses this cap too: the same answer)."""


def open_shard(data: bytes | bytearray | memoryview) -> sqlite3.Connection:
    """A read-only connection to the shard whose file bytes are ``data``.

    Raises:
        SearchUnavailable: this SQLite lacks FTS5, or the bytes are not an index shard.
    """
    con = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        con.deserialize(bytes(data))
        con.execute("PRAGMA query_only=1")
        con.execute("SELECT count(*) FROM row_text WHERE row_text MATCH '\"x\"'").fetchone()
        con.execute("SELECT count(*) FROM sessions").fetchone()
    except sqlite3.Error as exc:
        con.close()
        if "fts5" in str(exc).lower():
            raise SearchUnavailable(f"this browser's SQLite (SQLite {sqlite3.sqlite_version}) lacks FTS5: {exc}") \
                from None
        raise SearchUnavailable(f"not a search index shard ({exc})") from None
    return con


def shard_sessions(con: sqlite3.Connection) -> int:
    """How many sessions a shard holds."""
    return int(con.execute("SELECT count(*) FROM sessions").fetchone()[0])


def _merged(shards: Sequence[sqlite3.Connection], match: str, limit: int) -> tuple[list[StoredHit], int]:
    counts = [count_matches(con, match, COUNT_CAP) for con in shards]
    total = sum(counts)
    ranked = total <= RANKED_MAX
    picked: list[tuple[Any, ...]] = []
    for at, (con, count) in enumerate(zip(shards, counts, strict=True)):
        if count:
            for hit in top_hits(con, match, limit, ranked):
                picked.append(((hit.rank,) if ranked else (at, -hit.rank), hit))
    picked.sort(key=lambda pair: pair[0])
    return [hit for _, hit in picked[:limit]], total


def answer(shards: Sequence[sqlite3.Connection], query: str, limit: int, sessions: int) -> tuple[int, dict[str, Any]]:
    """``(status, body)`` for ``query``: 200 and ``GET /api/search``'s answer (``indexing`` says ``sessions`` done,
    none pending), or 400 and ``{error: "bad-query", detail}``."""
    try:
        match = fts_query(query)
    except QueryError as exc:
        return 400, {"error": "bad-query", "detail": str(exc)}
    try:
        hits, total = _merged(shards, match, limit)
    except sqlite3.OperationalError as exc:  # the rules should leave FTS5 nothing to refuse; if it does, say so
        return 400, {"error": "bad-query", "detail": f"the index cannot answer this query: {exc}"}
    results = []
    for hit in hits:
        sid = f"{hit.path}/{hit.session_key}" if hit.session_key else hit.path
        results.append({"session": sid, "seq": hit.seq, "key": hit.key, "title": hit.title or sid,
                        "snippet": hit.snippet, "marks": [list(m) for m in hit.marks]})
    return 200, {"query": query, "results": results, "total": min(total, COUNT_CAP), "more": total > COUNT_CAP,
                 "indexing": {"done": sessions, "pending": 0}}
