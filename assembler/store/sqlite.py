"""SQLite session store (stdlib ``sqlite3``): the session header plus one table row per storage record.

Rules (seeds/001 and 000, "Persistence"): ``PRAGMA user_version`` is ``SCHEMA_VERSION`` (4, the merged layout);
a database with any other version is rejected on open with ``SchemaVersionError(found, expected)``, never
migrated (bump-and-reject). Writers use WAL; readers open ``mode=ro`` and never switch the journal mode, so a
read-only file, another user's file or a read-only folder can be read and reading leaves no trace. Each append batch
is one transaction, so a crash mid-batch leaves the previous state intact. A file that is not SQLite, truncated or
corrupt raises ``StoreError`` naming the path, never a raw ``sqlite3`` error; a table row that cannot be rebuilt
(a crafted database) stops the load with ``row N: ...``, keeping the rows before it.

Tables::

    session(id INTEGER PRIMARY KEY CHECK (id = 0), header TEXT NOT NULL)   -- the header line's JSON, as read
    events(
        seq0              INTEGER PRIMARY KEY,  -- first logical seq of the record (an event's seq)
        kind              TEXT NOT NULL,        -- 'event', or 'row' for a packed chunk row (kept packed)
        type              TEXT NOT NULL,        -- event type, or the row tag (text-chunks, ...)
        time              INTEGER NULL,         -- time, or a row's time0
        data              TEXT NULL,            -- JSON of data (NULL: no data key)
        source_event_seqs TEXT NULL,            -- JSON of sourceEventSeqs (NULL: absent)
        surface_op        TEXT NULL,            -- JSON of surfaceOp (NULL: absent)
        ignorable         INTEGER NULL,         -- 1/0 for ignorable true/false (NULL: absent)
        members           INTEGER NOT NULL,     -- logical events in the record: 1, or a row's member count
        extra             TEXT NULL             -- only for records the columns cannot say alone (below)
    )

Lossless: a record whose keys are exactly the canonical ones (``type, seq, time, data, ignorable?,
sourceEventSeqs?, surfaceOp?``; rows ``type, seq0, time0, data``) in that order, each with a column-typed value,
has ``extra`` NULL and is rebuilt from the columns. Anything else (another key order, unknown envelope keys, a
value the column cannot hold such as ``ignorable: "yes"`` or ``seq0: 5.0``) stores ``extra = {"keys": [the key
order], "fields": {key: value the columns do not hold}}``. JSON texts are written by the same encoder as the JSONL
store, so JSONL -> SQLite -> JSONL gives the same bytes. The mapping itself lives in ``sqlite_rows``.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import msgspec

from ..chunk_rows import pack_chunk_runs
from ..errors import AssemblerError, ChunkRowError, DiscontinuityError, SessionFileError
from ..jsontext import NestingError, decode_json
from ..logfile import LoadResult
from ..records import encode
from .atomic import atomic_path
from .sqlite_rows import BadRow, checked_record, record_row, row_record

__all__ = [
    "SCHEMA_VERSION",
    "StoreError",
    "SchemaVersionError",
    "SqliteSessionStore",
    "read_sqlite",
    "read_sqlite_image",
    "write_sqlite",
    "is_sqlite_path",
    "side_files",
]

SCHEMA_VERSION: Final = 4
"""``PRAGMA user_version`` of the merged layout (surface columns); any other value is rejected."""

_MAGIC = b"SQLite format 3\x00"
_COLUMNS = ("seq0", "kind", "type", "time", "data", "source_event_seqs", "surface_op", "ignorable", "members",
            "extra")
_SCHEMA = """
CREATE TABLE session (id INTEGER PRIMARY KEY CHECK (id = 0), header TEXT NOT NULL);
CREATE TABLE events (
    seq0 INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('event', 'row')),
    type TEXT NOT NULL,
    time INTEGER NULL,
    data TEXT NULL,
    source_event_seqs TEXT NULL,
    surface_op TEXT NULL,
    ignorable INTEGER NULL,
    members INTEGER NOT NULL CHECK (members >= 1),
    extra TEXT NULL
);
"""
_INSERT = f"INSERT INTO events ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM events ORDER BY seq0"
_decode = msgspec.json.Decoder().decode
_SIBLINGS = ("-wal", "-shm", "-journal")


class StoreError(AssemblerError):
    """A session database cannot be used: not SQLite, truncated, corrupt, or not a session store."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class SchemaVersionError(StoreError):
    """The database's ``user_version`` is ``found``, this build reads only ``expected`` (no migration)."""

    def __init__(self, found: int, expected: int = SCHEMA_VERSION, path: str = "") -> None:
        AssemblerError.__init__(self, found, expected, path)
        self.found = found
        self.expected = expected
        self.path = path
        self.reason = (f"schema version {found} is not supported (this build reads only version {expected}; "
                       "databases are rejected, not migrated)")

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


def is_sqlite_path(path: Any) -> bool:
    """True for a ``.sqlite``, ``.sqlite3`` or ``.db`` path."""
    return str(path).lower().endswith((".sqlite", ".sqlite3", ".db"))


def side_files(path: Any) -> tuple[str, ...]:
    """The suffixes of the files SQLite makes beside a database written at ``path`` (none for another format)."""
    return _SIBLINGS if is_sqlite_path(path) else ()


# ---------------------------------------------------------------------------------------------------------------
# Opening


def _check_file(path: str) -> None:
    """Reject what is not a complete SQLite file before sqlite3 sees it."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        raise StoreError(path, "no such file") from None
    except OSError as exc:
        raise StoreError(path, f"cannot read: {exc.strerror or exc}") from None
    _check_head(path, head, size)


def _check_head(path: str, head: bytes | bytearray | memoryview, size: int) -> None:
    """Reject a file of ``size`` bytes starting with ``head`` (its first 100 bytes) that is no complete SQLite file."""
    head = bytes(head[:100])
    if size == 0:
        raise StoreError(path, "empty file, not a SQLite session database")
    if len(head) < len(_MAGIC):
        if _MAGIC.startswith(head):
            raise StoreError(path, f"truncated SQLite file ({size} bytes)")
        raise StoreError(path, "not a SQLite database (bad file header)")
    if head[: len(_MAGIC)] != _MAGIC:
        raise StoreError(path, "not a SQLite database (bad file header)")
    if len(head) < 100:
        raise StoreError(path, f"truncated SQLite file ({size} bytes, the header alone is 100)")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, page_count = struct.unpack(">II", head[24:32])
    valid_for = struct.unpack(">I", head[92:96])[0]
    if page_count and valid_for == change_counter and size < page_size * page_count:
        raise StoreError(path, f"truncated SQLite file: {size} bytes, its header says {page_count} pages of "
                               f"{page_size} bytes ({page_size * page_count})")


def _connect(path: str, *, write: bool) -> sqlite3.Connection:
    """A connection for appending (``mode=rw``) or for reading (``mode=ro``: it can never write the database).

    A reader of a database with no pending write-ahead log or hot journal also sets ``immutable=1``: SQLite then
    needs no ``-shm`` file, so a read-only file, another user's file or a file in a read-only folder can be read,
    and reading leaves nothing behind. With a non-empty ``-wal`` or ``-journal`` beside it the reader takes
    SQLite's ordinary read-only path (shared locks with a live writer); that path needs to create ``-shm``.
    """
    if write:
        mode = "rw"
    else:
        mode = "ro" if _pending_log(path) else "ro&immutable=1"
    try:
        conn = sqlite3.connect(f"file:{_uri_path(path)}?mode={mode}", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(path, f"cannot open: {exc}") from None
    return conn


def _pending_log(path: str) -> bool:
    """Whether a non-empty ``-wal`` or ``-journal`` beside ``path`` may hold changes the main file lacks."""
    return any(os.path.exists(path + suffix) and os.path.getsize(path + suffix) > 0 for suffix in ("-wal", "-journal"))


def _uri_path(path: str) -> str:
    from urllib.parse import quote
    return quote(os.path.abspath(path))


def _wrap(path: str, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text):
        return StoreError(path, f"corrupt or truncated database ({text})")
    return StoreError(path, f"database error: {text}")


class SqliteSessionStore:
    """One open session database: its header, its storage records, and batch appends.

    Use ``create`` for a new database and ``open`` for an existing one; close it (or use ``with``).
    """

    def __init__(self, path: str, conn: sqlite3.Connection, header: dict[str, Any]) -> None:
        self.path = path
        self._conn = conn
        self.header = header

    @classmethod
    def create(cls, path: str | os.PathLike[str], header: dict[str, Any]) -> SqliteSessionStore:
        """Create a new session database (schema, ``user_version``, header) in one transaction.

        Raises:
            StoreError: a non-empty file already exists, or it cannot be created.
        """
        p = os.fspath(path)
        if os.path.exists(p) and os.path.getsize(p) > 0:  # an empty file is an empty database (atomic_path's)
            raise StoreError(p, "already exists (create writes a new database)")
        try:
            conn = sqlite3.connect(p, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(p, f"cannot create: {exc}") from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("INSERT INTO session (id, header) VALUES (0, ?)", (encode(header).decode("utf-8"),))
            conn.execute("COMMIT")
        except BaseException as exc:  # a signal too: the connection must not outlive its removed files
            conn.close()
            if isinstance(exc, sqlite3.Error):
                raise _wrap(p, exc) from None
            raise
        return cls(p, conn, header)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, write: bool = False) -> SqliteSessionStore:
        """Open an existing session database: read-only (``mode=ro``; the journal mode is never switched) unless
        ``write``, which opens it for ``append`` and keeps it in WAL mode.

        Raises:
            StoreError: missing, empty, not SQLite, truncated or corrupt, or not a session database.
            SchemaVersionError: ``user_version`` is not ``SCHEMA_VERSION``.
        """
        p = os.fspath(path)
        _check_file(p)
        return cls._opened(p, _connect(p, write=write), write=write)

    @classmethod
    def open_image(cls, name: str, image: bytearray) -> SqliteSessionStore:
        """Open a session database from its bytes, read-only: an in-memory copy (``sqlite3`` ``deserialize``), so
        nothing is looked up by path again (the server reads a database this way from the descriptor it checked,
        ``server.database``). ``name`` is what errors name. A write-ahead-log database's header is marked as a
        rollback one in the copy (SQLite cannot open a WAL image in memory); the content is the same. ``image`` is
        changed (that header) and may be dropped afterwards: SQLite keeps its own copy.

        Raises:
            StoreError, SchemaVersionError: as ``open``.
        """
        _check_head(name, image, len(image))
        if image[18:20] == b"\x02\x02":
            image[18:20] = b"\x01\x01"
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            conn.deserialize(image)
        except sqlite3.Error as exc:
            conn.close()
            raise _wrap(name, exc) from None
        return cls._opened(name, conn, write=False)

    @classmethod
    def _opened(cls, p: str, conn: sqlite3.Connection, *, write: bool) -> SqliteSessionStore:
        """Check that ``conn`` holds a session database of this schema and read its header."""
        try:
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found != SCHEMA_VERSION:
                raise SchemaVersionError(found, SCHEMA_VERSION, p)
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for table in ("session", "events"):
                if table not in tables:
                    raise StoreError(p, f"not a session database: no {table!r} table")
            cols = [r[1] for r in conn.execute("PRAGMA table_info(events)")]
            if tuple(cols) != _COLUMNS:
                raise StoreError(p, f"events table has columns {cols}, expected {list(_COLUMNS)}")
            rows = conn.execute("SELECT header FROM session").fetchall()
            if len(rows) != 1:
                raise StoreError(p, f"expected one session header row, found {len(rows)}")
            try:
                text = rows[0][0]
                header = decode_json(text.encode("utf-8", "surrogatepass") if type(text) is str else text, _decode)
            except NestingError as exc:
                raise StoreError(p, f"session header: {exc}") from None
            if type(header) is not dict:
                raise StoreError(p, "session header is not a JSON object")
            if write:
                conn.execute("PRAGMA journal_mode=WAL")
        except StoreError:
            conn.close()
            raise
        except (sqlite3.Error, msgspec.DecodeError) as exc:
            conn.close()
            if isinstance(exc, sqlite3.OperationalError) and not write and _pending_log(p):
                name = os.path.basename(p)
                raise StoreError(p, f"cannot read: {name}-wal or {name}-journal holds changes SQLite can only read "
                                    f"with write access to the folder ({exc}); copy the database with them to a "
                                    "writable folder") from None
            raise (_wrap(p, exc) if isinstance(exc, sqlite3.Error) else StoreError(p, f"bad header JSON: {exc}")) \
                from None
        return cls(p, conn, header)

    # -- reads ------------------------------------------------------------------------------------------------

    def next_seq(self) -> int:
        """The seq the next appended event must have."""
        try:
            row = self._conn.execute("SELECT seq0 + members FROM events ORDER BY seq0 DESC LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            raise _wrap(self.path, exc) from None
        return 0 if row is None else int(row[0])

    def iter_rows(self) -> Iterator[tuple[Any, ...]]:
        """The ``events`` table's rows in seq order, as stored (streamed, never fetched whole).

        Raises:
            StoreError: the database is corrupt (a page cannot be read).
        """
        try:
            yield from self._conn.execute(_SELECT)
        except sqlite3.Error as exc:
            raise _wrap(self.path, exc) from None

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """Storage records in seq order, rows kept packed.

        Raises:
            StoreError: the database is corrupt, or a table row cannot be rebuilt (``row N: ...``).
        """
        for n, row in enumerate(self.iter_rows(), 1):
            try:
                yield row_record(row)
            except BadRow as exc:
                raise StoreError(self.path, f"row {n}: {exc}") from None

    def load(self) -> LoadResult:
        """Everything as a ``LoadResult`` (as the JSONL reader gives). A table row that cannot be rebuilt or breaks
        the JSONL reader's rules, or a seq gap, stops it there with ``row N: ...`` (N counts rows in seq order);
        every record before it is kept.

        Raises:
            StoreError: the database is corrupt (a page cannot be read).
        """
        result = LoadResult(header=self.header)
        expected = 0
        for n, row in enumerate(self.iter_rows(), 1):
            where = f"row {n} (seq0 {row[0]})" if type(row[0]) is int else f"row {n}"
            try:
                record = checked_record(row_record(row), row[8])  # a row becomes its Struct here
            except BadRow as exc:
                result.error = SessionFileError(f"{where}: {exc}")
                break
            except ChunkRowError as exc:
                result.error = ChunkRowError(f"{where}: {exc.message}")
                break
            if isinstance(record, dict):
                seq, count = record["seq"], 1
            else:
                seq, count = record.seq, record.members
                result.row_count += 1
                result.row_members += count
            if seq != expected:
                result.error = SessionFileError(
                    f"{where}: seq {seq} does not continue the log (expected seq {expected})", seq=seq)
                break
            result.records.append(record)
            result.event_count += count
            expected = seq + count
        result.lines = len(result.records) + 1
        return result

    # -- writes -----------------------------------------------------------------------------------------------

    def append(self, events: Iterable[Any]) -> int:
        """Append one batch of logical events, packed into rows (PROTOCOL 2.2), as one transaction."""
        return self.append_records(pack_chunk_runs(events))

    def append_records(self, records: Iterable[Any]) -> int:
        """Append storage records as they are (rows stay rows) in one transaction; returns the events added.

        The batch must continue the log. On any failure the transaction is rolled back: the database keeps
        exactly its previous state.

        Raises:
            DiscontinuityError: a record does not continue the log.
            StoreError: a record cannot be stored, or a database error.
        """
        added = 0
        expected = self.next_seq()

        def rows() -> Iterator[tuple[Any, ...]]:
            nonlocal expected, added
            for record in records:
                try:
                    row = record_row(record)
                except ValueError as exc:
                    raise StoreError(self.path, f"cannot store record at seq {expected}: {exc}") from None
                if row[0] != expected:
                    raise DiscontinuityError(expected, row[0], "sqlite append")
                expected += row[8]
                added += row[8]
                yield row

        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(_INSERT, rows())
            except BaseException:
                # SQLite has already rolled back after some errors (a full disk, an I/O error): rolling back
                # again would fail and hide the real error.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _wrap(self.path, exc) from None
        return added

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_sqlite(path: str | os.PathLike[str]) -> LoadResult:
    """Read a whole session database (records packed, as ``read_session`` gives for JSONL).

    Raises:
        StoreError: the file is missing, not SQLite, truncated, corrupt, or not a session database.
        SchemaVersionError: its ``user_version`` is not ``SCHEMA_VERSION``.
    """
    with SqliteSessionStore.open(path) as store:
        return store.load()


def read_sqlite_image(name: str, image: bytearray) -> LoadResult:
    """``read_sqlite`` of a database's bytes (``SqliteSessionStore.open_image``); ``name`` is what errors name.

    Raises:
        as ``read_sqlite``.
    """
    with SqliteSessionStore.open_image(name, image) as store:
        return store.load()


def write_sqlite(path: str | os.PathLike[str], header: dict[str, Any], records: Iterable[Any], *,
                 inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Write a new session database holding ``records`` (as they are), replacing ``path`` atomically.

    The database is built in a temporary file beside ``path`` (``store.atomic.atomic_path``) and renamed over it
    only when complete and checkpointed, so a failure or a signal leaves ``path`` as it was.

    Raises:
        UnsafeOutputError, SameFileError: ``path`` is a symlink, directory or device, or one of ``inputs``.
        OutputError: the database cannot be written (no permission, no space, ...).
        StoreError, DiscontinuityError: as for ``append_records``; nothing is written.
    """
    p = os.fspath(path)
    with atomic_path(p, inputs=inputs, siblings=_SIBLINGS) as tmp:
        try:
            with SqliteSessionStore.create(tmp, header) as store:
                store.path = p  # errors name the output, not its temporary file
                store.append_records(records)
                store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except StoreError as exc:
            if exc.path != p:
                raise StoreError(p, exc.reason) from None
            raise
        except sqlite3.Error as exc:
            raise _wrap(p, exc) from None
