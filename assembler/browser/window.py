"""The viewer window's state and what changes it: one journal, one Conversation assembler wired with the default
Definitions, the chat nodes it shows (each with a revision), the trajectory nodes, and the local file's pager that
answers "Load older". One concept: everything here reads or writes that one window, so it is one module (over 400
lines because the three ways a window fills — a page, follow frames, a local file read in slices — share its fold).

Rules: pages and follow frames go through the journal (PROTOCOL 4), never straight to the assembler; every method
takes decoded values and returns the plain update value the wire API (``viewer``) encodes; bad input comes back as
``{"error": …}`` beside what is still shown (only a call out of order, like ``file_feed`` before ``file_begin``,
raises ``CallOrderError``). HTML is rendered on demand, per node, by ``render`` (DESIGN rule 8). Pure apart from the
timer.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from definitions import default_definitions

from .. import render
from ..conversation import ConversationAssembler
from ..errors import AssemblerError
from ..history import DEFAULT_MAX_MESSAGES, MessageIndex
from ..journal import Append, Journal, JournalError, PageRequest, Prepend, Replace, session_journal
from ..live_repack import LiveRepacker
from ..logfile import LoadResult
from ..records import EventFrame, EventRecord, HistoryRecord, SessionPage, SnapshotFrame, record_range
from ..render.texts import tool_texts
from ..transcript import by_anchor, canonical_json, current_transcript, summarize, transcript
from ..views import FlushResult, ToolData, ViewNode
from .guard import CallOrderError
from .local import FileLoad
from .rowtext import plain_text
from .search import SearchIndex
from .updates import elapsed_ms, error_value, first_screen_keys, node_meta, request_value, seq_target

__all__ = ["Window", "page_tail"]


def page_tail(records: Sequence[HistoryRecord]) -> int:
    """The last logical seq of a page (-1 when empty): a page opens the journal at its own tail."""
    return record_range(records[-1])[1] if records else -1


def _journal() -> Journal[HistoryRecord]:
    """The window's journal: cursors and continuity only; the assembler holds the entries (kept once)."""
    return session_journal(DEFAULT_MAX_MESSAGES)


