"""Search restricted to the chat rows the page's filters leave shown (``web/filters.mjs``; facets in ``facets``).

Rules: the rows whose facet is hidden are not searched, and with ``thinking`` hidden neither are the Think sections
of the rows still shown, so the counter never counts a match the page cannot show. Pure apart from the timer.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..views import ViewNode
from .facets import THINKING, row_facet
from .search import SearchIndex
from .updates import elapsed_ms

__all__ = ["search_shown"]


def search_shown(index: SearchIndex, ordered: Sequence[ViewNode], revs: Mapping[str, int], query: str,
                 include_hidden: bool = False, hidden: Collection[str] = ()) -> dict[str, Any]:
    """As ``SearchIndex.search`` over the chat rows ``ordered``, leaving out those whose facet is in ``hidden``
    (and their Think sections when ``thinking`` is hidden)."""
    t0 = time.perf_counter()
    hide = frozenset(hidden)
    nodes = [n for n in ordered if row_facet(n) not in hide]
    value: dict[str, Any] = index.search(nodes, revs, query, include_hidden, skip_think=THINKING in hide)
    value["ms"] = elapsed_ms(t0)
    return value
