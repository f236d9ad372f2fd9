"""Opening a served file only while it is inside its root, checked on every open (pages, follow, raw, listing).

Rules (DESIGN rule 9): the scan decides which files exist, but a file or a folder
on its way can be swapped for a symlink at any moment, so the path is looked up exactly once, relative to a
descriptor of the root's folder, and no symlink is followed on the way: ``openat2`` with ``RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` where the kernel has it (Linux 5.6), otherwise a walk of descriptors,
each folder opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one before and the file with ``O_NOFOLLOW``.
What was opened is then checked itself: it must be a regular file (``O_NONBLOCK``, so a FIFO put in its place never
blocks a worker). There is no second lookup, so there is no race between a check and an open. A symlink met on the
way, a path leaving the root, or a file that is not regular raises ``OutsideRootError`` (403).

Paths handed in are the scan's resolved paths (symlinks inside a root already followed by the scan), so a
symlink met here is one that appeared after the scan.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, cast

__all__ = [
    "OutsideRootError",
    "USE_OPENAT2",
    "open_in_root",
    "open_folder_in_root",
    "openat2_available",
]

_O_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_O_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (it came after the syscall table unification)
_AT_FDCWD = -100


class OutsideRootError(PermissionError):
    """A served path no longer names a regular file inside its root (a symlink, a FIFO, or a file elsewhere)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(errno.EACCES, f"refused: {reason}", str(path))
        self.path = path
        self.reason = reason


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_syscall = None
_openat2_state: bool | None = None  # None: not probed yet
if os.uname().sysname == "Linux":
    try:
        _syscall = ctypes.CDLL(None, use_errno=True).syscall
        _syscall.restype = ctypes.c_long
    except (OSError, AttributeError):  # pragma: no cover - no C library to call through
        _syscall = None


def _openat2(dirfd: int, relative: str, flags: int) -> int:
    """``openat2(dirfd, relative, {flags, resolve: BENEATH | NO_SYMLINKS | NO_MAGICLINKS})``: a descriptor.

    Raises:
        OSError: with the kernel's errno (``ENOSYS`` when the kernel has no ``openat2``).
    """
    assert _syscall is not None
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    fd = _syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dirfd), ctypes.c_char_p(os.fsencode(relative)),
                  ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), relative)
    return int(fd)


def openat2_available() -> bool:
    """Whether this kernel has ``openat2`` and lets this process call it (probed once: a seccomp filter may
    refuse it with ``ENOSYS`` or ``EPERM`` although the kernel is new enough)."""
    global _openat2_state
    if _openat2_state is None:
        _openat2_state = False
        if _syscall is not None:
            try:
                os.close(_openat2(_AT_FDCWD, ".", _O_FOLDER))
                _openat2_state = True
            except OSError:
                pass
    return _openat2_state


USE_OPENAT2: bool | None = None
"""Which way ``open_in_root`` looks a path up: None picks ``openat2`` when ``openat2_available()``; False forces the
descriptor walk (tests run both)."""


def _use_openat2() -> bool:
    return openat2_available() if USE_OPENAT2 is None else USE_OPENAT2 and openat2_available()


def _refusal(path: Path, exc: OSError) -> OSError:
    """What a failed lookup means: a symlink or an escape on the way is a refusal, anything else stays an OSError
    (gone: 404)."""
    if exc.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR):
        # ELOOP: a symlink (NO_SYMLINKS, O_NOFOLLOW); EXDEV: the lookup would leave the root (BENEATH); ENOTDIR: a
        # folder on the way is something else now (a symlink opened with O_DIRECTORY | O_NOFOLLOW on some kernels).
        return OutsideRootError(path, "the session path now leads outside the served folders (a symbolic link "
                                      "replaced a file or folder on the way)")
    return exc


def _parts(path: Path, root: Path) -> tuple[str, list[str]]:
    """The folder to start from and the components below it (``root`` itself is a file: its folder and name)."""
    if path == root:
        return str(root.parent), [root.name]
    try:
        relative = path.relative_to(root)
    except ValueError:
        raise OutsideRootError(path, "the session path is outside the served folders") from None
    parts = list(relative.parts)
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise OutsideRootError(path, "the session path is outside the served folders")
    return str(root), parts


def _open_beneath(start: str, parts: list[str], flags: int, path: Path) -> int:
    """One lookup of ``parts`` below the folder ``start`` (opened here), following no symlink."""
    top = os.open(start, _O_FOLDER & ~getattr(os, "O_NOFOLLOW", 0))  # the root itself: the user named it
    try:
        if _use_openat2():
            try:
                return _openat2(top, "/".join(parts), flags)
            except OSError as exc:
                raise _refusal(path, exc) from None
        fd = top
        try:
            for part in parts[:-1]:
                following = os.open(part, _O_FOLDER, dir_fd=fd)
                if fd != top:
                    os.close(fd)
                fd = following
            return os.open(parts[-1], flags, dir_fd=fd)
        except OSError as exc:
            raise _refusal(path, exc) from None
        finally:
            if fd != top:
                os.close(fd)
    finally:
        os.close(top)


def open_in_root(path: Path, root: Path) -> BinaryIO:
    """Open ``path`` for reading (unbuffered) if it is a regular file inside ``root`` (a resolved folder, or the
    resolved file itself when a single file is served), looked up once with no symlink followed below ``root``.

    Raises:
        OutsideRootError: a symlink is on the way, the path leaves ``root``, or it is not a regular file.
        OSError: the file cannot be opened (gone, no permission).
    """
    start, parts = _parts(path, root)
    fd = _open_beneath(start, parts, _O_FILE, path)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OutsideRootError(path, "the session path is no longer a regular file")
        return cast(BinaryIO, os.fdopen(fd, "rb", buffering=0))
    except BaseException:
        os.close(fd)
        raise


def open_folder_in_root(path: Path, root: Path) -> int:
    """A descriptor of the folder holding ``path``, looked up as ``open_in_root`` looks up a file (so the files
    beside it, a SQLite session's ``-wal``, can be looked at without a second path lookup). The caller closes it.

    Raises:
        OutsideRootError, OSError: as ``open_in_root``.
    """
    start, parts = _parts(path, root)
    if len(parts) == 1:
        return os.open(start, _O_FOLDER & ~getattr(os, "O_NOFOLLOW", 0))
    return _open_beneath(start, parts[:-1], _O_FOLDER, path)
