"""The viewer window the worker drives: one journal, one Conversation assembler wired with the default Definitions,
the chat nodes it shows (each with a revision), and the local file's pager that answers "Load older".

Rules: every entry point takes bytes and returns JSON bytes (``updates``); pages and follow frames go through the
journal (PROTOCOL 4), never straight to the assembler; bad input comes back as ``{"error": …}`` beside what is
still shown (only a call out of order, like ``file_feed`` before ``file_begin``, raises). HTML is rendered on demand,
per node, by ``render`` (DESIGN rule 8).
"""

from __future__ import annotations

import gc
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
from ..lazy_rows import decode_lazy_page
from ..live_repack import LiveRepacker
from ..logfile import LoadResult
from ..records import (
    EventFrame,
    EventRecord,
    HistoryRecord,
    SessionPage,
    SnapshotFrame,
    decode_follow_frame,
)
from ..render.texts import tool_texts
from ..transcript import by_anchor, canonical_json, current_transcript, summarize, transcript
from ..views import FlushResult, ToolData, ViewNode
from .compare_view import CompareMixin
from .filters import FiltersMixin
from .folder import FolderMixin
from .gcpause import page_load
from .guard import CallOrderError, guarded
from .inspector import InspectorMixin
from .local import FileLoad
from .replay import ReplayMixin, page_tail
from .rowtext import plain_text
from .search import SearchIndex
from .sitesearch import SiteSearchMixin
from .updates import (
    as_bytes,
    elapsed_ms,
    encode_json,
    error_value,
    first_screen_keys,
    node_meta,
    request_value,
    seq_target,
)
from .view_api import ViewsMixin

__all__ = [
    "CallOrderError",
    "Viewer",
    "VIEWER",
]


