"""Atomic outputs: every file a command writes is written whole to a temporary file beside it, synced, and renamed
into place; the path it replaces is checked first.

Rules (DESIGN rule 9):

* An output path that is a symbolic link, a directory, a device, FIFO or socket is refused (``UnsafeOutputError``),
  never written through or replaced. An output that is the same file as one of the inputs (same device and inode,
  whether reached by the same name, another name, a hard link or a symlinked folder) is refused (``SameFileError``).
* The files a writer makes beside its output (a SQLite output's ``-wal``, ``-shm``, ``-journal``) are outputs too:
  one that is an input is a ``SameFileError``, one that merely exists is refused as well. Nothing is ever removed
  that this module did not create: only the temporary file and the side files of the temporary file.
* The data goes to ``.NAME.RANDOM.tmp`` in the output's folder (same file system, so the rename is atomic). Only
  after the writer finished, flushed and ``fsync``-ed it is it renamed over the output (and the folder synced). An
  error or a signal before that removes the temporary file and leaves the old output exactly as it was.
* A new output gets the usual ``0666 & ~umask`` mode; a replaced one keeps its mode. An existing output this process
  may not write (``os.access``: mode 0444 for anyone but a privileged user) is refused, not replaced.
* ``signals_as_exceptions`` (the CLI installs it) turns SIGINT, SIGTERM and SIGHUP into exceptions and holds them
  back while a temporary file is being created, renamed or removed, so an interrupt never leaves one behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import IO, Any

from ..errors import AssemblerError

__all__ = [
    "OutputError",
    "SameFileError",
    "UnsafeOutputError",
    "Interrupted",
    "check_output",
    "atomic_output",
    "atomic_path",
    "signals_as_exceptions",
    "reason_of",
    "same_file_check",
]

PathLike = str | os.PathLike[str]


class OutputError(AssemblerError):
    """An output cannot be written. ``path`` names it (``<stdout>`` for standard output); ``reason`` says why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class SameFileError(OutputError):
    """The output is one of the inputs (same device and inode)."""


class UnsafeOutputError(OutputError):
    """The output path is a symlink, a directory or not a regular file: it is never written through or replaced."""


