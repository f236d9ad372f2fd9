"""A published site's search index: the server's FTS5 index (``search_index.SearchStore``, the same schema and the
same row extraction, ``search_text.page_rows``) written as static SQLite files, ``search/index-HASH.sqlite``, that the
page's worker fetches and queries (``site_search``).

Rules:

* What is indexed is what is published: a session's rows are folded from the whole-session page ``publish`` writes
  (``all.json``, after the secret scan, so a redacted secret is redacted in the index too), its title is the page's
  own (``session_title``) else its list title, else its file's name (as the server's index). In a shard
  ``sessions.path`` is the session's listed id (key ``""``), and ``files`` holds the same id with size and mtime 0
  (a shard is rebuilt by ``publish``, never by an indexer).
* Shards: sessions are packed in order into a shard until its file reaches ``shard_bytes`` while being built (one
  session is never split, so a shard passes the size by at most one session's rows); then it is merged and vacuumed
  (``SearchStore.compact``), named by the sha256 of its bytes and written whole (temporary file, rename, ``.gz``/
  ``.br`` beside it: ``site_files.write_file``). A name never changes its bytes, so a reader holding an older
  catalog reads the shards that catalog names, or gets a 404 once a republish removed them, never a mix.
* Republishing rebuilds only the shards that hold a session that changed or went away: the others are kept as they
  are (their names stay in the new catalog). The unchanged sessions of a rebuilt shard are copied from the old
  shard (their text, not folded again; from their published ``all.json`` when the old shard cannot be read) and
  packed with the changed and new ones into new shards. A different ``shard_bytes`` or index schema rebuilds all.
* The filter (``site_filter``): once every shard is written, one file holding each shard's filter,
  ``search/filter-HASH.bin``, is written the same way (named by its bytes, before the manifest and the catalog), so
  the page fetches only the shards that may hold a hit. A new shard's filter is made from its file as it is written; a
  kept shard's is taken from the old filter file (by the shard's name, which names its bytes), or made again from its
  file when the old one cannot be read.
* The manifest keeps, per shard, its file, bytes, rows and sessions, and the filter's file and bytes; the catalog
  (``catalog.json``, written last) keeps what the page needs, ``index: {shards: [{file, bytes}], sessions, rows,
  filter: {file, bytes}}``.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..commands.exporting import session_title
from ..records import EventRecord, decode_page
from .search_index import SCHEMA_VERSION, SearchStore
from .search_text import IndexedRow, IndexedSession, page_rows
from .site_files import write_file
from .site_filter import (
    PREFIX_MAX,
    FilterError,
    ShardFilter,
    build_shard_filter,
    decode_filter,
    encode_filter,
    shard_words,
)
from .site_paths import ALL_MESSAGES, site_path

__all__ = ["DEFAULT_SHARD_BYTES", "INDEX_DIR", "SiteIndexWriter", "catalog_entry", "published_session",
           "shard_files"]

DEFAULT_SHARD_BYTES = 4 << 20
"""A shard's size (while built) before the next session starts a new one: ``publish --index-shard-mb``. Small
enough that a rare word fetches a few MB of a big site's index, big enough that a common one costs few requests."""
INDEX_DIR = "search"


def published_session(page: bytes, list_title: str | None) -> IndexedSession:
    """The index's view of a session from its whole-session page bytes (``all.json``).

    Raises:
        AssemblerError: the page does not decode or fold.
    """
    records = decode_page(page).records
    title = session_title(r.event for r in records if isinstance(r, EventRecord))
    return IndexedSession("", title or list_title, page_rows(records), None)


def _old_rows(con: sqlite3.Connection, sid: str) -> IndexedSession | None:
    found = con.execute("SELECT id, title FROM sessions WHERE path = ? AND key = ''", (sid,)).fetchone()
    if found is None:
        return None
    rows = [IndexedRow(key, seq, text) for key, seq, text in con.execute(
        "SELECT r.key, r.seq, t.text FROM rows r JOIN row_text t ON t.rowid = r.id WHERE r.session = ? "
        "ORDER BY r.id", (found[0],))]
    return IndexedSession("", found[1], rows, None)


