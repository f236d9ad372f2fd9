"""The browser edge: the entry points the viewer's Web Worker calls in Pyodide, bytes in and JSON bytes out.

Rules: this is the only module the page's JavaScript talks to. Inputs arrive as bytes (a ``Uint8Array`` becomes a
``memoryview``; a JS string is never parsed); results go back as msgspec-encoded JSON bytes. Pages and follow frames
go through the journal (PROTOCOL 4) into one Conversation assembler wired with the default Definitions; local files
are parsed in slices (so the worker can report progress), their storage rows renamed to wire rows, never expanded,
and "Load older" for a file is answered here from the no-expansion pager. HTML is rendered on demand, per node, by
``render`` (DESIGN rule 8). Nothing here touches the DOM, the network or ``js``; the worker does the I/O. Works on
CPython too, which is how it is unit-tested.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from definitions import default_definitions
from definitions.transcript import Transcript, canonical_json

from . import render
from .conversation import ConversationAssembler, FlushResult, ViewNode
from .errors import AssemblerError
from .history import DEFAULT_MAX_MESSAGES, MessageIndex, history_records
from .journal import Append, JournalError, PageRequest, Prepend, Replace, session_journal
from .logfile import LoadResult, SessionLogParser
from .records import (
    EventFrame,
    EventRecord,
    HistoryRecord,
    SessionPage,
    SnapshotFrame,
    decode_follow_frame,
    decode_page,
    record_range,
)

__all__ = ["FileLoad", "Viewer", "VIEWER", "as_bytes", "HIDDEN_KINDS"]

HIDDEN_KINDS = frozenset({"event"})
"""Chat node kinds the page hides unless "show all events" is on (the fallback's one-row-per-unclaimed-event)."""

_encode = msgspec.json.Encoder().encode


def as_bytes(data: Any) -> bytes | bytearray | memoryview:
    """Accept a ``memoryview``/``bytes`` (what ``pyodide.toPy(Uint8Array)`` gives) or a JsProxy of a typed array."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return data
    to_bytes = getattr(data, "to_bytes", None)  # a JsProxy of a Uint8Array / ArrayBuffer
    if to_bytes is not None:
        return to_bytes()  # type: ignore[no-any-return]
    raise TypeError(f"expected bytes, got {type(data).__name__}")


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


# --- local files ----------------------------------------------------------------------------------------------


try:  # Python 3.14 (Pyodide): incremental decompression
    from compression.zstd import ZstdDecompressor as _ZstdDecompressor  # type: ignore[import-not-found]
except ImportError:  # CPython 3.11-3.13: whole-file decompression through the store helper
    _ZstdDecompressor = None


class _ZstdStream:
    """Decompresses a ``.zst`` stream slice by slice (several concatenated frames allowed)."""

    def __init__(self) -> None:
        self._d = _ZstdDecompressor() if _ZstdDecompressor is not None else None
        self._pending: list[bytes] = []
        self._in_frame = False

    def feed(self, data: bytes | bytearray | memoryview) -> bytes:
        if self._d is None:
            self._pending.append(bytes(data))
            return b""
        out: list[bytes] = []
        chunk = bytes(data)
        while chunk:
            out.append(self._d.decompress(chunk))
            self._in_frame = not self._d.eof
            if self._d.eof:
                chunk = self._d.unused_data
                self._d = _ZstdDecompressor()
            else:
                chunk = b""
        return b"".join(out)

    def finish(self) -> bytes:
        """The rest of the data. Raises ``ValueError`` for a stream cut off inside a frame."""
        if self._d is None:  # CPython < 3.14 (tests, tools): the zstandard package, every frame
            import io

            import zstandard

            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(b"".join(self._pending)),
                                                            read_across_frames=True) as reader:
                return bytes(reader.read())
        if self._in_frame:
            raise ValueError("the zstd stream ends inside a frame (truncated file)")
        return b""


class FileLoad:
    """A local session file parsed in slices: ``feed`` each slice in order, then ``finish``.

    Lines are split on ``\\n`` (a ``\\r`` before it is dropped); a line split across slices is carried over. The parse
    stops at the first fault and keeps everything before it (``LoadResult.error`` names the line).
    """

    def __init__(self, name: str = "", size: int = 0) -> None:
        self.name = name
        self.size = size
        self.parser = SessionLogParser(source=name)
        self.zstd = _ZstdStream() if name.endswith(".zst") else None
        self.bytes_read = 0
        self.bytes_parsed = 0
        self._carry = b""
        self._lineno = 0
        self.failure: str | None = None
        self.parse_ms = 0.0  # time spent in feed and finish (decompression and parsing)

    def _lines(self, data: bytes) -> None:
        if self._carry:
            data = self._carry + data
        cut = data.rfind(b"\n") + 1
        self._carry = data[cut:]
        if cut == 0 or self.parser.result.error is not None:
            return
        feed = self.parser.feed_line
        lineno = self._lineno
        for line in data[:cut - 1].split(b"\n"):
            lineno += 1
            if line[-1:] == b"\r":
                line = line[:-1]
            if not feed(line, lineno):
                break
        self._lineno = lineno
        self.bytes_parsed += cut

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Parse one more slice of the file's bytes."""
        t0 = time.perf_counter()
        self.bytes_read += len(data)
        if self.failure is not None:
            return
        if self.zstd is not None:
            try:
                chunk = self.zstd.feed(data)
            except Exception as exc:  # zstd errors have no common public base across implementations
                self.failure = f"cannot decompress: {exc}"
                return
        else:
            chunk = bytes(data)
        if chunk:
            self._lines(chunk)
        self.parse_ms += _ms(t0)

    def finish(self) -> LoadResult:
        """Parse what is left (a last line without a newline) and close the parse."""
        t0 = time.perf_counter()
        try:
            return self._finish()
        finally:
            self.parse_ms += _ms(t0)

    def _finish(self) -> LoadResult:
        if self.zstd is not None and self.failure is None:
            try:
                rest = self.zstd.finish()
            except Exception as exc:
                self.failure = f"cannot decompress: {exc}"
                rest = b""
            if rest:
                self._lines(rest)
        if self._carry and self.parser.result.error is None:
            self._lineno += 1
            line = self._carry[:-1] if self._carry[-1:] == b"\r" else self._carry
            self.parser.feed_line(line, self._lineno, terminated=False)
            self._carry = b""
        return self.parser.finish()

    def progress(self) -> dict[str, Any]:
        result = self.parser.result
        return {"bytes": self.bytes_read, "size": self.size, "lines": self._lineno, "events": result.event_count,
                "records": len(result.records), "error": None if result.error is None else str(result.error)}


# --- the viewer state -----------------------------------------------------------------------------------------


class _NodeMeta(msgspec.Struct, omit_defaults=True):
    """What the page needs to lay out one chat node without its HTML."""

    key: str
    kind: str
    seq: int | float
    rev: int
    label: str
    size: int
    hidden: bool = False
    role: str | None = None


class Viewer:
    """One viewer window: a journal, an assembler over its window, the current chat nodes and an optional local
    source that answers "Load older". Every public method returns JSON bytes for the page.

    Update objects (``_update``) carry ``replace`` (true: ``nodes`` is every chat node, in order; false: ``nodes`` are
    upserts), ``removed`` keys, ``hasMore``, ``canLoadOlder``, the window's ``first``/``last`` seq, ``requests`` (pages
    the page must fetch and answer with ``answer_page``) and ``stats``. Errors come back as ``{"error": {...}}``
    alongside whatever was still shown.
    """

    def __init__(self) -> None:
        self._rev = 0  # never reset: a rev names one node state across windows (keys repeat between sessions)
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new session, file or page)."""
        self.assembler = ConversationAssembler(default_definitions())
        self.journal = session_journal(DEFAULT_MAX_MESSAGES)
        self.chat: dict[str, ViewNode] = {}
        self.revs: dict[str, int] = {}
        self.trajectory: set[str] = set()
        self.header: dict[str, Any] | None = None
        self.index: MessageIndex | None = None
        self.file: FileLoad | None = None
        self.load_result: LoadResult | None = None
        self.page_requests: dict[int, PageRequest] = {}
        self._tool_ids: frozenset[str] = frozenset()
        self._call_sigs: dict[str, tuple[bool, ...]] = {}
        self._live = False

    # -- applying publications ---------------------------------------------------------------------------------

    def _apply(self, outputs: Iterable[Any]) -> list[dict[str, Any]]:
        requests = []
        asm = self.assembler
        for out in outputs:
            if isinstance(out, PageRequest):
                self.page_requests[out.id] = out
                requests.append({"id": out.id, "kind": out.kind, "through": out.through, "before": out.before,
                                 "maxMessages": out.max_messages})
            elif isinstance(out, Replace):
                asm.replace_window(out.entries, out.has_more)
            elif isinstance(out, Prepend):
                asm.prepend(out.entries, out.has_more)
            elif isinstance(out, Append):
                asm.append(out.entry)
        return requests

    def _call_sig(self, node: ViewNode) -> tuple[bool, ...]:
        data = node.data
        blocks = getattr(data, "blocks", None) or ()
        # Tool-call blocks are the ones with a callId (the block kind is a msgspec tag, not an attribute).
        return tuple(b.callId in self._tool_ids for b in blocks if hasattr(b, "callId"))

    def _meta(self, node: ViewNode) -> _NodeMeta:
        data = msgspec.to_builtins(node.data)
        as_dict = {"kind": node.kind, "data": data}
        size = sum(len(text) for _, text in render.node_text_blocks(as_dict))
        role = data.get("kind") if node.kind == "input-message" and type(data) is dict else None
        return _NodeMeta(key=node.key, kind=node.kind, seq=node.anchorSeq, rev=self.revs[node.key],
                         label=render.node_label(as_dict), size=size,
                         hidden=node.visibility == "hidden" or node.kind in HIDDEN_KINDS, role=role)

    def _take(self, result: FlushResult | None) -> tuple[bool, list[ViewNode], list[str]]:
        """Fold a flush into ``self.chat``; returns ``(replace, changed nodes, removed keys)``."""
        if result is None:
            return False, [], []
        chat = result.views.get("chat")
        traj = result.views.get("trajectory")
        if traj is not None:
            keys = {n.key for n in traj.nodes}
            self.trajectory = keys if traj.replace else self.trajectory | keys
        if chat is None:
            return False, [], []
        old = self.chat
        if chat.replace:
            new = {n.key: n for n in chat.nodes}
            removed = [k for k in old if k not in new]
        else:
            new = dict(old)
            new.update((n.key, n) for n in chat.nodes)
            removed = []
        self.chat = new
        tool_ids = frozenset(n.id for n in new.values() if n.kind == "tool")
        tools_changed = tool_ids != self._tool_ids
        self._tool_ids = tool_ids
        changed: list[ViewNode] = []
        for node in chat.nodes:
            prev = old.get(node.key)
            sig = self._call_sig(node) if node.kind == "assistant-step" else ()
            if prev is None or prev != node or self._call_sigs.get(node.key) != sig:
                self._rev += 1
                self.revs[node.key] = self._rev
                changed.append(node)
            self._call_sigs[node.key] = sig
        if tools_changed:  # an assistant step stops repeating a tool call once the call has its own row
            seen = {n.key for n in changed}
            for node in new.values():
                if node.kind == "assistant-step" and node.key not in seen:
                    sig = self._call_sig(node)
                    if self._call_sigs.get(node.key) != sig:
                        self._call_sigs[node.key] = sig
                        self._rev += 1
                        self.revs[node.key] = self._rev
                        changed.append(node)
        for key in removed:
            self.revs.pop(key, None)
            self._call_sigs.pop(key, None)
        return chat.replace, changed, removed

    def _ordered(self) -> list[ViewNode]:
        return sorted(self.chat.values(), key=lambda n: n.anchorSeq)

    def _update(self, replace: bool, changed: Sequence[ViewNode], removed: Sequence[str],
                requests: Sequence[dict[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        nodes = self._ordered() if replace else sorted(changed, key=lambda n: n.anchorSeq)
        journal = self.journal
        value: dict[str, Any] = {
            "replace": replace,
            "nodes": [self._meta(n) for n in nodes],
            "removed": list(removed),
            "hasMore": journal.has_more,
            "canLoadOlder": journal.has_more and (self.index is not None or self._live),
            "first": journal.first_cursor,
            "last": journal.last_cursor,
            "requests": list(requests),
            "stats": self.stats(),
        }
        value.update(extra)
        return value

    def stats(self) -> dict[str, int]:
        return {"records": len(self.journal.window), "inputs": self.assembler.entry_count,
                "chatNodes": len(self.chat), "trajectoryNodes": len(self.trajectory)}

    def _flush_update(self, requests: Sequence[dict[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        replace, changed, removed = self._take(self.assembler.flush())
        return self._update(replace, changed, removed, requests, **extra)

    def _transcript_bytes(self, result: FlushResult) -> bytes:
        """The canonical transcript of a full replace, exactly as ``definitions.assemble_page`` builds it."""
        views = result.views
        chat = views["chat"].nodes if "chat" in views else []
        traj = views["trajectory"].nodes if "trajectory" in views else []
        by_seq = lambda n: n.anchorSeq
        return canonical_json(Transcript(sorted(chat, key=by_seq), sorted(traj, key=by_seq), result.timeline))

    def _replace(self, records: Sequence[HistoryRecord], has_more: bool, cursor: int,
                 *, digest: bool = False) -> dict[str, Any]:
        """Open the journal on a page and fold it; returns the update with ``ms`` (journal, fold) and a digest."""
        t0 = time.perf_counter()
        outputs = self.journal.opened(cursor, records, has_more)
        ms_journal = _ms(t0)
        t0 = time.perf_counter()
        self._apply(outputs)
        result = self.assembler.flush()
        ms_fold = _ms(t0)
        extra: dict[str, Any] = {}
        if digest and result is not None:
            t0 = time.perf_counter()
            canonical = self._transcript_bytes(result)
            extra["digest"] = hashlib.sha256(canonical).hexdigest()
            extra["canonicalBytes"] = len(canonical)
            extra["msDigest"] = _ms(t0)
        replace, changed, removed = self._take(result)
        update = self._update(replace, changed, removed, **extra)
        update["ms"] = {"journal": ms_journal, "fold": ms_fold}
        return update

    # -- entry points: pages and follow ---------------------------------------------------------------------------

    def load_page(self, data: Any) -> bytes:
        """Replace the window with one ``SessionPage`` (its JSON bytes); fold it and compute the digest."""
        self.reset()
        t0 = time.perf_counter()
        try:
            page = decode_page(as_bytes(data))
        except AssemblerError as exc:
            return _encode(self._error_update(exc, "page"))
        ms_decode = _ms(t0)
        cursor = _tail(page.records)
        try:
            update = self._replace(page.records, page.hasMore, cursor, digest=True)
        except AssemblerError as exc:
            return _encode(self._error_update(exc, "page"))
        update["ms"]["decode"] = ms_decode
        return _encode(update)

    def apply_frames(self, frames: Sequence[Any]) -> bytes:
        """Apply follow frames (each the JSON bytes of a snapshot or event frame), in order, then flush once.

        A snapshot opens the journal, or reopens it after a reconnect. A gap in the live events yields a repair
        ``request`` to fetch and answer with ``answer_page``.
        """
        self._live = True
        requests: list[dict[str, Any]] = []
        error: dict[str, Any] | None = None
        try:
            for raw in frames:
                frame = decode_follow_frame(as_bytes(raw))
                if isinstance(frame, SnapshotFrame):
                    if self.journal.last_cursor is not None or self.journal.failed is not None:
                        if self.journal.failed is not None:
                            self.journal = session_journal(DEFAULT_MAX_MESSAGES)
                        else:
                            self.journal.reconnect()
                    self.header = frame.header
                    requests += self._apply(self.journal.opened(frame.cursor, frame.records, frame.hasMore))
                elif isinstance(frame, EventFrame):
                    requests += self._apply(self.journal.entry(EventRecord(frame.event)))
        except (AssemblerError, JournalError) as exc:
            error = _error_value(exc, "live")
        update = self._flush_update(requests, header=self.header)
        if error is not None:
            update["error"] = error
        return _encode(update)

    def reconnected(self) -> None:
        """The page opened a new follow connection: the next frame must be its snapshot."""
        if self.journal.last_cursor is not None and self.journal.failed is None:
            self.journal.reconnect()

    def request_older(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> bytes:
        """"Load older": for a local file, read the older page here and prepend it; otherwise return the page
        ``request`` the page must fetch (``throughSeq``, ``beforeSeq``, ``maxMessages``) and answer."""
        try:
            request = self.journal.request_prepend(max_messages)
        except JournalError as exc:
            return _encode(self._error_update(exc, "older"))
        if self.index is None:
            self.page_requests[request.id] = request
            return _encode({"requests": [{"id": request.id, "kind": request.kind, "through": request.through,
                                          "before": request.before, "maxMessages": request.max_messages}]})
        value = self.index.page(request.through, request.before, request.max_messages or DEFAULT_MAX_MESSAGES)
        page = msgspec.convert(value, SessionPage)
        return self._answer(request, page)

    def answer_page(self, request_id: int, data: Any) -> bytes:
        """Answer a page request (repair or older page) with the JSON bytes of the ``SessionPage`` that was read."""
        request = self.page_requests.pop(int(request_id), None)
        if request is None:
            return _encode(self._flush_update())
        try:
            page = decode_page(as_bytes(data))
        except AssemblerError as exc:
            return _encode(self._error_update(exc, "page"))
        return self._answer(request, page)

    def page_failed(self, request_id: int, reason: str) -> bytes:
        """The page could not read a requested page."""
        request = self.page_requests.pop(int(request_id), None)
        if request is None:
            return _encode(self._flush_update())
        try:
            self.journal.page_failed(request, reason)
        except JournalError as exc:
            return _encode(self._error_update(exc, "older" if request.kind == "prepend" else "live"))
        return _encode(self._flush_update())

    def _answer(self, request: PageRequest, page: SessionPage) -> bytes:
        try:
            requests = self._apply(self.journal.page(request, page.records, page.hasMore))
        except (AssemblerError, JournalError) as exc:
            return _encode(self._error_update(exc, "older" if request.kind == "prepend" else "live"))
        return _encode(self._flush_update(requests))

    def _error_update(self, exc: BaseException, where: str) -> dict[str, Any]:
        try:
            update = self._flush_update()
        except AssemblerError:
            update = self._update(False, [], [])
        update["error"] = _error_value(exc, where)
        return update

    # -- entry points: local files ------------------------------------------------------------------------------

    def file_begin(self, name: str, size: int = 0) -> None:
        """Start reading a local file (``.jsonl`` or ``.jsonl.zst``); the window is cleared."""
        self.reset()
        self.file = FileLoad(str(name), int(size))

    def file_feed(self, data: Any) -> bytes:
        """Parse the next slice of the file; returns progress ``{bytes, size, lines, events, records, error}``."""
        if self.file is None:
            raise RuntimeError("file_feed before file_begin")
        self.file.feed(as_bytes(data))
        return _encode(self.file.progress())

    def file_finish(self, all_records: bool = False, max_messages: int = DEFAULT_MAX_MESSAGES) -> bytes:
        """Finish the parse and show the file: the tail page of ``max_messages`` messages (older pages come from
        "Load older"), or every record when ``all_records`` (then the update carries the transcript ``digest``).

        The update carries ``error`` (``{message, line, seq}``) when the file is malformed: everything before the
        faulty line is still shown. ``warnings`` lists skipped torn lines.
        """
        load = self.file
        if load is None:
            raise RuntimeError("file_finish before file_begin")
        result = load.finish()
        self.load_result = result
        self.header = result.header
        ms_parse = round(load.parse_ms, 3)
        t0 = time.perf_counter()
        index = MessageIndex(result.records)
        self.index = index
        if all_records:
            value = {"records": history_records(result.records), "hasMore": False}
        else:
            value = index.page(None, None, int(max_messages))
        try:
            page = msgspec.convert(value, SessionPage)
        except msgspec.ValidationError as exc:
            update = self._update(False, [], [])
            update["error"] = {"where": "file", "message": f"invalid record: {exc}", "line": None, "seq": None}
            return _encode(update)
        ms_page = _ms(t0)
        try:
            update = self._replace(page.records, page.hasMore, index.last_seq, digest=all_records)
        except AssemblerError as exc:
            return _encode(self._error_update(exc, "file"))
        update["ms"].update({"parse": ms_parse, "page": ms_page})
        update["header"] = result.header
        update["file"] = {"name": load.name, "bytes": load.bytes_read, "lines": result.lines,
                          "events": result.event_count, "records": len(result.records)}
        update["warnings"] = list(result.warnings)
        update["error"] = None
        if load.failure is not None:
            update["error"] = {"where": "file", "message": load.failure, "line": None, "seq": None}
        elif result.error is not None:
            err = result.error
            update["error"] = {"where": "file", "message": err.message, "line": err.line, "seq": err.seq,
                               "text": str(err)}
        self.file = None
        return _encode(update)

    # -- entry points: HTML ----------------------------------------------------------------------------------------

    def _context(self) -> render.RenderContext:
        starts: dict[Any, int] = {}
        for turn, tl in self.assembler.index.turns.items():
            if tl.start is not None:
                starts[turn] = tl.start.time
        return render.RenderContext(turn_start_times=starts, shown_calls=self._tool_ids)

    def _node_dict(self, key: str) -> dict[str, Any] | None:
        node = self.chat.get(key)
        return None if node is None else msgspec.to_builtins(node)

    def render(self, keys: Sequence[str]) -> bytes:
        """HTML of the given chat nodes: ``{"html": {key: html}, "revs": {key: rev}}`` (unknown keys are left out)."""
        context = self._context()
        html: dict[str, str] = {}
        revs: dict[str, int] = {}
        for key in keys:
            node = self._node_dict(str(key))
            if node is None:
                continue
            html[key] = render.render_node(node, context=context)
            revs[key] = self.revs.get(key, 0)
        return _encode({"html": html, "revs": revs})

    def render_more(self, key: str, block: int, offset: int) -> bytes:
        """The next slice of a long text block (after "Show more")."""
        node = self._node_dict(str(key))
        html = "" if node is None else render.render_block_slice(node, int(block), int(offset))
        return _encode({"html": html})

    def render_think(self, key: str, block: int) -> bytes:
        """The body of a Think row, when it is opened."""
        node = self._node_dict(str(key))
        html = "" if node is None else render.render_section(node, int(block))
        return _encode({"html": html})

    def find_seq(self, seq: float) -> bytes:
        """The chat node a deep link ``#seq=N`` points at: the visible node with the greatest anchor <= N (else the
        first node); ``inWindow`` is false when N lies before the window and older pages could hold it."""
        first = self.journal.first_cursor
        best: ViewNode | None = None
        for node in self._ordered():
            if node.visibility == "hidden" or node.kind in HIDDEN_KINDS:
                continue
            if node.anchorSeq <= seq:
                best = node
            elif best is None:
                best = node
                break
            else:
                break
        in_window = first is None or seq >= first or not self.journal.has_more
        return _encode({"key": None if best is None else best.key, "inWindow": in_window})


def _tail(records: Sequence[HistoryRecord]) -> int:
    """The last logical seq of a page (-1 when empty): a page opens the journal at its own tail."""
    return record_range(records[-1])[1] if records else -1


def _error_value(exc: BaseException, where: str) -> dict[str, Any]:
    line = getattr(exc, "line", None)
    seq = getattr(exc, "seq", None)
    message = getattr(exc, "message", None) or str(exc)
    return {"where": where, "message": str(message), "line": line if type(line) is int else None,
            "seq": seq if type(seq) is int else None, "text": str(exc), "type": type(exc).__name__}


VIEWER = Viewer()
"""The worker's single viewer window."""
