"""Shared CLI plumbing: loading a session with progress and ``FILE:LINE: error:`` messages (output: ``_output``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import Any

from ..errors import AssemblerError
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from ..store import zstd
from ..store.atomic import reason_of
from ..store.jsonl import SessionStream
from ..store.open import load_any, sniff
from ..store.remote import is_remote, probe, shown
from ._output import error, error_from

__all__ = ["load", "stream", "warn_faults", "report_problems", "Progress", "fail", "configure",
           "max_line_bytes", "session_key", "missing_roots"]

_limits: dict[str, Any] = {"max_line_bytes": DEFAULT_MAX_LINE_BYTES, "session": None}


def configure(*, max_line_bytes: int | None, session: str | None = None) -> None:
    """Set the reading limits of this command run (``--max-line-bytes``; None: the default) and the session of a
    file holding several (``--session``); ``cli.main`` calls it once."""
    _limits["max_line_bytes"] = DEFAULT_MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    _limits["session"] = session


def max_line_bytes() -> int:
    """The line cap every reader of this command run uses."""
    value: int = _limits["max_line_bytes"]
    return value


def session_key() -> str | None:
    """``--session KEY``: which session of a file holding several (None: the first)."""
    value: str | None = _limits["session"]
    return value


class Progress:
    """A one-line progress indicator on stderr, only when stderr is a terminal."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.enabled = sys.stderr is not None and sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        pct = f"{100 * done / total:5.1f}%" if total else ""
        sys.stderr.write(f"\r{self.label} {pct} ({done / 1e6:.1f} MB)")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def fail(message: str, code: int = 1) -> int:
    sys.stderr.write(f"transcript-assembler: {message}\n")
    return code


def warn_faults(path: str, faults: Iterable[object]) -> None:
    """``FILE: warning: seq N: ...`` on stderr for each event the assembler showed raw (``InputFault``)."""
    for fault in faults:
        sys.stderr.write(f"{path}: warning: {fault}\n")


def report_problems(path: str, result: LoadResult) -> None:
    for warning in result.warnings:
        sys.stderr.write(f"{path}: warning: {warning}\n")
    error = result.error
    if error is not None:
        location = getattr(error, "location", None)  # another harness's log: a zip member and a JSON pointer
        if error.line is None and type(location) is str:
            sys.stderr.write(f"{path}:{location}: error: {error.message}\n")
        elif error.line is not None:
            seq = f" (seq {error.seq})" if error.seq is not None else ""
            sys.stderr.write(f"{path}:{error.line}: error: {error.message}{seq}\n")
        else:
            sys.stderr.write(f"{path}: error: {error}\n")


def load(path: str, *, strict: bool = False, report: bool = True, pack_deltas: bool = False,
         session: str | None = None) -> LoadResult | None:
    """Read a session in any format of ``assembler.formats`` (ours in JSONL, ``.jsonl.zst`` or SQLite, or another
    harness's log, chosen from the content); print warnings and the fault (``file:line: error: message``) unless
    ``report`` is false. None when the file cannot be used at all. ``pack_deltas``: runs of delta lines are held as
    rows (``page`` and ``export``, which repack what they read anyway, so an unpacked log is held as one row per
    block, not one object per delta). ``session``: the session of a file holding several (default ``--session``)."""
    try:
        result = load_any(path, strict=strict, progress=Progress(f"reading {path}"), max_line_bytes=max_line_bytes(),
                          key=session if session is not None else session_key(), pack_deltas=pack_deltas)
    except OSError as exc:
        error(path, reason_of(exc))
        return None
    except AssemblerError as exc:  # a SQLite file that is not a session database, or of another schema
        error_from(path, exc)
        return None
    if report:
        report_problems(path, result)
    return result


def stream(path: str, *, strict: bool = False, pack_deltas: bool = False) -> SessionStream | None:
    """Open a session for one pass over its records, without holding them (our ``.jsonl``, ``.jsonl.zst``; any other
    format is loaded whole). Report its problems with ``report_problems(path, s.result)`` after the pass. None (the
    error printed) when the file cannot be used at all. ``pack_deltas``: for a pass that repacks what it reads, runs
    of delta lines come as rows (``logfile.LogParser``). A location in object storage is loaded whole through
    the one loader (``store.remote``)."""
    if is_remote(path):
        result = load(path, strict=strict, report=False, pack_deltas=pack_deltas)
        return None if result is None else SessionStream.held(result, path)
    try:
        fmt = sniff(path)
    except OSError as exc:
        error(path, reason_of(exc))
        return None
    ours = fmt is not None and fmt.name == "session-jsonl"
    if not ours or (zstd.is_zstd_path(path) != _compressed(path)):
        result = load(path, strict=strict, report=False)  # the caller reports after its pass, once
        return None if result is None else SessionStream.held(result, path)
    try:
        return SessionStream(path, strict=strict, progress=Progress(f"reading {path}"),
                             max_line_bytes=max_line_bytes(), pack_deltas=pack_deltas)
    except OSError as exc:
        error(path, reason_of(exc))
        return None


def missing_roots(paths: list[str]) -> tuple[str, str] | None:
    """The first of ``serve``'s or ``publish``'s paths that cannot be used (as it may be printed:
    ``store.remote.shown``), with why: a local path that does not exist, a location in object storage that cannot be
    listed (``store.remote.probe``). None: all can."""
    import os

    for path in paths:
        if is_remote(path):
            try:
                probe(path)
            except OSError as exc:
                return shown(path), reason_of(exc)
        elif not os.path.exists(path):
            return path, "no such file or folder"
    return None


def _compressed(path: str) -> bool:
    """The file starts with zstd's magic (``sniff`` sees through it)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x28\xb5\x2f\xfd"
    except OSError:
        return False
