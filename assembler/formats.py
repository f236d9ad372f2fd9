"""The one table of session log formats this project reads: how each is recognised from its content, which reader
reads it, how it grows and whether it can be followed live (FORMATS.md §1, §3).

Rules: a format is chosen from the bytes, never from the file name: zip, zstd and SQLite magic, then the first
complete JSON value (the first non-blank line of a JSONL file, or the whole document when that line is not a value
by itself). The tests run in the table's order; their key sets are disjoint. A file name's suffix only orders the
guesses of a folder scan and the file picker's ``accept`` list (``SUFFIXES``). A file that matches nothing is
refused with the list of formats tried. Every edge (command line, server, page) goes through ``detect``; the build
writes ``table()`` into the page. Pure and sans-I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Final, Literal

import msgspec

from .jsontext import NestingError, decode_json

__all__ = [
    "Format",
    "FORMATS",
    "SUFFIXES",
    "ACCEPT",
    "SQLITE_SUFFIXES",
    "strip_suffix",
    "session_stem",
    "EMPTY",
    "ZSTD",
    "NEED_MORE",
    "PROBE_BYTES",
    "UnknownFormat",
    "detect",
    "by_name",
    "reader_of",
    "table",
    "tried",
]

Container = Literal["lines", "document", "zip", "sqlite"]
Growth = Literal["append", "container", "whole"]


@dataclass(frozen=True)
class Format:
    """One readable format. ``reader`` is ``"module:name"`` under ``assembler`` (imported on first use): for
    ``lines`` a ``interop.base.LineReader`` subclass, for ``document``/``zip`` a function
    ``(data: bytes, file: str) -> list[SessionLog]``; our own formats are read by ``store``. ``sessions`` is
    ``many`` when one file holds several sessions (an Inspect log: one per sample and epoch)."""

    name: str
    label: str
    harness: str
    suffixes: tuple[str, ...]
    container: Container
    growth: Growth
    live: bool
    reader: str
    sessions: Literal["one", "many"] = "one"
    session: bool = True  # False: a file of this kind is recognised but is not a session (a sidecar)
    turn_ends: bool = True  # False: the format never records a turn's end (the reader opens and closes turns)


FORMATS: Final[tuple[Format, ...]] = (
    Format("session-jsonl", "Transcript Assembler session (JSONL)", "Transcript Assembler",
           (".jsonl", ".jsonl.zst"), "lines", "append", True, "store.jsonl:read_session"),
    Format("session-sqlite", "Transcript Assembler session (SQLite)", "Transcript Assembler",
           (".sqlite", ".sqlite3", ".db"), "sqlite", "whole", False, "store.sqlite:read_sqlite"),
    Format("claude-code", "Claude Code session (JSONL)", "Claude Code", (".jsonl",), "lines", "append", True,
           "interop.claude:ClaudeCodeReader", turn_ends=False),
    Format("claude-code-agent-meta", "Claude Code subagent sidecar (.meta.json)", "Claude Code", (".meta.json",),
           "document", "whole", False, "", session=False),
    Format("codex", "Codex rollout (JSONL)", "Codex", (".jsonl",), "lines", "append", True,
           "interop.codex:CodexReader"),
    Format("inspect-eval", "Inspect AI eval log (.eval)", "Inspect AI", (".eval",), "zip", "container", False,
           "interop.inspect:read_eval", "many"),
    Format("inspect-json", "Inspect AI eval log (JSON)", "Inspect AI", (".json",), "document", "whole", False,
           "interop.inspect:read_json", "many"),
    Format("gemini-json", "Gemini CLI chat (JSON)", "Gemini CLI", (".json",), "document", "whole", False,
           "interop.gemini:read_json", turn_ends=False),
    Format("gemini-jsonl", "Gemini CLI chat (JSONL)", "Gemini CLI", (".jsonl",), "lines", "append", True,
           "interop.gemini:GeminiReader", turn_ends=False),
    Format("swe-agent", "SWE-agent trajectory (.traj)", "SWE-agent", (".traj",), "document", "whole", False,
           "interop.sweagent:read_traj"),
    Format("mini-swe-agent", "mini-swe-agent trajectory (.traj.json)", "mini-swe-agent", (".traj.json", ".json"),
           "document", "whole", False, "interop.sweagent:read_mini"),
    Format("openhands", "OpenHands trajectory (JSON)", "OpenHands", (".json",), "document", "whole", False,
           "interop.openhands:read_trajectory"),
)

_BY_NAME: Final = {f.name: f for f in FORMATS}

SUFFIXES: Final[tuple[str, ...]] = tuple(dict.fromkeys(s for f in FORMATS for s in f.suffixes))
"""Every suffix the table names, for folder scans and the file picker (content still decides the format)."""

EMPTY: Final = Format("empty", "empty file", "", (), "lines", "append", True, "")
"""A file with no bytes (or only whitespace): an empty session of no known format (FORMATS §1.1)."""
ZSTD: Final = Format("zstd", "zstd-compressed", "", (".zst",), "lines", "whole", False, "")
"""zstd magic: the edge decompresses the head and detects again (``store.zstd``); the log inside is ours."""

ACCEPT: Final[tuple[str, ...]] = tuple(dict.fromkeys((*SUFFIXES, *ZSTD.suffixes)))
"""What the file picker offers: the table's suffixes and any zstd-compressed file."""
SQLITE_SUFFIXES: Final[tuple[str, ...]] = _BY_NAME["session-sqlite"].suffixes
"""The names our writers give a SQLite session (the output format follows the name; input is read by content)."""
_LONGEST_FIRST: Final = tuple(sorted(SUFFIXES, key=len, reverse=True))


