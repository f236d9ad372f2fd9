"""The one place that knows zstd: a streaming decoder that refuses damaged streams, and the compressing writers.

Rules: two backends with one behaviour: ``compression.zstd`` (Python 3.14, Pyodide) and ``zstandard`` (CPython
3.11-3.13). ``ZstdDecoder`` is sans-I/O (compressed bytes in, decompressed bytes out) and ``finish`` raises when the
stream is damaged: cut inside a frame (``ZstdTruncatedError``), bytes after a frame that are not a frame
(``ZstdDataError``), or, for line-oriented data, decoded text that stops inside a line (a missing last frame). Every
message says how far the stream was good: ``truncated zstd stream after N bytes / line L`` (N compressed bytes read,
L complete lines decoded). Nothing decoded before the damage is lost: ``feed`` already returned it.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import IO, Any, Final, cast

from ..errors import AssemblerError
from ..formats import ZSTD

__all__ = [
    "ZstdStreamError",
    "ZstdTruncatedError",
    "ZstdDataError",
    "ZstdDecoder",
    "ZstdReader",
    "is_zstd_path",
    "compress",
    "open_write",
    "compressing_writer",
]

try:  # Python 3.14+ (and Pyodide)
    _std: Any = importlib.import_module("compression.zstd")
except ImportError:  # CPython 3.11-3.13
    _std = None
    import zstandard as _zstandard

_READ_SIZE: Final = 64 << 10
"""Compressed bytes per read in ``ZstdReader``: bounds one decode's output (a log compressing 80x gives 5 MB)."""

PIECE_IN: Final = 512
"""Compressed bytes per ``ZstdDecoder.pieces`` slice: at most about 16 MiB of output (a zstd RLE block of 4 bytes
can stand for 128 KiB)."""


class ZstdStreamError(AssemblerError):
    """A zstd stream is damaged. ``offset``: compressed bytes read when it was found; ``line``: complete lines
    decoded before it (0 when the data is not line-oriented or no line was complete)."""

    def __init__(self, message: str, offset: int, line: int) -> None:
        super().__init__(message, offset, line)
        self.message = message
        self.offset = offset
        self.line = line

    def __str__(self) -> str:
        return self.message


class ZstdTruncatedError(ZstdStreamError):
    """The stream ends inside a frame, has no frame at all, or (line data) stops inside a line."""


class ZstdDataError(ZstdStreamError):
    """Bytes that are not zstd: garbage after a valid frame, or a corrupt frame (bad checksum, bad block)."""


def is_zstd_path(path: Any) -> bool:
    """True for a path named as zstd-compressed (``formats.ZSTD``'s suffix)."""
    return str(path).endswith(ZSTD.suffixes)


def _backend(module: ModuleType | None) -> tuple[Callable[[], Any], type[Exception]]:
    """A factory of one-frame decompressors (``.decompress(data)``, ``.eof``, ``.unused_data``) and the backend's
    error class. ``module`` is anything with the ``compression.zstd`` API (tests pass ``backports.zstd``)."""
    std = module if module is not None else _std
    if std is not None:
        return std.ZstdDecompressor, std.ZstdError
    factory = _zstandard.ZstdDecompressor()
    return factory.decompressobj, _zstandard.ZstdError


def _looks_like_frame(head: bytes) -> bool:
    """Whether ``head`` (the first 0-4 bytes of a frame) is, or could still become, a zstd or skippable frame's
    magic number (``28 b5 2f fd``; ``5? 2a 4d 18``)."""
    if b"\x28\xb5\x2f\xfd".startswith(head):
        return True
    return head[0] & 0xF0 == 0x50 and b"\x2a\x4d\x18".startswith(head[1:4])


