"""``publish``'s work: a static site holding the viewer and every session's pages as ``serve`` answers them.

Rules:

* The sessions, their ids, the list's entries (grouping, parent/child links) and every page come from the server's
  own code (``SessionRegistry.listing``, ``app.list_entries``, ``app.page_answer``): a published page is the very
  bytes ``serve`` answers for the same request, at the path ``site_paths.site_path`` names for it. Per session: the
  first page, every "Load older" page (each read before the first seq of the one after it, as the viewer's journal
  asks), the whole session (the page's whole-session export), and the whole session's trajectory overview
  (``timeline.json``: ``timeline_api``'s value, folded from the whole-session file as published, redactions in).
* The catalog is ``serve``'s list answer with one change: an entry's ``path`` is the file's path under the
  published folder (``NAME/sub/file.jsonl``), never the publisher's absolute path.
* The viewer is the built site (``build/site``) with ``site_paths.MARKER`` in its ``index.html``.
* The manifest (``site.json``) holds the format version (``scheme``), the tool's version, the page size, the URL
  scheme as path templates (``layout``: ``site_paths.LAYOUT``), when the site last changed (``generated``), the
  viewer's files and, per session, its source file, fingerprint and files (first page, older pages, whole session).
* Republishing rewrites only the sessions whose source changed: the manifest keeps each session's
  fingerprint (``site_files.fingerprint`` of its file, its sidecar and the older files of its Claude Code project,
  whose records it does not show again, plus the scheme and tool version) and its files. Order: viewer files and
  session files first, then the manifest, then the catalog (each written whole and renamed), then files no longer
  listed are removed: a reader never sees a catalog naming a file that is not there yet, or no longer.
* Secrets (``secrets_scan``): every page and list entry is made and scanned before anything is written (pages held
  in memory up to ``HOLD_BYTES``, past that made again to be written). A finding, unless ``redacting``, refuses the
  publish: ``Report.refused``, nothing written (no folder made, no viewer copied, the old site whole). With
  ``redacting`` the secrets are published as markers; a session's manifest entry counts them (``redacted``), and a
  redacted session is not kept by a publish without ``redacting``. The fingerprint includes the scan's rules.
* A session whose parse stopped at a fault is published with its valid part (as ``serve`` shows it) and reported as
  ``FILE:LINE: error: message``; a session that cannot be published at all is reported and left out of the catalog.
  Either makes the command's exit status 1.
* The search index (``site_index``): the server's FTS5 index of what is published, as static shards the page's
  worker queries; a republish rebuilds only the shards holding a changed or removed session. Shards are written
  after the session files and before the manifest and the catalog, which names them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..interop.claude_layout import sidecar_of
from ..logfile import DEFAULT_MAX_LINE_BYTES
from ..records import decode_page, encode, record_range
from .app import list_entries, page_answer
from .catalog import ServedFile
from .registry import SessionRegistry
from .search_index import SearchUnavailable, check_fts5
from .secrets_scan import Found, Scanner, rules_id
from .site_files import fingerprint, remove_file, write_file
from .site_index import DEFAULT_SHARD_BYTES, SiteIndexWriter, catalog_entry, shard_files
from .site_paths import ALL_MESSAGES, CATALOG, LAYOUT, MANIFEST, MARKER, PAGE_SIZE, SESSIONS, site_path
from .timeline_api import timeline_bytes

__all__ = ["PublishError", "Report", "publish"]

SCHEME = 2
"""The site's layout version (``site_paths``); a site of another scheme or tool version is republished whole."""
_SITE = "transcript-assembler"
_CHARSET = b'<meta charset="utf-8">'
MAX_FINDING_LINES = 20
"""Secrets listed per session; past them, how many more."""
HOLD_BYTES = 256 << 20
"""Page bytes held between the scan and the writes; a session past them is made (and scanned) again to be written."""


class PublishError(Exception):
    """The site cannot be published at all (no viewer build, an output folder that is not a site)."""


@dataclass
class Report:
    """What a publish did: counts, and one ``FILE[:LINE]: error: message`` line per session reported."""

    sessions: int = 0
    rewritten: int = 0
    unchanged: int = 0
    files_removed: int = 0
    viewer_written: int = 0
    errors: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    """One line per secret found (``finding_lines``): errors, or warnings when they were redacted."""
    secrets: int = 0
    secret_sessions: int = 0
    refused: bool = False
    """Secrets were found and not redacted: nothing was written."""
    index: dict[str, Any] | None = None
    """The manifest's ``index`` entry (``site_index``), None without one."""
    index_written: int = 0
    """Index shards written by this publish (the others were kept)."""


