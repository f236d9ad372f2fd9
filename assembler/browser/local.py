"""Local session files (``.jsonl``, ``.jsonl.zst``) read in slices, so the worker can report progress on a big file.

Rules: slices are fed in order; a line split across slices is carried over; storage rows stay rows (the parser
renames them to wire rows, never expands them). The parse stops at the first fault and keeps everything before it.
Zstd decompresses incrementally (``store.zstd.ZstdDecoder``): a damaged stream is an error that keeps what came
before it. No I/O: bytes come in.
"""

from __future__ import annotations

import time
from typing import Any

from ..logfile import LoadResult, SessionLogParser
from ..store.zstd import ZstdDecoder, ZstdStreamError
from .updates import elapsed_ms

__all__ = [
    "FileLoad",
]

class FileLoad:
    """A local session file parsed in slices: ``feed`` each slice in order, then ``finish``.

    Lines are split on ``\\n`` (a ``\\r`` before it is dropped); a line split across slices is carried over. The parse
    stops at the first fault and keeps everything before it (``LoadResult.error`` names the line).
    """

    def __init__(self, name: str = "", size: int = 0) -> None:
        self.name = name
        self.size = size
        self.parser = SessionLogParser(source=name)
        self.zstd = ZstdDecoder(lines=True) if name.endswith(".zst") else None
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
            except ZstdStreamError as exc:  # everything before the damage was returned by the earlier feeds
                self.failure = str(exc)
                return
        else:
            chunk = bytes(data)
        if chunk:
            self._lines(chunk)
        self.parse_ms += elapsed_ms(t0)

    def finish(self) -> LoadResult:
        """Parse what is left (a last line without a newline) and close the parse."""
        t0 = time.perf_counter()
        try:
            return self._finish()
        finally:
            self.parse_ms += elapsed_ms(t0)

    def _finish(self) -> LoadResult:
        if self.zstd is not None and self.failure is None:
            try:
                self.zstd.finish()
            except ZstdStreamError as exc:
                self.failure = str(exc)
        if self._carry and self.parser.result.error is None:
            self._lineno += 1
            line = self._carry[:-1] if self._carry[-1:] == b"\r" else self._carry
            self.parser.feed_line(line, self._lineno, terminated=False)
            self._carry = b""
        return self.parser.finish()

    def progress(self) -> dict[str, Any]:
        """How far the parse got: ``{bytes, size, lines, events, records, error}``."""
        result = self.parser.result
        return {"bytes": self.bytes_read, "size": self.size, "lines": self._lineno, "events": result.event_count,
                "records": len(result.records), "error": None if result.error is None else str(result.error)}

    def outcome(self, result: LoadResult) -> dict[str, Any]:
        """What the finished load reports beside the page: ``file`` (name and counts), ``warnings`` (skipped torn
        lines) and ``error`` (None, a decompression failure, or the faulty line's ``{message, line, seq, text}``)."""
        value: dict[str, Any] = {
            "file": {"name": self.name, "bytes": self.bytes_read, "lines": result.lines,
                     "events": result.event_count, "records": len(result.records)},
            "warnings": list(result.warnings),
            "error": None,
        }
        if self.failure is not None:
            value["error"] = {"where": "file", "message": self.failure, "line": None, "seq": None}
        elif result.error is not None:
            err = result.error
            value["error"] = {"where": "file", "message": err.message, "line": err.line, "seq": err.seq,
                              "text": str(err)}
        return value