class Viewer(ViewsMixin, InspectorMixin, ReplayMixin, FolderMixin, CompareMixin, FiltersMixin, SiteSearchMixin):
    """One viewer window: a journal, an assembler over its window, the current chat nodes and an optional local
    source that answers "Load older". Every public method returns JSON bytes for the page.

    Update objects (``_update``) carry ``replace`` (true: ``nodes`` is every chat node, in order; false: ``nodes`` are
    upserts), ``removed`` keys, ``hasMore``, ``canLoadOlder``, the window's ``first``/``last`` seq, ``requests`` (pages
    the page must fetch and answer with ``answer_page``) and ``stats``. Errors come back as ``{"error": {...}}``
    alongside whatever was still shown.
    """

    def __init__(self, *, repack_live: bool = True, defer_gc: bool = False) -> None:
        self._rev = 0  # never reset: a rev names one node state across windows (keys repeat between sessions)
        self.repack_live = repack_live  # pack a live block's deltas into one row when it ends (``live_repack``)
        self.defer_gc = defer_gc  # a page load leaves the cycle collector paused until ``settle`` (``page_load``)
        self._gc_owed = False
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new session, file or page)."""
        self.assembler = ConversationAssembler(default_definitions())
        self.journal = _journal()
        self.chat: dict[str, ViewNode] = {}
        self.revs: dict[str, int] = {}
        self.trajectory_nodes: dict[str, ViewNode] = {}
        self._search = SearchIndex()
        self.header: dict[str, Any] | None = None
        self.index: MessageIndex | None = None
        self._run_timeline = None  # the whole local file's overview, kept (view_api.run_timeline)
        self.file: FileLoad | None = None
        self.load_result: LoadResult | None = None
        self.page_requests: dict[int, PageRequest] = {}
        self._live = False
        self.repacker = LiveRepacker()

    # -- applying publications ---------------------------------------------------------------------------------

    def _apply(self, outputs: Iterable[Any]) -> list[dict[str, Any]]:
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

    def _take(self, result: FlushResult | None) -> tuple[bool, list[ViewNode], list[str]]:
        """Fold a flush into ``self.chat``; returns ``(replace, upserted nodes, removed keys)``. Every node the
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

    def _update(self, replace: bool, changed: Sequence[ViewNode], removed: Sequence[str],
                requests: Sequence[dict[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        nodes = self._ordered() if replace else by_anchor(changed)
        journal = self.journal
        value: dict[str, Any] = {
            "replace": replace,
            "nodes": [node_meta(n, self.revs[n.key]) for n in nodes],
            "removed": list(removed),
            "hasMore": journal.has_more,
            "canLoadOlder": journal.has_more and (self.index is not None or self._live),
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
        # The assembler holds the window (the journal keeps only cursors): every entry is one input.
        return {"records": self.assembler.entry_count, "inputs": self.assembler.entry_count,
                "chatNodes": len(self.chat), "trajectoryNodes": len(self.trajectory_nodes)}

    def _flush_update(self, requests: Sequence[dict[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        replace, changed, removed = self._take(self.assembler.flush())
        return self._update(replace, changed, removed, requests, **extra)

    def _replace(self, records: Sequence[HistoryRecord], has_more: bool, cursor: int,
                 *, digest: bool = False) -> dict[str, Any]:
        """Open the journal on a page and fold it; returns the update with ``ms`` (journal, fold) and a digest."""
        t0 = time.perf_counter()
        outputs = self.journal.opened(cursor, records, has_more)
        ms_journal = elapsed_ms(t0)
        t0 = time.perf_counter()
        self._apply(outputs)
        result = self.assembler.flush()
        ms_fold = elapsed_ms(t0)
        extra: dict[str, Any] = {}
        if digest and result is not None:
            t0 = time.perf_counter()
            canonical = canonical_json(transcript(result))
            extra["digest"] = hashlib.sha256(canonical).hexdigest()
            extra["canonicalBytes"] = len(canonical)
            extra["msDigest"] = elapsed_ms(t0)
        replace, changed, removed = self._take(result)
        update = self._update(replace, changed, removed, **extra)
        update["ms"] = {"journal": ms_journal, "fold": ms_fold}
        return update

    # -- entry points: pages and follow ---------------------------------------------------------------------------

    @page_load
    def load_page(self, data: Any, paged: bool = False) -> bytes:
        """Replace the window with one ``SessionPage`` (its JSON bytes) and fold it (``digest`` computes the digest
        on request, off this path). Packed fragments stay lazy (``lazy_rows``) unless something reads them. The
        update carries the first screen's HTML (``html``: ``render``'s answer for ``first_screen_keys``). ``paged``:
        the page fetches its older pages ("Load older" returns ``requests``: a published site's files)."""
        self.reset()
        self._live, t0 = bool(paged), time.perf_counter()
        try:
            page = decode_lazy_page(as_bytes(data))
        except AssemblerError as exc:
            return encode_json(self._error_update(exc, "page"))
        ms_decode = elapsed_ms(t0)
        cursor = page_tail(page.records)
        try:
            update = self._replace(page.records, page.hasMore, cursor)
        except AssemblerError as exc:
            return encode_json(self._error_update(exc, "page"))
        update["ms"]["decode"] = ms_decode
        t0 = time.perf_counter()
        self._first_screen(update)
        update["ms"]["html"] = elapsed_ms(t0)
        return encode_json(update)

    def apply_frames(self, frames: Sequence[Any]) -> bytes:
        """Apply follow frames (each the JSON bytes of a snapshot or event frame), in order, then flush once.

        A snapshot opens the journal, or reopens it after a reconnect. A gap in the live events yields a repair
        ``request`` to fetch and answer with ``answer_page``.
        """
        self._live = True
        requests: list[dict[str, Any]] = []
        error: dict[str, Any] | None = None
        session_error: dict[str, Any] | None = None
        try:
            for raw in frames:
                frame = decode_follow_frame(as_bytes(raw))
                if isinstance(frame, SnapshotFrame):
                    session_error = frame.error
                    if self.journal.last_cursor is not None or self.journal.failed is not None:
                        if self.journal.failed is not None:
                            self.journal = _journal()
                        else:
                            self.journal.reconnect()
                    self.header = frame.header
                    requests += self._apply(self.journal.opened(frame.cursor, frame.records, frame.hasMore))
                elif isinstance(frame, EventFrame):
                    requests += self._apply(self.journal.entry(EventRecord(frame.event)))
        except (AssemblerError, JournalError) as exc:
            error = error_value(exc, "live")
        update = self._flush_update(requests, header=self.header)
        if error is not None:
            update["error"] = error
        if session_error is not None:
            update["sessionError"] = session_error
        return encode_json(update)

    def settle(self) -> None:
        """The page is idle after a page load: resume the cycle collector a ``defer_gc`` load left paused and run
        the young collection its allocations owe."""
        if self._gc_owed:
            self._gc_owed = False
            gc.enable()
            gc.collect(0)

    def digest(self) -> bytes:
        """The transcript digest of what the window shows now: ``{digest, canonicalBytes, ms}`` (the sha256 of the
        canonical transcript JSON, as ``assemble --all --digest`` prints for the same records)."""
        t0 = time.perf_counter()
        canonical = canonical_json(current_transcript(self.assembler))
        return encode_json({"digest": hashlib.sha256(canonical).hexdigest(), "canonicalBytes": len(canonical),
                            "ms": elapsed_ms(t0)})

    def reconnected(self) -> None:
        """The page opened a new follow connection: the next frame must be its snapshot."""
        if self.journal.last_cursor is not None and self.journal.failed is None:
            self.journal.reconnect()

    def request_older(self, max_messages: int = DEFAULT_MAX_MESSAGES, from_seq: int | None = None) -> bytes:
        """"Load older": for a local file, read the older page here and prepend it; otherwise return the page
        ``request`` the page must fetch (``throughSeq``, ``beforeSeq``, ``maxMessages``, ``fromSeq``) and answer.
        ``from_seq`` (a deep link's row): one page reaches back to it, ``max_messages`` being the cap."""
        try:
            request = self.journal.request_prepend(max_messages)
        except JournalError as exc:
            return encode_json(self._error_update(exc, "older"))
        if self.index is None:
            self.page_requests[request.id] = request
            return encode_json({"requests": [{**request_value(request), "fromSeq": from_seq}]})
        try:
            page = self.index.session_page(request.through, request.before,
                                           request.max_messages or DEFAULT_MAX_MESSAGES, from_seq=from_seq)
        except AssemblerError as exc:
            return encode_json(self._error_update(exc, "older"))
        return self._answer(request, page)

    @page_load
    def answer_page(self, request_id: int, data: Any) -> bytes:
        """Answer a page request (repair or older page) with the JSON bytes of the ``SessionPage`` that was read."""
        request = self.page_requests.pop(int(request_id), None)
        if request is None:
            return encode_json(self._flush_update())
        try:
            page = decode_lazy_page(as_bytes(data))
        except AssemblerError as exc:
            return encode_json(self._error_update(exc, "page"))
        return self._answer(request, page)

    def page_failed(self, request_id: int, reason: str) -> bytes:
        """The page could not read a requested page."""
        request = self.page_requests.pop(int(request_id), None)
        if request is None:
            return encode_json(self._flush_update())
        try:
            self.journal.page_failed(request, reason)
        except JournalError as exc:
            return encode_json(self._error_update(exc, "older" if request.kind == "prepend" else "live"))
        return encode_json(self._flush_update())

    def _answer(self, request: PageRequest, page: SessionPage) -> bytes:
        try:
            requests = self._apply(self.journal.page(request, page.records, page.hasMore))
        except (AssemblerError, JournalError) as exc:
            return encode_json(self._error_update(exc, "older" if request.kind == "prepend" else "live"))
        return encode_json(self._flush_update(requests))

    def _error_update(self, exc: BaseException, where: str) -> dict[str, Any]:
        try:
            update = self._flush_update()
        except AssemblerError:
            update = self._update(False, [], [])
        update["error"] = error_value(exc, where)
        return update

    # -- entry points: local files ------------------------------------------------------------------------------

    def file_begin(self, name: str, size: int = 0, key: str | None = None, local: str | None = None) -> None:
        """Start reading a local file of any format the table knows (``key``: which session of a file holding
        several; the first by default; ``local``: its path in the open folder, which gives its reader the context
        the folder's list was read with); the window is cleared."""
        self.reset()
        context = self.folder_context(str(local)) if local is not None else None
        self.file = FileLoad(str(name), int(size), None if key is None else str(key), context)

    def file_feed(self, data: Any) -> bytes:
        """Parse the next slice of the file; returns progress ``{bytes, size, lines, events, records, error}``."""
        if self.file is None:
            raise CallOrderError("file_feed before file_begin")
        self.file.feed(as_bytes(data))
        return encode_json(self.file.progress())

    def file_preview(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> bytes:
        """While a big file is read, the part read so far (its tail page), replaced whole by ``file_finish``; the
        update carries ``preview: {bytes, size}`` and ``html``; ``null`` when nothing can be shown yet (no record,
        a format read only whole, a fold fault: the whole file's fold reports it)."""
        load = self.file
        if load is None:
            raise CallOrderError("file_preview before file_begin")
        records = load.so_far()
        if not records:
            return encode_json(None)
        self._fresh_window()
        index = MessageIndex(records)
        try:
            page = index.session_page(None, None, int(max_messages))
            update = self._replace(page.records, page.hasMore, index.last_seq)
        except AssemblerError:
            self._fresh_window()
            return encode_json(None)
        self.index, self.header = index, load.loader.result.header
        update["header"] = self.header
        update["preview"] = {"bytes": load.bytes_read, "size": load.size}
        self._first_screen(update)
        return encode_json(update)

    def _first_screen(self, update: dict[str, Any]) -> None:
        """Sends the first screen's rows with the update (``html``), so the page needs no second trip for them."""
        try:
            update["html"] = self._render_html(first_screen_keys(update["nodes"]))
        except Exception:  # the page then asks ``render`` for these rows, and that call reports the error
            pass

    def _fresh_window(self) -> None:
        """An empty window for the file being read (a preview is replaced whole, never merged)."""
        load = self.file
        self.reset()
        self.file = load

    def file_finish(self, all_records: bool = False, max_messages: int = DEFAULT_MAX_MESSAGES) -> bytes:
        """Finish the parse and show the file: the tail page of ``max_messages`` messages (older pages come from
        "Load older"), or every record when ``all_records`` (then the update carries the transcript ``digest``).

        The update carries ``error`` (``{message, line, seq}``) when the file is malformed: everything before the
        faulty line is still shown. ``warnings`` lists skipped torn lines.
        """
        load = self.file
        if load is None:
            raise CallOrderError("file_finish before file_begin")
        result = load.finish()
        self._fresh_window()  # a preview, if one was shown, is replaced whole
        self.load_result = result
        self.header = result.header
        ms_parse = round(load.parse_ms, 3)
        t0 = time.perf_counter()
        index = MessageIndex(result.records)
        self.index = index
        try:
            page = index.session_page(None, None, None if all_records else int(max_messages))
        except AssemblerError as exc:
            update = self._update(False, [], [])
            update["error"] = error_value(exc, "file")
            return encode_json(update)
        ms_page = elapsed_ms(t0)
        try:
            update = self._replace(page.records, page.hasMore, index.last_seq, digest=all_records)
        except AssemblerError as exc:
            return encode_json(self._error_update(exc, "file"))
        update["ms"].update({"parse": ms_parse, "page": ms_page})
        update["header"] = result.header
        update.update(load.outcome(result))
        self.file = None
        return encode_json(update)

    # -- entry points: HTML ----------------------------------------------------------------------------------------

    def render(self, keys: Sequence[str]) -> bytes:
        """HTML of the given chat nodes: ``{"html": {key: html}, "revs": {key: rev}}`` (unknown keys are left out)."""
        return encode_json(self._render_html(keys))

    def _render_html(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
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

    def render_more(self, key: str, block: int, offset: int) -> bytes:
        """The next slice of a long text block (after "Show more")."""
        node = self.chat.get(str(key))
        html = "" if node is None else render.render_block_slice(node, int(block), int(offset))
        return encode_json({"html": html})

    def render_section(self, key: str, block: int) -> bytes:
        """The body of a collapsed row (Think, tool, context, summary), when it is opened."""
        node = self.chat.get(str(key))
        html = "" if node is None else render.render_section(node, int(block))
        return encode_json({"html": html})

    def row_text(self, key: str) -> bytes:
        """The plain text of one chat node, for "Copy text": ``{"text", "arguments", "result"}`` (the last two for
        tool rows only; ``text`` is None for an unknown key). Whole texts, however long the rendered slice."""
        node = self.chat.get(str(key))
        if node is None:
            return encode_json({"text": None})
        value: dict[str, Any] = {"text": plain_text(node)}
        if node.kind == "tool" and type(node.data) is ToolData:
            pretty, _is_json, result = tool_texts(node.data)
            value.update(arguments=pretty, result=result)
        return encode_json(value)

    def find_seq(self, seq: float) -> bytes:
        """The chat node a deep link ``#seq=N`` points at, and whether it is in the window (``updates.seq_target``)."""
        journal = self.journal
        return encode_json(seq_target(self._ordered(), seq, journal.first_cursor, journal.last_cursor,
                                      journal.has_more))


for _name in ("load_page", "apply_frames", "request_older", "answer_page", "page_failed", "file_feed", "file_preview",
              "file_finish", "render", "render_more", "render_section", "find_seq", "folder_read_feed",
              "folder_read_finish", "request_inspector", "context_meter"):
    setattr(Viewer, _name, guarded(_name, getattr(Viewer, _name)))


def _journal() -> Journal[HistoryRecord]:
    """The window's journal: cursors and continuity only; the assembler holds the entries (kept once)."""
    return session_journal(DEFAULT_MAX_MESSAGES, keep_window=False)


VIEWER = Viewer(defer_gc=True)  # the worker's: it calls ``settle`` after each page load
"""The worker's single viewer window."""