def _marked(index: bytes) -> bytes:
    """The viewer's ``index.html`` with the published-site marker after its charset."""
    if MARKER.encode() in index:
        return index
    if _CHARSET not in index:
        raise PublishError(f"the viewer's index.html has no {_CHARSET.decode()} to put the site marker after")
    return index.replace(_CHARSET, _CHARSET + b"\n  " + MARKER.encode(), 1)


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The site's manifest (None when there is none, or it is not one of ours)."""
    try:
        value = json.loads((out / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    return value if type(value) is dict and value.get("site") == _SITE else None


def check_output(out: Path) -> dict[str, Any] | None:
    """The old manifest of ``out``; ``out`` must be missing, an empty folder or a published site.

    Raises:
        PublishError: it is something else.
    """
    if not out.exists():
        return None
    if not out.is_dir() or out.is_symlink():
        raise PublishError(f"{out}: not a folder")
    manifest = read_manifest(out)
    if manifest is None and any(out.iterdir()):
        raise PublishError(f"{out}: a folder that is not a published site (no {MANIFEST}); choose a new or empty one")
    return manifest


def _copy_viewer(static: Path, out: Path, old: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Copy the viewer's changed files (``index.html`` marked); returns their fingerprints and how many were
    written."""
    if not (static / "index.html").is_file():
        raise PublishError(f"{static}: no viewer build there (run `make build`, or pass --static DIR)")
    prints: dict[str, Any] = {}
    written = 0
    for src in sorted(static.rglob("*")):
        if not src.is_file():
            continue
        rel = src.relative_to(static).as_posix()
        if rel in (CATALOG, MANIFEST) or rel.startswith(f"{SESSIONS}/"):
            continue  # a name the site's own files take
        prints[rel] = fingerprint(src)
        if old.get(rel) == prints[rel] and (out / rel).is_file():
            continue
        data = src.read_bytes()
        written += write_file(out / rel, _marked(data) if rel == "index.html" else data)
    return prints, written


def _generated(old: dict[str, Any], manifest: dict[str, Any], report: Report) -> str:
    """When the site last changed (UTC, ISO 8601): the old manifest's time when this publish changed nothing, so an
    unchanged site is not written again."""
    kept = old.get("generated")
    unchanged = (report.rewritten == 0 and report.viewer_written == 0 and type(kept) is str
                 and {**old, "generated": None} == {**manifest, "generated": None})
    if unchanged:
        return str(kept)
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _shown_path(registry: SessionRegistry, path: Path) -> str:
    """A source file's path as the site shows it: under its root's name."""
    for _, root in registry.roots:
        if path == root:
            return root.name
        if path.is_relative_to(root):
            return f"{root.name}/{path.relative_to(root).as_posix()}"
    return path.name


def _session_print(registry: SessionRegistry, meta: ServedFile) -> str:
    """The fingerprint of what a session's pages depend on (see the module rules): a Claude Code file's (its reader
    keeps uuids) includes the older files of its project.

    Raises:
        OSError: a file cannot be read.
    """
    path = meta.path
    parts: list[Any] = [SCHEME, __version__, PAGE_SIZE, rules_id(), fingerprint(path)]
    side = sidecar_of(path.name)
    if side is not None and path.with_name(side).is_file():
        parts.append(fingerprint(path.with_name(side)))
    if meta.uuids is not None:
        parts += [[older.as_posix(), fingerprint(older)] for older in registry.older_in_project(path)]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def error_line(name: str, meta: ServedFile, key: str, listed: str | None) -> str:
    """``NAME:LINE: error: message`` for a session whose parse stopped at a fault (no line: ``NAME: error:``)."""
    session = next((s for s in meta.sessions if s.key == key), meta.main)
    error = session.error
    if error is None and session.header is None and listed is None:
        return f"{name}:1: error: no session header"
    line = getattr(error, "line", None)
    message = getattr(error, "message", None) or str(error or listed)
    where = f"{name}:{line}" if type(line) is int else name
    if key:
        message = f"session {key}: {message}"
    return f"{where}: error: {message}"


async def _session_files(registry: SessionRegistry, sid: str, redacting: bool,
                         scanner: Scanner | None = None) -> tuple[list[tuple[str, bytes]], list[Found]]:
    """A session's pages (see the module rules) as site paths and the bytes to write (redacted when
    ``redacting``), and the secrets found in them (``secrets_scan``).

    Raises:
        HTTPException, OSError, AssemblerError: the session cannot be read.
    """
    source = registry.lookup(sid, listed=True)  # publish's listing read every file: none is read again here
    scanner = Scanner() if scanner is None else scanner
    files: list[tuple[str, bytes]] = []
    found: list[Found] = []

    async def put(before: int | None, through: int | None, max_messages: int) -> tuple[bytes, bool]:
        rel = site_path("page", sid, before=before, max_messages=max_messages)
        assert rel is not None
        value, _ = await page_answer(source, through, before, max_messages)
        data = encode(value)
        published, hits = scanner.page(data, redacting)
        files.append((rel, published))
        found.extend(hits)
        return data, bool(value["hasMore"])

    data, more = await put(None, None, PAGE_SIZE)
    last = source.index.last_seq
    records = decode_page(data).records
    while more and records:
        before = record_range(records[0])[0]
        data, more = await put(before, last, PAGE_SIZE)
        records = decode_page(data).records
        if records and record_range(records[0])[0] >= before:
            break  # no older records came back: nothing more to chain (a page never overlaps the next)
    await put(None, last, ALL_MESSAGES)
    whole = decode_page(files[-1][1])  # as published: a redacted secret stays redacted in the timeline's labels
    rel = site_path("timeline", sid)
    assert rel is not None
    files.append((rel, await run_in_threadpool(timeline_bytes, whole.records, whole.hasMore, last)))
    registry.trim()
    return files, found


def finding_lines(name: str, sid: str, found: list[Found], redacted: bool) -> list[str]:
    """One ``NAME: error: session SID: seq N: KIND found`` line per distinct (where, kind), by seq (``warning:`` and
    ``redacted`` when ``redacted``), at most ``MAX_FINDING_LINES`` and then how many more; never the secret."""
    distinct = sorted(set(found), key=lambda f: (type(f[0]) is str, str(f[0]).zfill(20), f[1]))
    level, verb = ("warning", "redacted") if redacted else ("error", "found")
    lines = [f"{name}: {level}: session {sid}: {f'seq {where}' if type(where) is int else where}: {kind} {verb}"
             for where, kind in distinct[:MAX_FINDING_LINES]]
    if len(distinct) > MAX_FINDING_LINES:
        lines.append(f"{name}: {level}: session {sid}: and {len(distinct) - MAX_FINDING_LINES} more secret(s) "
                     f"{verb}")
    return lines


async def publish(paths: list[str], out: Path, *, static_dir: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                  cache_bytes: int = 64 << 20, redacting: bool = False, hold_bytes: int = HOLD_BYTES,
                  index_shard_bytes: int | None = DEFAULT_SHARD_BYTES) -> Report:
    """Publish the sessions under ``paths`` with the viewer in ``static_dir`` to the folder ``out``; a secret found
    in what would be written refuses the publish (nothing written, ``Report.refused``) unless ``redacting``. The
    search index (``site_index``) is written in shards of ``index_shard_bytes`` (None: no index).

    Raises:
        PublishError: nothing can be published (see ``check_output``, a missing viewer).
        OutputError: a site file cannot be written.
    """
    old = check_output(out) or {}
    try:
        rules_id()
    except ImportError:
        raise PublishError("publish scans every page for secrets with detect-secrets, which is not installed: "
                           "pip install 'transcript-assembler[publish]'") from None
    if not (static_dir / "index.html").is_file():
        raise PublishError(f"{static_dir}: no viewer build there (run `make build`, or pass --static DIR)")
    if index_shard_bytes is not None:
        try:
            check_fts5()
        except SearchUnavailable as exc:
            raise PublishError(f"{exc} (publish --no-index writes the site without its search index)") from None
    same_scheme = old.get("scheme") == SCHEME and old.get("tool") == __version__
    old_viewer: dict[str, Any] = old.get("viewer", {}) if same_scheme else {}
    old_sessions: dict[str, Any] = old.get("sessions", {}) if same_scheme else {}
    report = Report()

    registry = SessionRegistry(paths, max_line_bytes=max_line_bytes, cache_bytes=cache_bytes)
    listing, _pending = await registry.listing(None)  # every file read: a published list is whole
    metas = {f"{sid}/{s.key}" if s.key else sid: (meta, s.key) for sid, meta in listing for s in meta.sessions}
    sessions: dict[str, Any] = {}
    catalog: list[dict[str, Any]] = []
    pending: dict[str, list[tuple[str, bytes]] | None] = {}  # sid: its files, None when not held (rebuilt later)
    held = 0
    cwd = Path.cwd()
    # First every page is made and scanned, nothing written: a refused publish leaves the old site as it was.
    for entry in list_entries(listing):
        sid = entry["id"]
        meta, key = metas[sid]
        name = registry.location(meta.path) or (os.path.relpath(meta.path, cwd) if meta.path.is_relative_to(cwd)
                                                else str(meta.path))
        if entry["status"] == "damaged":
            report.errors.append(error_line(name, meta, key, entry.get("error")))
        found: list[Found] = []
        try:
            mark = _session_print(registry, meta)
            prev = old_sessions.get(sid)
            if (prev is not None and prev.get("fingerprint") == mark and (redacting or not prev.get("redacted"))
                    and all((out / f).is_file() for f in prev["files"])):
                sessions[sid] = prev
                report.unchanged += 1
            else:
                files, found = await _session_files(registry, sid, redacting)
                size = sum(len(data) for _, data in files)
                pending[sid] = files if held + size <= hold_bytes else None
                held += size if pending[sid] is not None else 0
                sessions[sid] = {"fingerprint": mark, "source": _shown_path(registry, meta.path),
                                 "files": [rel for rel, _ in files], "redacted": len(found) if redacting else 0}
        except Exception as exc:  # this session only: reported, left out, the rest published
            report.errors.append(f"{name}: error: cannot be published ({type(exc).__name__}: {str(exc)[:300]})")
            continue
        listed = {**entry, "path": _shown_path(registry, meta.path)}
        in_entry: list[Found] = []
        listed = Scanner().value(listed, "list entry", in_entry, redacting)
        found += in_entry
        if found:
            report.secrets += len(set(found))
            report.secret_sessions += 1
            report.findings += finding_lines(name, sid, found, redacting)
        catalog.append(listed)
    report.sessions = len(catalog)
    if report.secrets and not redacting:
        report.refused = True
        report.rewritten = report.unchanged = 0
        return report

    out.mkdir(parents=True, exist_ok=True)
    viewer, report.viewer_written = _copy_viewer(static_dir, out, old_viewer)
    index = None if index_shard_bytes is None else SiteIndexWriter(
        out, old.get("index") if same_scheme else None, index_shard_bytes, sessions, pending)
    titles = {entry["id"]: entry.get("title") or Path(entry["path"]).name for entry in catalog}  # as the server's
    all_path = {sid: site_path("page", sid, max_messages=ALL_MESSAGES) for sid in pending}
    for sid, to_write in pending.items():
        if to_write is None:  # not held: made (and scanned) again
            to_write, found = await _session_files(registry, sid, redacting)
            if found and not redacting:  # its source changed since the scan and now holds a secret: left out
                report.errors.append(f"{sessions.pop(sid)['source']}: error: session {sid}: changed while being "
                                     "published and now holds a secret; left out (publish again)")
                catalog = [e for e in catalog if e["id"] != sid]
                report.sessions = len(catalog)
                continue
        for rel, data in to_write:
            write_file(out / rel, data)
            if index is not None and rel == all_path[sid]:
                index.add_page(sid, data, titles.get(sid))
        report.rewritten += 1
    if index is not None:
        report.index = index.finish(titles)
        report.index_written = len(index.written)
        report.errors += [f"{sessions[sid]['source']}: error: session {sid}: not indexed for search: {why}"
                          for sid, why in index.failed if sid in sessions]

    manifest = {"site": _SITE, "scheme": SCHEME, "tool": __version__, "pageSize": PAGE_SIZE, "layout": LAYOUT,
                "viewer": viewer, "sessions": sessions}
    if report.index is not None:
        manifest["index"] = report.index
    manifest["generated"] = _generated(old, manifest, report)
    write_file(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
    listing_body: dict[str, Any] = {"sessions": catalog}
    if report.index is not None:
        listing_body["index"] = catalog_entry(report.index)
    write_file(out / CATALOG, encode(listing_body))  # last: the swap readers see

    keep = set(viewer) | {f for s in sessions.values() for f in s["files"]} | shard_files(report.index)
    stale = set(old.get("viewer", {})) | {f for s in old.get("sessions", {}).values() for f in s.get("files", [])} \
        | shard_files(old.get("index"))
    for rel in sorted(stale - keep):
        if ".." not in rel.split("/") and not rel.startswith("/"):  # a manifest names only files under the site
            remove_file(out / rel)
            report.files_removed += 1
    return report
