"""Is a file a complete SQLite database? Checked on its first 100 bytes and its size before ``sqlite3`` sees it, so a
file that is empty, not SQLite or cut short is a clear error (``BadFile``, which ``store.sqlite``
turns into a ``StoreError`` naming the path).

Rules: the header's magic string, its page size and page count (when the header says they are valid) against the
file's size; nothing else is read.
"""

from __future__ import annotations

import os
import struct

__all__ = ["BadFile", "check_file", "check_head"]

_MAGIC = b"SQLite format 3\x00"


class BadFile(ValueError):
    """Not a complete SQLite file; the message says why (``store.sqlite`` names the path)."""


def check_file(path: str) -> None:
    """Reject what is not a complete SQLite file before sqlite3 sees it.

    Raises:
        BadFile: missing, unreadable, empty, not SQLite or truncated.
    """
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        raise BadFile("no such file") from None
    except OSError as exc:
        raise BadFile(f"cannot read: {exc.strerror or exc}") from None
    check_head(head, size)


def check_head(head: bytes | bytearray | memoryview, size: int) -> None:
    """Reject a file of ``size`` bytes starting with ``head`` (its first 100 bytes) that is no complete SQLite file."""
    head = bytes(head[:100])
    if size == 0:
        raise BadFile("empty file, not a SQLite session database")
    if len(head) < len(_MAGIC):
        if _MAGIC.startswith(head):
            raise BadFile(f"truncated SQLite file ({size} bytes)")
        raise BadFile("not a SQLite database (bad file header)")
    if head[: len(_MAGIC)] != _MAGIC:
        raise BadFile("not a SQLite database (bad file header)")
    if len(head) < 100:
        raise BadFile(f"truncated SQLite file ({size} bytes, the header alone is 100)")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, page_count = struct.unpack(">II", head[24:32])
    valid_for = struct.unpack(">I", head[92:96])[0]
    if page_count and valid_for == change_counter and size < page_size * page_count:
        raise BadFile(f"truncated SQLite file: {size} bytes, its header says {page_count} pages of "
                      f"{page_size} bytes ({page_size * page_count})")
