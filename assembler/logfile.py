"""Session log parsing, sans-I/O (h11's way): bytes in with ``feed``, one parsed item at a time out of
``next_event``; the parser owns its buffer and the carry of a partial line.

Rules: line 1 (the first non-blank line) is the session header; every later line is one storage record. A line whose
``type`` is a row tag is decoded once, straight into the row Structs of ``records`` (validated natively); any other
line is generic JSON, kept as written. Missing ``seq``/``time`` (``seq0``/``time0``) are rebuilt as the
projected-fixture rule says (PROTOCOL 2.3); present ones must continue the log. Numbers follow JS (PROTOCOL 2).
The first fault stops the parse and names its own line: everything valid before it has been handed out already. A
torn last line (no newline, not JSON) is skipped with a warning unless ``strict``. ``max_line_bytes`` (None: no
cap) turns a longer line into a fault instead of an ever-growing buffer.

``LogParser`` streams (one record at a time, nothing kept but the buffer); ``LogLoader`` drives it and keeps a
``LoadResult`` (records, counts, warnings, the fault) for the readers that want the whole log. With
``pack_deltas`` (for readers that repack what they read) a run of delta lines comes out as the one storage row
packing would make of it (``delta_lines.take_run``: only lines the line-by-line rules accept), not one record per
line; with ``keep_runs`` besides, such a row also carries the lines it was read from (``Record.lines_read``) when
each names its seq and time, so a reader that hands the log on line by line (live follow) sends them as read.
``check_record`` is the part of the rules every reader shares (a SQLite row goes through it too), which is
why the parser and it are one module of a little over 400 lines.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .chunk_rows import storage_row
from .delta_lines import take_run
from .errors import RecordDecodeError, SessionFileError
from .jsontext import NestingError, check_depth, decode_json
from .records import ROW_TYPES, StorageRecord, decode_storage_row, is_safe_integer

__all__ = [
    "NEED_DATA",
    "END",
    "DEFAULT_MAX_LINE_BYTES",
    "Header",
    "Record",
    "Skipped",
    "Fault",
    "LogEvent",
    "LogParser",
    "LoadResult",
    "check_record",
    "note_event",
    "LogLoader",
    "parse_session_bytes",
]


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEED_DATA: Final = _Sentinel("NEED_DATA")
"""``next_event``: no complete line is buffered; ``feed`` more (or ``feed_eof``)."""
END: Final = _Sentinel("END")
"""``next_event``: the input ended and everything was handed out, or a ``Fault`` stopped the parse."""


class Header:
    """The session header (line 1): a JSON object with ``type == "session"``."""

    __slots__ = ("value", "line")

    def __init__(self, value: dict[str, Any], line: int) -> None:
        self.value = value
        self.line = line


class Record:
    """One storage record: an event (generic JSON) or a row Struct; ``first`` its first seq, ``members`` how many
    logical events it holds; ``lines_read`` the lines a row of a run of delta lines was read from (``keep_runs``)."""

    __slots__ = ("value", "line", "first", "members", "lines_read")

    def __init__(self, value: StorageRecord, line: int, first: int, members: int) -> None:
        self.value = value
        self.line = line
        self.first = first
        self.members = members
        self.lines_read: bytes | None = None


class Skipped:
    """A line left out with a warning (a torn last line when not ``strict``)."""

    __slots__ = ("line", "message")

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message


class Fault:
    """The fault that stopped the parse; ``error`` names its line. ``next_event`` gives ``END`` after it."""

    __slots__ = ("error",)

    def __init__(self, error: RecordDecodeError) -> None:
        self.error = error


LogEvent = Header | Record | Skipped | Fault | _Sentinel

DEFAULT_MAX_LINE_BYTES: Final = 256 << 20
"""The line cap the file readers and the commands use unless told otherwise (``--max-line-bytes``)."""

_decode = msgspec.json.Decoder().decode
_WHITESPACE = frozenset(b" \t\r\n\f\v")
_ROW_MARK = b'-chunks"'  # every row tag ends so; a line without it cannot be a row unless its tag is escaped


def _invalid_json(exc: msgspec.DecodeError) -> str:
    text = str(exc)
    return "invalid UTF-8" if "UTF-8" in text else f"invalid JSON ({text})"


def _envelope_problem(value: dict[str, Any]) -> str | None:
    """What is wrong with an event's optional envelope fields (PROTOCOL 1.1), or None."""
    if "ignorable" in value and value["ignorable"] is not True:
        return f"field 'ignorable' must be true when present, got {value['ignorable']!r}"
    seqs = value.get("sourceEventSeqs", [])
    if type(seqs) is not list or not all(is_safe_integer(s) and s >= 0 for s in seqs):
        return f"field 'sourceEventSeqs' must be a list of safe integers >= 0, got {seqs!r}"[:300]
    return None


