"""The one place that picks a zstd implementation: ``compression.zstd`` (Python 3.14, Pyodide) or ``zstandard``."""

from __future__ import annotations

import io
from typing import IO, Any

__all__ = ["is_zstd_path", "decompress", "compress", "open_read", "open_write"]

try:  # Python 3.14+ (and Pyodide)
    from compression import zstd as _std  # type: ignore[import-not-found]
except ImportError:  # CPython 3.11-3.13
    _std = None
    import zstandard as _zstandard


def is_zstd_path(path: Any) -> bool:
    return str(path).endswith(".zst")


def decompress(data: bytes) -> bytes:
    if _std is not None:
        return bytes(_std.decompress(data))
    return _zstandard.ZstdDecompressor().decompressobj().decompress(data)


def compress(data: bytes, level: int = 3) -> bytes:
    if _std is not None:
        return bytes(_std.compress(data, level=level))
    return _zstandard.ZstdCompressor(level=level).compress(data)


def open_read(path: str) -> IO[bytes]:
    """A buffered binary stream of the decompressed file (streaming; the file is never read whole)."""
    if _std is not None:
        return _std.open(path, "rb")  # type: ignore[no-any-return]
    raw = open(path, "rb")
    reader = _zstandard.ZstdDecompressor().stream_reader(raw, closefd=True, read_across_frames=True)
    return io.BufferedReader(reader, buffer_size=1 << 20)


def open_write(path: str, level: int = 3) -> IO[bytes]:
    if _std is not None:
        return _std.open(path, "wb", level=level)  # type: ignore[no-any-return]
    raw = open(path, "wb")
    return _zstandard.ZstdCompressor(level=level).stream_writer(raw, closefd=True)
