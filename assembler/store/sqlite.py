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
store, so JSONL -> SQLite -> JSONL gives the same bytes. The mapping itself, and the reading of rows with the JSONL
reader's verdicts, live in ``sqlite_rows``; the file check in ``sqlite_file``. This module is the store (schema,
opening by path or from bytes, reads, appends, atomic writes): one concept, a little over 400 lines.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import msgspec

from ..chunk_rows import pack_chunk_runs
from ..errors import AssemblerError, DiscontinuityError
from ..formats import SQLITE_SUFFIXES
from ..logfile import DEFAULT_MAX_LINE_BYTES, LoadResult
from ..records import encode
from .atomic import atomic_path
from .sqlite_file import BadFile, check_file, check_head
from .sqlite_rows import SqlText, load_rows, record_row, session_header

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
_CAPPED = ("type", "data", "source_event_seqs", "surface_op", "extra")
_SELECT_CAPPED = "SELECT {}, CASE {} END FROM events ORDER BY seq0".format(
    ", ".join(f"CASE WHEN length({c}) > :cap THEN NULL ELSE {c} END" if c in _CAPPED else c for c in _COLUMNS),
    " ".join(f"WHEN length({c}) > :cap THEN '{c}'" for c in _CAPPED))
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
    """True for a path named as a SQLite session (``formats.SQLITE_SUFFIXES``, any case)."""
    return str(path).lower().endswith(SQLITE_SUFFIXES)


def side_files(path: Any) -> tuple[str, ...]:
    """The suffixes of the files SQLite makes beside a database written at ``path`` (none for another format)."""
    return _SIBLINGS if is_sqlite_path(path) else ()


# ---------------------------------------------------------------------------------------------------------------
# Opening


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
        try:
            check_file(p)
        except BadFile as exc:
            raise StoreError(p, str(exc)) from None
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
        try:
            check_head(image, len(image))
        except BadFile as exc:
            raise StoreError(name, str(exc)) from None
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
            conn.text_factory = SqlText  # the header's bytes as stored: SQLite does not check UTF-8
            try:
                rows = conn.execute("SELECT header FROM session").fetchall()
            finally:
                conn.text_factory = str
            if len(rows) != 1:
                raise StoreError(p, f"expected one session header row, found {len(rows)}")
            header = session_header(rows[0][0], StoreError, p)
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

    def iter_rows(self, max_line_bytes: int | None = None) -> Iterator[tuple[Any, ...]]:
        """The ``events`` table's rows in seq order, as stored (streamed, never fetched whole), text as ``SqlText``
        (``sqlite_rows``). With ``max_line_bytes``, a JSON or type column longer than that (in characters, which
        SQLite counts without handing the value over) comes as NULL and an 11th column names it.

        Raises:
            StoreError: the database is corrupt (a page cannot be read).
        """
        conn = self._conn
        factory = conn.text_factory
        conn.text_factory = SqlText
        try:
            if max_line_bytes is None:
                yield from conn.execute(_SELECT)
            else:
                yield from conn.execute(_SELECT_CAPPED, {"cap": max_line_bytes})
        except sqlite3.Error as exc:
            raise _wrap(self.path, exc) from None
        finally:
            conn.text_factory = factory

    def _stray_seq0(self) -> tuple[float, Any] | None:
        """The first row (in seq order) whose ``seq0`` is text or a blob, as ``(SQLite's number for it, value)``; a
        crafted table can hold one where ``seq0`` is not the rowid. None when there is none."""
        pk = [(r[2], r[5]) for r in self._conn.execute("PRAGMA table_info(events)") if r[1] == "seq0"]
        if pk and pk[0][0].upper() == "INTEGER" and pk[0][1] == 1:
            return None  # the rowid: always an integer
        factory = self._conn.text_factory
        self._conn.text_factory = SqlText
        try:
            row = self._conn.execute("SELECT CAST(seq0 AS REAL), seq0 FROM events WHERE typeof(seq0) IN "
                                     "('text', 'blob') ORDER BY CAST(seq0 AS REAL) LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            raise _wrap(self.path, exc) from None
        finally:
            self._conn.text_factory = factory
        return None if row is None else (row[0], row[1])

    def load(self, max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES) -> LoadResult:
        """Everything as a ``LoadResult``, with the verdict the JSONL reader gives the same records
        (``sqlite_rows.load_rows``): a table row that cannot be rebuilt or breaks the JSONL reader's rules, or a
        seq gap, stops it there with ``row N: ...`` (N counts rows in seq order); every record before it is kept.
        ``max_line_bytes``: a column longer than that is such a fault (the line cap of a JSONL file).

        Raises:
            StoreError: the database is corrupt (a page cannot be read).
        """
        return load_rows(self.iter_rows(max_line_bytes), self.header, stray=self._stray_seq0(),
                         max_line_bytes=max_line_bytes)

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

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database file and empty it (a finished file needs no ``-wal``)."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_sqlite(path: str | os.PathLike[str], *,
                max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES) -> LoadResult:
    """Read a whole session database (records packed, as ``read_session`` gives for JSONL); a column longer than
    ``max_line_bytes`` is a fault like a longer line.

    Raises:
        StoreError: the file is missing, not SQLite, truncated, corrupt, or not a session database.
        SchemaVersionError: its ``user_version`` is not ``SCHEMA_VERSION``.
    """
    with SqliteSessionStore.open(path) as store:
        return store.load(max_line_bytes)


def read_sqlite_image(name: str, image: bytearray, *,
                      max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES) -> LoadResult:
    """``read_sqlite`` of a database's bytes (``SqliteSessionStore.open_image``); ``name`` is what errors name.

    Raises:
        as ``read_sqlite``.
    """
    with SqliteSessionStore.open_image(name, image) as store:
        return store.load(max_line_bytes)


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
                store.checkpoint()
        except StoreError as exc:
            if exc.path != p:
                raise StoreError(p, exc.reason) from None
            raise
        except sqlite3.Error as exc:
            raise _wrap(p, exc) from None
