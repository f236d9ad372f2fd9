"""Sessions in object storage: an ``s3://``, ``gs://``, ``az://`` or ``https://`` location as a byte source (fsspec).

Rules: this module only opens, reads and lists; what the bytes mean is the one loader's (``store.loader.AnyLoader``)
business, fed the same slices a local file gives it. Reads are ranged: a file object of the location's fsspec
backend fetches ``READ_PIECE`` blocks as the loader asks for them, never the whole object up front. Listing is lazy:
one folder level (one paged listing request) at a time, names, sizes and tags only, no object read. Credentials come
from each backend's usual environment (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...); a location carrying
``user:password@`` is refused before anything is sent, and no message or log line ever repeats that part, nor a
query string (a signed URL's ``?X-Amz-Signature=...``): ``shown`` hides both, ``location_key`` names a location
without them (a cache's key), ``remote_name`` never includes the query. fsspec is
the optional ``cloud`` extra: without it a remote location is an ``RemoteError`` naming the install command. Every
failure of a backend (no such bucket, no credential, a refused request) is a ``RemoteError`` (an ``OSError``), so a
caller reports it as it reports an unreadable local file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["RemoteError", "RemoteObject", "is_remote", "shown", "check_location", "open_remote", "stat_remote",
           "list_remote", "probe", "remote_name", "location_key", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'transcript-assembler[cloud]'"
READ_PIECE = 1 << 20
"""Bytes per ranged read (the backend's block size)."""

_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+)://(?P<rest>.*)$", re.DOTALL)
# A location's first path part holding an "@" is credentials (or anything else no storage location needs).
_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+://)(?P<info>[^/?#]*@)(?P<tail>.*)$", re.DOTALL)


class RemoteError(OSError):
    """A remote location cannot be used: not installed, refused, unreachable or unreadable (``strerror`` says)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EIO, message)


@dataclass(frozen=True)
class RemoteObject:
    """One object a listing found: ``rel`` (its key under the listed prefix, ``/``-separated), ``url``, ``size``, a
    ``tag`` that changes when its content does (ETag, else size and time) and ``mtime`` (seconds, 0 unknown)."""

    rel: str
    url: str
    size: int
    tag: str
    mtime: float


def is_remote(location: str) -> bool:
    """``location`` is a URL (``scheme://...``, the scheme two letters or more: never a Windows drive), not a
    ``file://`` one (that is a local path for every reader here)."""
    match = _URL.match(location)
    return match is not None and match.group("scheme").lower() != "file"


def _split_query(location: str) -> tuple[str, str]:
    """``(location without its query and fragment, the query and fragment)``; a local path is never split."""
    if not is_remote(location):
        return location, ""
    cut = min((i for i in (location.find("?"), location.find("#")) if i >= 0), default=len(location))
    return location[:cut], location[cut:]


def shown(location: str) -> str:
    """``location`` fit to print: a ``user:password@`` part is replaced by ``***@``, a query string (and fragment)
    by ``?***``."""
    base, query = _split_query(location)
    match = _USERINFO.match(base)
    base = base if match is None else f"{match.group('scheme')}***@{match.group('tail')}"
    return f"{base}?***" if query else base


def location_key(location: str) -> str:
    """A stable name for ``location`` that holds no secret (a cache's key, a file name's source): its
    ``user:password@`` part dropped, its query string (and fragment) replaced by a hash of it (two signed URLs of one
    object differ, as their answers may)."""
    import hashlib

    base, query = _split_query(location)
    match = _USERINFO.match(base)
    base = base if match is None else f"{match.group('scheme')}{match.group('tail')}"
    if not query:
        return base
    return f"{base}?{hashlib.sha256(query.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def check_location(location: str) -> None:
    """Refuse a location that carries credentials.

    Raises:
        RemoteError: ``location`` has a ``user:password@`` part.
    """
    if _USERINFO.match(location) is not None:
        raise RemoteError("credentials in the location are refused: give them through the storage's usual "
                          "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...), never in the URL")


_SDK_ENV = ("AWS_", "GOOGLE_", "GCS", "AZURE_", "FSSPEC_")
# One backend instance per scheme and SDK environment: a changed credential or endpoint (a test, a rotated key) makes
# a new client that reads it, where fsspec's own cache would keep the first one.
_instances: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}


def _fs(location: str) -> tuple[Any, str]:
    check_location(location)
    try:
        import fsspec  # type: ignore[import-untyped]  # the optional ``cloud`` extra
    except ImportError:
        raise RemoteError(f"reading object storage needs the cloud extra: {INSTALL_HINT}") from None
    scheme = location.split("://", 1)[0].lower()
    key = (scheme, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(_SDK_ENV))))
    fs = _instances.get(key)
    if fs is not None:
        return fs, fs._strip_protocol(location)
    try:
        fs, path = fsspec.core.url_to_fs(location, skip_instance_cache=True)
    except ImportError as exc:  # fsspec knows the scheme, its backend package is missing (gcsfs, adlfs, ...)
        raise RemoteError(f"no backend for this location: {_text(exc)} (the cloud extra: {INSTALL_HINT})") from None
    except ValueError as exc:  # an unknown scheme
        raise RemoteError(_text(exc)) from None
    _instances[key] = fs
    return fs, path


