"""Has a file been rewritten since it was read up to an offset?

Rules: what was read is identified by the file's device and inode, its size and mtime, and hashes of its first KiB
and of the KiB before the read offset. A later look at the same path is ``unchanged`` (same size and mtime),
``grown`` (same file, the bytes before the offset still the same: read on from the offset) or ``rewritten`` (another
inode, shorter than the offset, or either KiB differs: read it again from the start, as a fresh snapshot). A rewrite
that keeps the size, the mtime and both KiBs cannot be told apart (the README says so).
"""

from __future__ import annotations

import hashlib
import os
from typing import Literal

__all__ = ["Identity", "Change", "identity_of", "compare"]

Change = Literal["unchanged", "grown", "rewritten"]
_KIB = 1024


def _hash(fd: int, start: int, end: int) -> bytes:
    return hashlib.blake2b(os.pread(fd, end - start, start) if end > start else b"", digest_size=16).digest()


class Identity:
    """What a reader saw of a file read up to ``offset``."""

    __slots__ = ("dev", "ino", "size", "mtime_ns", "offset", "head", "before")

    def __init__(self, dev: int, ino: int, size: int, mtime_ns: int, offset: int, head: bytes, before: bytes) -> None:
        self.dev = dev
        self.ino = ino
        self.size = size
        self.mtime_ns = mtime_ns
        self.offset = offset
        self.head = head
        self.before = before


def identity_of(fd: int, offset: int, st: os.stat_result | None = None) -> Identity:
    """The identity of the open file ``fd`` read up to ``offset``."""
    st = os.fstat(fd) if st is None else st
    return Identity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, offset, _hash(fd, 0, min(_KIB, offset)),
                    _hash(fd, max(0, offset - _KIB), offset))


def compare(old: Identity | None, fd: int, st: os.stat_result | None = None) -> Change:
    """How the open file ``fd`` relates to what was read of it (``old``; None: nothing was: ``rewritten``)."""
    if old is None:
        return "rewritten"
    st = os.fstat(fd) if st is None else st
    if (st.st_dev, st.st_ino) != (old.dev, old.ino) or st.st_size < old.offset:
        return "rewritten"
    if st.st_size == old.size and st.st_mtime_ns == old.mtime_ns:
        return "unchanged"
    offset = old.offset
    if _hash(fd, 0, min(_KIB, offset)) != old.head or _hash(fd, max(0, offset - _KIB), offset) != old.before:
        return "rewritten"
    return "grown" if st.st_size > offset else "unchanged"
