"""Local session files (``.jsonl``, ``.jsonl.zst``) read in slices, so the worker can report progress on a big file.

Rules: slices are fed in order to the log parser, which carries a line split across slices; storage rows stay rows
(decoded once into their Structs, renamed to wire rows later, never expanded). The parse stops at the first fault and
keeps everything before it.
Zstd decompresses incrementally (``store.zstd.ZstdDecoder``): a damaged stream is an error that keeps what came
before it. No I/O: bytes come in.
"""

from __future__ import annotations

import time
from typing import Any

from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult, LogLoader
from ..store.zstd import ZstdDecoder, ZstdStreamError
from .updates import elapsed_ms

__all__ = [
    "FileLoad",
]

class FileLoad:
    """A local session file parsed in slices: ``feed`` each slice in order, then ``finish``.

    The parse stops at the first fault and keeps everything before it (``LoadResult.error`` names the line).
    """

    def __init__(self, name: str = "", size: int = 0) -> None:
        self.name = name
        self.size = size
        self.loader = LogLoader(max_line_bytes=DEFAULT_MAX_LINE_BYTES)
        self.zstd = ZstdDecoder(lines=True) if name.endswith(".zst") else None
        self.bytes_read = 0
        self.failure: str | None = None
        self.parse_ms = 0.0  # time spent in feed and finish (decompression and parsing)

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
            if chunk:
                self.loader.feed(chunk)
        else:
            self.loader.feed(data)
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
        return self.loader.finish()

    def progress(self) -> dict[str, Any]:
        """How far the parse got: ``{bytes, size, lines, events, records, error}``."""
        result = self.loader.result
        return {"bytes": self.bytes_read, "size": self.size, "lines": result.lines, "events": result.event_count,
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
