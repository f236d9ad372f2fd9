"""What the window shows beyond the Chat view: the Trajectory and Model-context rows, search, a row's raw records,
and the export of the window or the whole session as a file (HTML; Markdown when ``render`` offers it).

Rules: functions of the ``window.Window`` they read, returning the plain values the wire API (``viewer``) encodes;
everything is computed from the window the chat shows (the same assembler, entries and nodes), except the
whole-session export, which folds the local file's every record (or a page the page fetched) in an assembler of its
own and leaves the window untouched, and the whole local file's overview (``whole_run_timeline``), which does the
same. Pure apart from the timer.
"""

from __future__ import annotations

import time
from typing import Any

from ..commands.exporting import export_page, render_nodes, session_title
from ..errors import AssemblerError
from ..facts import SessionFacts
from ..records import decode_page
from ..transcript import by_anchor
from .inspector import trajectory_requests
from .panels import chat_keys_by_seq, context_rows, full_text, latest_todos, trajectory_rows
from .search import node_records, row_members
from .timeline import run_timeline, timeline_of
from .updates import elapsed_ms, error_value
from .view_export import context_markdown, trajectory_markdown, view_document
from .window import Window

__all__ = ["session_facts", "todo_list", "trajectory_view", "whole_run_timeline", "window_trajectory_rows",
           "context_view", "context_message", "search", "records", "record_members", "export"]


def session_facts(window: Window) -> dict[str, Any] | None:
    """What the whole local file records, in the session list's terms (``{title, turnCount, model, usage?}``:
    ``facts.SessionFacts`` over every record of its pager), for the header when the window holds only the
    newest messages; ``None`` without a local file (a served session's list entry says the same)."""
    if window.index is None:
        return None
    facts = SessionFacts()
    facts.absorb(window.index.records)
    value: dict[str, Any] = {"title": facts.title or facts.first_user_text, "turnCount": facts.turns,
                             "model": facts.model}
    if facts.usage:
        value["usage"] = dict(facts.usage)
    return value


def todo_list(window: Window) -> dict[str, Any] | None:
    """The session's latest plan, for the panel that keeps it in view: the last ``todo/write`` of the window
    (``{seq, todos: [{content, status}]}``, ``status`` one of pending / in_progress / completed), or None."""
    return latest_todos(window.assembler.window_entries())


def trajectory_view(window: Window) -> dict[str, Any]:
    """The Trajectory view: ``{rows: [...], timeline}`` (``window_trajectory_rows``, ``timeline.timeline_of``; its
    ``scope`` is ``"run"`` when the window holds the whole session)."""
    rows = window_trajectory_rows(window)
    scope = "loaded" if window.assembler.has_more else "run"
    return {"rows": rows, "timeline": timeline_of(rows, scope=scope)}


def whole_run_timeline(window: Window) -> dict[str, Any] | None:
    """The whole local file's overview (``timeline.run_timeline`` over its pager's every record) when the window
    holds only its newest messages; None otherwise (no local file: the server or the published site answers; the
    window is the whole session: the Trajectory view's own timeline covers it). Kept until the file grows."""
    index = window.index
    if index is None or not window.assembler.has_more:
        return None
    kept = window.run_timeline
    if kept is not None and kept[0] is index and kept[1] == index.event_count:
        return kept[2]
    page = index.session_page(None, None, None)
    value = run_timeline(page.records, page.hasMore, index.last_seq)
    window.run_timeline = (index, index.event_count, value)
    return value


def window_trajectory_rows(window: Window) -> list[dict[str, Any]]:
    """``panels.trajectory_rows`` with each request that failed and was sent again (``inspector``)."""
    rows = trajectory_rows(by_anchor(window.trajectory_nodes.values()), window.chat.values(),
                           window.assembler.index.turns)
    return trajectory_requests(rows, window.assembler)


def context_view(window: Window) -> dict[str, Any]:
    """The Model-context view: ``{messages, problems}`` (``panels.context_rows``) of the window."""
    links = chat_keys_by_seq(window.assembler, window.chat)
    return context_rows(window.assembler.window_entries(), links)


def context_message(window: Window, seq: int) -> dict[str, Any]:
    """The full text of one context message (the view sends a preview of ``PREVIEW_CHARS``)."""
    return {"text": full_text(window.assembler.window_entries(), seq)}


def search(window: Window, query: str, include_hidden: bool = False) -> dict[str, Any]:
    """Occurrences of ``query`` (case-insensitive) in every chat row of the window, rendered or not."""
    t0 = time.perf_counter()
    value = window.search_index.search(window.ordered(), window.revs, query, include_hidden)
    value["ms"] = elapsed_ms(t0)
    return value


def records(window: Window, key: str) -> dict[str, Any]:
    """The stored records chat row ``key`` was folded from (packed rows summarised, never expanded here)."""
    return node_records(window.assembler, window.index, key)


def record_members(window: Window, key: str, i: int) -> dict[str, Any]:
    """Record ``i`` of row ``key`` as stored, and a packed row's members (expanded for this request only)."""
    return row_members(window.assembler, window.index, key, i)


def export(window: Window, fmt: str = "html", scope: str = "window", title: str = "",
           page: bytes | bytearray | memoryview | None = None) -> dict[str, Any]:
    """``{text, name, ms}``: the window's chat rows, or with ``scope="session"`` the whole session (the local
    file's every record, or the ``SessionPage`` bytes in ``page``), or with ``scope="trajectory"``/``"context"``
    that view of the window (``view_export``), as ``fmt`` (``html`` or ``md``)."""
    t0 = time.perf_counter()
    fmt = "md" if fmt == "md" else "html"
    assembler = window.assembler
    # The session's own title (as the CLI's export: a local file's from its every record), else its first prompt,
    # else the header id.
    name = (title or (session_title(window.index.records) if window.index is not None else None)
            or session_title(e.event for e in assembler.window_entries())
            or str((window.header or {}).get("id") or "session"))
    banner = ""
    if scope in ("trajectory", "context"):
        if scope == "trajectory":
            markdown = trajectory_markdown(window_trajectory_rows(window), name)
        else:
            markdown = context_markdown(context_view(window), name)
        text = view_document(markdown, f"{name}: {scope}", fmt)
        return {"text": text, "name": f"{_file_stem(name)}-{scope}.{fmt}", "ms": elapsed_ms(t0)}
    try:
        if scope == "session" and (window.index is not None or page is not None):
            session = (decode_page(page) if page is not None
                       else window.index.session_page(None, None, None))  # type: ignore[union-attr]
            text = export_page(session.records, session.hasMore, title=name, fmt=fmt)
        else:
            if assembler.has_more:
                banner = "The loaded window only: older history is not included."
            text = render_nodes(window.ordered(), assembler.display.display, title=name, fmt=fmt, banner=banner)
    except (AssemblerError, ValueError) as exc:
        return {"error": error_value(exc, "export")}
    return {"text": text, "name": f"{_file_stem(name)}.{fmt}", "ms": elapsed_ms(t0)}


def _file_stem(name: str) -> str:
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-.")
    return stem[:80] or "session"
