"""Per-file metadata for the session list (issue 9 item 14): what a listing needs, never the records.

Rules: ``FileMeta`` reads a session file once in bounded pieces through the log parser and keeps only counts and a
few values (header, the list's ``SessionFacts``, the subagent label, the first fault); a ``.jsonl`` file that grew
is read on from where it stopped (the parser carries a partial line), one rewritten in place (``identity``) is read
again from the start, and a ``.jsonl.zst`` file is read again whole when it changes (a SQLite session too, whole).
Blocking: call ``refresh_sync`` in a worker thread. The ``Catalog`` holds one ``FileMeta`` per path and forgets
paths no longer scanned.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import AssemblerError, SessionFileError
from ..logfile import DEFAULT_MAX_LINE_BYTES, Fault, Header, LogParser, Record, Skipped
from ..store import zstd
from ..store.sqlite import is_sqlite_path
from .confine import open_in_root
from .identity import Identity, compare, identity_of
from .listing import SessionFacts

__all__ = ["FileMeta", "Catalog", "READ_PIECE", "describe_problem"]

READ_PIECE = 1 << 20
"""Bytes read from a file at a time (a zstd file: compressed bytes)."""



def describe_problem(error: Exception | None, header: Any) -> str | None:
    """The fault that stopped a session file's parse (with its line), or a missing header, as text; None when sound."""
    if error is not None:
        return str(error)
    if header is None:
        return str(SessionFileError("no session header", line=1))
    return None

class FileMeta:
    """What the session list shows of one file, kept up to date from its new bytes."""

    def __init__(self, path: Path, root: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.path = path
        self.root = root
        self.max_line_bytes = max_line_bytes
        self.compressed = zstd.is_zstd_path(path)
        self.database = is_sqlite_path(path)
        self._reset()

    def _reset(self) -> None:
        self.header: dict[str, Any] | None = None
        self.facts = SessionFacts()
        self.subagent_label: str | None = None
        self.event_count = 0
        self.error: AssemblerError | None = None
        self.size = 0
        self.mtime_ns = 0
        self._parser = LogParser(max_line_bytes=self.max_line_bytes, pack_deltas=True)  # the facts need no deltas
        self._identity: Identity | None = None

    @property
    def problem(self) -> str | None:
        return describe_problem(self.error, self.header)

    def refresh_sync(self) -> None:
        """Read what changed (blocking).

        Raises:
            OutsideRootError: the file is no longer a regular file inside its root.
            OSError: it cannot be read.
        """
        with open_in_root(self.path, self.root) as stream:
            fd = stream.fileno()
            st = os.fstat(fd)
            change = compare(self._identity, fd, st)
            if change == "unchanged":
                return
            if change == "rewritten" or self.compressed or self.database:
                self._reset()
            self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
            if self.database:
                self._read_database(stream)
                self._identity = identity_of(fd, st.st_size, st)
                return
            offset = self._identity.offset if self._identity is not None else 0
            decoder = zstd.ZstdDecoder(lines=True) if self.compressed else None
            while True:
                piece = os.pread(fd, READ_PIECE, offset)
                if not piece:
                    break
                offset += len(piece)
                if decoder is None:
                    self._parser.feed(piece)
                    self._drain()
                    continue
                try:
                    for part in decoder.pieces(piece):  # bounded pieces, each parsed before the next
                        self._parser.feed(part)
                        self._drain()
                except zstd.ZstdStreamError as exc:
                    self.error = SessionFileError(exc.message)
                    break
            if decoder is not None and self.error is None:
                try:
                    decoder.finish()
                except zstd.ZstdStreamError as exc:
                    self.error = SessionFileError(exc.message)
            if self.compressed and self.error is None:
                self._parser.feed_eof()
                self._drain()
            self._identity = identity_of(fd, offset, st)

    def _read_database(self, stream: BinaryIO) -> None:
        from .database import read_served_database

        # through the checked descriptor
        result = read_served_database(self.path, self.root, stream, max_line_bytes=self.max_line_bytes)
        self.header, self.error, self.event_count = result.header, result.error, result.event_count
        for record in result.records:
            self._note(record)

    def _drain(self) -> None:
        parser = self._parser
        while True:
            event = parser.next_event()
            if type(event) is Record:
                self.event_count += event.members
                self._note(event.value)
            elif type(event) is Header:
                self.header = event.value
            elif type(event) is Fault:
                self.error = event.error
            elif type(event) is not Skipped:  # NEED_DATA or END
                return

    def _note(self, record: Any) -> None:
        self.facts.absorb((record,))
        if type(record) is dict and record.get("type") == "subagent/descriptor":
            data = record.get("data")
            if type(data) is dict and type(data.get("label")) is str:
                self.subagent_label = data["label"]


class Catalog:
    """``FileMeta`` by path, for every scanned session file."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._files: dict[Path, FileMeta] = {}

    def meta(self, path: Path, root: Path) -> FileMeta:
        """The (possibly not yet refreshed) metadata of ``path``."""
        meta = self._files.get(path)
        if meta is None or meta.root != root:
            meta = self._files[path] = FileMeta(path, root, self.max_line_bytes)
        return meta

    def keep_only(self, paths: Iterable[Path]) -> None:
        """Forget every path not in ``paths`` (files gone since the last scan)."""
        keep = set(paths)
        for path in [p for p in self._files if p not in keep]:
            del self._files[path]
