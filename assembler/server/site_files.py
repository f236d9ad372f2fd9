"""Writing a published site's files: each one whole, renamed into place, with its precompressed variants beside it.

Rules: a file is written to a temporary file in its folder and renamed over its name (``store.atomic``), so a reader
gets the old bytes or the new ones, never a part; a file whose bytes are already there is not written again (a
reader holding the old version keeps a consistent one, and an unchanged site costs reads, no writes). Beside
``NAME`` go ``NAME.gz`` (gzip level 9, 6 from ``GZIP_FAST_BYTES`` up; no timestamp: the same bytes each time) and,
when the ``brotli`` package is installed (the ``publish`` extra), ``NAME.br`` (quality ``BROTLI_QUALITY``), for
hosts that serve precompressed files (nginx ``gzip_static``, ``brotli_static``; object stores with
``Content-Encoding``); the variants are written before the plain file. A variant is kept only when it is smaller
than the plain file; an old variant that is no longer kept is removed (a host must never serve a stale one).
Already-compressed files (``COMPRESSED``) get none.
The same bytes written twice in a row (a session's first page is its whole session when it holds one page) are
compressed once (the variants of the last ``_PACKED_KEPT`` files under ``GZIP_FAST_BYTES`` are kept by content).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..store.atomic import atomic_output
from .site_paths import SESSIONS

__all__ = ["COMPRESSED", "VARIANTS", "fingerprint", "remove_file", "write_file"]

COMPRESSED = (".gz", ".br", ".zst", ".zip", ".whl", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".woff2")
"""Suffixes of files stored as they are: compressing them again gains nothing."""
_CHUNK = 1 << 20
"""Bytes read at a time while hashing a file for its fingerprint."""
BROTLI_QUALITY = 8
"""Brotli's quality for ``.br`` variants. Measured on published pages (``perf/bench_publish``, and the real sessions
of the corpus): 11 (brotli's slowest) makes files 12% smaller than 8 on real pages but takes 40 times as long (a
first publish of 1,000 sessions spent most of its time there); 9 gains under 1% over 8 at 5 times the time; 8 is
still 10% smaller than gzip -9."""
GZIP_FAST_BYTES = 1 << 20
"""Files of this size and more are gzipped at level 6, not 9: on a 2.4 MB index shard 9 took 8 times as long for 5%
fewer bytes (0.51 s against 0.06 s; a republish writes a 16 MB shard again), on the viewer's 9.6 MB runtime twice as
long for 0.5%. On pages (under it) level 9 costs about what 6 does on real sessions."""
_PACKED_KEPT = 4


def _brotli() -> Callable[[bytes], bytes] | None:
    try:
        import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return None

    def compress(data: bytes) -> bytes:
        return bytes(brotli.compress(data, quality=BROTLI_QUALITY))

    return compress


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9 if len(data) < GZIP_FAST_BYTES else 6, mtime=0)


_BROTLI = _brotli()
VARIANTS: tuple[tuple[str, Callable[[bytes], bytes] | None], ...] = ((".gz", _gzip), (".br", _BROTLI))
"""The precompressed variants: suffix and compressor (None: not available here, no such file is written)."""


def fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a source file's content: size, mtime (ns) and the sha256 of all its bytes (read in
    ``_CHUNK`` slices). A file rewritten in place with its size and mtime kept (``cp -p``, ``rsync -t``) still
    differs in its hash; publishing reads every file to list it anyway, so hashing it whole costs little more.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        st = os.fstat(stream.fileno())
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return {"size": st.st_size, "mtimeNs": st.st_mtime_ns, "sha256": digest.hexdigest()}


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _put(path: Path, data: bytes) -> bool:
    """Write ``data`` at ``path`` whole (temporary file + rename) unless it is there already; True if written."""
    if _same(path, data):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as out:
        out.write(data)
    return True


_packed_lock = threading.Lock()
_packed: dict[tuple[bytes, str], bytes] = {}  # (sha256 of the bytes, suffix) -> that variant, the last few files'


def _pack(data: bytes, suffix: str, compress: Callable[[bytes], bytes]) -> bytes:
    """``compress(data)``, once for the same bytes written again soon after (pages: a file of ``GZIP_FAST_BYTES``
    or more is never kept)."""
    if len(data) >= GZIP_FAST_BYTES:
        return compress(data)
    key = (hashlib.sha256(data).digest(), suffix)
    packed = _packed.get(key)
    if packed is None:
        packed = compress(data)
        with _packed_lock:
            _packed[key] = packed
            while len(_packed) > _PACKED_KEPT * len(VARIANTS):
                del _packed[next(iter(_packed))]  # the oldest
    return packed


def write_file(path: Path, data: bytes) -> bool:
    """Write ``path`` and its precompressed variants (see the module rules); True when anything was written.

    Raises:
        OutputError: a file cannot be written (the old one stays).
    """
    written = False
    compressible = not path.name.endswith(COMPRESSED)
    for suffix, compress in VARIANTS:
        variant = path.with_name(path.name + suffix)
        packed = _pack(data, suffix, compress) if compress is not None and compressible else None
        if packed is not None and len(packed) < len(data):
            written |= _put(variant, packed)
        elif variant.exists():
            variant.unlink()
            written = True
    written |= _put(path, data)
    return written


def remove_file(path: Path) -> None:
    """Remove ``path`` and its variants (those that exist), and its session folder once that is empty."""
    for name in (path.name, *(path.name + suffix for suffix, _ in VARIANTS)):
        try:
            (path.parent / name).unlink()
        except FileNotFoundError:
            pass
    folder = path.parent
    if folder.parent.name == SESSIONS and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