def _text(exc: BaseException) -> str:
    """A backend's failure as one line: what kind, what it said (bounded), never a traceback."""
    if isinstance(exc, FileNotFoundError):
        return "no such object, prefix or bucket"
    if isinstance(exc, PermissionError):
        return f"access denied ({str(exc)[:200]})" if str(exc) else "access denied"
    message = " ".join(str(exc).split())[:300]
    kind = type(exc).__name__
    if "credential" in message.lower() or "credential" in kind.lower():
        return (f"no credentials for this storage ({message or kind}): set its usual environment "
                "(AWS_ACCESS_KEY_ID, ...)")
    return f"{kind}: {message}" if message else kind


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Any failure of the backend inside the block becomes a ``RemoteError``."""
    try:
        yield
    except RemoteError:
        raise
    except Exception as exc:  # a backend raises its SDK's own errors (botocore, aiohttp, azure): one kind here
        raise RemoteError(_text(exc)) from None


def remote_name(location: str) -> str:
    """The last part of a location's path (a bucket's or prefix's name, a file's name), never its query string."""
    location = _split_query(location)[0]
    match = _URL.match(location)
    rest = match.group("rest") if match is not None else location
    return rest.rstrip("/").rsplit("/", 1)[-1] or "root"


def stat_remote(location: str) -> RemoteObject:
    """What the backend says of one object (no byte read).

    Raises:
        RemoteError: it cannot be reached or is not there.
    """
    fs, path = _fs(location)
    with _translated():
        info = fs.info(path)
    if info.get("type") == "directory":
        raise RemoteError("a folder or prefix, not a session file")
    return _object(remote_name(location), location, info)


def open_remote(location: str, read: Callable[[bytes], bool], progress: Callable[[int, int], None] | None = None
                ) -> int:
    """Read the object at ``location`` in ranged pieces of ``READ_PIECE`` bytes, giving each to ``read`` (which
    returns False to stop early); ``progress(done, total)`` after each. Returns the bytes read.

    Raises:
        RemoteError: it cannot be reached, is not there or a read fails.
    """
    fs, path = _fs(location)
    done = 0
    with _translated():
        with fs.open(path, "rb", block_size=READ_PIECE, cache_type="none") as stream:
            total = int(getattr(stream, "size", 0) or 0)
            while True:
                piece = stream.read(READ_PIECE)
                if not piece:
                    break
                done += len(piece)
                if progress is not None:
                    progress(done, total)
                if not read(piece):
                    break
    return done


def probe(location: str) -> None:
    """Check that ``location`` (a prefix or an object) is there and readable, with one request.

    Raises:
        RemoteError: it is not (no such bucket or prefix, no credentials, refused, not installed).
    """
    fs, path = _fs(location)
    with _translated():
        fs.invalidate_cache()
        fs.info(path.rstrip("/"))


def list_remote(location: str, accept: Callable[[str], bool]) -> Iterator[RemoteObject]:
    """The objects under the prefix ``location`` whose base name ``accept`` takes, one folder level at a time
    (names, sizes and tags; nothing read), folders and files in name order. The backend's listing cache is dropped
    first, so each call sees the store as it is now.

    Raises:
        RemoteError: the prefix or bucket cannot be listed (a folder deeper down that fails is skipped).
    """
    fs, path = _fs(location)
    root = path.rstrip("/")
    with _translated():
        fs.invalidate_cache()
        info = fs.info(root)
        if info.get("type") != "directory":  # one object named: the listing is that object
            if accept(remote_name(location)):
                yield _object(remote_name(location), location, info)
            return
    stack = [root]
    prefix = location.rstrip("/")
    while stack:
        folder = stack.pop()
        with _translated():
            entries = fs.ls(folder, detail=True)
        dirs, files = [], []
        for entry in entries:
            name = str(entry.get("name", "")).rstrip("/")
            if not name.startswith(root + "/") or name == folder:
                continue
            if entry.get("type") == "directory":
                dirs.append(name)
            elif accept(name.rsplit("/", 1)[-1]):
                files.append((name, entry))
        for name, entry in sorted(files, key=lambda item: item[0]):
            rel = name[len(root) + 1:]
            yield _object(rel, f"{prefix}/{rel}", entry)
        stack.extend(sorted(dirs, reverse=True))  # popped in name order


def _object(rel: str, url: str, info: dict[str, Any]) -> RemoteObject:
    size = info.get("size")
    size = size if type(size) is int else 0
    when = info.get("LastModified", info.get("mtime", info.get("last_modified")))
    mtime = when.timestamp() if isinstance(when, datetime) else float(when) if isinstance(when, int | float) else 0.0
    tag = info.get("ETag", info.get("etag", info.get("md5Hash")))
    return RemoteObject(rel, url, size, str(tag) if tag else f"{size}:{mtime}", mtime)