class Window:
    """One viewer window: a journal, an assembler over its window, the current chat nodes and an optional local
    source that answers "Load older".

    Update values (``update``) carry ``replace`` (true: ``nodes`` is every chat node, in order; false: ``nodes`` are
    upserts), ``removed`` keys, ``hasMore``, ``canLoadOlder``, the window's ``first``/``last`` seq, ``requests`` (pages
    the page must fetch and answer with ``answer``) and ``stats``.
    """

    def __init__(self, *, repack_live: bool = True) -> None:
        self._rev = 0  # never reset: a rev names one node state across windows (keys repeat between sessions)
        self.repack_live = repack_live  # pack a live block's deltas into one row when it ends (``live_repack``)
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new session, file or page)."""
        self.assembler = ConversationAssembler(default_definitions())
        self.journal = _journal()
        self.chat: dict[str, ViewNode] = {}
        self.revs: dict[str, int] = {}
        self.trajectory_nodes: dict[str, ViewNode] = {}
        self.search_index = SearchIndex()
        self.header: dict[str, Any] | None = None
        self.index: MessageIndex | None = None
        # The whole local file's overview, kept per pager and event count (``view_api.whole_run_timeline``).
        self.run_timeline: tuple[MessageIndex, int, dict[str, Any]] | None = None
        self.file: FileLoad | None = None
        self.load_result: LoadResult | None = None
        self.page_requests: dict[int, PageRequest] = {}
        self.live = False  # the page fetches older pages itself (a served or published session)
        self.repacker = LiveRepacker()

    def ordered(self) -> list[ViewNode]:
        """The chat nodes in display order."""
        return by_anchor(self.chat.values())

    # -- applying publications ---------------------------------------------------------------------------------

    def apply(self, outputs: Iterable[Any]) -> list[dict[str, Any]]:
        """Apply the journal's outputs to the assembler; returns the page requests among them."""
        requests = []
        asm = self.assembler
        for out in outputs:
            if isinstance(out, PageRequest):
                self.page_requests[out.id] = out
                requests.append(request_value(out))
            elif isinstance(out, Replace):
                asm.replace_window(out.entries, out.has_more)
                if self.repack_live:
                    self.repacker.replaced(out.entries)
            elif isinstance(out, Prepend):
                asm.prepend(out.entries, out.has_more)
            elif isinstance(out, Append):
                asm.append(out.entry)
                if self.repack_live:
                    self.repacker.appended(asm, out.entry)
        return requests

    def take(self, result: FlushResult | None) -> tuple[bool, list[ViewNode], list[str]]:
        """Fold a flush into ``chat``; returns ``(replace, upserted nodes, removed keys)``. Every node the
        assembler upserted gets a new rev (the page re-renders it): the assembler publishes what changed, including
        an assistant step whose tool call got its own row (``ChatAssistant`` claims the tool events of its step)."""
        if result is None:
            return False, [], []
        traj = result.views.get("trajectory")
        if traj is not None:
            if traj.replace:
                self.trajectory_nodes = {}
            self.trajectory_nodes.update((n.key, n) for n in traj.nodes)
        chat = result.views.get("chat")
        if chat is None:
            return False, [], []
        removed: list[str] = []
        if chat.replace:
            new = {n.key: n for n in chat.nodes}
            removed = [k for k in self.chat if k not in new]
            self.chat = new
            for key in removed:
                self.revs.pop(key, None)
        else:
            self.chat.update((n.key, n) for n in chat.nodes)
        nodes = list(chat.nodes)  # the assembler republishes a row whose display its neighbours changed
        for node in nodes:
            self._rev += 1
            self.revs[node.key] = self._rev
        return chat.replace, nodes, removed

    def update(self, replace: bool = False, changed: Sequence[ViewNode] = (), removed: Sequence[str] = (),
               requests: Sequence[dict[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        """The update value for the page (the class docstring); ``update()`` alone is what is shown, unchanged."""
        nodes = self.ordered() if replace else by_anchor(changed)
        journal = self.journal
        value: dict[str, Any] = {
            "replace": replace,
            "nodes": [node_meta(n, self.revs[n.key]) for n in nodes],
            "removed": list(removed),
            "hasMore": journal.has_more,
            "canLoadOlder": journal.has_more and (self.index is not None or self.live),
            "first": journal.first_cursor,
            "last": journal.last_cursor,
            "requests": list(requests),
            "stats": self.stats(),
        }
        if self.assembler.faults:  # events a Definition could not fold, shown raw
            value["inputFaults"] = [{"seq": f.seq, "type": f.type, "message": str(f)} for f in self.assembler.faults]
        if replace or any(n.kind in ("turn-tail", "tool") for n in changed):
            # The header's session totals: recomputed when a turn ends or a tool row appears, not per delta.
            value["summary"] = msgspec.to_builtins(summarize(self.chat.values()))
        value.update(extra)
        return value

    def stats(self) -> dict[str, int]:
        """Counts for the page's status line."""
        # The assembler holds the window (the journal keeps only cursors): every entry is one input.
        return {"records": self.assembler.entry_count, "inputs": self.assembler.entry_count,
                "chatNodes": len(self.chat), "trajectoryNodes": len(self.trajectory_nodes)}

    def flush_update(self, requests: Sequence[dict[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        """Flush the assembler and return the update of what changed."""
        replace, changed, removed = self.take(self.assembler.flush())
        return self.update(replace, changed, removed, requests, **extra)

    def error_update(self, exc: BaseException, where: str) -> dict[str, Any]:
        """What is still shown, with ``error`` saying what failed and where."""
        try:
            update = self.flush_update()
        except AssemblerError:
            update = self.update()
        update["error"] = error_value(exc, where)
        return update

    def replace(self, records: Sequence[HistoryRecord], has_more: bool, cursor: int,
                *, digest: bool = False) -> dict[str, Any]:
        """Open the journal on a page and fold it; returns the update with ``ms`` (journal, fold) and a digest."""
        t0 = time.perf_counter()
        outputs = self.journal.opened(cursor, records, has_more)
        ms_journal = elapsed_ms(t0)
        t0 = time.perf_counter()
        self.apply(outputs)
        result = self.assembler.flush()
        ms_fold = elapsed_ms(t0)
        extra: dict[str, Any] = {}
        if digest and result is not None:
            t0 = time.perf_counter()
            canonical = canonical_json(transcript(result))
            extra["digest"] = hashlib.sha256(canonical).hexdigest()
            extra["canonicalBytes"] = len(canonical)
            extra["msDigest"] = elapsed_ms(t0)
        replace, changed, removed = self.take(result)
        update = self.update(replace, changed, removed, **extra)
        update["ms"] = {"journal": ms_journal, "fold": ms_fold}
        return update

    # -- pages and follow -----------------------------------------------------------------------------------------

    def open_page(self, page: SessionPage) -> dict[str, Any]:
        """Fold one page as the whole window (opened at its own tail), with the first screen's HTML.

        Raises:
            AssemblerError: the page does not fold.
        """
        update = self.replace(page.records, page.hasMore, page_tail(page.records))
        t0 = time.perf_counter()
        self.first_screen(update)
        update["ms"]["html"] = elapsed_ms(t0)
        return update

    def frames(self, frames: Iterable[SnapshotFrame | EventFrame]) -> dict[str, Any]:
        """Apply follow frames in order (a frame that fails to decode raises while ``frames`` is iterated), then
        flush once. A snapshot opens the journal, or reopens it after a reconnect; a gap in the live events yields a
        repair ``request``. An update that replaces the window carries the first screen's HTML, as a page's does."""
        self.live = True
        requests: list[dict[str, Any]] = []
        error: dict[str, Any] | None = None
        session_error: dict[str, Any] | None = None
        try:
            for frame in frames:
                if isinstance(frame, SnapshotFrame):
                    session_error = frame.error
                    if self.journal.last_cursor is not None or self.journal.failed is not None:
                        if self.journal.failed is not None:
                            self.journal = _journal()
                        else:
                            self.journal.reconnect()
                    self.header = frame.header
                    requests += self.apply(self.journal.opened(frame.cursor, frame.records, frame.hasMore))
                elif isinstance(frame, EventFrame):
                    requests += self.apply(self.journal.entry(EventRecord(frame.event)))
        except (AssemblerError, JournalError) as exc:
            error = error_value(exc, "live")
        update = self.flush_update(requests, header=self.header)
        if update["replace"]:
            self.first_screen(update)
        if error is not None:
            update["error"] = error
        if session_error is not None:
            update["sessionError"] = session_error
        return update

    def older(self, max_messages: int, from_seq: int | None) -> dict[str, Any]:
        """"Load older": a local file's older page prepended, or the ``requests`` the page must fetch."""
        try:
            request = self.journal.request_prepend(max_messages)
        except JournalError as exc:
            return self.error_update(exc, "older")
        if self.index is None:
            self.page_requests[request.id] = request
            return {"requests": [{**request_value(request), "fromSeq": from_seq}]}
        try:
            page = self.index.session_page(request.through, request.before,
                                           request.max_messages or DEFAULT_MAX_MESSAGES, from_seq=from_seq)
        except AssemblerError as exc:
            return self.error_update(exc, "older")
        return self.answer(request, page)

    def pending(self, request_id: int) -> PageRequest | None:
        """The page request ``request_id``, no longer pending (None when it is not, or no longer, pending)."""
        return self.page_requests.pop(int(request_id), None)

    def answer(self, request: PageRequest, page: SessionPage) -> dict[str, Any]:
        """Answer a page request with the page that was read."""
        try:
            requests = self.apply(self.journal.page(request, page.records, page.hasMore))
        except (AssemblerError, JournalError) as exc:
            return self.error_update(exc, "older" if request.kind == "prepend" else "live")
        return self.flush_update(requests)

    def page_failed(self, request: PageRequest, reason: str) -> dict[str, Any]:
        """The page could not read a requested page."""
        try:
            self.journal.page_failed(request, reason)
        except JournalError as exc:
            return self.error_update(exc, "older" if request.kind == "prepend" else "live")
        return self.flush_update()

    # -- local files ----------------------------------------------------------------------------------------------

    def file_begin(self, name: str, size: int, key: str | None, context: dict[str, Any] | None) -> None:
        """Start reading a local file (``key``: which session of a file holding several; ``context``: its
        reader's, from the open folder); the window is cleared."""
        self.reset()
        self.file = FileLoad(name, size, key, context)

    def _reading(self, call: str) -> FileLoad:
        if self.file is None:
            raise CallOrderError(f"{call} before file_begin")
        return self.file

    def file_feed(self, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        """Parse the next slice of the file; returns its progress."""
        load = self._reading("file_feed")
        load.feed(data)
        return load.progress()

    def file_preview(self, max_messages: int) -> dict[str, Any] | None:
        """The part of the file read so far (its tail page), or None when nothing can be shown yet."""
        load = self._reading("file_preview")
        records = load.so_far()
        if not records:
            return None
        self._fresh()
        index = MessageIndex(records)
        try:
            page = index.session_page(None, None, max_messages)
            update = self.replace(page.records, page.hasMore, index.last_seq)
        except AssemblerError:
            self._fresh()
            return None
        self.index, self.header = index, load.loader.result.header
        update["header"] = self.header
        update["preview"] = {"bytes": load.bytes_read, "size": load.size}
        self.first_screen(update)
        return update

    def _fresh(self) -> None:
        """An empty window for the file being read (a preview is replaced whole, never merged)."""
        load = self.file
        self.reset()
        self.file = load

    def file_finish(self, all_records: bool, max_messages: int) -> dict[str, Any]:
        """Finish the parse and show the file: its tail page, or every record (then with the transcript digest)."""
        load = self._reading("file_finish")
        result = load.finish()
        self._fresh()  # a preview, if one was shown, is replaced whole
        self.load_result = result
        self.header = result.header
        ms_parse = round(load.parse_ms, 3)
        t0 = time.perf_counter()
        index = MessageIndex(result.records)
        self.index = index
        try:
            page = index.session_page(None, None, None if all_records else max_messages)
        except AssemblerError as exc:
            update = self.update()
            update["error"] = error_value(exc, "file")
            return update
        ms_page = elapsed_ms(t0)
        try:
            update = self.replace(page.records, page.hasMore, index.last_seq, digest=all_records)
        except AssemblerError as exc:
            return self.error_update(exc, "file")
        update["ms"].update({"parse": ms_parse, "page": ms_page})
        update["header"] = result.header
        update.update(load.outcome(result))
        self.file = None
        return update

    # -- what the window shows --------------------------------------------------------------------------------------

    def first_screen(self, update: dict[str, Any]) -> None:
        """Sends the first screen's rows with the update (``html``), so the page needs no second trip for them."""
        try:
            update["html"] = self.render_html(first_screen_keys(update["nodes"]))
        except Exception:  # the page then asks ``render`` for these rows, and that call reports the error
            pass

    def render_html(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{"html": {key: html}, "revs": {key: rev}}`` of the given chat nodes (unknown keys are left out)."""
        display = self.assembler.display.display
        html: dict[str, str] = {}
        revs: dict[str, int] = {}
        for key in keys:
            node = self.chat.get(str(key))
            if node is None:
                continue
            html[key] = render.render_node(node, display=display.get(key))
            revs[key] = self.revs.get(key, 0)
        return {"html": html, "revs": revs}

    def render_more(self, key: str, block: int, offset: int) -> str:
        """The next slice of a long text block of chat node ``key`` ("" for an unknown key)."""
        node = self.chat.get(key)
        return "" if node is None else render.render_block_slice(node, block, offset)

    def render_section(self, key: str, block: int) -> str:
        """The body of a collapsed row of chat node ``key`` ("" for an unknown key)."""
        node = self.chat.get(key)
        return "" if node is None else render.render_section(node, block)

    def row_text(self, key: str) -> dict[str, Any]:
        """The plain text of one chat node (``text`` None for an unknown key); a tool row's arguments and result."""
        node = self.chat.get(key)
        if node is None:
            return {"text": None}
        value: dict[str, Any] = {"text": plain_text(node)}
        if node.kind == "tool" and type(node.data) is ToolData:
            pretty, _is_json, result = tool_texts(node.data)
            value.update(arguments=pretty, result=result)
        return value

    def find_seq(self, seq: float) -> dict[str, Any]:
        """The chat node a deep link ``#seq=N`` points at (``updates.seq_target``)."""
        journal = self.journal
        return seq_target(self.ordered(), seq, journal.first_cursor, journal.last_cursor, journal.has_more)

    def digest(self) -> dict[str, Any]:
        """``{digest, canonicalBytes, ms}`` of what the window shows now."""
        t0 = time.perf_counter()
        canonical = canonical_json(current_transcript(self.assembler))
        return {"digest": hashlib.sha256(canonical).hexdigest(), "canonicalBytes": len(canonical),
                "ms": elapsed_ms(t0)}