def strip_suffix(name: str) -> str:
    """``name`` without the longest suffix of the table it ends in (``a/b.jsonl.zst`` -> ``a/b``)."""
    for suffix in _LONGEST_FIRST:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def session_stem(name: str) -> str:
    """A file's base name without the suffix the table knows for it (``dir/a.jsonl.zst`` -> ``a``)."""
    return strip_suffix(name.replace("\\", "/").rsplit("/", 1)[-1])


class _NeedMore:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_MORE"


NEED_MORE: Final = _NeedMore()
"""``detect``: the first JSON value is not complete in the bytes given; call again with more (or all) of them."""

PROBE_BYTES: Final = 64 << 10
"""How many leading bytes an edge reads before detecting (more only when ``detect`` asks)."""


class UnknownFormat(ValueError):
    """The bytes are none of the formats in the table; the message lists what was tried."""

    def __init__(self, why: str = "") -> None:
        super().__init__(f"not a known session log{f' ({why})' if why else ''}; tried: {tried()}")
        self.why = why


def tried() -> str:
    return ", ".join(f.label for f in FORMATS if f.session)


def by_name(name: str) -> Format:
    return _BY_NAME[name]


def reader_of(fmt: Format) -> Any:
    """The reader the table names for ``fmt`` (imported now)."""
    module, _, attr = fmt.reader.partition(":")
    return getattr(import_module(f"assembler.{module}"), attr)


def table() -> list[dict[str, Any]]:
    """The table as JSON for the page: name, label, harness, suffixes, container, growth, live, sessions."""
    return [{"name": f.name, "label": f.label, "harness": f.harness, "suffixes": list(f.suffixes),
             "container": f.container, "growth": f.growth, "live": f.live, "sessions": f.sessions}
            for f in FORMATS if f.session]


# -- detection -------------------------------------------------------------------------------------------------

_decode = msgspec.json.Decoder().decode
_ZIP_MAGIC = b"PK\x03\x04"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_INSPECT_MEMBERS = ("_journal/", "header.json", "samples/", "summaries.json", "reductions.json")
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
                           "attachment", "progress", "permission-mode", "last-prompt", "custom-title",
                           "agent-name", "tag", "pr-link", "ai-title"})
_CLAUDE_LOOK = 8  # records a Claude Code file may open with before one that names its session


def _first_member(head: bytes) -> str | None:
    """The name of a zip's first member, from its local file header."""
    if len(head) < 30:
        return None
    n = int.from_bytes(head[26:28], "little")
    name = head[30:30 + n]
    return name.decode("utf-8", "replace") if len(name) == n else None


def _is_int(v: Any) -> bool:
    return type(v) is int


def _document(value: Any) -> Format | None:
    """A whole JSON document's format, by its top-level shape."""
    if type(value) is dict:
        keys = value.keys()
        ev = value.get("eval")
        if _is_int(value.get("version")) and type(ev) is dict and "task" in ev:
            return _BY_NAME["inspect-json"]
        if type(value.get("trajectory")) is list and type(value.get("history")) is list and "info" in keys:
            return _BY_NAME["swe-agent"]
        fmt = value.get("trajectory_format")
        if (type(value.get("messages")) is list and "info" in keys) or (
                type(fmt) is str and fmt.startswith("mini-swe-agent")):
            return _BY_NAME["mini-swe-agent"]
        if "sessionId" in keys and "projectHash" in keys and type(value.get("messages")) is list:
            return _BY_NAME["gemini-json"]
        if "agentType" in keys and "description" in keys and "type" not in keys:
            return _BY_NAME["claude-code-agent-meta"]
        return None
    if type(value) is list and value and all(type(v) is dict for v in value[:50]):
        first = value[:50]
        if all(_is_int(v.get("id")) and "source" in v and ("action" in v or "observation" in v) for v in first):
            return _BY_NAME["openhands"]
        if all("role" in v and "content" in v and v.keys() <= {"role", "content", "extra"} for v in first):
            return _BY_NAME["mini-swe-agent"]
    return None


