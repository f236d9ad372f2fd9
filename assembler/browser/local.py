"""Local session files of any format in ``assembler.formats`` (ours in JSONL, ``.jsonl.zst`` or SQLite; Claude Code,
Codex, Inspect, Gemini CLI, SWE-agent, mini-swe-agent, OpenHands) read in slices, so the worker can report progress
on a big file.

Rules: slices go in order to ``store.loader.AnyLoader``, which detects the format from the first bytes and carries a
line split across slices; storage rows stay rows (decoded once into their Structs, renamed to wire rows later, never
expanded). The parse stops at the first fault and keeps everything before it. Rows of our own logs are repacked as
the slices arrive (``chunk_rows.repack_records`` over the records that can still change): a log written one delta
per line is held as one row per block, not one dict per event, so opening a big unpacked log stays small; the
records are the canonical packing of the file's events (packed = scalar). Zstd decompresses incrementally: a damaged
stream is an error that keeps what came before it. A SQLite database cannot be parsed in slices: its bytes are
collected and, at ``finish``, read from those bytes in memory (``store.sqlite.read_sqlite_image``, as the server
reads a served database); a file that is not a session database is an error naming the file. A file holding
several sessions (an Inspect log) shows the one named by ``key`` (the first by default) and lists them all in its
outcome. ``context`` is the reader's (a file of an open folder:
``folder.LocalFolder.context``). Bytes come in."""

from __future__ import annotations

import time
from typing import Any

from ..chunk_rows import MIN_RUN, repack_records
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from ..store.loader import AnyLoader
from .updates import elapsed_ms

__all__ = [
    "FileLoad",
]


class FileLoad:
    """A local session file parsed in slices: ``feed`` each slice in order, then ``finish``.

    The parse stops at the first fault and keeps everything before it (``LoadResult.error`` names the line).
    """

    def __init__(self, name: str = "", size: int = 0, key: str | None = None,
                 context: dict[str, Any] | None = None) -> None:
        self.name = name
        self.size = size
        self.key = key
        self.loader = AnyLoader(name or "session.jsonl", max_line_bytes=DEFAULT_MAX_LINE_BYTES, pack_deltas=True,
                                key=key, context=context)  # our rows are repacked below anyway
        self.bytes_read = 0
        self.failure: str | None = None
        self.parse_ms = 0.0  # time spent in feed and finish (decompression, parsing and repacking)
        self.settled = 0  # records before this index are final: no later record can join them

    @property
    def ours(self) -> bool:
        fmt = self.loader.format
        return fmt is not None and fmt.name == "session-jsonl"

    def _repack(self, final: bool = False) -> None:
        """Repack the records that can still change. In a canonical packing only the last run (one row, or fewer
        than ``MIN_RUN`` events) can be continued by later records, so the final prefix grows as we go. Only our
        own logs hold deltas; another harness's log never does."""
        if not self.ours:
            return
        records = self.loader.result.records
        start = self.settled
        if len(records) - start < MIN_RUN and not final:
            return
        records[start:] = repack_records(records[start:])
        self.settled = max(start, len(records) - MIN_RUN)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Parse one more slice of the file's bytes."""
        t0 = time.perf_counter()
        self.bytes_read += len(data)
        self.loader.feed(data)  # a SQLite database is collected there (``database_bytes``)
        self._repack()
        self.parse_ms += elapsed_ms(t0)

    def finish(self) -> LoadResult:
        """Parse what is left (a last line without a newline) and close the parse."""
        t0 = time.perf_counter()
        try:
            return self._finish()
        finally:
            self.parse_ms += elapsed_ms(t0)

    def _finish(self) -> LoadResult:
        if self.loader.needs_path:
            return self._finish_sqlite(self.loader.database_bytes())
        self.loader.finish()
        self._repack(final=True)
        return self.loader.result

    def _finish_sqlite(self, data: bytes) -> LoadResult:
        from ..store.sqlite import StoreError, read_sqlite_image  # sqlite3 is imported only when a database is opened

        try:
            result = read_sqlite_image(self.name or "the database", bytearray(data))
        except StoreError as exc:
            self.failure = str(exc)
            result = LoadResult()
        self.loader.result = result
        return result

    def so_far(self) -> list[Any]:
        """The records read so far, for a preview while the rest is read: a copy (the parse goes on appending to,
        and for our own logs repacking the tail of, its own list), in the canonical packing. Empty for a format
        read only whole (a SQLite database, a zip, a JSON document) and once the parse has failed."""
        result = self.loader.result
        if self.failure is not None or result.error is not None or self.loader.needs_path:
            return []
        records = result.records
        if not self.ours:
            return list(records)
        return [*records[:self.settled], *repack_records(records[self.settled:])]

    def progress(self) -> dict[str, Any]:
        """How far the parse got: ``{bytes, size, lines, events, records, error}``."""
        result = self.loader.result
        return {"bytes": self.bytes_read, "size": self.size, "lines": result.lines, "events": result.event_count,
                "records": len(result.records), "error": None if result.error is None else str(result.error)}

    def outcome(self, result: LoadResult) -> dict[str, Any]:
        """What the finished load reports beside the page: ``file`` (name and counts), ``warnings`` (skipped torn
        lines) and ``error`` (None, a decompression failure, or the faulty line's ``{message, line, seq, text}``;
        ``nothingRead`` when the file is of no known format)."""
        fmt = self.loader.format
        value: dict[str, Any] = {
            "file": {"name": self.name, "bytes": self.bytes_read, "lines": result.lines,
                     "events": result.event_count, "records": len(result.records),
                     "format": None if fmt is None else fmt.name, "harness": None if fmt is None else fmt.harness},
            "warnings": list(result.warnings),
            "error": None,
        }
        sessions = self.loader.sessions
        if sessions is not None and len(sessions) > 1:
            value["sessions"] = [{"key": s.key, "label": s.label, "events": s.result.event_count,
                                  "error": None if s.result.error is None else str(s.result.error)}
                                 for s in sessions]
            value["session"] = self.key if self.key is not None else sessions[0].key
        if self.failure is not None:
            value["error"] = {"where": "file", "message": self.failure, "line": None, "seq": None}
        elif result.error is not None:
            err = result.error
            value["error"] = {"where": "file", "message": err.message, "line": err.line, "seq": err.seq,
                              "text": str(err)}
            if fmt is None:
                value["error"]["nothingRead"] = True  # no format recognised: not one record was read
        return value