class Interrupted(BaseException):
    """SIGTERM or SIGHUP arrived (SIGINT stays ``KeyboardInterrupt``). A ``BaseException`` like
    ``KeyboardInterrupt``, so ``except Exception`` never swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def reason_of(exc: OSError) -> str:
    """The human part of an ``OSError`` (``No space left on device``), without the path Python adds."""
    return exc.strerror or str(exc)


# -------------------------------------------------------------------------------------------------------------
# Signals: raised as exceptions, held back inside critical sections


_held: list[int] = []
_depth = 0


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _depth:
        _held.append(signum)
        return
    _raise_for(signum)


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(signum)


@contextlib.contextmanager
def _critical() -> Iterator[None]:
    """Hold signals back (when ``signals_as_exceptions`` is active) until the block is done."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _held:
            signum = _held.pop(0)
            _held.clear()
            _raise_for(signum)


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """SIGINT raises ``KeyboardInterrupt``, SIGTERM and SIGHUP raise ``Interrupted``; SIGXFSZ is ignored, so a write
    past a file-size limit fails with ``EFBIG`` (an error, cleaned up) instead of killing the process. A signal that
    is already ignored stays ignored (``nohup``). Restores the previous handlers on exit. Only the main thread can
    install handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted: dict[int, Any] = {signal.SIGINT: _on_signal, signal.SIGTERM: _on_signal}
    for name, handler in (("SIGHUP", _on_signal), ("SIGXFSZ", signal.SIG_IGN)):
        if hasattr(signal, name):
            wanted[getattr(signal, name)] = handler
    # A signal the process was started with ignored (``nohup`` ignores SIGHUP, a background job SIGINT) stays
    # ignored: the user asked for that.
    wanted = {signum: h for signum, h in wanted.items() if signal.getsignal(signum) is not signal.SIG_IGN}
    previous: dict[int, Any] = {signum: signal.signal(signum, handler) for signum, handler in wanted.items()}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# -------------------------------------------------------------------------------------------------------------
# Checks


def check_output(path: PathLike, inputs: Sequence[PathLike] = (),
                 siblings: Sequence[str] = ()) -> os.stat_result | None:
    """Refuse an output path that must not be replaced; returns the existing output's ``lstat`` (None: new file).

    ``siblings`` are suffixes of the files a writer of ``path`` makes beside it (a SQLite output's ``-wal``,
    ``-shm``, ``-journal``): they are outputs too. One that exists is refused, never removed: it may be one of the
    inputs, or a live writer's or a crashed one's log, which SQLite would replay onto the new database.

    Raises:
        UnsafeOutputError: ``path`` is a symlink, a directory, or not a regular file; or a sibling exists.
        SameFileError: ``path`` or one of its siblings is the same file as one of ``inputs``.
        OutputError: ``path`` cannot be inspected (its folder is missing or unreadable).
    """
    p = os.fspath(path)
    _check_siblings(p, inputs, siblings)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(p, f"cannot write: {reason_of(exc)}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeOutputError(p, "is a symbolic link; outputs never replace or write through one "
                                   "(name its target or another file)")
    if stat.S_ISDIR(st.st_mode):
        raise UnsafeOutputError(p, "is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeOutputError(p, "is not a regular file (a device, FIFO or socket); outputs are only written "
                                   "as regular files")
    same_file_check(p, (st.st_dev, st.st_ino), inputs)
    if not os.access(p, os.W_OK):
        # The rename would replace it (the folder is writable), but the file says it may not be written.
        raise UnsafeOutputError(p, f"is read-only (mode {stat.S_IMODE(st.st_mode):04o}); an output is only replaced "
                                   "when it could be written (make it writable, or write another file)")
    return st


def _check_siblings(path: str, inputs: Sequence[PathLike], siblings: Sequence[str]) -> None:
    for suffix in siblings:
        try:
            st = os.lstat(path + suffix)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise OutputError(path, f"cannot write: {path}{suffix}: {reason_of(exc)}") from None
        with contextlib.suppress(OSError):
            target = os.stat(path + suffix)  # a symlink: what it leads to
            for source in inputs:
                with contextlib.suppress(OSError):
                    ist = os.stat(source)
                    if (ist.st_dev, ist.st_ino) == (target.st_dev, target.st_ino):
                        raise SameFileError(path, f"its SQLite file {path}{suffix} is the input "
                                                  f"{os.fspath(source)}; a SQLite output's -wal, -shm and -journal "
                                                  "files are outputs too (write another file)")
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a file"
        raise UnsafeOutputError(path, f"{path}{suffix} exists beside it ({kind}): SQLite would take it as part of "
                                      "the new database (it may hold another writer's changes) and it is never "
                                      "removed; remove it yourself or write another file")


def same_file_check(name: str, identity: tuple[int, int], inputs: Sequence[PathLike]) -> None:
    """Raise ``SameFileError`` when one of ``inputs`` is the file ``identity`` (device, inode) names."""
    for source in inputs:
        try:
            ist = os.stat(source)
        except OSError:
            continue
        if (ist.st_dev, ist.st_ino) == identity:
            raise SameFileError(name, f"is the same file as the input {os.fspath(source)}; an output never "
                                      "replaces its input (write another file)")


# -------------------------------------------------------------------------------------------------------------
# The temporary file


class _Pending:
    """One output being written: the target, its temporary file, and the commit/abort steps."""

    def __init__(self, path: PathLike, inputs: Sequence[PathLike], siblings: Sequence[str] = ()) -> None:
        self.path = os.fspath(path)
        self.inputs = inputs
        self.siblings = siblings
        self.existing = check_output(self.path, inputs, siblings)
        self.folder = os.path.dirname(os.path.abspath(self.path))
        self.tmp = ""
        self.fd = -1

    def create(self) -> None:
        """Create the temporary file. A signal held back meanwhile is raised at the end, once ``tmp`` names the
        file, so the caller's ``abort`` removes it."""
        name = os.path.basename(os.path.abspath(self.path))
        folder = self.folder
        with _critical():
            for _ in range(100):
                tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
                if any(os.path.lexists(tmp + suffix) for suffix in self.siblings):
                    continue  # its side files must be ours alone: they are removed with it
                try:
                    self.fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
                except FileExistsError:
                    continue
                except OSError as exc:
                    raise OutputError(self.path, f"cannot write: {reason_of(exc)}") from None
                self.tmp = tmp
                break
            else:  # pragma: no cover - 100 random names taken
                raise OutputError(self.path, "cannot create a temporary file beside it")
            if self.existing is not None:
                with contextlib.suppress(OSError):
                    os.fchmod(self.fd, stat.S_IMODE(self.existing.st_mode))

    def commit(self) -> None:
        """Sync the temporary file and rename it over the target (re-checked just before)."""
        try:
            os.fsync(self.fd)
        except OSError as exc:
            raise OutputError(self.path, f"cannot write: {reason_of(exc)}") from None
        # A symlink or directory that appeared meanwhile is still refused, and so is a side file: it would be
        # replayed onto the new database, and it is not ours to remove.
        check_output(self.path, self.inputs, self.siblings)
        with _critical():
            self._close()
            try:
                os.replace(self.tmp, self.path)
            except OSError as exc:
                raise OutputError(self.path, f"cannot write: {reason_of(exc)}") from None
            _remove_siblings(self.tmp, self.siblings)  # the writer's own (``create`` made sure none was there)
            self.tmp = ""
        with contextlib.suppress(OSError):  # durability of the rename itself; not every file system allows it
            dirfd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dirfd)
            finally:
                os.close(dirfd)

    def abort(self) -> None:
        """Remove the temporary file (and its siblings, the writer's); the target is untouched."""
        with _critical():
            self._close()
            if self.tmp:
                _remove_siblings(self.tmp, ("", *self.siblings))
                self.tmp = ""

    def _close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def _remove_siblings(base: str, suffixes: Sequence[str]) -> None:
    for suffix in suffixes:
        with contextlib.suppress(FileNotFoundError):
            os.remove(base + suffix)


