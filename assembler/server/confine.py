"""Opening a served file only while it is inside its root, checked on every open (pages, follow, raw, listing).

Rules (DESIGN rule 9, issue 9 item 12): the scan decides which files exist, but a file can be swapped for a symlink
afterwards, so the check is repeated on the opened file itself: the last path component is opened with
``O_NOFOLLOW`` (a symlink is refused outright), the descriptor must be a regular file (``O_NONBLOCK`` so a FIFO put
in its place never blocks a worker), and the path, resolved after the open, must lie inside the root and name the
very file that was opened (same device and inode). A directory swapped for a symlink on the way, or a file
swapped back and forth, fails the last check. What is refused raises ``OutsideRootError`` (403).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, cast

__all__ = [
    "OutsideRootError",
    "open_in_root",
]


class OutsideRootError(PermissionError):
    """A served path no longer names a regular file inside its root (a symlink, a FIFO, or a file elsewhere)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(errno.EACCES, f"refused: {reason}", str(path))
        self.path = path
        self.reason = reason


def open_in_root(path: Path, root: Path) -> BinaryIO:
    """Open ``path`` for reading (unbuffered) if it is a regular file inside ``root`` (a resolved folder, or the
    resolved file itself when a single file is served).

    Raises:
        OutsideRootError: the path is a symlink now, not a regular file, or resolves outside ``root`` or to
            another file than the one opened.
        OSError: the file cannot be opened (gone, no permission).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutsideRootError(path, "the session file was replaced by a symbolic link") from None
        raise
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise OutsideRootError(path, "the session path is no longer a regular file")
        resolved = Path(os.path.realpath(path))
        if resolved != root and not resolved.is_relative_to(root):
            raise OutsideRootError(path, "the session path now leads outside the served folders")
        try:
            there = os.stat(resolved)
        except OSError:
            raise OutsideRootError(path, "the session path changed while it was opened") from None
        if (there.st_dev, there.st_ino) != (opened.st_dev, opened.st_ino):
            raise OutsideRootError(path, "the session path changed while it was opened")
        return cast(BinaryIO, os.fdopen(fd, "rb", buffering=0))
    except BaseException:
        os.close(fd)
        raise