def check_record(value: dict[str, Any], next_seq: int) -> StorageRecord:
    """The rules every reader applies to one decoded storage record after the header, whatever held it (a JSONL
    line, a SQLite row): a string ``type``; a row tag makes the row Struct (``seq0``/``time0`` rebuilt when missing,
    PROTOCOL 2.3); anything else row-like is refused; an event's missing ``seq``/``time`` are rebuilt (``next_seq``,
    time 0) and present ones must be safe integers; the envelope fields (PROTOCOL 1.1). Whether the seq continues
    the log is the caller's check.

    Raises:
        SessionFileError, ChunkRowError: what is wrong (with the seq when it is known, no line: the caller says
            where).
    """
    rtype = value.get("type")
    if type(rtype) is not str:
        raise SessionFileError(f"record has no string 'type' (got {rtype!r})"[:300])
    if rtype in ROW_TYPES:
        if "seq0" not in value or "time0" not in value:
            value = {"type": rtype, "seq0": value.get("seq0", next_seq), "time0": value.get("time0", 0),
                     **{k: v for k, v in value.items() if k not in ("type", "seq0", "time0")}}
        return storage_row(value)
    if rtype.startswith("chunkrow/") or ("seq" not in value and ("seq0" in value or "time0" in value)):
        # Row-like but not a storage row: as an event it would take one seq where its members hold many (and
        # fail the next line), or reach the fold as a row that is not one.
        raise SessionFileError(
            f"unknown row type {rtype!r} (a storage row is text-chunks, reasoning-chunks or tool-call-chunks "
            "with seq0/time0; chunkrow/* is the wire form)")
    if "seq" not in value or "time" not in value:
        value = {"type": rtype, "seq": value.get("seq", next_seq), "time": value.get("time", 0),
                 **{k: v for k, v in value.items() if k not in ("type", "seq", "time")}}
    seq, time = value["seq"], value["time"]
    if not is_safe_integer(seq) or seq < 0:
        raise SessionFileError(f"seq must be a safe integer >= 0, got {seq!r}"[:300])
    if not is_safe_integer(time):
        raise SessionFileError(f"time must be a safe integer, got {time!r}"[:300], seq=int(seq))
    if "ignorable" in value or "sourceEventSeqs" in value:
        problem = _envelope_problem(value)
        if problem is not None:
            raise SessionFileError(problem, seq=int(seq))
    return value


