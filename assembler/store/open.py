"""Pick a session store by file extension: ``.sqlite``/``.sqlite3``/``.db`` is SQLite, anything else JSONL
(``.jsonl.zst`` compressed). The one place commands go to load or save a session in any format.

Rules: loading gives the same ``LoadResult`` whatever the format (records packed, seq/time rebuilt); saving writes
storage records as they are (rows stay rows) and atomically (a temporary file renamed over the target), so a failed
save never leaves a half-written output.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..logfile import LoadResult
from . import zstd
from .jsonl import read_session, write_jsonl
from .sqlite import is_sqlite_path, read_sqlite, write_sqlite

__all__ = ["load_any", "save_any", "session_format", "is_sqlite_path"]


def session_format(path: str | os.PathLike[str]) -> str:
    """``'sqlite'``, ``'jsonl.zst'`` or ``'jsonl'``, by extension."""
    p = os.fspath(path)
    if is_sqlite_path(p):
        return "sqlite"
    return "jsonl.zst" if zstd.is_zstd_path(p) else "jsonl"


def load_any(path: str | os.PathLike[str], *, strict: bool = False,
             progress: Callable[[int, int], None] | None = None) -> LoadResult:
    """Load a session file of any supported format. Faults inside the log land in ``result.error``.

    Raises:
        OSError: a JSONL file cannot be opened.
        StoreError: a SQLite file is missing, not SQLite, truncated or corrupt, or not a session database.
        SchemaVersionError: a SQLite database with another schema version.
    """
    if is_sqlite_path(path):
        return read_sqlite(path)
    return read_session(path, strict=strict, progress=progress)


def save_any(path: str | os.PathLike[str], header: dict[str, Any], records: Iterable[Any]) -> None:
    """Write ``header`` and storage ``records`` (as they are) to ``path`` in the format its extension names.

    Raises:
        OSError: the file cannot be written.
        StoreError, DiscontinuityError: SQLite refused a record (nothing is written).
    """
    p = os.fspath(path)
    if is_sqlite_path(p):
        write_sqlite(p, header, records)
        return
    tmp = f"{p}.tmp-{os.getpid()}"
    try:
        stream = zstd.open_write(tmp) if zstd.is_zstd_path(p) else open(tmp, "wb")
        with stream:
            write_jsonl(stream, header, records)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise
