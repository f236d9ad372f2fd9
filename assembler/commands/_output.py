"""Where command output goes, and how a command ends.

Rules: a file output (``-o PATH``, ``convert IN OUT``) is written through ``store.atomic`` (a temporary file renamed
into place; never onto an input, never through a symlink, device or directory). Standard output is written through
``stdout()``, whose errors (closed, a closed pipe, a full disk) name ``<stdout>``. ``run`` is the one place a command
ends: an ``OutputError`` is ``FILE: error: reason`` on stderr with exit status 1, SIGINT is one line and 130,
SIGTERM/SIGHUP one line and 128 + the signal; never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from ..jsontext import utf8_text
from ..store.atomic import (
    Interrupted,
    OutputError,
    check_output,
    reason_of,
    same_file_check,
    signals_as_exceptions,
)
from ..store.open import output_stream
from ..store.remote import RemoteError
from ..store.sqlite import side_files

__all__ = ["STDOUT", "run", "error", "error_from", "preflight", "output", "stdout", "write_stdout", "print_stdout"]

STDOUT = "<stdout>"
"""How messages name standard output."""


def error(name: str, message: str) -> None:
    """``NAME: error: message`` on stderr (nothing when stderr itself is closed)."""
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"{name}: error: {message}\n")
            sys.stderr.flush()


def error_from(name: str, exc: Exception) -> None:
    """``NAME: error: ...`` for an exception whose text may already start with ``NAME: `` (``StoreError``)."""
    text = str(exc)
    error(name, text[len(name) + 2:] if text.startswith(f"{name}: ") else text)


class _Stdout:
    """Standard output as a binary stream whose failures are ``OutputError('<stdout>', ...)``."""

    def __init__(self, buffer: IO[bytes]) -> None:
        self._buffer = buffer

    def write(self, data: bytes | bytearray | memoryview) -> int:
        try:
            return self._buffer.write(data)
        except OSError as exc:
            raise OutputError(STDOUT, _stdout_reason(exc)) from None

    def flush(self) -> None:
        try:
            self._buffer.flush()
        except OSError as exc:
            raise OutputError(STDOUT, _stdout_reason(exc)) from None


def _stdout_reason(exc: OSError) -> str:
    if isinstance(exc, BrokenPipeError):
        return "the reader closed the pipe (Broken pipe)"
    return f"cannot write: {reason_of(exc)}"


def stdout() -> _Stdout:
    """Standard output for bytes.

    Raises:
        OutputError: standard output is closed (``>&-``).
    """
    if sys.stdout is None:
        raise OutputError(STDOUT, "standard output is closed")
    # Text printed earlier must come first.
    try:
        sys.stdout.flush()
    except OSError as exc:
        raise OutputError(STDOUT, _stdout_reason(exc)) from None
    return _Stdout(sys.stdout.buffer)


def write_stdout(data: bytes) -> None:
    """Write bytes to standard output (flushed). Raises ``OutputError`` naming ``<stdout>``."""
    out = stdout()
    out.write(data)
    out.flush()


def print_stdout(text: str) -> None:
    """Print a line of text to standard output. Raises ``OutputError`` naming ``<stdout>``."""
    try:
        data = text.encode("utf-8", "surrogateescape")  # a file name's undecodable bytes go out as they came
    except UnicodeEncodeError:  # a surrogate from the log's JSON text (lone, or a pair split in two)
        data = utf8_text(text)
    write_stdout(data + b"\n")


def _check_stdout_is_no_input(inputs: Sequence[str]) -> None:
    """``cmd IN >> IN`` would read its own output: refuse a standard output that is one of the inputs."""
    try:
        st = os.fstat(sys.stdout.fileno()) if sys.stdout is not None else None
    except (OSError, ValueError, AttributeError):  # no real descriptor (a test's capture)
        return
    if st is not None and stat.S_ISREG(st.st_mode):
        same_file_check(STDOUT, (st.st_dev, st.st_ino), inputs)


def preflight(path: str | None, *, inputs: Sequence[str], database: bool = False) -> None:
    """Refuse a bad output before any work is done (``output`` checks again when it writes). ``database``: the
    output is written in the format its extension names, so a SQLite output's side files are checked too.

    Raises:
        OutputError: as ``store.atomic.check_output``.
    """
    if path is None or path == "-":
        _check_stdout_is_no_input(inputs)
    else:
        check_output(path, inputs, side_files(path) if database else ())


@contextlib.contextmanager
def output(path: str | None, *, inputs: Sequence[str]) -> Iterator[IO[bytes]]:
    """The stream a command writes its result to: ``path`` atomically (zstd-compressed when it ends in ``.zst``),
    or standard output when ``path`` is None or ``-``. The file appears only if the block ends normally.

    Raises:
        OutputError (and its ``SameFileError``, ``UnsafeOutputError``): as ``store.atomic.atomic_output``.
    """
    if path is None or path == "-":
        _check_stdout_is_no_input(inputs)
        out = stdout()
        yield out  # type: ignore[misc]
        out.flush()
        return
    with output_stream(path, inputs=inputs) as stream:
        yield stream


def _silence_stdout() -> None:
    """After standard output failed, point it at /dev/null so the interpreter's final flush stays quiet."""
    if sys.stdout is None:
        return
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def run(command: Callable[[argparse.Namespace], Any], args: argparse.Namespace) -> int:
    """Run one command and return its exit status; the one place output errors and signals end a command."""
    try:
        with signals_as_exceptions():
            code = int(command(args) or 0)
            if sys.stdout is not None:
                try:
                    sys.stdout.flush()
                except OSError as exc:
                    raise OutputError(STDOUT, _stdout_reason(exc)) from None
            return code
    except KeyboardInterrupt:
        _note("interrupted (SIGINT); unfinished output files were discarded")
        return 130
    except Interrupted as exc:
        _note(f"stopped by {signal.Signals(exc.signum).name}; unfinished output files were discarded")
        return 128 + exc.signum
    except OutputError as exc:
        error(exc.path, exc.reason)
        if exc.path == STDOUT:
            _silence_stdout()
        return 1
    except RemoteError as exc:  # object storage failing after the command read its input (``store.remote``)
        _note(f"object storage: {exc.strerror}")
        return 1
    except BrokenPipeError:  # a write to standard output that did not go through ``stdout()``
        error(STDOUT, "the reader closed the pipe (Broken pipe)")
        _silence_stdout()
        return 1


def _note(message: str) -> None:
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"transcript-assembler: {message}\n")