def _claude_record(value: Mapping[str, Any]) -> bool | None:
    """True: a Claude Code record naming its session; None: one that may open such a file; False: not one."""
    if value.get("type") not in _CLAUDE_TYPES:
        return False
    if ("uuid" in value and "sessionId" in value) or "leafUuid" in value or "snapshot" in value \
            or "operation" in value:
        return True
    return None


def _lines(values: list[dict[str, Any]]) -> Format | None:
    """A JSONL file's format from its first records (at least one)."""
    first = values[0]
    rtype = first.get("type")
    if rtype == "session":
        return _BY_NAME["session-jsonl"]
    if "sessionId" in first and "projectHash" in first and "messages" not in first:
        return _BY_NAME["gemini-jsonl"]
    if rtype in _CODEX_TYPES and "payload" in first and "timestamp" in first:
        return _BY_NAME["codex"]
    if "id" in first and "timestamp" in first and "type" not in first and "payload" not in first \
            and "record_type" not in first:
        return _BY_NAME["codex"]  # a rollout from before 0.4x: a bare SessionMeta first
    for value in values[:_CLAUDE_LOOK]:
        verdict = _claude_record(value)
        if verdict:
            return _BY_NAME["claude-code"]
        if verdict is False:
            break
    if type(rtype) is str and "/" in rtype:
        return _BY_NAME["session-jsonl"]  # ours without a header: its reader says what is missing
    return None


def detect(head: bytes | bytearray | memoryview, *, complete: bool) -> Format | _NeedMore:
    """The format of a file whose first bytes are ``head`` (``complete``: the whole file). ``NEED_MORE`` when more
    bytes would decide it, ``EMPTY`` for a file of whitespace only, ``ZSTD`` for a compressed stream (decompress
    and call again).

    Raises:
        UnknownFormat: no format of the table matches (the message lists them).
    """
    data = bytes(head)
    if data.startswith(_ZIP_MAGIC):
        name = _first_member(data)
        if name is not None and name.startswith(_INSPECT_MEMBERS):
            return _BY_NAME["inspect-eval"]
        raise UnknownFormat("a zip archive that is not an Inspect log")
    if data.startswith(_ZSTD_MAGIC):
        return ZSTD
    if data.startswith(_SQLITE_MAGIC):
        return _BY_NAME["session-sqlite"]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.lstrip()
    if not text:
        if complete:
            return EMPTY
        return NEED_MORE if data else EMPTY
    if text[:1] not in (b"{", b"["):
        raise UnknownFormat("not JSON")
    values: list[dict[str, Any]] = []
    pos = 0
    while len(values) < _CLAUDE_LOOK:
        end = text.find(b"\n", pos)
        if end == -1:
            if not complete:
                break
            end = len(text)
        line = text[pos:end].strip()
        pos = end + 1
        if line:
            value = _value(line)
            if value is _BAD:
                break
            if type(value) is not dict:
                if not values:
                    found = _document(value)
                    if found is not None:
                        return found
                break
            if not values:
                found = _document(value)
                if found is not None:
                    return found
            values.append(value)
        if pos > len(text):
            break
    if values:
        found = _lines(values)
        if found is not None:
            return found
        if len(values) < _CLAUDE_LOOK and not complete and pos <= len(text):
            return NEED_MORE  # only records that may open a Claude Code file so far
        raise UnknownFormat("no record names a known format")
    if not complete:
        return NEED_MORE
    whole = _value(text)
    if whole is _BAD:
        raise UnknownFormat("not valid JSON")
    found = _document(whole)
    if found is None:
        raise UnknownFormat("a JSON document of no known shape")
    return found


_BAD: Final = object()


def _value(raw: bytes) -> Any:
    try:
        return decode_json(raw, _decode)  # the depth check first; a lone surrogate escape decodes too
    except (msgspec.DecodeError, NestingError):
        return _BAD

