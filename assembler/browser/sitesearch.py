"""Entry points of ``Viewer`` for a published site's text search: the worker hands over the site's filter file once
(``site_filter_open``), asks which shards a query needs and are not open yet (``site_index_plan``), hands over each
of those shards' bytes once (``site_index_open``), then asks ``site_search``, which answers as ``GET /api/search``
does (``server.site_search``: the same query rules, SQL and JSON) from the shards the query needs.

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

from .updates import as_bytes, encode_json

if TYPE_CHECKING:  # sqlite3 is loaded with the first search (server.site_search), not with the viewer
    import sqlite3

    from ..server.site_filter import SiteFilter

# The server's search modules are imported on first use: they import this package's row texts (browser.search), so
# importing them here, while the package loads, would be a cycle.

__all__ = ["SiteSearchMixin"]


class SiteSearchMixin:
    """A published site's index shards and filter, open in memory, and the search over them."""

    _shards: dict[str, tuple[sqlite3.Connection, int]] | None = None
    _filter: tuple[str, SiteFilter] | None = None

    def _open_shards(self) -> dict[str, tuple[sqlite3.Connection, int]]:
        if self._shards is None:
            self._shards = {}
        return self._shards

    def _site_filter(self, name: str | None) -> SiteFilter | None:
        if name is None or self._filter is None or self._filter[0] != str(name):
            return None
        return self._filter[1]

    def _needed(self, query: str, names: Sequence[str], filter_name: str | None) -> list[str]:
        from ..server.site_filter import needed_shards

        return needed_shards(self._site_filter(filter_name), [str(n) for n in names], str(query))

    def _missing(self, names: Sequence[str]) -> list[str]:
        shards = self._open_shards()
        wanted = [str(n) for n in names]
        for name in [n for n in shards if n not in wanted]:
            shards.pop(name)[0].close()
        return [n for n in wanted if n not in shards]

    def site_index_missing(self, names: Sequence[str]) -> bytes:
        """The shards among ``names`` not open yet (JSON list); the others are closed."""
        return encode_json(self._missing(names))

    def site_filter_open(self, name: str, data: Any) -> bytes:
        """Hold the filter file ``name`` from its bytes: ``{ok: true, shards}`` or ``{ok: false, error}``."""
        from ..server.site_filter import FilterError, decode_filter

        try:
            found = decode_filter(as_bytes(data))
        except FilterError as exc:
            return encode_json({"ok": False, "error": f"{name}: {exc}"})
        self._filter = (str(name), found)
        return encode_json({"ok": True, "shards": len(found.shards)})

    def site_index_plan(self, query: str, names: Sequence[str], filter_name: str | None = None) -> bytes:
        """The shards ``query`` needs among ``names`` that are not open yet (JSON list, in catalog order); the
        shards not named are closed. ``filter_name``: the catalog's filter file (handed over first)."""
        missing = set(self._missing(names))
        return encode_json([n for n in self._needed(query, names, filter_name) if n in missing])

    def site_index_open(self, name: str, data: Any) -> bytes:
        """Open shard ``name`` from its bytes: ``{ok: true, sessions}`` or ``{ok: false, error}`` (not a shard, or
        this SQLite lacks FTS5)."""
        from ..server.search_index import SearchUnavailable
        from ..server.site_search import open_shard, shard_sessions

        try:
            con = open_shard(as_bytes(data))
        except SearchUnavailable as exc:
            return encode_json({"ok": False, "error": f"{name}: {exc}"})
        shards = self._open_shards()
        if name in shards:
            shards.pop(name)[0].close()
        sessions = shard_sessions(con)
        shards[str(name)] = (con, sessions)
        return encode_json({"ok": True, "sessions": sessions})

    def site_search(self, query: str, limit: int, names: Sequence[str], filter_name: str | None = None) -> bytes:
        """``{status, body}``: the answer of ``GET /api/search?q=query&limit=limit`` from the shards ``names`` (those
        the query needs: see the module rules)."""
        from ..server.site_search import answer

        shards = self._open_shards()
        needed = self._needed(query, names, filter_name)
        missing = [n for n in needed if n not in shards]
        if missing:
            return encode_json({"status": 409, "body": {"error": "not-loaded", "detail": f"{missing[0]} is not open"}})
        filt = self._site_filter(filter_name)
        counted = {entry.file: entry.sessions for entry in filt.shards} if filt is not None else {}
        # a shard neither open nor in the filter is needed, so only a refused query (no shard read) meets one
        sessions = sum(shards[n][1] if n in shards else counted.get(n, 0) for n in map(str, names))
        status, body = answer([shards[n][0] for n in needed], str(query), int(limit), sessions)
        return encode_json({"status": status, "body": body})
