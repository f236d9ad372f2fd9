"""The session list's contract (``GET /api/sessions``): what each entry says about one session file, and the facts
gathered from its records as they are read (``SessionFacts``, fed by ``SessionSource``).

One entry::

    {"id", "title", "file", "path", "lastActivity", "lastActivitySource", "eventCount", "turnCount", "model",
     "status", "error", "bytes"}

Rules: ``title`` is the session's own title record, else the first user message's text (first line, capped), else
null. ``lastActivity`` is the newest event's own ``time`` (epoch ms) with ``lastActivitySource: "events"``; a log
whose events carry no real time (none, or a rebuilt counter: anything before 2000-01-01) falls back to the file's
mtime, labelled ``"mtime"``. ``status`` is ``damaged`` (the parse stopped at a fault: ``error`` names its line),
``interrupted`` (the last turn ended interrupted or aborted, or was left open and the file is no longer written),
``live`` (a turn is open and the file changed within ``LIVE_WINDOW_S``) or ``ended``. ``model`` is the model the
log records (the request header's config, else an assistant message's provenance), or null. Entries are sorted
newest activity first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..formats import Format

__all__ = [
    "LIVE_WINDOW_S",
    "REAL_TIME_MIN_MS",
    "SessionFacts",
    "session_entry",
    "sort_entries",
]

LIVE_WINDOW_S = 120.0
"""A session with an open turn whose file changed this recently is ``live``."""

REAL_TIME_MIN_MS = 946_684_800_000
"""Event times before 2000-01-01 are not wall-clock times (a rebuilt counter): they never date a session."""

_TITLE_CHARS = 120
_USAGE = frozenset({"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"})
_INTERRUPTED = frozenset({"interrupted", "aborted"})


def _text_of(content: Any) -> str | None:
    if type(content) is str:
        return content
    if type(content) is list:
        for part in content:
            if type(part) is dict and part.get("type") == "text" and type(part.get("text")) is str:
                text: str = part["text"]
                if text.strip():
                    return text
    return None


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"


class SessionFacts:
    """What the list says about a session, gathered record by record (scalar events; of a packed chunk row only
    its last member's time counts: it carries none of the other facts)."""

    __slots__ = ("title", "first_user_text", "model", "turns", "open_turn", "last_end", "last_real_time", "usage")

    def __init__(self) -> None:
        self.usage: dict[str, int] = {}  # TokenUsage summed over the usage chunks the log records
        self.title: str | None = None
        self.first_user_text: str | None = None
        self.model: str | None = None
        self.turns = 0
        self.open_turn = False
        self.last_end: str | None = None  # the kind of the last turn/end reason
        self.last_real_time: int | None = None

    def absorb(self, records: Iterable[Any]) -> None:
        for record in records:
            if type(record) is not dict:
                last = getattr(record, "last_time", None)  # a chunk row: its last member's time
                if type(last) is int and last >= REAL_TIME_MIN_MS:
                    self.last_real_time = last if self.last_real_time is None else max(self.last_real_time, last)
                continue
            kind = record.get("type")
            data = record.get("data")
            t = record.get("time")
            if type(t) is int and t >= REAL_TIME_MIN_MS:
                self.last_real_time = t if self.last_real_time is None else max(self.last_real_time, t)
            if type(data) is not dict:
                continue
            if kind == "session/title" and type(data.get("title")) is str:
                self.title = data["title"]
            elif kind == "user/message" and self.first_user_text is None:
                source = data.get("source")
                if type(source) is dict and source.get("kind") not in (None, "user"):
                    continue
                text = _text_of(data.get("content"))
                if text:
                    self.first_user_text = _first_line(text)
            elif kind == "turn/start":
                self.turns += 1
                self.open_turn = True
            elif kind == "turn/end":
                self.open_turn = False
                reason = data.get("reason")
                self.last_end = reason.get("kind") if type(reason) is dict and type(reason.get("kind")) is str else None
            elif kind == "request/header" and self.model is None:
                header = data.get("header")
                config = header.get("config") if type(header) is dict else None
                model = config.get("model") if type(config) is dict else None
                if type(model) is str and model:
                    self.model = model
            elif kind == "assistant/message" and self.model is None:
                provenance = data.get("provenance")
                message = data.get("message")
                if type(provenance) is not dict and type(message) is dict:
                    provenance = message.get("source")  # the current payload generation
                model = provenance.get("model") if type(provenance) is dict else None
                if type(model) is str and model:
                    self.model = model
            elif kind == "request/context" and self.model is None:
                model = data.get("model")
                if type(model) is str and model:
                    self.model = model
            elif kind == "assistant/chunk":
                chunk = data.get("chunk")
                if type(chunk) is dict and chunk.get("type") == "usage" and type(chunk.get("usage")) is dict:
                    for name, value in chunk["usage"].items():
                        if name in _USAGE and type(value) is int and value >= 0:
                            self.usage[name] = self.usage.get(name, 0) + value

    def status(self, *, damaged: bool, mtime_s: float, now_s: float) -> str:
        if damaged:
            return "damaged"
        if self.open_turn:
            return "live" if now_s - mtime_s <= LIVE_WINDOW_S else "interrupted"
        if self.last_end in _INTERRUPTED:
            return "interrupted"
        return "ended"


def session_entry(sid: str, path: Path, *, facts: SessionFacts, event_count: int, problem: str | None,
                  size: int, now_s: float | None = None, fmt: Format | None = None, label: str | None = None,
                  header: dict[str, Any] | None = None) -> dict[str, Any]:
    """One entry of the list (see the module doc).

    Raises:
        OSError: the file cannot be stat'ed.
    """
    st = os.stat(path)
    if facts.last_real_time is not None:
        last, source = facts.last_real_time, "events"
    else:
        last, source = int(st.st_mtime * 1000), "mtime"
    head = header if type(header) is dict else {}
    extra: dict[str, Any] = {}
    if fmt is not None and fmt.harness:
        extra["format"], extra["harness"] = fmt.name, fmt.harness
    cwd = head.get("cwd")
    if type(cwd) is str and cwd:
        extra["cwd"] = cwd
    if head.get("warmup") is True:
        extra["warmup"] = True
    if facts.usage:
        extra["usage"] = dict(facts.usage)
    return {
        **_entry(sid, facts, label, path, last, source, event_count, problem, size, st.st_mtime, now_s),
        **extra,
    }


def _entry(sid: str, facts: SessionFacts, label: str | None, path: Path, last: int, source: str, event_count: int,
           problem: str | None, size: int, mtime_s: float, now_s: float | None) -> dict[str, Any]:
    return {
        "id": sid,
        "title": facts.title or label or facts.first_user_text,
        "file": path.name,
        "path": str(path),
        "lastActivity": last,
        "lastActivitySource": source,
        "eventCount": event_count,
        "turnCount": facts.turns,
        "model": facts.model,
        "status": facts.status(damaged=problem is not None, mtime_s=mtime_s,
                               now_s=time.time() if now_s is None else now_s),
        "error": problem,
        "bytes": size,
    }


def sort_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Newest activity first; ties by id."""
    return sorted(entries, key=lambda e: (-(e["lastActivity"] or 0), e["id"]))
