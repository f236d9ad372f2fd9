"""Source records of another harness's log: the two event types that keep them, where a record sits (its origin),
the error that names it, recorded times and argument serialisation (FORMATS.md §1, §2.1-2.5).

Rules: a time the source does not record is 0 (rebuilt, never shown as a duration); timestamps are parsed by
arithmetic, never with a clock; object arguments are serialised once, deterministically. Pure.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ..errors import SessionFileError
from ..logfile import LoadResult

__all__ = ["SOURCE", "RAW", "SourceError", "line_origin", "member_origin", "pointer", "iso_ms", "unix_ms",
           "json_args", "SessionLog", "json_type", "text_blocks"]

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
                 pointer: str | None = None, column: int | None = None) -> None:
        super().__init__(message, line, seq)
        self.args = (message, line, seq, member, pointer, column)
        self.member = member
        self.pointer = pointer
        self.column = column  # 1-based, with ``line``: where a whole JSON document is damaged (FORMATS §7.4)

    @property
    def location(self) -> str | None:
        if self.line is not None:
            return str(self.line) if self.column is None else f"{self.line}:{self.column}"
        parts = [p for p in (self.member, self.pointer) if p]
        return ":".join(parts) if parts else None

    def __str__(self) -> str:
        where = self.location
        if self.line is not None and self.column is not None:
            return f"line {self.line}, column {self.column}: {self.message}"
        return f"{where}: {self.message}" if where and self.line is None else super().__str__()


def line_origin(line: int) -> dict[str, Any]:
    return {"line": line}


def member_origin(member: str | None, ptr: str) -> dict[str, Any]:
    """Where a record of a whole-document file (``member`` None) or of a zip member sits: a JSON pointer."""
    return {"pointer": ptr} if member is None else {"member": member, "pointer": ptr}


def pointer(*parts: str | int) -> str:
    """A JSON pointer (RFC 6901) from its reference tokens."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
                  r"\s*(?:([Zz])|([+-])(\d{2}):?(\d{2}))?")


def _days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def iso_ms(value: Any) -> int:
    """Epoch milliseconds of an ISO-8601 timestamp (any number of fraction digits; a time without a zone is read
    as UTC, so its differences stay right, FORMATS §10.4); 0 (not recorded) for anything that is not one. Pure
    arithmetic: no clock, no ``datetime``."""
    if type(value) is not str or not 16 <= len(value) <= 40:
        return 0
    m = _ISO.fullmatch(value.strip())
    if m is None:
        return 0
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        return 0
    millis = int((m.group(7) or "0")[:3].ljust(3, "0"))
    offset = 0
    if m.group(9):
        offset = (int(m.group(10)) * 60 + int(m.group(11))) * (1 if m.group(9) == "+" else -1)
    seconds = _days(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset * 60
    return seconds * 1000 + millis


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


def json_type(value: Any) -> str:
    """How a JSON value's type is named in an error: ``an object``, ``an array``, ``a string``, ``null`` ..."""
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def text_blocks(text: str) -> list[dict[str, Any]]:
    """``[{"type": "text", "text": text}]``."""
    return [{"type": "text", "text": text}]
