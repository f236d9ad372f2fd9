"""The search indexer: a background thread that keeps the cross-session index (``search_index.SearchStore``) in step
with the files under the served roots, and the progress the page shows while it works.

Rules: a file is (re)indexed when its size or mtime differs from what the index holds (``files`` table), so a
restart indexes only what changed since the last run; a file no longer under the roots is dropped from the index.
A file of an object storage root (``remote_root``) is known by its object's location (``index_key``: no credentials,
no query string), never by its spool path (new each run), and its state is the listing's size, time and ETag: a
restart finds it indexed, a changed object is indexed again; its bytes are fetched into the spool only to be
indexed (an object that cannot be fetched now is tried again next pass, not recorded as failed). The index file is
named after the roots the same way (``index_file_name`` of ``index_roots``).
Re-indexing a grown file folds it again (the fold is stateful: an appended result changes the tool row it belongs
to) but writes only the rows that changed (``SearchStore.replace_file``). Smaller files go first, so most of a big
folder is searchable soon. A file that cannot be read or folded is recorded with its error and tried again only
when it changes; an error no rule foresaw is logged and the file skipped, never the thread's end. One pass, then a
wait of ``interval`` seconds (or until ``wake``), until ``stop``. The thread owns the writer connection; readers
open their own (``reader``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import AssemblerError
from .search_index import SearchStore, Written
from .search_text import file_sessions

__all__ = ["SearchIndexer", "index_dir_default", "index_file_name", "index_key", "index_roots"]

log = logging.getLogger("assembler.server")  # one logger for the whole server package


def index_dir_default() -> Path:
    """``$XDG_CACHE_HOME/transcript-assembler/search-index`` (``~/.cache/...`` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "transcript-assembler" / "search-index"


def index_roots(registry: Any) -> list[tuple[str, str]]:
    """``(label, name)`` of each served root: its path, or an object storage prefix's ``location_key``."""
    return [(label, spool.key if (spool := registry.remote.get(path)) is not None else str(path))
            for label, path in registry.roots]


def index_key(registry: Any, path: Path, root: Path | None = None) -> str | None:
    """What the index names a file by: its path, or for a spool copy of an object, the object's ``location_key``
    (None: an object no listing has found)."""
    spool = registry.remote_root(path, root)
    return str(path) if spool is None else spool.key_of(path)


def index_file_name(roots: Sequence[tuple[str, str | Path]]) -> str:
    """One index per set of served roots (``index_roots``): ``sessions-<first root's name>-<hash of the
    roots>.fts5.sqlite3``."""
    import hashlib

    key = "\n".join(str(path) for _, path in sorted(roots, key=lambda r: str(r[1])))
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in (roots[0][0] if roots else "none"))[:40]
    return f"sessions-{name}-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}.fts5.sqlite3"


class SearchIndexer:
    """Indexes ``registry``'s files into the index file at ``path`` from a thread of its own."""

    def __init__(self, registry: Any, path: Path, *, interval: float = 2.0) -> None:
        self.registry = registry
        self.path = path
        self.interval = interval
        self.store = SearchStore(path)  # raises SearchUnavailable (no FTS5, the folder cannot be written)
        self.done = 0  # listed files whose index is up to date
        self.pending = 0  # listed files still to index in this pass
        self.passes = 0  # whole passes finished (tests wait on it)
        self.indexed = 0  # files (re)indexed since start (a restart over an unchanged folder indexes none)
        self._warned: set[tuple[str, str]] = set()  # objects whose fetch failed, said once each
        self.error: str | None = None  # what stopped the thread, if anything did
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._pass_done = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="search-indexer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.store.close()

    def wake(self) -> None:
        """Start the next pass now (a file was seen to change)."""
        self._wake.set()

    def wait_pass(self, after: int, timeout: float = 30.0) -> bool:
        """Waits until more than ``after`` passes ended; False on timeout."""
        with self._pass_done:
            return self._pass_done.wait_for(lambda: self.passes > after or self._stop.is_set(), timeout)

    def progress(self) -> dict[str, int]:
        return {"done": self.done, "pending": self.pending}

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.run_pass()
                with self._pass_done:
                    self.passes += 1
                    self._pass_done.notify_all()
                self._wake.wait(self.interval)
                self._wake.clear()
        except Exception as exc:  # the index file went bad under us: search says so, the server stays up
            log.exception("the search indexer stopped")
            self.error = f"the search indexer stopped: {type(exc).__name__}: {exc}"
            with self._pass_done:
                self._pass_done.notify_all()

    def run_pass(self) -> None:
        """One pass over the roots: index what changed, drop what is gone (blocking; the thread's loop)."""
        _, root_of = self.registry.walk()
        known = self.store.file_states()
        listed: dict[str, tuple[Path, Path]] = {}
        for file, root in root_of.items():
            key = index_key(self.registry, file, root)
            if key is not None:
                listed[key] = (file, root)
        for path in [p for p in known if p not in listed]:
            self.store.drop_file(path)
        todo: list[tuple[tuple[int, int, str], str, Path, Path]] = []
        for key, (file, root) in listed.items():
            state = self._state(file, root)
            if state is not None and known.get(key) != state:
                todo.append((state, key, file, root))
        todo.sort(key=lambda t: t[0][0])
        self.pending = len(todo)
        self.done = len(listed) - len(todo)
        for (size, mtime_ns, tag), key, file, root in todo:
            if self._stop.is_set():
                return
            try:
                self.registry.fetch(file, root)  # an object's bytes into its spool file (nothing for a local file)
            except OSError as exc:  # not now: tried again next pass (said once per version of the object)
                if (key, tag) not in self._warned:
                    self._warned.add((key, tag))
                    log.warning("cannot index %s: %s", self.registry.location(file, root), exc.strerror)
                continue
            self.index_file(file, root, size, mtime_ns, tag=tag, key=key)
            self.pending -= 1
            self.done += 1

    def _state(self, path: Path, root: Path) -> tuple[int, int, str] | None:
        """``(size, mtime_ns, tag)`` a file is indexed at: a local file's (tag ''), or the object's as last listed
        (None: cannot be told now)."""
        spool = self.registry.remote_root(path, root)
        if spool is not None:
            obj = spool.object_of(path)
            return None if obj is None else (obj.size, int(obj.mtime * 1e9), obj.tag)
        try:
            st = path.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns, ""

    def index_file(self, path: Path, root: Path, size: int, mtime_ns: int, *, tag: str = "",
                   key: str | None = None) -> Written:
        """(Re)index one file as read now (its size and mtime as seen before reading: a file that grows while it
        is read is read again next pass), under ``key`` (default: its path)."""
        self.indexed += 1
        error: str | None = None
        sessions = []
        try:
            context = self.registry.search_context(path, root)
            sessions = file_sessions(path, context=context, max_line_bytes=self.registry.max_line_bytes)
            error = next((s.fault for s in sessions if s.fault), None)
        except (OSError, AssemblerError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a file no reader rule foresaw: recorded, the index goes on
            log.exception("cannot index %s", path)
            error = f"cannot be indexed ({type(exc).__name__}: {str(exc)[:200]})"
        return self.store.replace_file(str(path) if key is None else key, size, mtime_ns, sessions, error, tag)
