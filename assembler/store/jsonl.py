"""Session JSONL files on disk: read (streaming, ``.jsonl`` or ``.jsonl.zst``) and write (packed per batch).

Rules: a file is read in bounded slices, never held as one string; parsing is ``logfile.LogLoader`` (the sans-I/O
parser carries a line split across slices). Writes pack
each append batch with the chunk-row codec unless ``pack=False`` (PROTOCOL 2.3: the reader ignores that option).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, cast

from ..chunk_rows import pack_chunk_runs
from ..errors import SessionFileError
from ..logfile import (
    DEFAULT_MAX_LINE_BYTES,
    NEED_DATA,
    LoadResult,
    LogLoader,
    LogParser,
    Record,
    note_event,
)
from ..records import StorageRecord, encode
from . import zstd
from .feed import PIECE, ZSTD_PIECE, feed_all, pieces

__all__ = ["read_session", "read_stream", "SessionStream", "write_session", "write_jsonl", "SessionWriter"]

ProgressFn = Callable[[int, int], None]
"""``progress(bytes_read, total_bytes)``; ``total_bytes`` is the on-disk size (compressed for ``.zst``)."""


def read_session(path: str | os.PathLike[str], *, strict: bool = False, progress: ProgressFn | None = None,
                 max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES, pack_deltas: bool = False) -> LoadResult:
    """Read a session log. Faults are reported in ``result.error`` with the line; nothing before them is lost.
    ``pack_deltas``: runs of delta lines are held as rows (``read_stream``).

    Raises:
        OSError: the file cannot be opened.
    """
    p = os.fspath(path)
    with open(p, "rb", buffering=0) as raw:
        return read_stream(raw, source=p, compressed=zstd.is_zstd_path(p), strict=strict, progress=progress,
                           max_line_bytes=max_line_bytes, pack_deltas=pack_deltas)


def read_stream(raw: IO[bytes], *, source: str, compressed: bool, strict: bool = False,
                progress: ProgressFn | None = None,
                max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES, pack_deltas: bool = False) -> LoadResult:
    """Read a session log from an open binary file (the server opens and checks it first). ``compressed``: the
    bytes are a ``.jsonl.zst`` stream; a damaged one ends the parse with a ``SessionFileError`` saying how far it
    was good (``truncated zstd stream after N bytes / line L``), everything decoded before the damage kept. A line
    longer than ``max_line_bytes`` ends the parse with an error naming it (never a ``MemoryError``). ``pack_deltas``:
    runs of delta lines come as rows (``logfile.LogParser``), for a reader that repacks what it reads.

    Raises:
        OSError: the file cannot be read.
    """
    loader = LogLoader(strict=strict, max_line_bytes=max_line_bytes, pack_deltas=pack_deltas)
    total = os.fstat(raw.fileno()).st_size
    read, decoder = _reader(raw, compressed)
    damage = feed_all(read, loader.feed, more=lambda: loader.result.error is None, decoder=decoder,
                      progress=None if progress is None else lambda done: progress(done, total))
    if damage is not None and loader.result.error is None:
        loader.result.error = SessionFileError(damage)
    result = loader.finish()
    if progress is not None:
        progress(total, total)
    return result


def _reader(raw: IO[bytes], compressed: bool) -> tuple[Callable[[], memoryview], zstd.ZstdDecoder | None]:
    """Reads of ``raw`` into one reused buffer (the parser copies what it keeps), and the decoder of a zstd
    stream: a compressed read is smaller, bounding what one decode gives."""
    decoder = zstd.ZstdDecoder(lines=True) if compressed else None
    buffer = bytearray(PIECE if decoder is None else ZSTD_PIECE)
    view = memoryview(buffer)
    readinto = cast(Any, raw).readinto  # every binary stream has it; ``IO[bytes]`` does not say so

    def read() -> memoryview:
        return view[:readinto(buffer) or 0]

    return read, decoder


def write_jsonl(stream: IO[bytes], header: dict[str, Any], records: Iterable[Any], batch_size: int = 4096,
                batch_bytes: int = 1 << 20) -> None:
    """Write the header line, then one compact JSON line per storage record, in batches of at most ``batch_size``
    lines or about ``batch_bytes`` bytes (streams any iterable; a batch of big rows is never held whole)."""
    stream.write(encode(header) + b"\n")
    batch: list[bytes] = []
    size = 0
    for record in records:
        line = encode(record)
        batch.append(line)
        size += len(line)
        if len(batch) >= batch_size or size >= batch_bytes:
            stream.write(b"\n".join(batch) + b"\n")
            batch.clear()
            size = 0
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


class SessionStream:
    """A session log read record by record: ``header`` is known once the object exists, iterating yields the
    storage records in order (nothing kept), and ``result`` (a ``LoadResult`` without records: counts, lines,
    warnings, the fault) is complete when the iteration ends. Peak memory does not grow with the file.

    Raises (constructor):
        OSError: the file cannot be opened or read.
    """

    def __init__(self, path: str | os.PathLike[str], *, strict: bool = False, progress: ProgressFn | None = None,
                 max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES, pack_deltas: bool = False) -> None:
        p = os.fspath(path)
        self.path = p
        self.result = LoadResult()
        self.record_count = 0
        self._raw = open(p, "rb", buffering=0)
        try:
            self._total = os.fstat(self._raw.fileno()).st_size
            self._progress = progress
            self._parser = LogParser(strict=strict, max_line_bytes=max_line_bytes, pack_deltas=pack_deltas)
            read, decoder = _reader(self._raw, zstd.is_zstd_path(p))
            total = self._total
            self._pieces = pieces(read, decoder=decoder,
                                  progress=None if progress is None else lambda done: progress(done, total))
            self._gen = self._records()
            self._first: list[StorageRecord] = []
            for record in self._gen:  # the header comes first: parse until it is known
                self._first.append(record)
                break
        except BaseException:
            self._raw.close()
            raise

    @classmethod
    def held(cls, result: LoadResult, path: str = "") -> SessionStream:
        """A session already read whole (SQLite, another harness's log, an object in storage), passed over the same
        way: its records in order, then ``result`` as it is."""
        stream = cls.__new__(cls)
        stream.path, stream.result, stream.record_count = path, result, len(result.records)
        stream._first, stream._gen = result.records, iter(())
        return stream

    @property
    def header(self) -> dict[str, Any] | None:
        return self.result.header

    def __iter__(self) -> Iterator[StorageRecord]:
        yield from self._first
        self._first = []
        yield from self._gen

    def _records(self) -> Iterator[StorageRecord]:
        parser, result = self._parser, self.result
        try:
            while True:
                event = parser.next_event()
                if note_event(result, event):
                    if type(event) is Record:
                        self.record_count += 1
                        yield event.value
                elif event is NEED_DATA:
                    try:
                        parser.feed(next(self._pieces))
                    except StopIteration:
                        parser.feed_eof()
                    except zstd.ZstdStreamError as exc:
                        result.error = SessionFileError(exc.message)
                        break
                else:
                    break
        finally:
            self._raw.close()
            result.lines = parser.lines
            if self._progress is not None:
                self._progress(self._total, self._total)
        if result.error is None and result.header is None:
            result.error = SessionFileError("empty file: expected a session header", line=max(result.lines, 1))
