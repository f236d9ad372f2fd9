"""Session JSONL files on disk: read (streaming, ``.jsonl`` or ``.jsonl.zst``) and write (packed per batch).

Rules: a file is read line by line, never held as one string; parsing is ``logfile.SessionLogParser``. Writes pack
each append batch with the chunk-row codec unless ``pack=False`` (PROTOCOL 2.3: the reader ignores that option).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, cast

from ..chunk_rows import pack_chunk_runs
from ..errors import SessionFileError
from ..logfile import LoadResult, SessionLogParser
from ..records import encode
from . import zstd

__all__ = ["read_session", "read_stream", "iter_session_lines", "write_session", "write_jsonl", "SessionWriter"]

_BUFFER = 256 << 10
"""Bytes per read from the file: bounded, so a file is never held whole (lines longer than this still work)."""

ProgressFn = Callable[[int, int], None]
"""``progress(bytes_read, total_bytes)``; ``total_bytes`` is the on-disk size (compressed for ``.zst``)."""


def iter_session_lines(stream: IO[bytes]) -> Iterator[tuple[bytes, int, bool]]:
    """Yield ``(line, lineno, terminated)`` with the newline (and a CR before it) removed."""
    lineno = 0
    for line in stream:
        lineno += 1
        if line.endswith(b"\n"):
            yield (line[:-2] if line.endswith(b"\r\n") else line[:-1]), lineno, True
        else:
            yield line, lineno, False


def read_session(path: str | os.PathLike[str], *, strict: bool = False,
                 progress: ProgressFn | None = None) -> LoadResult:
    """Read a session log. Faults are reported in ``result.error`` with the line; nothing before them is lost.

    Raises:
        OSError: the file cannot be opened.
    """
    p = os.fspath(path)
    with open(p, "rb", buffering=0) as raw:
        return read_stream(raw, source=p, compressed=zstd.is_zstd_path(p), strict=strict, progress=progress)


def read_stream(raw: IO[bytes], *, source: str, compressed: bool, strict: bool = False,
                progress: ProgressFn | None = None) -> LoadResult:
    """Read a session log from an open binary file (the server opens and checks it first). ``compressed``: the
    bytes are a ``.jsonl.zst`` stream; a damaged one ends the parse with a ``SessionFileError`` saying how far it
    was good (``truncated zstd stream after N bytes / line L``), everything decoded before the damage kept.

    Raises:
        OSError: the file cannot be read.
    """
    parser = SessionLogParser(strict=strict, source=source)
    total = os.fstat(raw.fileno()).st_size
    reader = zstd.ZstdReader(raw, lines=True, closefd=False) if compressed else None
    stream = io.BufferedReader(cast(Any, reader if reader is not None else raw), buffer_size=_BUFFER)
    tick = 0
    try:
        for line, lineno, terminated in iter_session_lines(stream):
            if not parser.feed_line(line, lineno, terminated=terminated):
                break
            if progress is not None and lineno - tick >= 20000:
                tick = lineno
                progress(reader.consumed if reader is not None else raw.tell(), total)
    except zstd.ZstdStreamError as exc:
        if parser.result.error is None:
            parser.result.error = SessionFileError(exc.message)
    result = parser.finish()
    if progress is not None:
        progress(total, total)
    return result


def write_jsonl(stream: IO[bytes], header: dict[str, Any], records: Iterable[Any], batch_size: int = 4096) -> None:
    """Write the header line, then one compact JSON line per storage record, in batches (streams any iterable)."""
    stream.write(encode(header) + b"\n")
    batch: list[bytes] = []
    for record in records:
        batch.append(encode(record))
        if len(batch) >= batch_size:
            stream.write(b"\n".join(batch) + b"\n")
            batch.clear()
    if batch:
        stream.write(b"\n".join(batch) + b"\n")


class SessionWriter:
    """Append-only writer: the header line first, then each ``append`` batch packed on its own."""

    def __init__(self, path: str | os.PathLike[str], header: dict[str, Any], *, pack: bool = True) -> None:
        p = os.fspath(path)
        self._stream: IO[bytes] = zstd.open_write(p) if zstd.is_zstd_path(p) else open(p, "wb")
        self.pack = pack
        self._stream.write(encode(header) + b"\n")

    def append(self, events: Iterable[Any]) -> None:
        """Write one batch of logical events (packed into rows when ``pack``)."""
        records = pack_chunk_runs(events) if self.pack else list(events)
        self.write_records(records)

    def write_records(self, records: Iterable[Any]) -> None:
        """Write storage records as they are (already packed or not)."""
        self._stream.write(b"".join(encode(r) + b"\n" for r in records))

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_session(path: str | os.PathLike[str], header: dict[str, Any], events: Iterable[Any], *,
                  pack: bool = True) -> None:
    """Write a whole session as one batch."""
    with SessionWriter(path, header, pack=pack) as writer:
        writer.append(events)
