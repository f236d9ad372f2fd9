"""A JSONL format's reader (``LineReader``) and the loader that feeds it a file in any slices (``LineLoader``), with
our own log loader's interface (FORMATS.md §2.9, §2.10).

Rules: lines split on ``\\n`` only (one trailing ``\\r`` stripped), a BOM skipped, blank lines skipped; a line that is
not JSON, not an object, nested too deep or too long stops the parse naming its line, everything before it kept; a
JSON object the reader's Struct refuses is kept raw with a warning. An unterminated last line waits while following
and is a record at the end if it parses (else a warning, or an error when ``strict``). Pure: bytes in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from ..errors import SessionFileError
from ..jsontext import NestingError, check_depth, decode_json
from ..logfile import LoadResult
from ._builder import LogBuilder
from ._source import SourceError, json_type, line_origin

__all__ = ["LineReader", "LineLoader", "read_lines"]


class LineReader:
    """A JSONL format's mapping. ``record`` gets each non-blank line in file order (its number and bytes) and writes
    events with ``self.out`` (a ``LogBuilder``); it decodes the line first, with ``decode`` and its own msgspec
    Struct. ``close_tail`` closes what the input's current end leaves open (the newest response, while a file is
    idle); ``finish`` is the end of the input.

    Failures: a line that is not JSON (``msgspec.DecodeError``) stops the parse with its line number, as a record
    that makes the log unusable does (``SourceError``); a JSON object the Struct refuses (``msgspec.ValidationError``:
    a field of a type this reader does not know) is kept as an ``interop/raw`` record with a warning naming the line
    and the field, and the parse goes on.
    """

    format: ClassVar[str] = ""

    def __init__(self, file: str, context: dict[str, Any] | None = None) -> None:
        """``file`` is the file's name (a path relative to the folder being read, or a base name); its stem is the
        session id unless the reader knows better. ``context`` is what the edge knows from beside the file (a
        folder view's sidecars: a Claude Code subagent's ``.meta.json``, the parent session's id); readers never
        read files themselves."""
        self.file = file
        self.context: dict[str, Any] = context or {}
        stem = file.rsplit("/", 1)[-1]
        self.out = LogBuilder(self.format, stem[:-6] if stem.endswith(".jsonl") else stem)

    @staticmethod
    def decode(raw: bytes, decoder: msgspec.json.Decoder[Any]) -> Any:
        """``raw`` decoded by ``decoder`` (a lone surrogate escape decodes too: ``jsontext.decode_json``).

        Raises:
            msgspec.DecodeError: not JSON. msgspec.ValidationError: the decoder's type refused it.
        """
        return decode_json(raw, decoder.decode, decoder.type)

    def record(self, line: int, raw: bytes) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Write what the reader holds back waiting for the next line (a Codex copy that may pair with it, Gemini
        messages not settled yet); the loader calls it when a bad line stops the input, so every valid record
        before the fault is kept. The default holds nothing back."""

    def close_tail(self) -> None:
        """Close an open response at the end of what was read (idempotent; the default has nothing open)."""

    def finish(self) -> None:
        self.close_tail()


_decode = msgspec.json.Decoder().decode


class LineLoader:
    """Feeds a ``LineReader`` its file in any slices, with our log reader's interface (``logfile.LogLoader``):
    ``feed`` returns how many events the bytes completed, ``finish`` closes the input and returns ``result``.

    Lines split on ``\\n`` only (one trailing ``\\r`` stripped, never ``str.splitlines``), a UTF-8 BOM is skipped,
    blank lines are skipped; a line that is not JSON, not an object, nested too deep or longer than
    ``max_line_bytes`` stops the parse with its line number. An unterminated last line waits for more bytes; at
    ``finish`` it is a record if it parses, else skipped with a warning (an error when ``strict``).
    """

    def __init__(self, reader: LineReader, *, strict: bool = False, max_line_bytes: int | None = None) -> None:
        self.reader = reader
        self.strict = strict
        self.max_line_bytes = max_line_bytes
        self.result = reader.out.result()
        self.lines = 0
        self._carry = bytearray()
        self._started = False
        self._done = False

    @property
    def buffered(self) -> int:
        """Bytes fed but not parsed yet (the partial last line)."""
        return len(self._carry)

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        if self._done or not data:
            return 0
        before = len(self.result.records)
        carry = self._carry
        carry += data
        start = 0
        while not self._done:
            end = carry.find(b"\n", start)
            if end == -1:
                break
            self._line(bytes(carry[start:end]), terminated=True)
            start = end + 1
        del carry[:start]
        if not self._done and self.max_line_bytes is not None and len(carry) > self.max_line_bytes:
            self._fail(SourceError(f"line is longer than {self.max_line_bytes} bytes", line=self.lines + 1))
        return self._settle(before)

    def close_tail(self) -> int:
        """Let the reader close what the current end leaves open; returns how many events that added."""
        before = len(self.result.records)
        if not self._done:
            self._guard(self.reader.close_tail)
        return self._settle(before)

    def finish(self) -> LoadResult:
        """The input is complete: the last line is parsed even without its newline and the reader closes."""
        before = len(self.result.records)
        if not self._done:
            if self._carry:
                tail, self._carry = bytes(self._carry), bytearray()
                self._line(tail, terminated=False)
            if not self._done:
                self._guard(self.reader.finish)
                self._done = True
        self._settle(before)
        return self.result

    def _settle(self, before: int) -> int:
        result = self.result
        result.event_count = self.reader.out.next_seq
        result.lines = self.lines
        return len(result.records) - before

    def _fail(self, error: SessionFileError) -> None:
        self.reader.out.end()
        try:
            self.reader.flush()
        except SessionFileError:  # a reader's own failure while writing what it held: the first error stands
            pass
        self.reader.out.end()
        self.result.error = error
        self._done = True
        self._carry = bytearray()

    def _guard(self, call: Callable[[], None]) -> None:
        try:
            call()
        except SessionFileError as exc:
            self._fail(exc)

    def _line(self, raw: bytes, *, terminated: bool) -> None:
        self.lines += 1
        lineno = self.lines
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not self._started and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            return
        self._started = True
        if self.max_line_bytes is not None and len(raw) > self.max_line_bytes:
            self._fail(SourceError(f"line is longer than {self.max_line_bytes} bytes", line=lineno))
            return
        try:
            check_depth(raw)
            self.reader.record(lineno, raw)
        except NestingError as exc:
            self._fail(SourceError(str(exc), line=lineno))
        except msgspec.ValidationError as exc:  # a DecodeError too: caught first
            self._unmapped(lineno, raw, str(exc))
        except msgspec.DecodeError as exc:
            reason = "invalid UTF-8" if "UTF-8" in str(exc) else f"invalid JSON ({exc})"
            if not terminated and not self.strict:
                self.reader.out.end()
                self.result.warnings.append(f"line {lineno}: torn last line ignored ({reason})")
                return
            self._fail(SourceError(reason + ("" if terminated else " (torn last line)"), line=lineno))
        except SessionFileError as exc:
            if exc.line is None:
                exc = SourceError(exc.message, line=lineno, seq=exc.seq)
            self._fail(exc)

    def _unmapped(self, lineno: int, raw: bytes, why: str) -> None:
        """A JSON line the reader's Struct refused: an error unless it is an object, else kept raw with a warning."""
        try:
            value = decode_json(raw, _decode)
        except msgspec.DecodeError as exc:
            self._fail(SourceError(f"invalid JSON ({exc})", line=lineno))
            return
        if type(value) is not dict:
            self._fail(SourceError(f"expected a JSON object, got {json_type(value)}", line=lineno))
            return
        out = self.reader.out
        out.end()
        rtype = value.get("type")
        rtype = rtype if type(rtype) is str else "?"
        out.begin(line_origin(lineno), rtype, None, value)
        out.end()
        self.result.warnings.append(f"line {lineno}: {rtype} record not understood ({why}); kept as a raw record")


def read_lines(reader: LineReader, data: bytes, *, strict: bool = False,
               max_line_bytes: int | None = None) -> LoadResult:
    """A whole JSONL file held in memory, read with ``reader``."""
    loader = LineLoader(reader, strict=strict, max_line_bytes=max_line_bytes)
    loader.feed(data)
    return loader.finish()
