"""HTTP edge: serves session logs from folders as history pages, a follow stream (SSE) and raw files (Starlette).

Rules: a session id is only ever looked up among the files found by scanning the served roots, so an id can never
reach outside them (``..``, absolute ids and symlinks resolving outside a root are refused with 404). Pages come
from the no-expansion pager (``history.MessageIndex``). A growing ``.jsonl`` file is polled and only its new bytes
are parsed; each appended storage record reaches followers as its member events, one ``event`` frame each, never
packed. ``.jsonl.zst`` files are served for page and raw, and their follow stream is the snapshot only (a compressed
file is re-read whole when it changes, never followed live). Every error is JSON ``{error, detail}``.

Modules: ``app`` (routes and ``create_app``), ``registry`` (roots, scanning, ids), ``source`` (one session file and
its followers), ``sse`` (the follow stream), ``responses`` (JSON bodies, error handlers), ``csp`` (security headers),
``site`` (where the viewer's built site is: the checkout's ``build/site`` or the installed package's),
``timeline_api`` (the whole session's trajectory overview, ``GET .../timeline``); search across
sessions: ``search_text`` (a file's chat row texts), ``search_index`` (the SQLite FTS5 store), ``search_query`` (the
query rules), ``indexer`` (the thread keeping the index), ``search_api`` (``GET /api/search``); a published site's
index: ``site_index`` (publish writes it as static shards), ``site_filter`` (each shard's word filter, so a search
fetches only the shards that may answer), ``site_search`` (the page's worker answers from them).

Names are imported on first use (PEP 562): the published page's worker (Pyodide, no Starlette) imports the search
modules of this package without the HTTP ones.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from .app import create_app
    from .csp import CSP, viewer_csp
    from .registry import SessionRegistry, session_id_is_safe
    from .site import find_site
    from .source import Follower, SessionSource

_WHERE = {
    "app": ("create_app",),
    "csp": ("CSP", "viewer_csp"),
    "registry": ("SessionRegistry", "session_id_is_safe"),
    "site": ("find_site",),
    "source": ("Follower", "SessionSource"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "CSP",
    "SessionSource",
    "SessionRegistry",
    "Follower",
    "create_app",
    "find_site",
    "session_id_is_safe",
    "viewer_csp",
]
assert sorted(__all__) == sorted(_MODULE_OF)


def __getattr__(name: str) -> _Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
