"""A published site's text search in the page: the worker hands over each index shard's bytes once
(``SiteShards.open``, the wire API's ``site_index_open``), then asks ``search``, which answers as ``GET /api/search``
does (``server.site_search``: the same query rules, SQL and JSON).

Rules: shards are held by their file name (a name is a hash of the bytes, so a name never changes meaning); a search
names the shards of the catalog the page holds and uses exactly those, and a shard no longer named is closed, so a
republished site's new catalog swaps the whole set. An answer is ``{status, body}``: 200 and the search answer, 400
and ``{error, detail}`` for a query the rules refuse, 409 when a named shard was not handed over (the worker fetches it
and asks again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite3 is loaded with the first shard (server.site_search), not with the viewer
    import sqlite3

# The server's search modules are imported on first use: they import this package's row texts (browser.search), so
# importing them here, while the package loads, would be a cycle.

__all__ = ["SiteShards"]


class SiteShards:
    """A published site's index shards, open in memory, and the search over them."""

    def __init__(self) -> None:
        self.shards: dict[str, tuple[sqlite3.Connection, int]] = {}

    def missing(self, names: Sequence[str]) -> list[str]:
        """The shards among ``names`` not open yet; the others are closed."""
        shards = self.shards
        wanted = [str(n) for n in names]
        for name in [n for n in shards if n not in wanted]:
            shards.pop(name)[0].close()
        return [n for n in wanted if n not in shards]

    def open(self, name: str, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        """Open shard ``name`` from its bytes: ``{ok: true, sessions}`` or ``{ok: false, error}`` (not a shard, or
        this SQLite lacks FTS5)."""
        from ..server.search_index import SearchUnavailable
        from ..server.site_search import open_shard, shard_sessions

        try:
            con = open_shard(data)
        except SearchUnavailable as exc:
            return {"ok": False, "error": f"{name}: {exc}"}
        shards = self.shards
        if name in shards:
            shards.pop(name)[0].close()
        sessions = shard_sessions(con)
        shards[name] = (con, sessions)
        return {"ok": True, "sessions": sessions}

    def search(self, query: str, limit: int, names: Sequence[str]) -> dict[str, Any]:
        """``{status, body}``: the answer of ``GET /api/search?q=query&limit=limit`` from the shards ``names``."""
        from ..server.site_search import answer

        shards = self.shards
        missing = [n for n in names if n not in shards]
        if missing:
            return {"status": 409, "body": {"error": "not-loaded", "detail": f"{missing[0]} is not open"}}
        picked = [shards[n] for n in names]
        status, body = answer([con for con, _ in picked], query, limit, sum(n for _, n in picked))
        return {"status": status, "body": body}