class _Writer:
    """The stream handed to the writer: the temporary file, with write errors named after the real output."""

    def __init__(self, pending: _Pending) -> None:
        self._pending = pending
        self._file = os.fdopen(pending.fd, "wb", buffering=1 << 20, closefd=False)

    def write(self, data: bytes | bytearray | memoryview) -> int:
        try:
            return self._file.write(data)
        except OSError as exc:
            raise OutputError(self._pending.path, f"cannot write: {reason_of(exc)}") from None

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as exc:
            raise OutputError(self._pending.path, f"cannot write: {reason_of(exc)}") from None

    def writable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        """Flush (the temporary file stays open until the commit renames it)."""
        self.flush()

    def discard(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._file.close()


@contextlib.contextmanager
def atomic_output(path: PathLike, *, inputs: Sequence[PathLike] = ()) -> Iterator[IO[bytes]]:
    """A binary stream whose data replaces ``path`` when the block ends normally, and never otherwise.

    Raises:
        UnsafeOutputError, SameFileError: the path may not be written (before anything is written).
        OutputError: the temporary file cannot be created, written, synced or renamed (the target untouched).
    """
    pending = _Pending(path, inputs)
    writer: _Writer | None = None
    try:
        pending.create()
        writer = _Writer(pending)
        yield writer  # type: ignore[misc]
        writer.flush()
        writer.discard()
        pending.commit()
    except BaseException:
        if writer is not None:
            writer.discard()
        pending.abort()
        raise


@contextlib.contextmanager
def atomic_path(path: PathLike, *, inputs: Sequence[PathLike] = (),
                siblings: Sequence[str] = ()) -> Iterator[str]:
    """A temporary path (an existing empty file) for writers that need a file name (SQLite); it replaces ``path``
    when the block ends normally. ``siblings`` are suffixes of files the writer may create beside the temporary
    file (``-wal``, ``-shm``, ``-journal``): those beside the temporary file are removed either way (none existed
    before it was made); those beside ``path`` are outputs too, refused when they exist (``check_output``).

    Raises:
        as ``atomic_output``.
    """
    pending = _Pending(path, inputs, siblings)
    try:
        pending.create()
        yield pending.tmp
        pending.commit()
    except BaseException:
        pending.abort()
        raise
