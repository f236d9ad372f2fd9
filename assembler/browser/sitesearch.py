"""A published site's text search in the page: the worker hands over the site's filter file once (``SiteShards.
open_filter``, the wire API's ``site_filter_open``), asks which shards a query needs and are not open yet
(``plan``, ``site_index_plan``), hands over each of those shards' bytes once (``open``, ``site_index_open``), then
asks ``search``, which answers as ``GET /api/search`` does (``server.site_search``: the same query rules, SQL and
JSON) from the shards the query needs.

Rules: shards and the filter are held by their file name (a name is a hash of the bytes, so a name never changes
meaning); a search names the shards of the catalog the page holds (and its filter) and uses only those, and a shard
no longer named is closed, so a republished site's new catalog swaps the whole set. A shard is needed when the
filter says it may hold a hit (``server.site_filter``: it never says no for a shard that holds one), every shard
without a filter (a site published before filters), none for a query the rules refuse. The answer's ``indexing``
counts the sessions of every named shard, needed or not (each was searched, by its rows or by its filter). An answer
is ``{status, body}``: 200 and the search answer, 400 and ``{error, detail}`` for a query the rules refuse, 409 when
a needed shard was not handed over (the worker fetches it and asks again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite3 is loaded with the first search (server.site_search), not with the viewer
    import sqlite3

    from ..server.site_filter import SiteFilter

# The server's search modules are imported on first use: they import this package's row texts (browser.search), so
# importing them here, while the package loads, would be a cycle.

__all__ = ["SiteShards"]


class SiteShards:
    """A published site's index shards and filter, open in memory, and the search over them."""

    def __init__(self) -> None:
        self.shards: dict[str, tuple[sqlite3.Connection, int]] = {}
        self.filter: tuple[str, SiteFilter] | None = None

    def _site_filter(self, name: str | None) -> SiteFilter | None:
        if name is None or self.filter is None or self.filter[0] != name:
            return None
        return self.filter[1]

    def needed(self, query: str, names: Sequence[str], filter_name: str | None) -> list[str]:
        """The shards among ``names`` that ``query`` needs (its filter may hold its words), in catalog order."""
        from ..server.site_filter import needed_shards

        return needed_shards(self._site_filter(filter_name), list(names), query)

    def missing(self, names: Sequence[str]) -> list[str]:
        """The shards among ``names`` not open yet; the others are closed."""
        shards = self.shards
        wanted = list(names)
        for name in [n for n in shards if n not in wanted]:
            shards.pop(name)[0].close()
        return [n for n in wanted if n not in shards]

    def open_filter(self, name: str, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        """Hold the filter file ``name`` from its bytes: ``{ok: true, shards}`` or ``{ok: false, error}``."""
        from ..server.site_filter import FilterError, decode_filter

        try:
            found = decode_filter(data)
        except FilterError as exc:
            return {"ok": False, "error": f"{name}: {exc}"}
        self.filter = (name, found)
        return {"ok": True, "shards": len(found.shards)}

    def plan(self, query: str, names: Sequence[str], filter_name: str | None = None) -> list[str]:
        """The shards ``query`` needs among ``names`` that are not open yet (in catalog order); the shards not named
        are closed. ``filter_name``: the catalog's filter file (handed over first)."""
        missing = set(self.missing(names))
        return [n for n in self.needed(query, names, filter_name) if n in missing]

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

    def search(self, query: str, limit: int, names: Sequence[str], filter_name: str | None = None) -> dict[str, Any]:
        """``{status, body}``: the answer of ``GET /api/search?q=query&limit=limit`` from the shards ``names`` (those
        the query needs: see the module rules)."""
        from ..server.site_search import answer

        shards = self.shards
        needed = self.needed(query, names, filter_name)
        missing = [n for n in needed if n not in shards]
        if missing:
            return {"status": 409, "body": {"error": "not-loaded", "detail": f"{missing[0]} is not open"}}
        filt = self._site_filter(filter_name)
        counted = {entry.file: entry.sessions for entry in filt.shards} if filt is not None else {}
        # a shard neither open nor in the filter is needed, so only a refused query (no shard read) meets one
        sessions = sum(shards[n][1] if n in shards else counted.get(n, 0) for n in names)
        status, body = answer([shards[n][0] for n in needed], query, limit, sessions)
        return {"status": status, "body": body}
