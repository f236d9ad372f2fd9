"""The session list's contract (``GET /api/sessions``): what each entry says about one session file, and the facts
gathered from its records as they are read (``SessionFacts``, fed by ``catalog.ServedFile``).

One entry::

    {"id", "title", "file", "path", "lastActivity", "lastActivitySource", "eventCount", "turnCount", "model",
     "status", "error", "bytes"}

Rules: ``title`` is the session's own title record, else the first user message's text (first line, capped), else
null. ``lastActivity`` is the newest event's own ``time`` (epoch ms) with ``lastActivitySource: "events"``; a log
whose events carry no real time (none, or a rebuilt counter: anything before 2000-01-01) falls back to the file's
mtime, labelled ``"mtime"``. ``status`` is ``damaged`` (the parse stopped at a fault: ``error`` names its line),
``interrupted`` (the last turn ended interrupted or aborted, or was left open and the file is no longer written),
``live`` (a turn is open and the file changed within ``LIVE_WINDOW_S``) or ``ended``. ``model`` is the model the log
records (the request header's config, else an assistant message's provenance), or null. Entries are sorted newest
activity first. The answer is ``{"sessions": [entries], "pending": N}``: a big folder
(``registry.LIST_BUDGET_FILES``) is answered after ``registry.LIST_BUDGET_S`` of reading with the entries read so
far, ``pending`` counting the files not read yet (read on in the background: ask again); a folder listed whole says
``"pending": 0``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ..facts import LIVE_WINDOW_S, REAL_TIME_MIN_MS, SessionFacts, entry_value
from ..formats import Format

__all__ = [
    "LIVE_WINDOW_S",
    "REAL_TIME_MIN_MS",
    "SessionFacts",
    "session_entry",
    "sort_entries",
]


def session_entry(sid: str, path: Path, *, facts: SessionFacts, event_count: int, problem: str | None,
                  size: int, now_s: float | None = None, fmt: Format | None = None, label: str | None = None,
                  header: dict[str, Any] | None = None, mtime_s: float | None = None) -> dict[str, Any]:
    """One entry of the list (see the module doc; built by ``facts.entry_value``). ``mtime_s``: the file's mtime
    when it was read (the list's metadata has it); stat'ed when not given.

    Raises:
        OSError: the file cannot be stat'ed.
    """
    if mtime_s is None:
        mtime_s = os.stat(path).st_mtime
    return entry_value(sid, file=path.name, path=str(path), facts=facts, event_count=event_count, problem=problem,
                       size=size, mtime_s=mtime_s, now_s=time.time() if now_s is None else now_s, fmt=fmt,
                       label=label, header=header)


def sort_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Newest activity first; ties by id."""
    return sorted(entries, key=lambda e: (-(e["lastActivity"] or 0), e["id"]))
