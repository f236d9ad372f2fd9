"""The wire API the worker drives: ``Viewer``, whose methods ``web/worker.mjs`` calls by name, and ``VIEWER``, the
worker's one instance: each method is one entry point of the page (bytes in, JSON bytes out).

Rules: every entry point takes plain values or bytes and returns msgspec JSON bytes (``updates.encode_json``); it
decodes its input, calls the state or feature that answers (the window, ``window.Window``; the open folder, the
comparison, the published site's shards; the views, inspector, filters and replay functions), and encodes the
value. ``guarded`` keeps an unexpected exception from reaching the worker; ``page_load`` pauses the cycle collector
around a page load. Nothing else lives here: no state of its own beyond the objects it composes.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import Any

from ..errors import AssemblerError
from ..history import DEFAULT_MAX_MESSAGES
from ..lazy_rows import decode_lazy_frame, decode_lazy_page
from . import view_api
from .compare_view import CompareView
from .filters import search_shown
from .folder import OpenFolder
from .gcpause import CollectorPause, page_load
from .guard import CallOrderError, guarded
from .inspector import context_meter, inspect_request
from .replay import replay_page, window_page
from .sitesearch import SiteShards
from .updates import as_bytes, elapsed_ms, encode_json, error_value
from .warmup import WarmUp
from .window import Window

__all__ = [
    "CallOrderError",
    "Viewer",
    "VIEWER",
]


class Viewer:
    """The entry points of one viewer window (``window``), the folder it opened (``folder``), its comparison
    (``compare``) and a published site's search index (``site``). Every method returns JSON bytes for the page;
    errors come back as ``{"error": {...}}`` beside whatever is still shown (``window.Window.update``).

    ``repack_live``: pack a live block's deltas into one row when it ends (``live_repack``); ``defer_gc``: a page load
    leaves the cycle collector paused until ``settle`` (``gcpause``).
    """

    def __init__(self, *, repack_live: bool = True, defer_gc: bool = False) -> None:
        self.window = Window(repack_live=repack_live)
        self.collector = CollectorPause(defer_gc)
        self.folder = OpenFolder()
        self.compare = CompareView(self.folder.context)
        self.site = SiteShards()
        self.warm = WarmUp(Viewer)

    def reset(self) -> None:
        """Forget the window (a new session, file or page)."""
        self.window.reset()

    def settle(self) -> None:
        """The page is idle after a page load: resume the cycle collector a ``defer_gc`` load left paused."""
        self.collector.settle()

    def warm_up(self) -> bytes:
        """One step of the idle warm-up (``warmup``): the worker calls it after boot while no request waits, until a
        step says ``done`` or the first real request arrives. ``{step, path, ms, done}``."""
        return self.warm.step()

    # -- pages and follow ------------------------------------------------------------------------------------------

    @guarded
    @page_load
    def load_page(self, data: Any, paged: bool = False) -> bytes:
        """Replace the window with one ``SessionPage`` (its JSON bytes) and fold it. Packed fragments stay lazy
        (``lazy_rows``) unless something reads them. The update carries the first screen's HTML (``html``: the rows
        ``updates.first_screen_keys`` picks) and ``ms`` (decode, journal, fold, html). ``paged``: the page fetches
        its older pages ("Load older" returns ``requests``: a published site's files)."""
        window = self.window
        window.reset()
        window.live = bool(paged)
        t0 = time.perf_counter()
        try:
            page = decode_lazy_page(as_bytes(data))
            ms_decode = elapsed_ms(t0)
            update = window.open_page(page)
        except AssemblerError as exc:
            return encode_json(window.error_update(exc, "page"))
        update["ms"]["decode"] = ms_decode
        return encode_json(update)

    @guarded
    def apply_frames(self, frames: Sequence[Any]) -> bytes:
        """Apply follow frames (each the JSON bytes of a snapshot or event frame), in order, then flush once. A
        snapshot opens the journal, or reopens it after a reconnect; it is decoded as ``load_page`` decodes a page
        (``lazy_rows``), and the update that replaces the window carries the first screen's HTML (``html``). A gap
        in the live events yields a repair ``request`` to fetch and answer with ``answer_page``."""
        return encode_json(self.window.frames(decode_lazy_frame(as_bytes(raw)) for raw in frames))

    @guarded
    def request_older(self, max_messages: int = DEFAULT_MAX_MESSAGES, from_seq: int | None = None) -> bytes:
        """"Load older": for a local file, read the older page here and prepend it; otherwise return the page
        ``request`` the page must fetch (``throughSeq``, ``beforeSeq``, ``maxMessages``, ``fromSeq``) and answer.
        ``from_seq`` (a deep link's row): one page reaches back to it, ``max_messages`` being the cap."""
        return encode_json(self.window.older(max_messages, from_seq))

    @guarded
    @page_load
    def answer_page(self, request_id: int, data: Any) -> bytes:
        """Answer a page request (repair or older page) with the JSON bytes of the ``SessionPage`` that was read."""
        window = self.window
        request = window.pending(request_id)
        if request is None:
            return encode_json(window.flush_update())
        try:
            page = decode_lazy_page(as_bytes(data))
        except AssemblerError as exc:
            return encode_json(window.error_update(exc, "page"))
        return encode_json(window.answer(request, page))

    @guarded
    def page_failed(self, request_id: int, reason: str) -> bytes:
        """The page could not read a requested page."""
        window = self.window
        request = window.pending(request_id)
        if request is None:
            return encode_json(window.flush_update())
        return encode_json(window.page_failed(request, str(reason)))

    def digest(self) -> bytes:
        """The transcript digest of what the window shows now: ``{digest, canonicalBytes, ms}`` (the sha256 of the
        canonical transcript JSON, as ``assemble --all --digest`` prints for the same records)."""
        return encode_json(self.window.digest())

    # -- local files -----------------------------------------------------------------------------------------------

    def file_begin(self, name: str, size: int = 0, key: str | None = None, local: str | None = None) -> None:
        """Start reading a local file of any format the table knows (``key``: which session of a file holding
        several; the first by default; ``local``: its path in the open folder, which gives its reader the context
        the folder's list was read with); the window is cleared."""
        context = self.folder.context(str(local)) if local is not None else None
        self.window.file_begin(str(name), int(size), None if key is None else str(key), context)

    @guarded
    def file_feed(self, data: Any) -> bytes:
        """Parse the next slice of the file; returns progress ``{bytes, size, lines, events, records, error}``."""
        return encode_json(self.window.file_feed(as_bytes(data)))

    @guarded
    def file_preview(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> bytes:
        """While a big file is read, the part read so far (its tail page), replaced whole by ``file_finish``; the
        update carries ``preview: {bytes, size}`` and ``html``; ``null`` when nothing can be shown yet (no record,
        a format read only whole, a fold fault: the whole file's fold reports it)."""
        return encode_json(self.window.file_preview(int(max_messages)))

    @guarded
    def file_finish(self, all_records: bool = False, max_messages: int = DEFAULT_MAX_MESSAGES) -> bytes:
        """Finish the parse and show the file: the tail page of ``max_messages`` messages (older pages come from
        "Load older"), or every record when ``all_records`` (then the update carries the transcript ``digest``).
        The update carries ``error`` (``{message, line, seq}``) when the file is malformed: everything before the
        faulty line is still shown. ``warnings`` lists skipped torn lines."""
        return encode_json(self.window.file_finish(bool(all_records), int(max_messages)))

    # -- a local folder (``folder.OpenFolder``) --------------------------------------------------------------------

    def folder_open(self, files: Any) -> bytes:
        """The files' ``[{path, size, lastModified}]`` (JSON bytes) → what to read first."""
        return encode_json(self.folder.open(as_bytes(files)))

    def folder_give(self, kind: str, path: str, data: Any) -> None:
        """A sidecar (``kind`` ``"sidecar"``) or the head of a ``.jsonl`` file, as ``folder_open`` asked."""
        self.folder.give(str(kind), str(path), as_bytes(data))

    def folder_order(self) -> bytes:
        """The candidates in reading order."""
        return encode_json(self.folder.order())

    def folder_read_begin(self, path: str) -> None:
        """Start reading one candidate."""
        self.folder.read_begin(str(path))

    @guarded
    def folder_read_feed(self, data: Any) -> bytes:
        """Its next slice: ``{go}`` (false once its parse has failed: read no more of it)."""
        return encode_json(self.folder.read_feed(as_bytes(data)))

    @guarded
    def folder_read_finish(self) -> bytes:
        """Its entries for the list."""
        return encode_json(self.folder.read_finish())

    def folder_entries(self) -> bytes:
        """Every entry of the files read, in reading order, titled across files."""
        return encode_json(self.folder.entries())

    # -- HTML and the chat rows -----------------------------------------------------------------------------------

    @guarded
    def render(self, keys: Sequence[str]) -> bytes:
        """HTML of the given chat nodes: ``{"html": {key: html}, "revs": {key: rev}}`` (unknown keys are left out)."""
        return encode_json(self.window.render_html(keys))

    @guarded
    def render_more(self, key: str, block: int, offset: int) -> bytes:
        """The next slice of a long text block (after "Show more")."""
        return encode_json({"html": self.window.render_more(str(key), int(block), int(offset))})

    @guarded
    def render_section(self, key: str, block: int) -> bytes:
        """The body of a collapsed row (Think, tool, context, summary), when it is opened."""
        return encode_json({"html": self.window.render_section(str(key), int(block))})

    def row_text(self, key: str) -> bytes:
        """The plain text of one chat node, for "Copy text": ``{"text", "arguments", "result"}`` (the last two for
        tool rows only; ``text`` is None for an unknown key). Whole texts, however long the rendered slice."""
        return encode_json(self.window.row_text(str(key)))

    @guarded
    def find_seq(self, seq: float) -> bytes:
        """The chat node a deep link ``#seq=N`` points at, and whether it is in the window (``updates.seq_target``)."""
        return encode_json(self.window.find_seq(seq))

    # -- the other views (``view_api``) ----------------------------------------------------------------------------

    def session_facts(self) -> bytes:
        """What the whole local file records (``view_api.session_facts``); ``null`` without a local file."""
        return encode_json(view_api.session_facts(self.window))

    def todo_list(self) -> bytes:
        """The window's latest plan (``view_api.todo_list``), or null."""
        return encode_json(view_api.todo_list(self.window))

    def trajectory_view(self) -> bytes:
        """The Trajectory view: ``{rows, timeline}``."""
        return encode_json(view_api.trajectory_view(self.window))

    def run_timeline(self) -> bytes:
        """The whole local file's overview when the window holds only its newest messages
        (``view_api.whole_run_timeline``), or null."""
        return encode_json(view_api.whole_run_timeline(self.window))

    def context_view(self) -> bytes:
        """The Model-context view: ``{messages, problems}``."""
        return encode_json(view_api.context_view(self.window))

    def context_message(self, seq: int) -> bytes:
        """The full text of one context message: ``{text}``."""
        return encode_json(view_api.context_message(self.window, int(seq)))

    def search(self, query: str, include_hidden: bool = False) -> bytes:
        """Occurrences of ``query`` (case-insensitive) in every chat row of the window, rendered or not."""
        return encode_json(view_api.search(self.window, str(query), bool(include_hidden)))

    def search_shown(self, query: str, include_hidden: bool = False, hidden: Collection[str] = ()) -> bytes:
        """As ``search``, over the rows whose facet is not in ``hidden`` (``filters.search_shown``)."""
        window = self.window
        return encode_json(search_shown(window.search_index, window.ordered(), window.revs, str(query),
                                        bool(include_hidden), [str(h) for h in hidden]))

    def records(self, key: str) -> bytes:
        """The stored records chat row ``key`` was folded from (packed rows summarised, never expanded here)."""
        return encode_json(view_api.records(self.window, str(key)))

    def record_members(self, key: str, i: int) -> bytes:
        """Record ``i`` of row ``key`` as stored, and a packed row's members (expanded for this request only)."""
        return encode_json(view_api.record_members(self.window, str(key), int(i)))

    def export(self, fmt: str = "html", scope: str = "window", title: str = "", page: Any = None) -> bytes:
        """``{text, name, ms}``: the window, the whole session (``page``: its ``SessionPage`` bytes when it is not a
        local file) or a view, as ``fmt`` (``view_api.export``)."""
        return encode_json(view_api.export(self.window, str(fmt), str(scope), str(title),
                                           None if page is None else as_bytes(page)))

    @guarded
    def request_inspector(self, seq: int, step: bool = False) -> bytes:
        """One request of the window (``inspector.inspect_request``), or ``{"missing": seq}``."""
        return encode_json(inspect_request(self.window.assembler, int(seq), bool(step)))

    @guarded
    def context_meter(self) -> bytes:
        """The context meter of the window (``inspector.context_meter``)."""
        return encode_json(context_meter(self.window.assembler))

    # -- comparing two sessions (``compare_view.CompareView``) -----------------------------------------------------

    def compare_file_begin(self, side: str, name: str, size: int = 0, key: str | None = None,
                           local: str | None = None) -> None:
        """Starts reading side ``a``/``b`` from a local file (the chat window is left as it was)."""
        self.compare.file_begin(str(side), str(name), int(size), None if key is None else str(key),
                                None if local is None else str(local))

    def compare_file_feed(self, side: str, data: Any) -> bytes:
        """The next slice of side ``side``'s file: ``{go}``."""
        return encode_json(self.compare.file_feed(str(side), as_bytes(data)))

    def compare_file_finish(self, side: str) -> bytes:
        """Ends side ``side``'s read: ``{records, bytes, error, warning}``."""
        return encode_json(self.compare.file_finish(str(side)))

    @page_load
    def compare_open(self, page_a: Any, page_b: Any, id_a: str, id_b: str) -> bytes:
        """Folds and compares two ``SessionPage`` bytes (``None``: the page a local file's read left for that
        side): the comparison's summary and turns, or ``{error: {side, id, text, ...}}``."""
        return encode_json(self.compare.open(page_a, page_b, str(id_a), str(id_b)))

    def compare_turns(self, indices: Sequence[int]) -> bytes:
        """``{turns: {INDEX: {header, columns}}}``: the HTML of the aligned turns asked for."""
        return encode_json(self.compare.turns([int(i) for i in indices]))

    def compare_section(self, side: str, key: str, block: int) -> bytes:
        """``{html}``: the body of a collapsed row of side ``a`` or ``b``."""
        return encode_json(self.compare.section(str(side), str(key), int(block)))

    def compare_more(self, side: str, key: str, block: int, offset: int) -> bytes:
        """``{html}``: the next slice of a long text of a row of side ``a`` or ``b``."""
        return encode_json(self.compare.more(str(side), str(key), int(block), int(offset)))

    def compare_export(self, fmt: str = "html") -> bytes:
        """``{text, name, ms}``: the open comparison as the CLI's ``compare`` writes it."""
        return encode_json(self.compare.export(str(fmt)))

    def compare_close(self) -> None:
        """Forgets the open comparison."""
        self.compare.close()

    # -- a published site's search (``sitesearch.SiteShards``) ----------------------------------------------------

    def site_filter_open(self, name: str, data: Any) -> bytes:
        """Hold the site's filter file ``name`` from its bytes: ``{ok: true, shards}`` or ``{ok: false, error}``."""
        return encode_json(self.site.open_filter(str(name), as_bytes(data)))

    def site_index_plan(self, query: str, names: Sequence[str], filter_name: str | None = None) -> bytes:
        """The shards ``query`` needs among ``names`` and not open yet (JSON list, catalog order)."""
        return encode_json(self.site.plan(str(query), [str(n) for n in names],
                                          None if filter_name is None else str(filter_name)))

    def site_index_open(self, name: str, data: Any) -> bytes:
        """Open shard ``name`` from its bytes: ``{ok: true, sessions}`` or ``{ok: false, error}``."""
        return encode_json(self.site.open(str(name), as_bytes(data)))

    def site_search(self, query: str, limit: int, names: Sequence[str], filter_name: str | None = None) -> bytes:
        """``{status, body}``: the answer of ``GET /api/search?q=query&limit=limit`` from the shards ``names``
        the query needs."""
        return encode_json(self.site.search(str(query), int(limit), [str(n) for n in names],
                                            None if filter_name is None else str(filter_name)))

    # -- the replay measurement (``replay``) ------------------------------------------------------------------------

    def replay_page(self, data: Any) -> bytes:
        """Fold one ``SessionPage`` (its JSON bytes) in a scratch viewer, stage by stage (``replay.replay_page``);
        the open window is untouched. ``perf.bench_browser`` calls this."""
        try:
            return encode_json(replay_page(data, Viewer(repack_live=False)))
        except AssemblerError as exc:
            return encode_json({"error": error_value(exc, "replay")})

    def replay_window(self, mode: str) -> bytes:
        """Replay the open window as a ``scalar`` or ``packed`` page (the viewer's "Replay benchmark" panel)."""
        return self.replay_page(window_page(self.window.assembler, str(mode)))


VIEWER = Viewer(defer_gc=True)  # the worker's: it calls ``settle`` after each page load
"""The worker's single viewer window."""
