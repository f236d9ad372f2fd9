"""Pick a session store by file extension: ``.sqlite``/``.sqlite3``/``.db`` is SQLite, anything else JSONL
(``.jsonl.zst`` compressed). The one place commands go to load or save a session in any format.

Rules: loading gives the same ``LoadResult`` whatever the format (records packed, seq/time rebuilt); saving writes
storage records as they are (rows stay rows) and atomically (``store.atomic``: a temporary file renamed over the
target), so a failed or interrupted save never leaves a half-written output, and never writes over an input.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from . import zstd
from .atomic import atomic_output
from .jsonl import read_session, write_jsonl
from .sqlite import is_sqlite_path, read_sqlite, write_sqlite

__all__ = ["load_any", "save_any", "output_stream", "session_format", "is_sqlite_path"]


def session_format(path: str | os.PathLike[str]) -> str:
    """``'sqlite'``, ``'jsonl.zst'`` or ``'jsonl'``, by extension."""
    p = os.fspath(path)
    if is_sqlite_path(p):
        return "sqlite"
    return "jsonl.zst" if zstd.is_zstd_path(p) else "jsonl"


def load_any(path: str | os.PathLike[str], *, strict: bool = False,
             progress: Callable[[int, int], None] | None = None,
             max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES, pack_deltas: bool = False) -> LoadResult:
    """Load a session file of any supported format. Faults inside the log land in ``result.error``. ``pack_deltas``:
    runs of delta lines are held as rows (for a reader that pages or folds, which repack anyway).

    Raises:
        OSError: a JSONL file cannot be opened.
        StoreError: a SQLite file is missing, not SQLite, truncated or corrupt, or not a session database.
        SchemaVersionError: a SQLite database with another schema version.
    """
    if is_sqlite_path(path):
        return read_sqlite(path, max_line_bytes=max_line_bytes)
    return read_session(path, strict=strict, progress=progress, max_line_bytes=max_line_bytes,
                        pack_deltas=pack_deltas)


def save_any(path: str | os.PathLike[str], header: dict[str, Any], records: Iterable[Any], *,
             inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Write ``header`` and storage ``records`` (as they are) to ``path`` in the format its extension names,
    atomically (``store.atomic``): the old ``path`` stays whole until the new file is complete.

    Raises:
        UnsafeOutputError, SameFileError: ``path`` is a symlink, directory or device, or one of ``inputs``.
        OutputError: the file cannot be written (no permission, no space, ...).
        StoreError, DiscontinuityError: SQLite refused a record (nothing is written).
    """
    p = os.fspath(path)
    if is_sqlite_path(p):
        write_sqlite(p, header, records, inputs=inputs)
        return
    with output_stream(p, inputs=inputs) as stream:
        write_jsonl(stream, header, records)


@contextlib.contextmanager
def output_stream(path: str | os.PathLike[str], *,
                  inputs: Sequence[str | os.PathLike[str]] = ()) -> Iterator[IO[bytes]]:
    """A stream whose bytes replace ``path`` atomically when the block ends normally (``store.atomic``),
    zstd-compressed when ``path`` ends in ``.zst``.

    Raises:
        as ``store.atomic.atomic_output``.
    """
    p = os.fspath(path)
    with atomic_output(p, inputs=inputs) as raw:
        if zstd.is_zstd_path(p):
            with zstd.compressing_writer(raw) as compressed:
                yield compressed
        else:
            yield raw
