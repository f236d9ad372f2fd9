"""Session log parsing, sans-I/O: lines of bytes in, a header and storage records out.

Rules: line 1 (the first non-blank line) is the session header; every later line is one storage record, rows kept
packed. Missing ``seq``/``time`` (``seq0``/``time0``) are rebuilt as the projected-fixture rule says (PROTOCOL 2.3);
present ones must continue the log. The first fault stops the parse: everything valid before it is kept and the
fault is reported with its line number. A torn last line (no newline, not JSON) is a warning unless strict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .chunk_rows import ROW_TAGS, row_member_count, validate_storage_row
from .errors import ChunkRowError, RecordDecodeError, SessionFileError
from .records import MAX_SAFE_INTEGER

__all__ = ["LoadResult", "SessionLogParser", "parse_session_bytes", "split_lines"]

_decode = msgspec.json.Decoder().decode
_WHITESPACE = frozenset(b" \t\r\n\f\v")


@dataclass
class LoadResult:
    """What a parse produced. ``error`` is the fault that stopped it; ``records`` hold everything before it."""

    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    event_count: int = 0
    row_count: int = 0
    row_members: int = 0
    lines: int = 0
    warnings: list[str] = field(default_factory=list)
    error: RecordDecodeError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _safe_int(value: object) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


class SessionLogParser:
    """Feed the lines of one session log in order; read ``result`` at any time.

    ``feed_line`` returns False once a fault has stopped the parse (later lines are ignored).
    """

    def __init__(self, *, strict: bool = False, source: str = "") -> None:
        self.strict = strict
        self.source = source
        self.result = LoadResult()
        self._next_seq = 0
        self._pending_torn: tuple[int, str] | None = None

    def _fail(self, exc: RecordDecodeError) -> bool:
        self.result.error = exc
        return False

    def feed_line(self, raw: bytes | memoryview, lineno: int, *, terminated: bool = True) -> bool:
        """Parse one line (without its newline). ``terminated`` is False for a final line with no newline."""
        result = self.result
        if result.error is not None:
            return False
        result.lines = lineno
        if len(raw) == 0 or (raw[0] in _WHITESPACE and not bytes(raw).strip()):
            return True
        try:
            value = _decode(raw)
        except msgspec.DecodeError as exc:
            text = str(exc)
            reason = "invalid UTF-8" if "UTF-8" in text else f"invalid JSON ({text})"
            if not terminated and not self.strict:
                # A crash mid-write leaves a partial last line: keep the rest and say where.
                result.warnings.append(f"line {lineno}: torn last line ignored ({reason})")
                return True
            suffix = " (torn last line)" if not terminated else ""
            return self._fail(SessionFileError(f"{reason}{suffix}", line=lineno))
        if type(value) is not dict:
            return self._fail(SessionFileError(f"expected a JSON object, got {type(value).__name__}", line=lineno))
        if result.header is None:
            if value.get("type") != "session":
                return self._fail(SessionFileError(
                    f"first line is not a session header (type {value.get('type')!r}, expected 'session')",
                    line=lineno))
            result.header = value
            return True
        return self._record(value, lineno)

    def _record(self, value: dict[str, Any], lineno: int) -> bool:
        result = self.result
        rtype = value.get("type")
        if type(rtype) is not str:
            return self._fail(SessionFileError(f"record has no string 'type' (got {rtype!r})", line=lineno))
        expected = self._next_seq
        if rtype in ROW_TAGS:
            if "seq0" not in value or "time0" not in value:
                value = {"type": rtype, "seq0": value.get("seq0", expected), "time0": value.get("time0", 0),
                         **{k: v for k, v in value.items() if k not in ("type", "seq0", "time0")}}
            try:
                validate_storage_row(value)
            except ChunkRowError as exc:
                return self._fail(ChunkRowError(exc.message, line=lineno, seq=exc.seq))
            if value["seq0"] != expected:
                return self._fail(SessionFileError(
                    f"row seq0 {value['seq0']} does not continue the log (expected seq {expected})",
                    line=lineno, seq=value["seq0"]))
            n = row_member_count(value)
            result.row_count += 1
            result.row_members += n
        else:
            if "seq" not in value or "time" not in value:
                value = {"type": rtype, "seq": value.get("seq", expected), "time": value.get("time", 0),
                         **{k: v for k, v in value.items() if k not in ("type", "seq", "time")}}
            seq, time = value["seq"], value["time"]
            if not _safe_int(seq) or seq < 0:
                return self._fail(SessionFileError(f"seq must be a safe integer >= 0, got {seq!r}", line=lineno))
            if not _safe_int(time):
                return self._fail(SessionFileError(f"time must be a safe integer, got {time!r}", line=lineno,
                                                   seq=seq))
            if seq != expected:
                return self._fail(SessionFileError(
                    f"seq {seq} does not continue the log (expected seq {expected})", line=lineno, seq=seq))
            n = 1
        result.records.append(value)
        result.event_count += n
        self._next_seq = expected + n
        return True

    def finish(self) -> LoadResult:
        """Close the parse: an input with no header at all is an error."""
        result = self.result
        if result.error is None and result.header is None:
            result.error = SessionFileError("empty file: expected a session header", line=max(result.lines, 1))
        return result


def split_lines(data: bytes | memoryview) -> Iterable[tuple[memoryview, int, bool]]:
    """Yield ``(line, lineno, terminated)`` for each line of ``data`` without copying it."""
    raw = data if isinstance(data, bytes) else bytes(data)
    start = 0
    lineno = 0
    n = len(raw)
    view = memoryview(raw)
    while start < n:
        end = raw.find(b"\n", start)
        lineno += 1
        if end == -1:
            yield view[start:n], lineno, False
            return
        stop = end - 1 if end > start and raw[end - 1] == 13 else end
        yield view[start:stop], lineno, True
        start = end + 1


def parse_session_bytes(data: bytes | memoryview, *, strict: bool = False) -> LoadResult:
    """Parse a whole session log held in memory (the browser's local-file path)."""
    parser = SessionLogParser(strict=strict)
    for line, lineno, terminated in split_lines(data):
        if not parser.feed_line(line, lineno, terminated=terminated):
            break
    return parser.finish()
