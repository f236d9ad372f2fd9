"""One loader for a session file of any format in ``assembler.formats``: bytes in, in any slices, our records out.

Rules: the format is detected from the first bytes (``formats.detect``), never from the name; until it is known the
bytes wait here. A zstd stream is decompressed in bounded pieces and the log inside is detected the same way. Line
formats (ours, Claude Code, Codex, Gemini JSONL) parse as the bytes arrive and can be followed; document and zip
formats (Inspect, Gemini JSON, SWE-agent, mini-swe-agent, OpenHands) are collected whole and read at ``finish``; a
SQLite database is read by path (``needs_path``: the caller gives the file to ``store.sqlite``). A zero-byte file is
an empty session; a file of no known format is an error naming the formats tried. Every caller (the command line,
the server, the page) reads through this class. No file I/O here: the caller reads.
"""

from __future__ import annotations

from typing import Any

from ..errors import SessionFileError
from ..formats import (
    EMPTY,
    NEED_MORE,
    PROBE_BYTES,
    ZSTD,
    Format,
    UnknownFormat,
    detect,
    reader_of,
    session_stem,
)
from ..interop.base import LineLoader, SessionLog, SourceError
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult, LogLoader
from .zstd import ZstdDecoder, ZstdStreamError

__all__ = ["AnyLoader", "empty_result"]


def empty_result(name: str) -> LoadResult:
    """The empty session a zero-byte file is (FORMATS §1.1)."""
    return LoadResult({"type": "session", "version": 0, "id": session_stem(name)}, [])


