"""The one loop that drives a reader over a file's bytes: read a piece, decompress it when the bytes are a zstd
stream, feed what comes out, until the input ends or the reader says stop.

Rules: the caller reads (a ``read()`` giving the next bytes, empty at the end: a file, a descriptor at an offset, a
ranged fetch); nothing here opens a file. ``progress(done)`` follows every raw piece once all of it was fed, with
the raw (compressed) bytes read so far. A damaged zstd stream ends the feed after every good line before the damage
was fed; the damage is returned as the reader's fault text (``truncated zstd stream after N bytes / line L``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .zstd import ZstdDecoder, ZstdStreamError

__all__ = ["Piece", "PIECE", "ZSTD_PIECE", "pieces", "feed_all"]

Piece = bytes | bytearray | memoryview
"""Bytes as a reader is fed them."""
PIECE = 256 << 10
"""Bytes per read from a local file: bounded, so a file is never held whole (longer lines still work)."""
ZSTD_PIECE = 64 << 10
"""Compressed bytes per read: bounds one decode's output (a log compressing 80x gives 5 MB)."""


def pieces(read: Callable[[], Piece], *, more: Callable[[], bool] | None = None,
           decoder: ZstdDecoder | None = None, progress: Callable[[int], None] | None = None) -> Iterator[Piece]:
    """The plain bytes of the input in bounded pieces (``decoder``: decompressed as they come). Before each read,
    ``more()`` false stops it.

    Raises:
        ZstdStreamError: the compressed stream is damaged (after every piece decoded before the damage).
    """
    done = 0
    while more is None or more():
        chunk = read()
        if not chunk:
            if decoder is not None:
                decoder.finish()  # a damaged end raises here, after every good line was handed out
            return
        done += len(chunk)
        if decoder is None:
            yield chunk
        else:
            yield from decoder.pieces(chunk)  # bounded pieces, each fed before the next is decoded
        if progress is not None:
            progress(done)


def feed_all(read: Callable[[], Piece], feed: Callable[[Piece], Any], *, more: Callable[[], bool] | None = None,
             decoder: ZstdDecoder | None = None, progress: Callable[[int], None] | None = None) -> str | None:
    """Feed every piece of the input to ``feed`` (``pieces``). Returns the damage of a broken zstd stream as the
    reader's fault text, None when there was none."""
    try:
        for piece in pieces(read, more=more, decoder=decoder, progress=progress):
            feed(piece)
    except ZstdStreamError as exc:
        return exc.message
    return None
