"""What a session list says about one session, gathered from its records as they are read: title, first prompt,
model, turns, whether a turn is open, the last turn's end, the newest recorded time and the usage the log records.

Rules: ``title`` is the session's own title record, else the first user message's text (first line, capped).
Only recorded times count (anything before 2000-01-01 is a rebuilt counter); of a packed chunk row only its last
member's time counts. ``status`` is ``damaged`` (the parse stopped at a fault), ``interrupted`` (the last turn ended
interrupted or aborted, or was left open and the file is no longer written), ``live`` (a turn is open and the file
changed within ``LIVE_WINDOW_S``) or ``ended``; a log of a format that never records a turn's end (Claude Code,
Gemini CLI: ``Format.turn_ends``) is ``ended`` when its open turn is no longer written. ``SessionMeta`` keeps what
the list shows of one session of a file (its records are counted, never kept) and ``entry_value`` makes the list
entry (``server/listing.py`` states the contract); both the server's list and the page's local folders use them.
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .errors import AssemblerError, SessionFileError
from .formats import Format
from .logfile import LoadResult

__all__ = ["LIVE_WINDOW_S", "REAL_TIME_MIN_MS", "SessionFacts", "SessionMeta", "describe_problem", "lineage",
           "entry_value"]

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

    def status(self, *, damaged: bool, mtime_s: float, now_s: float, turn_ends: bool = True) -> str:
        """``turn_ends``: the format records the end of a turn (ours, Codex); an open turn in one that does not
        (Claude Code, Gemini CLI) is simply the last one once the file is no longer written."""
        if damaged:
            return "damaged"
        if self.open_turn:
            if now_s - mtime_s <= LIVE_WINDOW_S:
                return "live"
            return "interrupted" if turn_ends else "ended"
        if self.last_end in _INTERRUPTED:
            return "interrupted"
        return "ended"


def describe_problem(error: Exception | None, header: Any) -> str | None:
    """The fault that stopped a session file's parse (with its line), or a missing header, as text; None when sound."""
    if error is not None:
        return str(error)
    if header is None:
        return str(SessionFileError("no session header", line=1))
    return None


class SessionMeta:
    """What the list shows of one session of a file: its key in the file (``""`` for a file's only or main one), its
    label, header, facts, subagent label, event count and first fault. Records are counted (``note``), not kept."""

    def __init__(self, key: str = "", label: str | None = None) -> None:
        self.key = key
        self.label = label
        self.header: dict[str, Any] | None = None
        self.facts = SessionFacts()
        self.subagent_label: str | None = None
        self.event_count = 0
        self.error: AssemblerError | None = None

    @property
    def problem(self) -> str | None:
        return describe_problem(self.error, self.header)

    def note(self, records: Sequence[Any]) -> None:
        self.facts.absorb(records)
        for record in records:
            if type(record) is dict and record.get("type") == "subagent/descriptor":
                data = record.get("data")
                if type(data) is dict and type(data.get("label")) is str:
                    self.subagent_label = data["label"]

    def take(self, result: LoadResult) -> None:
        """A session read whole: its header, count, fault and facts."""
        self.header, self.error, self.event_count = result.header, result.error, result.event_count
        self.note(result.records)

    @classmethod
    def of_log(cls, log: Any) -> SessionMeta:
        """A session a reader gave whole (``interop.base.SessionLog``: key, label, result)."""
        meta = cls(log.key, log.label)
        meta.take(log.result)
        return meta


def lineage(header: Any, subagent_label: str | None) -> dict[str, Any]:
    """What links a parent session and its subagents in a list: the header's ``id`` (``sessionId``) and
    ``parentSession``, and a child's own label (``subagentLabel``), each only when the log records it."""
    head = header if type(header) is dict else {}
    out: dict[str, Any] = {}
    for key, name in (("id", "sessionId"), ("parentSession", "parentSession")):
        if type(head.get(key)) is str:
            out[name] = head[key]
    if subagent_label is not None:
        out["subagentLabel"] = subagent_label
    return out


def entry_value(sid: str, *, file: str, path: str, facts: SessionFacts, event_count: int, problem: str | None,
                size: int, mtime_s: float, now_s: float, fmt: Format | None = None, label: str | None = None,
                header: dict[str, Any] | None = None) -> dict[str, Any]:
    """One list entry (``server/listing.py`` states the contract): ``lastActivity`` the newest recorded time, else
    the file's ``mtime_s`` (labelled ``"mtime"``); ``format``/``harness``, ``cwd``, ``warmup`` and ``usage`` when
    known."""
    if facts.last_real_time is not None:
        last, source = facts.last_real_time, "events"
    else:
        last, source = int(mtime_s * 1000), "mtime"
    head = header if type(header) is dict else {}
    value: dict[str, Any] = {
        "id": sid,
        "title": facts.title or label or facts.first_user_text,
        "file": file,
        "path": path,
        "lastActivity": last,
        "lastActivitySource": source,
        "eventCount": event_count,
        "turnCount": facts.turns,
        "model": facts.model,
        "status": facts.status(damaged=problem is not None, mtime_s=mtime_s, now_s=now_s,
                               turn_ends=fmt is None or fmt.turn_ends),
        "error": problem,
        "bytes": size,
    }
    if fmt is not None and fmt.harness:
        value["format"], value["harness"] = fmt.name, fmt.harness
    cwd = head.get("cwd")
    if type(cwd) is str and cwd:
        value["cwd"] = cwd
    if head.get("warmup") is True:
        value["warmup"] = True
    if facts.usage:
        value["usage"] = dict(facts.usage)
    return value
