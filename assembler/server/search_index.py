"""The cross-session search index: one SQLite file holding an FTS5 table of every indexed chat row's text, with the
file state each file was indexed at.

Schema (``SCHEMA_VERSION``; a file of another version is rebuilt from nothing, it is only a cache)::

    meta(name TEXT PRIMARY KEY, value TEXT)                      -- schema version
    files(path TEXT PRIMARY KEY, size INT, mtime_ns INT, error TEXT, tag TEXT)
    sessions(id INTEGER PRIMARY KEY, path TEXT, key TEXT, title TEXT, UNIQUE(path, key))
    rows(id INTEGER PRIMARY KEY, session INT, key TEXT, seq INT, digest BLOB, UNIQUE(session, key))
    row_text USING fts5(text, tokenize='unicode61 remove_diacritics 0', prefix='2 3 4')   -- rowid = rows.id

``files.path`` is what the indexer names a file by (its path, or an object's location: ``indexer.index_key``) and
``tag`` the object's ETag ('' for a local file); a version-2 file made before ``tag`` gains the column (empty), so
its local files are not indexed again.

Rules: every write is one ``BEGIN IMMEDIATE`` … ``COMMIT`` transaction (a crash or an error rolls back: the index
is the old one, whole); the journal is WAL, so a reader's own connection (``reader``) is never blocked by the
writer. Re-indexing a file writes only the rows whose text or seq changed (``digest``), deletes the rows that are
gone and leaves the others alone, so a grown file's old rows are never indexed twice. Snippets carry
``search_text.MARK_OPEN``/``MARK_CLOSE`` around each match; ``search`` turns them into offsets. Prefix indexes of 2,
3 and 4 characters keep short ``word*`` queries fast (about a third more bytes). Results are best first (FTS5's
bm25 ``rank``) when at most ``RANKED_MAX`` rows match; beyond that scoring every match costs more than an answer may
(80 ms for a word in 10,000 rows), so they come newest-indexed first. FTS5 missing from
the SQLite Python was built with is ``SearchUnavailable``, with what to do. A ``scratch`` store (a published site's
shard, ``site_index``) is a file built whole and then renamed: its rollback journal is in memory, nothing is synced,
and ``compact`` merges and vacuums it once it is full.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from .search_text import MARK_CLOSE, MARK_OPEN, IndexedSession

__all__ = ["RANKED_MAX", "SCHEMA_VERSION", "TOKENIZE", "SearchUnavailable", "SearchStore", "StoredHit", "Written",
           "check_fts5", "count_matches", "search", "top_hits", "unmark"]

SCHEMA_VERSION = "2"
TOKENIZE = "unicode61 remove_diacritics 0"
"""The FTS5 tokenizer of ``row_text`` (a published site's filter tokenizes queries with it: ``site_filter``)."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                                 error TEXT, tag TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS sessions(id INTEGER PRIMARY KEY, path TEXT NOT NULL, key TEXT NOT NULL, title TEXT,
                                    UNIQUE(path, key));
CREATE TABLE IF NOT EXISTS rows(id INTEGER PRIMARY KEY, session INTEGER NOT NULL, key TEXT NOT NULL,
                                seq INTEGER NOT NULL, digest BLOB NOT NULL, UNIQUE(session, key));
CREATE VIRTUAL TABLE IF NOT EXISTS row_text USING fts5(text, tokenize='{TOKENIZE}', prefix='2 3 4');
"""

_SNIPPET_TOKENS = 24
RANKED_MAX = 2000
"""Up to this many matching rows, results are ordered by relevance (bm25); beyond, newest-indexed first."""


class SearchUnavailable(RuntimeError):
    """The search index cannot be kept here (no FTS5 in this SQLite, or its folder cannot be written)."""


def check_fts5() -> None:
    """Raises ``SearchUnavailable`` when this Python's SQLite lacks FTS5."""
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise SearchUnavailable(
            f"search needs SQLite's FTS5 extension, which this Python's sqlite3 (SQLite {sqlite3.sqlite_version}) "
            f"lacks ({exc}); use a Python built with FTS5 (python.org builds and Debian's have it), or run serve "
            "with --no-index") from None


class StoredHit(NamedTuple):
    """One matching row: its file and session key (mapped to a listed id by the caller), seq, node key, title and
    snippet (plain text) with the matches' ``(start, end)`` offsets in UTF-16 code units (JavaScript indices)."""

    path: str
    session_key: str
    seq: int
    key: str
    title: str | None
    snippet: str
    marks: list[tuple[int, int]]
    rank: float = 0.0
    """Its FTS5 ``rank`` (bm25, lower is better) when ranked, else its rowid (merging shards: ``site_search``)."""


class Written(NamedTuple):
    """What one ``replace_file`` changed: rows inserted or rewritten, rows deleted, rows left as they were."""

    written: int
    deleted: int
    kept: int


def _digest(seq: int, text: str) -> bytes:
    return hashlib.blake2b(f"{seq}\n{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()


def unmark(snippet: str) -> tuple[str, list[tuple[int, int]]]:
    """A snippet with markers → the plain text and the marked spans (UTF-16 offsets)."""
    plain: list[str] = []
    marks: list[tuple[int, int]] = []
    at = 0
    start: int | None = None
    for ch in snippet:
        if ch == MARK_OPEN:
            start = at
        elif ch == MARK_CLOSE:
            if start is not None and start < at:
                marks.append((start, at))
            start = None
        else:
            plain.append(ch)
            at += 2 if ord(ch) > 0xFFFF else 1
    return "".join(plain), marks


class SearchStore:
    """One index file. The writer connection belongs to the thread that made the store; ``reader()`` opens another
    (for the request threads)."""

    def __init__(self, path: str | os.PathLike[str], *, scratch: bool = False) -> None:
        check_fts5()
        self.path = Path(path)
        self.scratch = scratch
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = self._open()
        except (OSError, sqlite3.Error) as exc:
            raise SearchUnavailable(f"cannot keep the search index at {self.path}: {exc}") from None

    def _open(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        if self.scratch:  # a file built whole, then renamed (publish): a rollback journal in memory, no fsync
            con.execute("PRAGMA journal_mode=MEMORY")
            con.execute("PRAGMA synchronous=OFF")
        else:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
        version = None
        if con.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
            row = con.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
            version = row[0] if row else None
            if version != SCHEMA_VERSION:  # another version's cache: start again
                con.execute("BEGIN IMMEDIATE")
                for table in ("row_text", "rows", "sessions", "files", "meta"):
                    con.execute(f"DROP TABLE IF EXISTS {table}")
                con.execute("COMMIT")
        con.executescript(_SCHEMA)
        if "tag" not in {row[1] for row in con.execute("PRAGMA table_info(files)")}:  # made before the column
            con.execute("ALTER TABLE files ADD COLUMN tag TEXT NOT NULL DEFAULT ''")
        con.execute("INSERT OR REPLACE INTO meta(name, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
        return con

    def close(self) -> None:
        self._con.close()

    def reader(self) -> sqlite3.Connection:
        """A read-only connection of its own (queries never wait for the writer: WAL)."""
        con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None,
                              check_same_thread=False, timeout=5)
        con.execute("PRAGMA query_only=1")
        return con

    def file_states(self) -> dict[str, tuple[int, int, str]]:
        """``path -> (size, mtime_ns, tag)`` of every indexed file."""
        return {p: (s, m, t) for p, s, m, t in self._con.execute("SELECT path, size, mtime_ns, tag FROM files")}

    def replace_file(self, path: str, size: int, mtime_ns: int, sessions: Iterable[IndexedSession],
                     error: str | None = None, tag: str = "") -> Written:
        """Make ``path``'s rows those of ``sessions`` (as read at ``size``/``mtime_ns``/``tag``), in one
        transaction."""
        con = self._con
        written = deleted = kept = 0
        con.execute("BEGIN IMMEDIATE")
        try:
            old_sessions = {k: i for k, i in con.execute("SELECT key, id FROM sessions WHERE path = ?", (path,))}
            for session in sessions:
                sid = old_sessions.pop(session.key, None)
                if sid is None:
                    sid = con.execute("INSERT INTO sessions(path, key, title) VALUES (?, ?, ?)",
                                      (path, session.key, session.title)).lastrowid
                else:
                    con.execute("UPDATE sessions SET title = ? WHERE id = ?", (session.title, sid))
                old = {k: (i, d) for i, k, d in con.execute("SELECT id, key, digest FROM rows WHERE session = ?",
                                                           (sid,))}
                for row in session.rows:
                    digest = _digest(row.seq, row.text)
                    known = old.pop(row.key, None)
                    if known is not None and known[1] == digest:
                        kept += 1
                        continue
                    if known is not None:
                        con.execute("DELETE FROM row_text WHERE rowid = ?", (known[0],))
                        con.execute("DELETE FROM rows WHERE id = ?", (known[0],))
                    rid = con.execute("INSERT INTO rows(session, key, seq, digest) VALUES (?, ?, ?, ?)",
                                      (sid, row.key, row.seq, digest)).lastrowid
                    con.execute("INSERT INTO row_text(rowid, text) VALUES (?, ?)", (rid, row.text))
                    written += 1
                for rid, _ in old.values():
                    con.execute("DELETE FROM row_text WHERE rowid = ?", (rid,))
                    con.execute("DELETE FROM rows WHERE id = ?", (rid,))
                    deleted += 1
            for sid in old_sessions.values():
                deleted += self._drop_session(sid)
            con.execute("INSERT OR REPLACE INTO files(path, size, mtime_ns, error, tag) VALUES (?, ?, ?, ?, ?)",
                        (path, size, mtime_ns, error, tag))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return Written(written, deleted, kept)

    def _drop_session(self, sid: int) -> int:
        con = self._con
        ids = [r[0] for r in con.execute("SELECT id FROM rows WHERE session = ?", (sid,))]
        con.executemany("DELETE FROM row_text WHERE rowid = ?", ((i,) for i in ids))
        con.execute("DELETE FROM rows WHERE session = ?", (sid,))
        con.execute("DELETE FROM sessions WHERE id = ?", (sid,))
        return len(ids)

    def drop_file(self, path: str) -> int:
        """Forget ``path`` (it is no longer listed); returns the rows deleted."""
        con = self._con
        con.execute("BEGIN IMMEDIATE")
        try:
            deleted = sum(self._drop_session(sid) for (sid,) in
                          con.execute("SELECT id FROM sessions WHERE path = ?", (path,)).fetchall())
            con.execute("DELETE FROM files WHERE path = ?", (path,))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return deleted

    def row_count(self) -> int:
        return int(self._con.execute("SELECT count(*) FROM rows").fetchone()[0])

    def size(self) -> int:
        """The file's bytes as SQLite counts them (its pages), written or not."""
        con = self._con
        return int(con.execute("PRAGMA page_count").fetchone()[0]) * int(con.execute("PRAGMA page_size").fetchone()[0])

    def compact(self) -> None:
        """Merge the FTS5 segments into one and rewrite the file without free pages (a file that is written once and
        then only read, as a published shard is: fewer bytes, faster queries)."""
        self._con.execute("INSERT INTO row_text(row_text) VALUES ('optimize')")
        self._con.execute("VACUUM")


def count_matches(con: sqlite3.Connection, match: str, count_cap: int = 10_000) -> int:
    """How many rows match the FTS5 ``match`` expression, counted up to ``count_cap`` + 1.

    Raises:
        sqlite3.OperationalError: the expression is not valid FTS5.
    """
    return int(con.execute("SELECT count(*) FROM (SELECT 1 FROM row_text WHERE row_text MATCH ? LIMIT ?)",
                           (match, count_cap + 1)).fetchone()[0])


def top_hits(con: sqlite3.Connection, match: str, limit: int, ranked: bool) -> list[StoredHit]:
    """The first ``limit`` rows for ``match``: best first (bm25 ``rank``) when ``ranked``, else newest-indexed
    first; each hit's ``rank`` is what it was ordered by (``rank``, or its rowid).

    Raises:
        sqlite3.OperationalError: the expression is not valid FTS5.
    """
    order, key = ("rank", "rank") if ranked else ("row_text.rowid DESC", "row_text.rowid")
    rows = con.execute(
        f"SELECT s.path, s.key, r.seq, r.key, s.title, snippet(row_text, 0, ?, ?, '…', ?), {key} "
        "FROM row_text JOIN rows r ON r.id = row_text.rowid JOIN sessions s ON s.id = r.session "
        f"WHERE row_text MATCH ? ORDER BY {order} LIMIT ?",
        (MARK_OPEN, MARK_CLOSE, _SNIPPET_TOKENS, match, limit)).fetchall()
    hits = []
    for path, skey, seq, key_, title, snippet, rank in rows:
        plain, marks = unmark(snippet)
        hits.append(StoredHit(path, skey, seq, key_, title, plain, marks, float(rank)))
    return hits


def search(con: sqlite3.Connection, match: str, limit: int, count_cap: int = 10_000) -> tuple[list[StoredHit], int]:
    """The first ``limit`` rows for an FTS5 ``match`` expression (``search_query.fts_query``), best first (bm25;
    newest-indexed first when more than ``RANKED_MAX`` match), and how many rows match (counted up to
    ``count_cap`` + 1).

    Raises:
        sqlite3.OperationalError: the expression is not valid FTS5.
    """
    total = count_matches(con, match, count_cap)
    return top_hits(con, match, limit, total <= RANKED_MAX), total
