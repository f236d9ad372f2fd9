"""Shared CLI plumbing: loading a session with progress and ``FILE:LINE: error:`` messages (output: ``_output``)."""

from __future__ import annotations

import sys
import time

from ..errors import AssemblerError
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from ..store.atomic import reason_of
from ..store.open import load_any
from ._output import error, error_from

__all__ = ["load", "report_problems", "Progress", "fail", "configure", "max_line_bytes"]

_limits = {"max_line_bytes": DEFAULT_MAX_LINE_BYTES}


def configure(*, max_line_bytes: int | None) -> None:
    """Set the reading limits of this command run (``--max-line-bytes``; None: the default); ``cli.main`` calls it
    once."""
    _limits["max_line_bytes"] = DEFAULT_MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes


def max_line_bytes() -> int:
    """The line cap every reader of this command run uses."""
    return _limits["max_line_bytes"]


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


def report_problems(path: str, result: LoadResult) -> None:
    for warning in result.warnings:
        sys.stderr.write(f"{path}: warning: {warning}\n")
    error = result.error
    if error is not None:
        if error.line is not None:
            seq = f" (seq {error.seq})" if error.seq is not None else ""
            sys.stderr.write(f"{path}:{error.line}: error: {error.message}{seq}\n")
        else:
            sys.stderr.write(f"{path}: error: {error}\n")


def load(path: str, *, strict: bool = False) -> LoadResult | None:
    """Read a session in any format (``.jsonl``, ``.jsonl.zst``, ``.sqlite``/``.db``); print warnings and the fault
    (``file:line: error: message``). None when the file cannot be used at all."""
    try:
        result = load_any(path, strict=strict, progress=Progress(f"reading {path}"), max_line_bytes=max_line_bytes())
    except OSError as exc:
        error(path, reason_of(exc))
        return None
    except AssemblerError as exc:  # a SQLite file that is not a session database, or of another schema
        error_from(path, exc)
        return None
    report_problems(path, result)
    return result
