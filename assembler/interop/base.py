"""What every reader of another harness's log shares (FORMATS.md §1-2): source errors with their location, the
``LogBuilder`` that writes our event model with dense seqs, and the ``LineLoader`` that feeds a JSONL format's
reader one decoded line at a time.

Rules: readers are sans-I/O (bytes in, our events out) and run unchanged on CPython and in Pyodide. Every source
record is kept: after the events made from it comes one ``interop/source`` event holding its original text and the
seqs it became, and a record that became nothing is an ``interop/raw`` event holding the decoded record (FORMATS
§2.2), so "Show records" shows the original and nothing is dropped. A time the source does not record is 0 (a
rebuilt time, as in a projected log of ours: no duration is ever shown from it). Surface events are appended to the
surface unless a compaction replaces it; the builder tracks the surface so a replace is always valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

import msgspec

from ..errors import SessionFileError
from ..jsontext import NestingError, check_depth, decode_json
from ..logfile import LoadResult

__all__ = [
    "SOURCE",
    "RAW",
    "SourceError",
    "line_origin",
    "member_origin",
    "pointer",
    "iso_ms",
    "unix_ms",
    "json_args",
    "LogBuilder",
    "LineReader",
    "LineLoader",
    "SessionLog",
    "json_type",
    "read_lines",
    "text_blocks",
]

SOURCE: Final = "interop/source"
"""The event after the events made from one source record: ``{format, recordType, origin, text, events}``."""
RAW: Final = "interop/raw"
"""A source record with no counterpart: ``{format, recordType, origin, record, duplicateOf?, notice?}``."""

_SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})


class SourceError(SessionFileError):
    """A record of another harness's log is unusable. ``line`` (JSONL formats) or ``member`` and ``pointer`` (a zip
    member and a JSON pointer inside it, or a pointer into a whole-document file) say where; the message says what
    was wrong. ``location`` is what goes between ``FILE:`` and ``: error:`` on the command line."""

    def __init__(self, message: str, line: int | None = None, seq: int | None = None, member: str | None = None,
                 pointer: str | None = None) -> None:
        super().__init__(message, line, seq)
        self.args = (message, line, seq, member, pointer)
        self.member = member
        self.pointer = pointer

    @property
    def location(self) -> str | None:
        if self.line is not None:
            return str(self.line)
        parts = [p for p in (self.member, self.pointer) if p]
        return ":".join(parts) if parts else None

    def __str__(self) -> str:
        where = self.location
        return f"{where}: {self.message}" if where and self.line is None else super().__str__()


def line_origin(line: int) -> dict[str, Any]:
    return {"line": line}


def member_origin(member: str | None, ptr: str) -> dict[str, Any]:
    """Where a record of a whole-document file (``member`` None) or of a zip member sits: a JSON pointer."""
    return {"pointer": ptr} if member is None else {"member": member, "pointer": ptr}


def pointer(*parts: str | int) -> str:
    """A JSON pointer (RFC 6901) from its reference tokens."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_ms(value: Any) -> int:
    """Epoch milliseconds of an ISO-8601 timestamp; a time without a zone is read as UTC (its differences stay
    right, FORMATS §10.4); 0 (not recorded) for anything that is not one."""
    if type(value) is not str or not 10 <= len(value) <= 40:
        return 0
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python 3.11's fromisoformat takes at most 6 fraction digits and needs 3 or 6 of them.
    dot = text.find(".")
    if dot != -1:
        end = dot + 1
        while end < len(text) and text[end].isdigit():
            end += 1
        digits = text[dot + 1:end][:6].ljust(6, "0")
        text = text[:dot + 1] + digits + text[end:]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def unix_ms(value: Any) -> int:
    """Epoch milliseconds of a Unix time in seconds (int or float); 0 for anything else."""
    if type(value) in (int, float) and 0 < value < 1e11:
        return int(round(value * 1000))
    return 0