class AnyLoader:
    """A session file of any known format, fed in slices (``feed``) and closed with ``finish``.

    ``format`` is None until the first bytes decided it. ``result`` is the session read so far (for a file holding
    several, the one named by ``key``, else the first); ``sessions`` every session of a document or zip format once
    finished. ``close_tail`` lets a line format's reader close what an idle end leaves open (live follow).
    ``needs_path``: the file is a SQLite database; read it with ``store.sqlite.read_sqlite``.
    """

    def __init__(self, name: str, *, strict: bool = False, max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES,
                 pack_deltas: bool = False, context: dict[str, Any] | None = None, key: str | None = None) -> None:
        self.name = name
        self.strict = strict
        self.max_line_bytes = max_line_bytes
        self.pack_deltas = pack_deltas
        self.context = context
        self.key = key
        self.format: Format | None = None
        self.compressed = False
        self.needs_path = False
        self.sessions: list[SessionLog] | None = None
        self.result = LoadResult()
        self._head = bytearray()
        self._next_try = 0  # detect again once this many bytes are held
        self._had_newline = False  # the held bytes hold a line end (the first line is complete)
        self._zstd: ZstdDecoder | None = None
        self._inner: Any = None  # LogLoader | LineLoader once a line format is known
        self._whole: bytearray | None = None  # a document or zip format: every byte, read at finish
        self._done = False

    @property
    def live(self) -> bool:
        """The format grows by appending and can be followed (known once the format is)."""
        return self.format is not None and self.format.live and not self.compressed

    @property
    def finished(self) -> bool:
        """``finish`` was called: the input was taken as complete and no byte fed after it is read."""
        return self._done

    @property
    def reader(self) -> Any:
        """The line format reader of another harness's log (``interop.base.LineReader``), else None: an edge reads
        what it exposes beside the log (Claude Code's ``uuids``)."""
        inner = self._inner
        return inner.reader if type(inner) is LineLoader else None

    # -- feeding ------------------------------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Parse the next bytes; returns how many records they completed (the new tail of ``result.records``)."""
        if self._done or not data or self.result.error is not None:
            return 0
        if self._zstd is not None:
            try:
                pieces = list(self._zstd.pieces(data))
            except ZstdStreamError as exc:
                return self._stop(SessionFileError(exc.message))
            return sum(self._plain(piece) for piece in pieces)
        if self.format is not None:
            return self._known(data)
        head = self._held(data, complete=False)
        if head is None:
            return 0
        if self._zstd is not None:
            return self.feed(head)
        return self._known(head)

    def _plain(self, data: bytes | bytearray | memoryview) -> int:
        """Decompressed bytes of the log: detected first, as plain bytes are."""
        if self._done or self.result.error is not None:
            return 0
        if self.format is not None:
            return self._known(data)
        head = self._held(data, complete=False)
        return 0 if head is None else self._known(head)

    def _held(self, data: bytes | bytearray | memoryview, *, complete: bool) -> bytes | None:
        """Add ``data`` to the bytes held for detection; once the format is decided (``_start``), the held bytes to
        parse. None while undecided (or refused). Detection runs again only when the held bytes have doubled."""
        self._head += data
        # A long first line that just ended is tried at once (a JSONL file), not only when the bytes held double.
        first_line_done = not self._had_newline and self._head.find(b"\n", len(self._head) - len(data)) != -1
        self._had_newline = self._had_newline or first_line_done
        if not complete and len(self._head) < self._next_try and not first_line_done:
            return None
        self._next_try = max(PROBE_BYTES, 2 * len(self._head))
        try:
            found = detect(self._head, complete=complete)
        except UnknownFormat as exc:
            self._stop(SessionFileError(str(exc)))
            return None
        if found is NEED_MORE:
            if complete:
                self._stop(SessionFileError(str(UnknownFormat("not a complete JSON value"))))
            elif self.max_line_bytes is not None and len(self._head) > self.max_line_bytes:
                if b"\n" not in self._head:
                    self._stop(SessionFileError(f"line is longer than {self.max_line_bytes} bytes", line=1))
                else:
                    self._stop(SessionFileError(f"no complete record in the first {self.max_line_bytes} bytes"))
            return None
        assert isinstance(found, Format)
        head, self._head = bytes(self._head), bytearray()
        self._next_try = 0
        if found is ZSTD:
            if self.compressed:
                self._stop(SessionFileError("a zstd stream inside a zstd stream"))
                return None
            self.compressed = True
            self._zstd = ZstdDecoder(lines=True)
            return head
        self._start(found)
        return head

    def _start(self, fmt: Format) -> None:
        self.format = fmt
        if fmt is EMPTY:
            return
        if not fmt.session:
            self._stop(SessionFileError(f"a {fmt.label}, not a session log"))
        elif fmt.container == "sqlite":
            self.needs_path = True
            self._whole = bytearray()  # the bytes fed so far, for a caller that has no path (``database_bytes``)
        elif fmt.container == "lines":
            if fmt.name == "session-jsonl":
                self._inner = LogLoader(strict=self.strict, max_line_bytes=self.max_line_bytes,
                                        pack_deltas=self.pack_deltas)
            else:
                reader = reader_of(fmt)(self.name, self.context)
                self._inner = LineLoader(reader, strict=self.strict, max_line_bytes=self.max_line_bytes)
            self.result = self._inner.result
        else:
            self._whole = bytearray()

    def _known(self, data: bytes | bytearray | memoryview) -> int:
        if self._done or self.result.error is not None or not data:
            return 0
        if self._inner is not None:
            added: int = self._inner.feed(data)
            return self._keyed(added)
        if self._whole is not None:
            self._whole += data
            if self.max_line_bytes is not None and len(self._whole) > self.max_line_bytes:
                assert self.format is not None
                self._stop(SessionFileError(f"{self.format.label} is longer than {self.max_line_bytes} bytes "
                                            "(--max-line-bytes)"))
        return 0

    def _stop(self, error: SessionFileError) -> int:
        self.result.error = error
        self._done = True
        self._whole = None
        return 0

    def database_bytes(self) -> bytes:
        """A SQLite database's bytes as fed (all of them once the caller fed the whole file)."""
        return bytes(self._whole or b"") if self.needs_path else b""

    def drop_records(self) -> None:
        """Forget the records read so far (a reader that only counts them, as the session list does); the parse
        goes on from where it was, counts included."""
        if type(self._inner) is LineLoader:
            self._inner.reader.out.drop()
        else:
            self.result.records.clear()
            if type(self._inner) is LogLoader:
                self._inner.lines_read.clear()

    def _keyed(self, added: int) -> int:
        """After the line loader took bytes: ``result`` is the main log's, or, with ``key``, the child session's a
        reader routed out of the file (Claude Code's inline sidechains); returns how many records were added."""
        inner = self._inner
        if self.key is None or type(inner) is not LineLoader:
            self.result = inner.result
            return added
        child = self._child(self.key)
        if child is None:
            self.result = LoadResult({"type": "session", "version": 0, "id": self.key}, [])
            if inner.result.error is not None:
                self.result.error = inner.result.error
            return 0
        before = len(self.result.records) if self.result.records is child.records else 0
        child.error = inner.result.error
        self.result = child
        return len(child.records) - before

    def _child(self, key: str) -> LoadResult | None:
        for log in self.children():
            if log.key == key:
                return log.result
        return None

    def keep_runs(self, on: bool) -> None:
        """Whether a row our own log's runs of delta lines are read into keeps the lines it was read from
        (``logfile.LogParser.keep_runs``), for a reader that hands them on as read (live follow)."""
        if type(self._inner) is LogLoader:
            self._inner.parser.keep_runs = on

    def lines_read(self) -> dict[int, bytes]:
        """The lines kept (``keep_runs``) of the rows read since the last call, by index in ``result.records``;
        forgotten here."""
        if type(self._inner) is not LogLoader or not self._inner.lines_read:
            return {}
        kept, self._inner.lines_read = self._inner.lines_read, {}
        return kept

    def session(self, key: str | None) -> LoadResult:
        """The session named ``key`` as read so far (None: ``result``), for a reader that serves every session of
        the file from one loader: a session a line format's reader routed out (an inline sidechain; an empty one
        until its first record), or one of a document or zip format's once finished; a key the finished file does
        not hold is a result whose error says so."""
        if key is None or key == self.key:
            return self.result
        if self.sessions is not None:
            found = next((s.result for s in self.sessions if s.key == key), None)
            if found is not None:
                return found
        elif type(self._inner) is LineLoader:
            child = self._child(key)
            if child is not None:
                child.error = self._inner.result.error
                return child
            if not self._done:
                pending = LoadResult({"type": "session", "version": 0, "id": key}, [])
                pending.error = self._inner.result.error
                return pending
        elif not self._done:
            return LoadResult()
        missing = LoadResult()
        holds = ", ".join(s.key for s in (self.sessions or [])[:20]) or "none"
        where = f"this {self.format.label} (it holds: {holds})" if self.format is not None and \
            self.format.container != "lines" else "this file"
        missing.error = SessionFileError(f"no session {key!r} in {where}")
        return missing

    def children(self) -> list[SessionLog]:
        """The sessions a line format's reader routed out of the file besides its main log (inline sidechains)."""
        inner = self._inner
        if type(inner) is not LineLoader:
            return []
        logs = getattr(inner.reader, "children", None)
        return list(logs) if isinstance(logs, list) else []

    def close_tail(self) -> int:
        """Close what the current end of a line format's file leaves open (an idle live file); else nothing."""
        if type(self._inner) is LineLoader and not self._done:
            return self._keyed(self._inner.close_tail())
        return 0

    def finish(self) -> LoadResult:
        """The input is complete: undecided bytes are detected as a whole file, a line format reads its last line,
        a document or zip format is read now."""
        if self._done:
            return self.result
        if self._zstd is not None:
            try:
                self._zstd.finish()
            except ZstdStreamError as exc:
                if self._inner is not None:
                    self.result = self._inner.finish()
                self._stop(SessionFileError(exc.message))
                return self.result
        if self.format is None and self.result.error is None:
            if not self._head:
                self._start(EMPTY)
            else:
                head = self._held(b"", complete=True)
                if head is not None:
                    self._known(head)
        self._done = True
        fmt = self.format
        if self.result.error is not None or fmt is None:
            return self.result
        if fmt is EMPTY:
            self.result = empty_result(self.name)
        elif self._inner is not None:
            self._inner.finish()
            self._keyed(0)
            children = self.children()
            if children:
                main = self._inner.result
                self.sessions = [SessionLog("", None, main), *children]
                if self.key is not None and self._child(self.key) is None:
                    self.result = LoadResult()
                    self.result.error = SessionFileError(f"no session {self.key!r} in this file")
        elif self._whole is not None and not self.needs_path:
            self._read_whole(fmt, bytes(self._whole))
            self._whole = None
        return self.result

    def _read_whole(self, fmt: Format, data: bytes) -> None:
        try:
            sessions: list[SessionLog] = reader_of(fmt)(data, self.name)
        except SourceError as exc:
            self.result = LoadResult()
            self.result.error = exc
            self.sessions = []
            return
        self.sessions = sessions
        chosen = sessions[0] if sessions else None
        if self.key is not None:
            chosen = next((s for s in sessions if s.key == self.key), None)
            if chosen is None:
                self.result = LoadResult()
                keys = ", ".join(s.key for s in sessions[:20]) or "none"
                self.result.error = SessionFileError(f"no session {self.key!r} in this {fmt.label} (it holds: {keys})")
                return
        self.result = chosen.result if chosen is not None else empty_result(self.name)
