"""Reading a served SQLite session from the descriptor ``confine`` checked, never by looking its path up again.

Rules: a SQLite session with no pending ``-wal`` or ``-journal`` beside it (looked at through a
descriptor of its folder, opened beneath the root like the file) is read from the checked descriptor into memory
and opened there (``store.sqlite.read_sqlite_image``): one lookup, no race. A session with a pending log needs
SQLite itself to find its ``-wal`` and share a live writer's locks, so SQLite opens it by path; the path is checked
to name the same file (device and inode, looked up beneath the root) before and after the read, and a log beside it
that is a symlink is refused. What cannot be read is the session's error, never an exception for the caller.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..errors import SessionFileError
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from ..store.sqlite import StoreError, read_sqlite, read_sqlite_image
from .confine import OutsideRootError, open_folder_in_root, open_in_root

__all__ = ["read_served_database"]

_LOGS = ("-wal", "-journal")


def _pending_log(path: Path, root: Path) -> bool:
    """Whether a non-empty ``-wal`` or ``-journal`` lies beside ``path`` (looked at through its folder's descriptor).

    Raises:
        OutsideRootError: one of them is a symlink or not a regular file.
    """
    folder = open_folder_in_root(path, root)
    try:
        for suffix in _LOGS:
            try:
                st = os.stat(path.name + suffix, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                raise OutsideRootError(path, f"the {suffix[1:]} file beside the session is not a regular file")
            if st.st_size > 0:
                return True
        return False
    finally:
        os.close(folder)


def _same_file(path: Path, root: Path, opened: os.stat_result) -> None:
    with open_in_root(path, root) as again:
        st = os.fstat(again.fileno())
    if (st.st_dev, st.st_ino) != (opened.st_dev, opened.st_ino):
        raise OutsideRootError(path, "the session path changed while it was read")


def _image(stream: BinaryIO, size: int) -> bytearray:
    """The file's bytes (its size when checked), read through the checked descriptor."""
    image = bytearray(size)
    view, done, fd = memoryview(image), 0, stream.fileno()
    while done < size:
        n = os.preadv(fd, [view[done:]], done)
        if n == 0:
            break
        done += n
    del view
    del image[done:]
    return image


def read_served_database(path: Path, root: Path, stream: BinaryIO, *,
                         max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES) -> LoadResult:
    """The whole SQLite session ``path`` (``stream``: its descriptor from ``confine.open_in_root``); a file that is
    not a session database gives a result whose ``error`` says so, and so does a column longer than
    ``max_line_bytes``.

    Raises:
        OutsideRootError: a log beside it is a symlink, or the path changed while a live database was read.
        OSError: the file cannot be read.
    """
    opened = os.fstat(stream.fileno())
    try:
        if not _pending_log(path, root):
            return read_sqlite_image(str(path), _image(stream, opened.st_size), max_line_bytes=max_line_bytes)
        _same_file(path, root, opened)
        result = read_sqlite(path, max_line_bytes=max_line_bytes)
        _same_file(path, root, opened)
        return result
    except StoreError as exc:
        result = LoadResult()
        result.error = SessionFileError(str(exc))
        return result