def json_args(value: Any) -> str:
    """Tool arguments the source stores as an object, serialised once and deterministically (FORMATS §2.5):
    ``json.dumps(obj, ensure_ascii=False, separators=(',', ':'))``."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class SessionLog:
    """One session read from a file: ``key`` names it inside a file holding several (an Inspect sample,
    ``"<id>_epoch_<n>"``; empty for a file of one session), ``label`` is what the list shows for it when the log
    records no title, ``result`` the log as our reader would give it."""

    __slots__ = ("key", "label", "result")

    def __init__(self, key: str, label: str | None, result: LoadResult) -> None:
        self.key = key
        self.label = label
        self.result = result

    def __repr__(self) -> str:
        return f"SessionLog({self.key!r}, {self.label!r}, {self.result!r})"


class LogBuilder:
    """Writes one session log in our event model (PROTOCOL §1), with dense seqs from 0.

    A reader opens a group per source record (``begin``), emits the events made from it, and closes it (``end``),
    which writes the ``interop/source`` (or ``interop/raw``) event. Turn and step numbers, the seqs of a step's
    chunks, tool calls by id and the surface are tracked here, so each reader only maps fields. ``events`` is the
    list the loader hands out (appended to, never rebuilt).
    """

    def __init__(self, fmt: str, session_id: str, **header: Any) -> None:
        self.format = fmt
        self.header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "format": fmt}
        self.header.update({k: v for k, v in header.items() if v is not None})
        self.events: list[dict[str, Any]] = []
        self.turn = 0  # the last turn number used
        self.turn_open = False
        self.step = 0  # the last step number used in the current turn
        self.step_open = False
        self._step_chunks: list[int] = []  # seqs of the open step's chunks (the assistant/message cites them)
        self._step_blocks: list[dict[str, Any]] = []  # the open step's blocks, in index order
        self._calls: dict[str, int] = {}  # tool call id -> the seq of its tool/call
        self._results: set[str] = set()  # call ids that have a result
        self.surface: list[int] = []  # seqs of the surface nodes, in surface order
        self._group: tuple[dict[str, Any], str, str | None, Any, int] | None = None
        self._replace: dict[str, Any] | None = None

    @property
    def next_seq(self) -> int:
        return len(self.events)

    # -- groups ----------------------------------------------------------------------------------------------

    def begin(self, origin: dict[str, Any], record_type: str, text: str | None, record: Any = None) -> None:
        """Open the group of one source record: ``text`` is its original text (a JSONL line, or the compact JSON of
        a document's element), ``record`` the decoded value (kept when the record becomes nothing)."""
        if self._group is not None:
            self.end()
        self._group = (origin, record_type, text, record, self.next_seq)

    def end(self, *, duplicate_of: Any = None, notice: str | None = None, time: int = 0) -> int | None:
        """Close the open group: an ``interop/source`` event citing the events made since ``begin``, or, when there
        were none (or ``duplicate_of`` is given: a copy the mapping hides), an ``interop/raw`` event with the
        decoded record. ``notice`` asks the chat to show a raw record as a notice with that text. Returns its seq."""
        group, self._group = self._group, None
        if group is None:
            return None
        origin, record_type, text, record, first = group
        made = list(range(first, self.next_seq))
        if made and duplicate_of is None:
            data: dict[str, Any] = {"format": self.format, "recordType": record_type, "origin": origin,
                                    "events": made}
            if text is not None:
                data["text"] = text
            return self._append(SOURCE, data, time, ignorable=True)
        data = {"format": self.format, "recordType": record_type, "origin": origin}
        if duplicate_of is not None:
            data["duplicateOf"] = duplicate_of
        if notice is not None:
            data["notice"] = notice
        data["record"] = record if record is not None or text is None else text
        if made:
            data["events"] = made
        return self._append(RAW, data, time, ignorable=True)

    # -- events ----------------------------------------------------------------------------------------------

    def _append(self, etype: str, data: Any, time: int, *, ignorable: bool = False,
                sources: list[int] | None = None, surface: Any = None) -> int:
        seq = len(self.events)
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": time if type(time) is int else 0, "data": data}
        if ignorable:
            event["ignorable"] = True
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if surface is not None:
            event["surfaceOp"] = surface
        self.events.append(event)
        return seq

    def emit(self, etype: str, data: Any, *, time: int = 0, ignorable: bool = False,
             sources: list[int] | None = None) -> int:
        """Any event; a surface type is appended to the surface (or replaces it after ``replace_surface``)."""
        if etype in _SURFACE:
            return self._surface_event(etype, data, time, sources)
        return self._append(etype, data, time, ignorable=ignorable, sources=sources)

    def _surface_event(self, etype: str, data: Any, time: int, sources: list[int] | None) -> int:
        replace, self._replace = self._replace, None
        if replace is None:
            seq = self._append(etype, data, time, sources=sources, surface="append")
            self.surface.append(seq)
            return seq
        shadowed: list[int] = replace["shadowed"]
        cited = list(sources or [])
        cited += [s for s in shadowed if s not in set(cited)]
        seq = self._append(etype, data, time, sources=cited,
                           surface={"op": "replace", "start": shadowed[0], "end": shadowed[-1]})
        at = replace["at"]
        self.surface[at:at + len(shadowed)] = [seq]
        return seq

    def replace_surface(self, start: int = 0, end: int | None = None) -> list[int]:
        """Make the next surface event replace the surface nodes ``surface[start:end]`` (default: all of them);
        returns the shadowed seqs. With nothing to shadow the next surface event is appended."""
        nodes = self.surface[start:end]
        self._replace = {"shadowed": nodes, "at": start} if nodes else None
        return nodes

    # turns and steps

    def start_turn(self, time: int = 0) -> int:
        """Close an open turn as completed (a new prompt ends the last one) and open the next."""
        if self.turn_open:
            self.end_turn({"kind": "completed"}, time)
        self.turn += 1
        self.step = 0
        self.turn_open = True
        self._append("turn/start", {"turn": self.turn}, time)
        return self.turn

    def end_turn(self, reason: dict[str, Any], time: int = 0) -> None:
        if not self.turn_open:
            return
        if self.step_open:
            self.end_step(time)
        self.turn_open = False
        self._append("turn/end", {"turn": self.turn, "reason": reason}, time)

    def start_step(self, time: int = 0) -> int:
        """Open the next model step (closing an open one); opens a turn first when none is open."""
        if not self.turn_open:
            self.start_turn(time)
        if self.step_open:
            self.end_step(time)
        self.step += 1
        self.step_open = True
        self._step_chunks = []
        self._step_blocks = []
        self._append("step/start", {"turn": self.turn, "step": self.step}, time)
        return self.step

    def end_step(self, time: int = 0) -> None:
        if not self.step_open:
            return
        self.step_open = False
        self._append("step/end", {"turn": self.turn, "step": self.step}, time)

    def _chunk(self, chunk: dict[str, Any], time: int) -> int:
        seq = self._append("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk}, time)
        self._step_chunks.append(seq)
        return seq

    def block(self, block: dict[str, Any], time: int = 0) -> int:
        """One complete content block of the open step's response (``block-end``, FORMATS §2.4)."""
        if not self.step_open:
            self.start_step(time)
        index = len(self._step_blocks)
        self._step_blocks.append(block)
        return self._chunk({"type": "block-end", "index": index, "block": block}, time)

    def usage(self, usage: dict[str, Any], time: int = 0) -> int:
        return self._chunk({"type": "usage", "usage": usage}, time)

    def finish(self, reason: dict[str, Any], time: int = 0) -> int:
        return self._chunk({"type": "finish", "reason": reason}, time)

    def message(self, *, time: int = 0, provider: str | None = None, model: str | None = None,
                message_id: str | None = None, usage: dict[str, Any] | None = None,
                interrupted: bool = False) -> int:
        """The open step's ``assistant/message``: its blocks, citing every chunk of the step."""
        source: dict[str, Any] = {"kind": "model"}
        if provider is not None:
            source["provider"] = provider
        if model is not None:
            source["model"] = model
        message: dict[str, Any] = {"role": "assistant", "content": list(self._step_blocks), "source": source}
        if message_id is not None:
            message["id"] = message_id
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if usage is not None:
            data["usage"] = usage
        if interrupted:
            data["interrupted"] = True
        return self._surface_event("assistant/message", data, time, list(self._step_chunks))

    @property
    def step_blocks(self) -> list[dict[str, Any]]:
        return self._step_blocks

    # messages and tools

    def user_message(self, content: list[dict[str, Any]], *, time: int = 0, message_id: str | None = None,
                     source: dict[str, Any] | None = None) -> int:
        """A ``user/message`` (a typed prompt by default; ``source`` ``{kind:'plugin', plugin, form}`` for text the
        harness injected, FORMATS §2.6)."""
        data: dict[str, Any] = {"content": content, "source": source or {"kind": "user"}, "role": "user"}
        if message_id is not None:
            data["id"] = message_id
        return self._surface_event("user/message", data, time, None)

    def tool_call(self, call_id: str, name: str, arguments: str, time: int = 0) -> int:
        seq = self._append("tool/call", {"turn": self.turn, "step": self.step, "callId": call_id, "name": name,
                                         "arguments": arguments}, time)
        self._calls[call_id] = seq
        return seq

    def has_call(self, call_id: str) -> bool:
        return call_id in self._calls

    def has_result(self, call_id: str) -> bool:
        return call_id in self._results

    def tool_result(self, call_id: str, content: list[dict[str, Any]], *, is_error: bool = False, time: int = 0,
                    meta: Any = None, message_id: str | None = None) -> int:
        """A ``tool/result`` holding one ``tool-result`` block; it cites its ``tool/call`` when that was seen."""
        message: dict[str, Any] = {
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": content, "isError": is_error}],
            "role": "user",
        }
        if message_id is not None:
            message["id"] = message_id
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if meta is not None:
            data["meta"] = meta
        call = self._calls.get(call_id)
        self._results.add(call_id)
        return self._surface_event("tool/result", data, time, None if call is None else [call])

    def title(self, title: str, time: int = 0) -> int:
        return self._append("session/title", {"title": title, "source": {"kind": "recorded"}}, time)

    def result(self) -> LoadResult:
        """A ``LoadResult`` over this builder's header and events (the same objects, not copies)."""
        result = LoadResult(self.header, self.events)  # type: ignore[arg-type]  # events are storage records
        result.event_count = len(self.events)
        return result


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
        result.event_count = len(result.records)
        result.lines = self.lines
        return len(result.records) - before

    def _fail(self, error: SessionFileError) -> None:
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


def json_type(value: Any) -> str:
    """How a JSON value's type is named in an error: ``an object``, ``an array``, ``a string``, ``null`` ..."""
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def read_lines(reader: LineReader, data: bytes, *, strict: bool = False,
               max_line_bytes: int | None = None) -> LoadResult:
    """A whole JSONL file held in memory, read with ``reader``."""
    loader = LineLoader(reader, strict=strict, max_line_bytes=max_line_bytes)
    loader.feed(data)
    return loader.finish()


def text_blocks(text: str) -> list[dict[str, Any]]:
    """``[{"type": "text", "text": text}]``."""
    return [{"type": "text", "text": text}]