class SiteIndexWriter:
    """Writes the shards of one publish (see the module rules): ``add`` each session that changed as its pages are
    written, then ``finish`` once all are, before the manifest and the catalog.

    ``old`` is the old manifest's ``index`` entry (None: none, or a site of another scheme); ``listed`` every
    session the new site lists; ``changed`` those whose pages are written again (the rest are unchanged).
    """

    def __init__(self, out: Path, old: dict[str, Any] | None, shard_bytes: int, listed: Iterable[str],
                 changed: Iterable[str]) -> None:
        self.out = out
        self.shard_bytes = shard_bytes
        self.listed = list(listed)
        changed_set = set(changed)
        same = (type(old) is dict and old.get("schema") == SCHEMA_VERSION and old.get("shardBytes") == shard_bytes
                and type(old.get("shards")) is list)
        old_shards: list[dict[str, Any]] = [s for s in (old or {}).get("shards", []) if type(s) is dict] \
            if same else []
        listed_set = set(self.listed)
        self.kept: list[dict[str, Any]] = []
        old_filter = (old or {}).get("filter") if same else None
        self._old_filter = old_filter.get("file") if type(old_filter) is dict else None
        self._filters: dict[str, ShardFilter] = {}  # the shards written by this publish
        self._touched: list[dict[str, Any]] = []  # old shards rebuilt: their unchanged sessions are copied
        for shard in old_shards:
            names = shard.get("sessions", [])
            if (all(s in listed_set and s not in changed_set for s in names) and type(shard.get("file")) is str
                    and ".." not in shard["file"].split("/") and (out / shard["file"]).is_file()):
                self.kept.append(shard)
            else:
                self._touched.append(shard)
        in_kept = {s for shard in self.kept for s in shard["sessions"]}
        self._copy = [s for s in self.listed if s not in in_kept and s not in changed_set]  # from old shards
        self.written: list[dict[str, Any]] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="publish-index-")
        self._store: SearchStore | None = None
        self._names: list[str] = []
        self._rows = 0
        self.failed: list[tuple[str, str]] = []
        """``(session id, why)`` of each session left out of the index (its page would not fold)."""

    def _current(self) -> SearchStore:
        if self._store is None:
            self._store = SearchStore(Path(self._tmp.name) / f"shard-{len(self.written)}.sqlite", scratch=True)
            self._names, self._rows = [], 0
        return self._store

    def add(self, sid: str, session: IndexedSession) -> None:
        """Index one session (its rows as published)."""
        store = self._current()
        done = store.replace_file(sid, 0, 0, [session])
        self._names.append(sid)
        self._rows += done.written + done.kept
        if store.size() >= self.shard_bytes:
            self._close()

    def add_page(self, sid: str, page: bytes, list_title: str | None) -> None:
        """Index one session from its whole-session page bytes; a page that cannot be folded is left out of the
        index and named in ``failed``."""
        try:
            session = published_session(page, list_title)
        except Exception as exc:  # this session's rows only: the rest of the index is written
            self.failed.append((sid, f"{type(exc).__name__}: {str(exc)[:200]}"))
            return
        self.add(sid, session)

    def _close(self) -> None:
        store, self._store = self._store, None
        if store is None:
            return
        store.compact()
        store.close()
        data = store.path.read_bytes()
        rel = f"{INDEX_DIR}/index-{hashlib.sha256(data).hexdigest()[:20]}.sqlite"
        self._filters[rel] = _shard_filter(rel, store.path)
        store.path.unlink()
        write_file(self.out / rel, data)
        self.written.append({"file": rel, "bytes": len(data), "rows": self._rows, "sessions": self._names})

    def finish(self, titles: dict[str, str | None]) -> dict[str, Any]:
        """Copy the unchanged sessions of the rebuilt shards, write the last shard; returns the manifest's
        ``index`` entry."""
        old_cons: list[sqlite3.Connection] = []
        try:
            for shard in self._touched:
                path = self.out / str(shard.get("file"))
                if ".." in str(shard.get("file")).split("/") or not path.is_file():
                    continue
                try:
                    old_cons.append(sqlite3.connect(f"file:{path}?mode=ro", uri=True))
                except sqlite3.Error:
                    continue
            for sid in self._copy:
                session = None
                for con in old_cons:
                    try:
                        session = _old_rows(con, sid)
                    except sqlite3.Error:
                        session = None
                    if session is not None:
                        break
                if session is not None:
                    self.add(sid, session)
                    continue
                rel = site_path("page", sid, max_messages=ALL_MESSAGES)
                try:
                    page = (self.out / str(rel)).read_bytes()
                except OSError as exc:
                    self.failed.append((sid, str(exc)))
                    continue
                self.add_page(sid, page, titles.get(sid))
        finally:
            for con in old_cons:
                con.close()
        self._close()
        self._tmp.cleanup()
        shards = self.kept + self.written
        filters = self._kept_filters()
        filters.update(self._filters)
        data = encode_filter([filters[s["file"]] for s in shards])
        rel = f"{INDEX_DIR}/filter-{hashlib.sha256(data).hexdigest()[:20]}.bin"
        write_file(self.out / rel, data)
        return {"schema": SCHEMA_VERSION, "shardBytes": self.shard_bytes, "shards": shards,
                "filter": {"file": rel, "bytes": len(data)}}

    def _kept_filters(self) -> dict[str, ShardFilter]:
        """The kept shards' filters: from the old filter file, else made again from each shard's file."""
        old: dict[str, ShardFilter] = {}
        if self._old_filter is not None and ".." not in self._old_filter.split("/"):
            try:
                read = decode_filter((self.out / self._old_filter).read_bytes())
                if read.prefix_max == PREFIX_MAX:  # made with the keys this publish makes
                    old = {f.file: f for f in read.shards}
            except (OSError, FilterError):
                old = {}
        found = {}
        for shard in self.kept:
            entry = old.get(shard["file"])
            if entry is None:
                try:
                    entry = _shard_filter(shard["file"], self.out / shard["file"])
                except sqlite3.Error:  # a shard that cannot be read: always fetched (the page says what is wrong)
                    entry = ShardFilter(shard["file"], len(shard.get("sessions", [])), 1, b"")
            found[shard["file"]] = entry
        return found


def _shard_filter(rel: str, path: Path) -> ShardFilter:
    """The filter of the shard ``rel`` from its file."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        words, sessions = shard_words(con)
    finally:
        con.close()
    return build_shard_filter(rel, sessions, words)


def catalog_entry(index: dict[str, Any]) -> dict[str, Any]:
    """What the catalog tells the page about the index (see the module rules)."""
    shards = index["shards"]
    entry = {"shards": [{"file": s["file"], "bytes": s["bytes"]} for s in shards],
             "sessions": sum(len(s["sessions"]) for s in shards), "rows": sum(s["rows"] for s in shards)}
    if type(index.get("filter")) is dict:
        entry["filter"] = {"file": index["filter"]["file"], "bytes": index["filter"]["bytes"]}
    return entry


def shard_files(index: dict[str, Any] | None) -> set[str]:
    """The files a manifest's ``index`` entry names (its shards and its filter)."""
    if type(index) is not dict or type(index.get("shards")) is not list:
        return set()
    files = {s["file"] for s in index["shards"] if type(s) is dict and type(s.get("file")) is str}
    found = index.get("filter")
    if type(found) is dict and type(found.get("file")) is str:
        files.add(found["file"])
    return files
