"""``export``: a session log → one self-contained static HTML transcript that needs no JavaScript, or GitHub-flavoured
Markdown (``render.render_markdown``). The format comes from ``--format``, else from the output's extension
(``.html``/``.htm``, ``.md``/``.markdown``); any other extension without ``--format`` is a usage error (exit 2), never
a silent HTML file.

Rules: the same path as the viewer: storage rows renamed to wire rows (never expanded), the page folded through the
default Definitions, every chat node rendered by ``assembler.render`` (the page's renderer), Think rows as native
``<details>``. The document carries its CSS inline and a CSP that allows no script at all. A malformed file still
exports everything before the faulty line, with a visible notice naming it (exit status 1).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..errors import AssemblerError
from ..formats import ZSTD
from ..history import MessageIndex
from ..jsontext import utf8_text
from ._common import fail, load, max_line_bytes, report_problems, session_key, warn_faults
from ._output import error, output, preflight
from .exporting import export_page, export_sessions, session_title

__all__ = ["register", "cmd_export", "export_html", "export_document", "export_format"]

_EXTENSIONS = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="write a static HTML transcript (no JavaScript) or GitHub-flavoured Markdown")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html|OUT.md",
                   help="the file to write (the format follows its extension unless --format is given)")
    p.add_argument("--format", choices=("html", "md"), help="html or md (default: from the output's extension)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true", help="the whole log (the default)")
    group.add_argument("--max-messages", type=int, metavar="K",
                       help="only the newest page holding K append-origin messages (PROTOCOL 3.2)")
    p.add_argument("--title", help="the document title (default: the session title or file name)")
    # A file holding several sessions (an Inspect log) is exported whole, a section each, unless --session names one.
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_export)


def export_format(output: str, given: str | None) -> str | None:
    """``html`` or ``md``: ``given``, else by the output's extension; None when neither says."""
    if given is not None:
        return given
    lower = output.lower()
    for ext, fmt in _EXTENSIONS.items():
        if lower.endswith(ext) or lower.endswith(ext + ZSTD.suffixes[0]):
            return fmt
    return None


def export_html(records: list[Any], *, title: str, max_messages: int | None = None,
                banner: str = "", faults: list[Any] | None = None) -> str:
    """The HTML export document for a session's storage records (``LoadResult.records``)."""
    return export_document(records, title=title, max_messages=max_messages, banner=banner, fmt="html", faults=faults)


def export_document(records: list[Any], *, title: str, max_messages: int | None = None,
                    banner: str = "", fmt: str = "html", faults: list[Any] | None = None) -> str:
    """The export document (``html`` or ``md``) for a session's storage records (``LoadResult.records``), through
    the one export the page uses too (``exporting.export_page``). Events no Definition could fold (shown raw) are
    added to ``faults`` when given.

    Raises:
        AssemblerError: the records break the assembler contract, or an event is not a valid wire event.
    """
    page = MessageIndex(records).session_page(None, None, max_messages)
    return export_page(page.records, page.hasMore, title=title, fmt=fmt, banner=banner, faults=faults,
                       max_messages=max_messages)


def _banner(error: Any) -> str:
    if error is None:
        return ""
    where = getattr(error, "location", None) or (f"line {error.line}" if error.line is not None else "the file")
    return f"The session log is malformed at {where}: {error.message}. Everything before it is shown."


def _several(args: argparse.Namespace) -> int | None:
    """A file holding several sessions (an Inspect log) exported whole: a section each. None for any other file
    (the caller exports its one session)."""
    from ..store.open import load_sessions, sniff

    try:
        fmt = sniff(args.file)  # the head only: a file of one session is read once, by the caller
        if fmt is None or fmt.sessions != "many":
            return None
        fmt, sessions = load_sessions(args.file, strict=args.strict, max_line_bytes=max_line_bytes())
    except (OSError, AssemblerError):
        return None  # the one-session path reports it
    if fmt is None or fmt.sessions != "many" or len(sessions) < 2:
        return None
    faults: list[Any] = []
    parts = []
    ok = True
    for s in sessions:
        report_problems(f"{args.file} ({s.key})" if s.key else args.file, s.result)
        ok = ok and s.result.ok
        page = MessageIndex(s.result.records).session_page(None, None, args.max_messages)
        parts.append((s.label or s.key or os.path.basename(args.file), page.records, page.hasMore,
                      _banner(s.result.error)))
    try:
        document = export_sessions(parts, title=args.title or os.path.basename(args.file),
                                   fmt=export_format(args.output, args.format) or "html", faults=faults)
    except AssemblerError as exc:
        error(args.file, str(exc))
        return 1
    warn_faults(args.file, faults)
    with output(args.output, inputs=[args.file]) as out:
        out.write(utf8_text(document))
    return 0 if ok else 1


def cmd_export(args: argparse.Namespace) -> int:
    if args.max_messages is not None and args.max_messages < 1:
        return fail("--max-messages must be >= 1", 2)
    fmt = export_format(args.output, args.format)
    if fmt is None:
        return fail(f"{args.output}: cannot tell the format from the extension (use .html or .md, or --format "
                    "html|md)", 2)
    preflight(args.output, inputs=[args.file])
    if session_key() is None:
        several = _several(args)
        if several is not None:
            return several
    result = load(args.file, strict=args.strict, pack_deltas=True)  # folded packed: runs held as rows
    if result is None or result.header is None:
        return 1
    banner = _banner(result.error)
    title = args.title or session_title(result.records) or os.path.basename(args.file)
    faults: list[Any] = []
    try:
        document = export_document(result.records, title=title, max_messages=args.max_messages, banner=banner,
                                   fmt=fmt, faults=faults)
    except AssemblerError as exc:
        error(args.file, str(exc))
        return 1
    warn_faults(args.file, faults)
    with output(args.output, inputs=[args.file]) as out:
        out.write(utf8_text(document))
    return 0 if result.ok else 1
