"""Search restricted to the chat rows the page's filters leave shown (``web/filters.mjs``; facets in ``facets``).

Rules: the rows whose facet is hidden are not searched, and with ``thinking`` hidden neither are the Think sections
of the rows still shown, so the counter never counts a match the page cannot show. Pure apart from the timer.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from ..views import ViewNode
from .facets import THINKING, row_facet
from .search import SearchIndex
from .updates import elapsed_ms, encode_json

__all__ = ["FiltersMixin"]


class FiltersMixin:
    """The search entry point of ``Viewer`` that honours the page's row filters."""

    _search: SearchIndex
    revs: dict[str, int]

    def _ordered(self) -> list[ViewNode]:  # pragma: no cover - provided by ViewsMixin
        raise NotImplementedError

    def search_shown(self, query: str, include_hidden: bool = False, hidden: Collection[str] = ()) -> bytes:
        """As ``search``, over the rows whose facet is not in ``hidden`` (and without Think sections when
        ``thinking`` is hidden)."""
        t0 = time.perf_counter()
        hide = frozenset(str(h) for h in hidden)
        nodes = [n for n in self._ordered() if row_facet(n) not in hide]
        value: dict[str, Any] = self._search.search(nodes, self.revs, str(query), bool(include_hidden),
                                                    skip_think=THINKING in hide)
        value["ms"] = elapsed_ms(t0)
        return encode_json(value)