class ZstdDecoder:
    """Decompresses a zstd stream (any number of frames, skippable ones included) fed in pieces of any size.

    ``feed`` returns what the piece completes; ``finish`` checks how the stream ended. A damaged piece still returns
    everything decoded before the damage; the error is raised by the next ``feed`` or by ``finish``. With
    ``lines=True`` the decoded data is line-oriented (JSONL) and must end with a newline: text cut inside a line
    means a frame is missing, which is reported as truncation (a whole frame missing exactly at a line boundary
    cannot be told from the end of the file; the README says so).

    Raises (``feed`` and ``finish``):
        ZstdDataError: bytes that are not zstd (garbage after a frame), or a corrupt frame.
        ZstdTruncatedError: (``finish``) the stream stops inside a frame, has no frame, or stops inside a line.
    """

    def __init__(self, *, lines: bool = False, module: ModuleType | None = None) -> None:
        self._new, self._error = _backend(module)
        self._d: Any = None  # the current frame's decompressor; None between frames
        self._head = b""  # the first bytes of the current frame, until there are 4 (to tell garbage from damage)
        self._frame_start = 0
        self._frames = 0
        self._text = lines
        self._last = b"\n"
        self._failure: ZstdStreamError | None = None
        self.consumed = 0
        """Compressed bytes fed so far."""
        self.lines = 0
        """Complete lines decoded so far (newlines seen)."""
        self.produced = 0
        """Decompressed bytes returned so far."""

    def _where(self, offset: int) -> str:
        return f"after {offset} bytes / line {self.lines}"

    def feed(self, data: bytes | bytearray | memoryview) -> bytes:
        """Decompress one more piece of the stream; returns the bytes it completes (maybe none)."""
        if self._failure is not None:
            raise self._failure
        chunk = bytes(data)
        pos = self.consumed  # stream offset of chunk[0]
        self.consumed += len(chunk)
        out: list[bytes] = []
        while chunk:
            if self._d is None:
                self._d = self._new()
                self._head = b""
                self._frame_start = pos
            if len(self._head) < 4:
                self._head += chunk[: 4 - len(self._head)]
            try:
                piece = self._d.decompress(chunk)
            except self._error as exc:
                done = self._emit(out)
                self._fail(str(exc))
                return done
            if piece:
                out.append(piece)
            if self._d.eof:
                rest = bytes(self._d.unused_data)
                pos += len(chunk) - len(rest)
                self._frames += 1
                self._d = None
                chunk = rest
            else:
                chunk = b""
        return self._emit(out)

    def pieces(self, data: bytes | bytearray | memoryview) -> Iterator[bytes]:
        """``feed`` in slices of at most ``PIECE_IN`` compressed bytes, yielding each non-empty output: a highly
        compressed read comes out in bounded pieces (a zstd block expands at most about 32,000 times, so a piece is
        at most about 16 MiB), never all at once. Consume each piece before taking the next."""
        view = memoryview(data)
        for start in range(0, len(view), PIECE_IN):
            out = self.feed(view[start:start + PIECE_IN])
            if out:
                yield out

    def _fail(self, reason: str) -> None:
        start = self._frame_start
        if _looks_like_frame(self._head):
            message = f"corrupt zstd frame {self._where(start)}: {reason}"
        elif self._frames:
            message = f"garbage after the last zstd frame {self._where(start)}"
        else:
            message = f"not zstd data {self._where(start)}"
        self._failure = ZstdDataError(message, start, self.lines)

    def _emit(self, out: list[bytes]) -> bytes:
        data = b"".join(out)
        if data:
            self.lines += data.count(b"\n")
            self.produced += len(data)
            self._last = data[-1:]
        return data

    def finish(self) -> None:
        """Check that the stream ended cleanly (after a whole frame and, for lines, after a newline)."""
        if self._failure is not None:
            raise self._failure
        where = self._where(self.consumed)
        if self._d is not None:
            raise ZstdTruncatedError(f"truncated zstd stream {where} (the last frame is cut off)",
                                     self.consumed, self.lines)
        if self._frames == 0:
            raise ZstdTruncatedError(f"truncated zstd stream {where} (no zstd frame)", self.consumed, self.lines)
        if self._text and self._last != b"\n":
            raise ZstdTruncatedError(f"truncated zstd stream {where} (the data stops inside line {self.lines + 1}: "
                                     "a frame is missing)", self.consumed, self.lines)


class ZstdReader(io.RawIOBase):
    """A readable raw stream of the decompressed data of ``raw`` (wrap it in ``io.BufferedReader`` for lines).

    Reading past the end checks the stream (``ZstdDecoder.finish``), so a damaged file raises ``ZstdStreamError``
    only after every byte decoded before the damage has been read. ``consumed`` is how many compressed bytes were
    read (for progress).
    """

    def __init__(self, raw: IO[bytes], *, lines: bool = False, closefd: bool = True,
                 module: ModuleType | None = None) -> None:
        super().__init__()
        self._raw = raw
        self._closefd = closefd
        self._decoder = ZstdDecoder(lines=lines, module=module)
        self._buf = memoryview(b"")
        self._done = False

    @property
    def consumed(self) -> int:
        return self._decoder.consumed

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            if self._done:
                return 0
            chunk = self._raw.read(_READ_SIZE)
            if not chunk:
                self._done = True
                self._decoder.finish()
                return 0
            self._buf = memoryview(self._decoder.feed(chunk))
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        if not self.closed and self._closefd:
            self._raw.close()
        super().close()


def compress(data: bytes, level: int = 3) -> bytes:
    if _std is not None:
        return bytes(_std.compress(data, level=level))
    return _zstandard.ZstdCompressor(level=level, write_checksum=True).compress(data)


def compressing_writer(raw: IO[bytes], level: int = 3) -> IO[bytes]:
    """A writable stream compressing into ``raw`` (one frame, with a content checksum). Closing it ends the frame
    and flushes it into ``raw`` but leaves ``raw`` open (the caller syncs and closes it)."""
    if _std is not None:
        options = {_std.CompressionParameter.compression_level: level, _std.CompressionParameter.checksum_flag: 1}
        return cast(IO[bytes], _std.ZstdFile(raw, "wb", options=options))
    compressor = _zstandard.ZstdCompressor(level=level, write_checksum=True)
    return cast(IO[bytes], compressor.stream_writer(raw, closefd=False))


def open_write(path: str, level: int = 3) -> IO[bytes]:
    """A compressing stream writing ``path`` directly (not atomic: commands use ``store.atomic``)."""
    raw = open(path, "wb")
    if _std is not None:
        return cast(IO[bytes], _std.ZstdFile(raw, "wb", level=level))
    return cast(IO[bytes], _zstandard.ZstdCompressor(level=level).stream_writer(raw, closefd=True))
