"""A served root in object storage (``serve s3://bucket/prefix``, ``publish s3://...``): the bucket listed lazily,
each object copied into a private spool folder only when the list or a page first reads it.

Rules: a scan lists the prefix (``store.remote.list_remote``: names, sizes and tags, no object read) and answers
``(relative key, spool path)`` pairs; an object's bytes are fetched in ranged pieces (``store.remote.open_remote``)
into ``spool/<key>`` by ``ensure``, once per tag (ETag): a listing that finds a new tag fetches it again at the next
read, an object no longer listed is removed from the spool. A Claude Code sidecar (``.meta.json``, small) is fetched
with the scan so ``registry.context_of`` finds it beside its session. Everything after ``ensure`` is the local
machinery on a local file (``confine``, ``catalog``, ``source``): one reader. The spool file's mtime is the object's
time, so idle and activity rules read the store's time. A remote session is a snapshot, never followed
(``source.SessionSource.snapshot``). The spool is a ``mkdtemp`` folder (mode 0700), removed when the process ends,
so what must outlive a run (the search index) names an object by ``key_of`` (its location without credentials or
query, ``store.remote.location_key``) and knows its version by ``object_of`` (size, time and tag as listed), never by
its spool path. Locations are printed and logged as ``store.remote.shown`` gives them.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ..interop.claude_layout import SIDECAR, SIDECAR_MAX
from ..store.remote import RemoteError, RemoteObject, list_remote, location_key, open_remote, remote_name, shown

__all__ = ["RemoteRoot", "spool_folder"]

_spool: list[Path] = []


def spool_folder() -> Path:
    """This process's private spool folder (made on first use, removed at exit)."""
    if not _spool:
        folder = Path(tempfile.mkdtemp(prefix="transcript-assembler-remote-")).resolve()
        _spool.append(folder)
        atexit.register(shutil.rmtree, folder, True)
    return _spool[0]


class RemoteRoot:
    """One ``s3://`` (or other fsspec) prefix served as a root; ``path`` is its spool folder, named as the prefix
    is (a published site's paths read ``NAME/key``, as for a local folder of that name)."""

    def __init__(self, url: str, accept: Callable[[str], bool]) -> None:
        self.url = url.rstrip("/")
        self.accept = accept
        base = spool_folder() / f"{len(os.listdir(spool_folder()))}"
        self.path = base / remote_name(url)
        self.path.mkdir(parents=True)
        self._lock = threading.Lock()
        self._listed: dict[Path, RemoteObject] = {}  # spool path -> the object as the last scan listed it
        self._held: dict[Path, str] = {}  # spool path -> the tag of the bytes it holds
        self._keys: dict[Path, str] = {}  # spool path -> its object's location_key (ever listed; never changes)

    def files(self) -> Iterator[tuple[str, Path]]:
        """``(key relative to the prefix, spool path)`` of every session object listed now; sidecars are fetched,
        objects no longer listed leave the spool.

        Raises:
            RemoteError: the prefix cannot be listed (no such bucket, no credentials, ...).
        """
        listed: dict[Path, RemoteObject] = {}
        found: list[tuple[str, Path]] = []
        for obj in list_remote(self.url, lambda name: self.accept(name) or name.endswith(SIDECAR)):
            spool = self.path.joinpath(*obj.rel.split("/"))
            if not spool.resolve().is_relative_to(self.path):  # a key with ``..`` parts: never outside the spool
                continue
            listed[spool] = obj
            if spool not in self._keys:
                self._keys[spool] = location_key(obj.url)
            if obj.rel.endswith(SIDECAR):
                if obj.size <= SIDECAR_MAX:
                    self._fetch_quietly(spool, obj)
                continue
            found.append((obj.rel, spool))
        with self._lock:
            gone = [p for p in self._held if p not in listed]
            self._listed = listed
            for path in gone:
                self._held.pop(path, None)
                path.unlink(missing_ok=True)
        return iter(found)

    def location_of(self, path: Path) -> str | None:
        """The object a spool file holds, as a location to print (None: not one of this root's)."""
        obj = self._listed.get(path)
        return shown(obj.url) if obj is not None else None

    def object_of(self, path: Path) -> RemoteObject | None:
        """The object a spool file stands for, as the last listing found it (None: not listed now)."""
        return self._listed.get(path)

    @property
    def shown(self) -> str:
        """The prefix, fit to print or log."""
        return shown(self.url)

    @property
    def key(self) -> str:
        """The prefix as a stable name holding no secret (``store.remote.location_key``)."""
        return location_key(self.url)

    def key_of(self, path: Path) -> str | None:
        """The stable name, holding no secret, of the object a spool file stands for (``store.remote.location_key``);
        None for a file no listing has found. A spool path always stands for the same location, so an object gone
        from a later listing keeps its name."""
        return self._keys.get(path)

    def ensure(self, path: Path) -> None:
        """Bring ``path``'s spool copy to the tag last listed (fetching it in ranged pieces if it differs).

        Raises:
            RemoteError: the object cannot be read now.
        """
        with self._lock:
            obj = self._listed.get(path)
            if obj is None or self._held.get(path) == obj.tag:
                return
            self._fetch(path, obj)

    def _fetch_quietly(self, path: Path, obj: RemoteObject) -> None:
        with self._lock:
            if self._held.get(path) == obj.tag:
                return
            try:
                self._fetch(path, obj)
            except (RemoteError, OSError):
                path.unlink(missing_ok=True)  # a sidecar that cannot be read: the session is listed without it

    def _fetch(self, path: Path, obj: RemoteObject) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".fetch-")
        try:
            with os.fdopen(fd, "wb") as out:
                open_remote(obj.url, lambda piece: out.write(piece) >= 0)
            if obj.mtime:
                os.utime(temp, (obj.mtime, obj.mtime))
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        self._held[path] = obj.tag