class LogParser:
    """The sans-I/O session log parser. ``feed`` bytes in any slices, ``feed_eof`` at the end of the input, and call
    ``next_event`` until it returns ``NEED_DATA`` (feed more) or ``END``.

    ``lines`` is the number of lines consumed so far. Nothing is kept between events but the unconsumed bytes.
    """

    def __init__(self, *, strict: bool = False, max_line_bytes: int | None = None, pack_deltas: bool = False) -> None:
        self.strict = strict
        self.max_line_bytes = max_line_bytes
        self.pack_deltas = pack_deltas
        self.keep_runs = False
        self._runs_from = 0  # with pack_deltas: no run of delta lines starts in ``_buf`` before this offset
        self.lines = 0
        self.next_seq = 0
        self._buf: bytes | bytearray = b""
        self._pos = 0
        self._scan = 0  # no newline in ``_buf`` before this offset
        self._eof = False
        self._done = False
        self._header = False

    @property
    def buffered(self) -> int:
        """Bytes fed but not parsed yet (the partial last line)."""
        return len(self._buf) - self._pos

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Add the next bytes of the log. Raises ``RuntimeError`` after ``feed_eof``."""
        if self._eof:
            raise RuntimeError("feed after feed_eof")
        if not data or self._done:
            return
        buf, pos = self._buf, self._pos
        if pos >= len(buf):
            self._buf = data if type(data) is bytes else bytes(data)  # nothing carried: no copy of a bytes slice
            self._scan = self._runs_from = 0
        elif pos == 0 and type(buf) is bytearray:
            buf += data  # a long line growing: appended in place (amortized), never copied whole per feed
        else:
            carry = bytearray(memoryview(buf)[pos:])
            carry += data
            self._buf = carry
            self._scan = max(0, self._scan - pos)
            self._runs_from = max(0, self._runs_from - pos)
        self._pos = 0

    def feed_eof(self) -> None:
        """The input is complete: a last line without a newline becomes parseable (the torn-line rule)."""
        self._eof = True

    def next_event(self) -> LogEvent:
        """The next item: ``Header``, ``Record``, ``Skipped``, ``Fault`` (then ``END``), ``NEED_DATA`` or ``END``."""
        while not self._done:
            buf, pos = self._buf, self._pos
            if self.pack_deltas and self._header and pos >= self._runs_from and pos < len(buf):
                run = take_run(buf, pos, self.next_seq, self.max_line_bytes)
                if type(run) is int:  # no run here: the lines up to there go one by one (at least this one)
                    self._runs_from = max(run, pos + 1)
                else:
                    row, lines, self._pos = run  # type: ignore[misc]
                    self._scan = max(self._scan, self._pos)
                    self.lines += lines
                    taken = self._record(row, self.lines - lines + 1, row.seq, row.members, "seq0")
                    if self.keep_runs and type(taken) is Record:
                        span = bytes(buf[pos:self._pos])
                        # Each line names its seq and time (a key cannot occur unescaped inside a string, and a
                        # delta line has no nested key of those names) and holds no carriage return (an event
                        # stream's line end): the lines are the events as they are.
                        if span.count(b'"seq":') == lines and span.count(b'"time":') == lines and b"\r" not in span:
                            taken.lines_read = span
                    return taken
            end = buf.find(b"\n", max(pos, self._scan))  # the carried part of a long line is searched once
            if end == -1:
                self._scan = len(buf)
                if pos < len(buf) and self.max_line_bytes is not None and len(buf) - pos > self.max_line_bytes:
                    return self._fault(SessionFileError(
                        f"line is longer than {self.max_line_bytes} bytes", line=self.lines + 1))
                if not self._eof:
                    return NEED_DATA
                if pos >= len(buf):
                    self._done = True
                    return END
                terminated = False
                stop = next_pos = len(buf)
            else:
                terminated = True
                next_pos = end + 1
                stop = end - 1 if end > pos and buf[end - 1] == 13 else end
            if self.max_line_bytes is not None and stop - pos > self.max_line_bytes:
                return self._fault(SessionFileError(
                    f"line is longer than {self.max_line_bytes} bytes", line=self.lines + 1))
            self._pos = next_pos
            self.lines += 1
            if stop == pos or (buf[pos] in _WHITESPACE and not bytes(buf[pos:stop]).strip()):
                continue
            with memoryview(buf)[pos:stop] as raw:  # released at once: a bytearray buffer may grow in ``feed``
                event = self._line(raw, terminated, self._header and buf.find(_ROW_MARK, pos, stop) != -1)
            if event is not None:
                return event
        return END

    def _fault(self, error: RecordDecodeError) -> Fault:
        self._done = True
        self._buf, self._pos = b"", 0
        return Fault(error)

    def _line(self, raw: memoryview, terminated: bool, maybe_row: bool) -> LogEvent | None:
        lineno = self.lines
        try:
            check_depth(raw)
        except NestingError as exc:
            return self._fault(SessionFileError(str(exc), line=lineno))
        row: Any = None
        if maybe_row:
            try:
                row = decode_storage_row(raw)
            except (msgspec.ValidationError, msgspec.DecodeError):
                row = None  # not a row after all, or a malformed one: the generic path below says which
        if row is not None:
            return self._record(row, lineno, row.seq, row.members, "seq0")
        try:
            value = decode_json(raw, _decode)
        except msgspec.DecodeError as exc:
            reason = _invalid_json(exc)
            if not terminated and not self.strict:
                # A crash mid-write leaves a partial last line: keep the rest and say where.
                return Skipped(lineno, f"line {lineno}: torn last line ignored ({reason})")
            suffix = " (torn last line)" if not terminated else ""
            return self._fault(SessionFileError(f"{reason}{suffix}", line=lineno))
        if type(value) is not dict:
            return self._fault(SessionFileError(f"expected a JSON object, got {type(value).__name__}", line=lineno))
        if not self._header:
            if value.get("type") != "session":
                return self._fault(SessionFileError(
                    f"first line is not a session header (type {value.get('type')!r}, expected 'session')",
                    line=lineno))
            self._header = True
            return Header(value, lineno)
        try:
            record = check_record(value, self.next_seq)
        except RecordDecodeError as exc:
            return self._fault(type(exc)(exc.message, line=lineno, seq=exc.seq))
        if type(record) is dict:
            return self._record(record, lineno, record["seq"], 1, "seq")
        return self._record(record, lineno, record.seq, record.members, "seq0")  # type: ignore[union-attr]

    def _record(self, value: StorageRecord, lineno: int, first: Any, members: int, name: str) -> LogEvent:
        expected = self.next_seq
        if first != expected:
            what = "row seq0" if name == "seq0" else "seq"
            return self._fault(SessionFileError(
                f"{what} {first} does not continue the log (expected seq {expected})", line=lineno, seq=int(first)))
        self.next_seq = expected + members
        return Record(value, lineno, expected, members)


class LoadResult:
    """What a parse produced. ``error`` is the fault that stopped it; ``records`` hold everything before it."""

    __slots__ = ("header", "records", "event_count", "row_count", "row_members", "lines", "warnings", "error")

    def __init__(self, header: dict[str, Any] | None = None, records: list[StorageRecord] | None = None) -> None:
        self.header = header
        self.records: list[StorageRecord] = [] if records is None else records
        self.event_count = 0
        self.row_count = 0
        self.row_members = 0
        self.lines = 0
        self.warnings: list[str] = []
        self.error: RecordDecodeError | None = None

    def __repr__(self) -> str:
        return (f"LoadResult(records={len(self.records)}, events={self.event_count}, lines={self.lines}, "
                f"error={self.error!r})")

    @property
    def ok(self) -> bool:
        return self.error is None


def note_event(result: LoadResult, event: LogEvent) -> bool:
    """Counts a parsed record into ``result`` (not keeping it) and takes a header, a skipped line or a fault; False
    for anything else (``NEED_DATA``, ``END``)."""
    if type(event) is Record:
        result.event_count += event.members
        if type(event.value) is not dict:
            result.row_count += 1
            result.row_members += event.members
    elif type(event) is Header:
        result.header = event.value
    elif type(event) is Skipped:
        result.warnings.append(event.message)
    elif type(event) is Fault:
        result.error = event.error
    else:
        return False
    return True


class LogLoader:
    """A ``LogParser`` whose records are kept: ``feed`` slices, ``finish`` at the end; ``result`` at any time.

    Once ``result.error`` is set (by the parser, or by the caller for a fault of its own such as a damaged
    compressed stream) nothing more is parsed.
    """

    def __init__(self, *, strict: bool = False, max_line_bytes: int | None = None, pack_deltas: bool = False) -> None:
        self.parser = LogParser(strict=strict, max_line_bytes=max_line_bytes, pack_deltas=pack_deltas)
        self.result = LoadResult()
        self.lines_read: dict[int, bytes] = {}  # ``keep_runs``: index in ``result.records`` -> the lines of that row

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Parse the next bytes; returns how many records they completed (the new tail of ``result.records``)."""
        if self.result.error is not None:
            return 0
        self.parser.feed(data)
        return self._drain()

    def finish(self) -> LoadResult:
        """Close the parse (a last line without a newline is parsed now). An input with no header is an error."""
        result = self.result
        if result.error is None:
            self.parser.feed_eof()
            self._drain()
        if result.error is None and result.header is None:
            result.error = SessionFileError("empty file: expected a session header", line=max(result.lines, 1))
        return result

    def _drain(self) -> int:
        parser, result = self.parser, self.result
        records = result.records
        before = len(records)
        while True:
            event = parser.next_event()
            if not note_event(result, event):
                break
            if type(event) is Record:
                if event.lines_read is not None:
                    self.lines_read[len(records)] = event.lines_read
                records.append(event.value)
        result.lines = parser.lines
        return len(records) - before


def parse_session_bytes(data: bytes | bytearray | memoryview, *, strict: bool = False) -> LoadResult:
    """Parse a whole session log held in memory."""
    loader = LogLoader(strict=strict)
    loader.feed(data)
    return loader.finish()
