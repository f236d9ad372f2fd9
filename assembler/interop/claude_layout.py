"""Claude Code's folder layout (FORMATS §4.7, §4.8): what a session file's place in a project folder tells its
reader, and the uuids the files of one project share.

Rules: pure functions of names and bytes; the caller (the server's registry, the page's local folder) reads the
files. Paths are ``/``-separated strings (a relative path in a dropped folder, or an absolute one on the server).
* A ``X.jsonl`` with ``X.meta.json`` beside it gets ``agentMeta`` (the sidecar parsed, when it is a JSON object of at
  most ``SIDECAR_MAX`` bytes); a ``<session>/subagents/X.jsonl`` gets ``parentSession: <session>``.
* A project is the folder that holds its session files; the subagent files under ``<session>/subagents/`` belong to
  the project that holds ``<session>``. Its files are read oldest first (by their first recorded time, from
  ``first_time`` of their first bytes; a resumed session's copies carry the old times, so ties go by the file's
  modification time, then by name; timeless files last), and a reader gets the
  uuids the files before it hold (``ProjectUuids.before``) as ``context["seenUuids"]``: a record whose uuid an older
  file holds is kept raw as a duplicate (``claude.ClaudeCodeReader``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import msgspec

from ..formats import by_name
from ..jsontext import NestingError, decode_json
from .base import iso_ms

__all__ = [
    "SIDECAR",
    "SIDECAR_MAX",
    "HEAD_BYTES",
    "sidecar_of",
    "layout_context",
    "project_of",
    "first_time",
    "ProjectUuids",
]

SIDECAR: Final = by_name("claude-code-agent-meta").suffixes[0]
SIDECAR_MAX: Final = 1 << 20
"""A sidecar larger than this is not read (a description is a few hundred bytes)."""
HEAD_BYTES: Final = 64 << 10
"""How many leading bytes ``first_time`` needs at most (the first records of a file)."""

_decode = msgspec.json.Decoder().decode
_HEAD_LINES: Final = 16


def _split(path: str) -> list[str]:
    return [part for part in path.replace("\\", "/").split("/") if part]


def sidecar_of(path: str) -> str | None:
    """The ``.meta.json`` path that would describe the session file ``path`` (None: ``path`` is no ``.jsonl``)."""
    if not path.endswith(".jsonl") or path.endswith(SIDECAR):
        return None
    return path[: -len(".jsonl")] + SIDECAR


def layout_context(path: str, sidecar: bytes | None = None) -> dict[str, Any] | None:
    """What a reader of the session file ``path`` knows from beside it (see the module rules); ``sidecar``: the bytes
    of the file ``sidecar_of(path)`` names, None when there is none. None when there is nothing to say."""
    if not path.endswith(".jsonl"):
        return None
    context: dict[str, Any] = {}
    if sidecar is not None and len(sidecar) <= SIDECAR_MAX:
        try:
            value = decode_json(sidecar, _decode)  # the nesting check first, as for every decoder
        except (msgspec.DecodeError, NestingError):
            value = None
        if type(value) is dict:
            context["agentMeta"] = value
    parts = _split(path)
    if len(parts) >= 3 and parts[-2] == "subagents":
        context["parentSession"] = parts[-3]
    return context or None


def project_of(path: str) -> str:
    """The project folder of a session file (``""`` for a file at the top): the folder that holds it, or for
    ``<session>/subagents/X`` the folder that holds ``<session>``."""
    parts = _split(path)[:-1]
    if len(parts) >= 2 and parts[-1] == "subagents":
        parts = parts[:-2]
    return "/".join(parts)


def first_time(head: bytes | bytearray | memoryview) -> int | None:
    """The first recorded time (epoch ms) among the first complete records of a Claude Code file's first bytes
    (``HEAD_BYTES`` are enough); None when none of them records one (or the bytes are not such records)."""
    data = bytes(head[:HEAD_BYTES])
    for n, line in enumerate(data.split(b"\n")):  # a cut last line does not decode: skipped
        if n >= _HEAD_LINES:
            break
        line = line.strip()
        if not line.startswith(b"{"):
            continue
        try:
            value = decode_json(line, _decode)
        except (msgspec.DecodeError, NestingError):
            continue
        stamp = value.get("timestamp") if type(value) is dict else None
        t = iso_ms(stamp) if type(stamp) is str else None
        if t is not None:
            return t
    return None


class ProjectUuids:
    """The uuids of one project's files, each by the file (name) that holds it first in the reading order.

    ``rank`` each file (its first recorded time) before its uuids are ``add``-ed; ``before(name)`` is the mapping a
    reader of ``name`` gets as ``seenUuids``: the uuids held by files earlier in the order, each to its file. It
    is a live view: uuids added later by an older file count too (a file read again after it grew)."""

    def __init__(self) -> None:
        self._holder: dict[str, str] = {}
        self._rank: dict[str, tuple[int, int, float, str]] = {}

    def rank(self, name: str, first: int | None, mtime: float = 0.0) -> None:
        """File ``name`` starts at ``first`` (``first_time`` of its head) and was last modified at ``mtime``."""
        self._rank[name] = (0, first, mtime, name) if first is not None else (1, 0, mtime, name)

    def order(self, names: Iterable[str]) -> list[str]:
        """``names`` oldest first (the order their files are read in)."""
        return sorted(names, key=self._key)

    def _key(self, name: str) -> tuple[int, int, float, str]:
        return self._rank.get(name, (1, 0, 0.0, name))

    def add(self, name: str, uuids: Iterable[str]) -> None:
        """The uuids file ``name`` read itself (the reader's ``uuids``); an older file keeps a uuid it holds too."""
        key = self._key(name)
        holder = self._holder
        for uuid in uuids:
            other = holder.get(uuid)
            if other is None or (other != name and self._key(other) > key):
                holder[uuid] = name

    def before(self, name: str) -> Mapping[str, str]:
        return _SeenBefore(self, name)

    def holder(self, uuid: str) -> str | None:
        """The oldest file holding ``uuid`` (None: no file read so far holds it)."""
        return self._holder.get(uuid)

    def held_before(self, uuid: str, name: str) -> str | None:
        other = self._holder.get(uuid)
        if other is None or other == name or self._key(other) >= self._key(name):
            return None
        return other

    def __len__(self) -> int:
        return len(self._holder)

    def uuids(self) -> list[str]:
        """Every uuid held so far (a copy: the reader may add while the caller iterates)."""
        return list(self._holder)


class _SeenBefore(Mapping[str, str]):
    """uuid -> the older file of the project that holds it (see ``ProjectUuids.before``)."""

    __slots__ = ("_project", "_name")

    def __init__(self, project: ProjectUuids, name: str) -> None:
        self._project = project
        self._name = name

    def __contains__(self, uuid: object) -> bool:
        return type(uuid) is str and self._project.held_before(uuid, self._name) is not None

    def __getitem__(self, uuid: str) -> str:
        found = self._project.held_before(uuid, self._name)
        if found is None:
            raise KeyError(uuid)
        return found

    def get(self, uuid: str, default: Any = None) -> Any:
        found = self._project.held_before(uuid, self._name) if type(uuid) is str else None
        return default if found is None else found

    def __iter__(self) -> Iterator[str]:
        return (u for u in self._project.uuids() if u in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __eq__(self, other: object) -> bool:
        # Compared as a view (a context compared for a change is the same context while it names the same view).
        return isinstance(other, _SeenBefore) and other._project is self._project and other._name == self._name

    def __hash__(self) -> int:
        return hash((id(self._project), self._name))
