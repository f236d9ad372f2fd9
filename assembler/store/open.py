"""The one place commands go to load or save a session file. Loading reads any format of ``assembler.formats``,
chosen from the file's content (``store.loader.AnyLoader``); saving picks our format by extension: ``.sqlite``/
``.sqlite3``/``.db`` is SQLite, anything else JSONL (``.jsonl.zst`` compressed).

Rules: loading gives the same ``LoadResult`` whatever the format (our records packed, seq/time rebuilt; another
harness's log mapped onto our events); a file holding several sessions (an Inspect log) gives the one named by
``key``, or all of them with ``load_sessions``. A location in object storage (``s3://...``: ``store.remote``) is
read in ranged pieces through the same loader. Saving writes storage records as they are (rows stay rows) and
atomically (``store.atomic``: a temporary file renamed over the target), so a failed or interrupted save never leaves
a half-written output, and never writes over an input.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

from ..formats import Format
from ..interop.base import SessionLog
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from . import remote, zstd
from .atomic import atomic_output
from .feed import PIECE, feed_all
from .jsonl import write_jsonl
from .loader import AnyLoader
from .sqlite import is_sqlite_path, read_sqlite, write_sqlite

__all__ = ["load_any", "file_size", "load_sessions", "save_any", "output_stream", "session_format", "sniff",
           "is_sqlite_path"]


def session_format(path: str | os.PathLike[str]) -> str:
    """The format our writers use for an output path: ``'sqlite'``, ``'jsonl.zst'`` or ``'jsonl'``, by extension."""
    p = os.fspath(path)
    if is_sqlite_path(p):
        return "sqlite"
    return "jsonl.zst" if zstd.is_zstd_path(p) else "jsonl"


def _read(path: str | os.PathLike[str], loader: AnyLoader, progress: Callable[[int, int], None] | None,
          *, until_known: bool = False) -> None:
    def more() -> bool:
        return not (loader.needs_path or loader.result.error is not None or (until_known and loader.format is not None))

    if isinstance(path, str) and remote.is_remote(path):
        def take(piece: bytes) -> bool:
            loader.feed(piece)
            return more()

        remote.open_remote(path, take, progress)
        if loader.needs_path:
            raise remote.RemoteError("a SQLite session in object storage cannot be read in place: copy it to a "
                                     "local file first")
        return
    with open(os.fspath(path), "rb", buffering=0) as raw:
        total = os.fstat(raw.fileno()).st_size
        feed_all(lambda: raw.read(PIECE), loader.feed, more=more,
                 progress=None if progress is None else lambda done: progress(done, total))
        if progress is not None and more():  # read to its end
            progress(total, total)


def file_size(path: str | os.PathLike[str]) -> int:
    """The size in bytes of a session file, local or in object storage (``store.remote``).

    Raises:
        OSError: it cannot be looked at (``RemoteError`` for a remote one).
    """
    p = os.fspath(path)
    return remote.stat_remote(p).size if remote.is_remote(p) else os.path.getsize(p)


def sniff(path: str | os.PathLike[str]) -> Format | None:
    """The format of a file as ``formats.detect`` sees it (None: not a known format, or compressed by zstd with
    the log inside not yet known from its head).

    Raises:
        OSError: the file cannot be read.
    """
    p = os.fspath(path)
    loader = AnyLoader(p)
    _read(path, loader, None, until_known=True)
    if loader.format is None and loader.result.error is None:
        loader.finish()
    return loader.format


def _loader(path: str | os.PathLike[str], *, strict: bool, progress: Callable[[int, int], None] | None,
            max_line_bytes: int | None, key: str | None, context: dict[str, Any] | None,
            pack_deltas: bool = False) -> tuple[AnyLoader, LoadResult]:
    p = os.fspath(path)
    loader = AnyLoader(p, strict=strict, max_line_bytes=max_line_bytes, key=key, context=context,
                       pack_deltas=pack_deltas)
    _read(p, loader, progress)
    if loader.needs_path:
        return loader, read_sqlite(p, max_line_bytes=max_line_bytes)
    result = loader.finish()
    if loader.format is None and is_sqlite_path(p) and not remote.is_remote(p) and result.error is not None:
        return loader, read_sqlite(p, max_line_bytes=max_line_bytes)  # not SQLite: its reader says, naming it
    return loader, result


def load_any(path: str | os.PathLike[str], *, strict: bool = False,
             progress: Callable[[int, int], None] | None = None,
             max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES, key: str | None = None,
             context: dict[str, Any] | None = None, pack_deltas: bool = False) -> LoadResult:
    """Load a session file of any format the table knows (for a file holding several sessions, the one named
    ``key``, else the first). Faults inside the log land in ``result.error``; a file of no known format is such a
    fault, naming the formats tried. ``pack_deltas``: runs of delta lines of our own logs are held as rows (for a
    reader that pages or folds, which repack anyway).

    Raises:
        OSError: the file cannot be opened or read.
        StoreError: a SQLite file is truncated or corrupt, or not a session database.
        SchemaVersionError: a SQLite database with another schema version.
    """
    return _loader(path, strict=strict, progress=progress, max_line_bytes=max_line_bytes, key=key,
                   context=context, pack_deltas=pack_deltas)[1]


def load_sessions(path: str | os.PathLike[str], *, strict: bool = False,
                  progress: Callable[[int, int], None] | None = None,
                  max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES) -> tuple[Format | None, list[SessionLog]]:
    """Every session a file holds, with the format read: one for most formats (key ``""``), one per sample and
    epoch for an Inspect log. A fault that stops the whole file is the one session's ``result.error``.

    Raises:
        as ``load_any``.
    """
    loader, result = _loader(path, strict=strict, progress=progress, max_line_bytes=max_line_bytes, key=None,
                             context=None)
    if loader.sessions is not None and (loader.sessions or result.error is None):
        return loader.format, loader.sessions
    return loader.format, [SessionLog("", None, result)]


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
