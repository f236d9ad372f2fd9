"""The viewer's entry points beyond the Chat view: the Trajectory and Model-context rows, search, a row's raw records,
and the export of the window or the whole session as a file (HTML; Markdown when ``render`` offers it).

Rules: the same contract as ``viewer``: arguments are plain values or bytes, results msgspec JSON bytes; everything
is computed from the window the chat shows (the same assembler, entries and nodes), except the whole-session export,
which folds the local file's every record (or a page the page fetched) in an assembler of its own and leaves the
window untouched, and the whole local file's overview (``run_timeline``), which does the same. Pure apart from the
timer.
"""

from __future__ import annotations

import time
from typing import Any

from ..commands.exporting import export_page, render_nodes, session_title
from ..conversation import ConversationAssembler
from ..errors import AssemblerError
from ..facts import SessionFacts
from ..history import MessageIndex
from ..records import decode_page
from ..transcript import by_anchor
from ..views import ViewNode
from .inspector import trajectory_requests
from .panels import chat_keys_by_seq, context_rows, full_text, latest_todos, trajectory_rows
from .search import SearchIndex, node_records, row_members
from .timeline import run_timeline, timeline_of
from .updates import as_bytes, elapsed_ms, encode_json, error_value
from .view_export import context_markdown, trajectory_markdown, view_document

__all__ = ["ViewsMixin"]




class ViewsMixin:
    """Entry points of ``Viewer`` for the trajectory, context, search, raw records and export."""

    assembler: ConversationAssembler
    chat: dict[str, ViewNode]
    revs: dict[str, int]
    trajectory_nodes: dict[str, ViewNode]
    index: MessageIndex | None
    header: dict[str, Any] | None
    _search: SearchIndex
    _run_timeline: tuple[MessageIndex, int, bytes] | None

    def _ordered(self) -> list[ViewNode]:
        return by_anchor(self.chat.values())

    def session_facts(self) -> bytes:
        """What the whole local file records, in the session list's terms (``{title, turnCount, model, usage?}``:
        ``facts.SessionFacts`` over every record of its pager), for the header when the window holds only the
        newest messages; ``null`` without a local file (a served session's list entry says the same)."""
        if self.index is None:
            return encode_json(None)
        facts = SessionFacts()
        facts.absorb(self.index.records)
        value: dict[str, Any] = {"title": facts.title or facts.first_user_text, "turnCount": facts.turns,
                                 "model": facts.model}
        if facts.usage:
            value["usage"] = dict(facts.usage)
        return encode_json(value)

    def todo_list(self) -> bytes:
        """The session's latest plan, for the panel that keeps it in view: the last ``todo/write`` of the window
        (``{seq, todos: [{content, status}]}``, ``status`` one of pending / in_progress / completed), or null."""
        return encode_json(latest_todos(self.assembler.window_entries()))

    def trajectory_view(self) -> bytes:
        """The Trajectory view: ``{rows: [...], timeline}`` (``_trajectory_rows``, ``timeline.timeline_of``; its
        ``scope`` is ``"run"`` when the window holds the whole session)."""
        rows = self._trajectory_rows()
        scope = "loaded" if self.assembler.has_more else "run"
        return encode_json({"rows": rows, "timeline": timeline_of(rows, scope=scope)})

    def run_timeline(self) -> bytes:
        """The whole local file's overview (``timeline.run_timeline`` over its pager's every record) when the window
        holds only its newest messages; null otherwise (no local file: the server or the published site answers;
        the window is the whole session: the Trajectory view's own timeline covers it). Kept until the file grows."""
        index = self.index
        if index is None or not self.assembler.has_more:
            return encode_json(None)
        kept = self._run_timeline
        if kept is not None and kept[0] is index and kept[1] == index.event_count:
            return kept[2]
        page = index.session_page(None, None, None)
        data = encode_json(run_timeline(page.records, page.hasMore, index.last_seq))
        self._run_timeline = (index, index.event_count, data)
        return data

    def _trajectory_rows(self) -> list[dict[str, Any]]:
        """``panels.trajectory_rows`` with each request that failed and was sent again (``inspector``)."""
        rows = trajectory_rows(by_anchor(self.trajectory_nodes.values()), self.chat.values(),
                               self.assembler.index.turns)
        return trajectory_requests(rows, self.assembler)

    def context_view(self) -> bytes:
        """The Model-context view: ``{messages, problems}`` (``panels.context_rows``) of the window."""
        links = chat_keys_by_seq(self.assembler, self.chat)
        return encode_json(context_rows(self.assembler.window_entries(), links))

    def context_message(self, seq: int) -> bytes:
        """The full text of one context message (the view sends a preview of ``PREVIEW_CHARS``)."""
        return encode_json({"text": full_text(self.assembler.window_entries(), int(seq))})

    def search(self, query: str, include_hidden: bool = False) -> bytes:
        """Occurrences of ``query`` (case-insensitive) in every chat row of the window, rendered or not."""
        t0 = time.perf_counter()
        value = self._search.search(self._ordered(), self.revs, str(query), bool(include_hidden))
        value["ms"] = elapsed_ms(t0)
        return encode_json(value)

    def records(self, key: str) -> bytes:
        """The stored records chat row ``key`` was folded from (packed rows summarised, never expanded here)."""
        return encode_json(node_records(self.assembler, self.index, str(key)))

    def record_members(self, key: str, i: int) -> bytes:
        """Record ``i`` of row ``key`` as stored, and a packed row's members (expanded for this request only)."""
        return encode_json(row_members(self.assembler, self.index, str(key), int(i)))

    def export(self, fmt: str = "html", scope: str = "window", title: str = "", page: Any = None) -> bytes:
        """``{text, name, ms}``: the window's chat rows, or with ``scope="session"`` the whole session (the local
        file's every record, or the ``SessionPage`` bytes in ``page``), or with ``scope="trajectory"``/``"context"``
        that view of the window (``view_export``), as ``fmt`` (``html`` or ``md``)."""
        t0 = time.perf_counter()
        fmt = "md" if fmt == "md" else "html"
        # The session's own title (as the CLI's export: a local file's from its every record), else its first
        # prompt, else the header id.
        name = (title or (session_title(self.index.records) if self.index is not None else None)
                or session_title(e.event for e in self.assembler.window_entries())
                or str((self.header or {}).get("id") or "session"))
        banner = ""
        if scope in ("trajectory", "context"):
            if scope == "trajectory":
                markdown = trajectory_markdown(self._trajectory_rows(), name)
            else:
                links = chat_keys_by_seq(self.assembler, self.chat)
                markdown = context_markdown(context_rows(self.assembler.window_entries(), links), name)
            text = view_document(markdown, f"{name}: {scope}", fmt)
            return encode_json({"text": text, "name": f"{_file_stem(name)}-{scope}.{fmt}", "ms": elapsed_ms(t0)})
        try:
            if scope == "session" and (self.index is not None or page is not None):
                session = (decode_page(as_bytes(page)) if page is not None
                           else self.index.session_page(None, None, None))  # type: ignore[union-attr]
                text = export_page(session.records, session.hasMore, title=name, fmt=fmt)
            else:
                if self.assembler.has_more:
                    banner = "The loaded window only: older history is not included."
                text = render_nodes(self._ordered(), self.assembler.display.display, title=name, fmt=fmt,
                                    banner=banner)
        except (AssemblerError, ValueError) as exc:
            return encode_json({"error": error_value(exc, "export")})
        return encode_json({"text": text, "name": f"{_file_stem(name)}.{fmt}", "ms": elapsed_ms(t0)})


def _file_stem(name: str) -> str:
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-.")
    return stem[:80] or "session"
