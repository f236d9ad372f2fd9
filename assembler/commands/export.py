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
from ..history import MessageIndex
from ..jsontext import utf8_text
from ._common import fail, load, warn_faults
from ._output import error, output, preflight

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
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_export)


def _session_title(records: list[Any]) -> str | None:
    title = None
    for record in records:
        if type(record) is dict and record.get("type") == "session/title" and type(record.get("data")) is dict:
            value = record["data"].get("title")
            if type(value) is str and value.strip():
                title = value
    return title


def export_format(output: str, given: str | None) -> str | None:
    """``html`` or ``md``: ``given``, else by the output's extension; None when neither says."""
    if given is not None:
        return given
    lower = output.lower()
    for ext, fmt in _EXTENSIONS.items():
        if lower.endswith(ext) or lower.endswith(ext + ".zst"):
            return fmt
    return None


def export_html(records: list[Any], *, title: str, max_messages: int | None = None,
                banner: str = "", faults: list[Any] | None = None) -> str:
    """The HTML export document for a session's storage records (``LoadResult.records``)."""
    return export_document(records, title=title, max_messages=max_messages, banner=banner, fmt="html", faults=faults)


def export_document(records: list[Any], *, title: str, max_messages: int | None = None,
                    banner: str = "", fmt: str = "html", faults: list[Any] | None = None) -> str:
    """The export document (``html`` or ``md``) for a session's storage records (``LoadResult.records``). Events
    no Definition could fold (shown raw) are added to ``faults`` when given.

    Raises:
        AssemblerError: the records break the assembler contract, or an event is not a valid wire event.
    """
    from definitions import default_definitions

    from .. import render
    from ..conversation import ConversationAssembler
    from ..transcript import transcript
    from ..views import HIDDEN_KINDS

    page = MessageIndex(records).session_page(None, None, max_messages)
    assembler = ConversationAssembler(default_definitions())
    assembler.replace_window(page.records, page.hasMore)
    result = assembler.flush()
    assert result is not None  # replace_window always leaves a flush pending
    if faults is not None:
        faults.extend(assembler.faults)
    # Rows of a hidden kind are left out; nodes a Definition hid are written hidden (no script can show them).
    nodes = [n for n in transcript(result).chat if n.kind not in HIDDEN_KINDS]
    context = render.render_context(assembler.index.turns, nodes)
    if page.hasMore:
        note = f"Showing the newest {max_messages} messages; older history is not included."
        banner = f"{banner} {note}".strip()
    if fmt == "md":
        return render.render_markdown(nodes, title=title, context=context, banner=banner)
    return render.render_document(nodes, title=title, context=context, banner=banner)


def cmd_export(args: argparse.Namespace) -> int:
    if args.max_messages is not None and args.max_messages < 1:
        return fail("--max-messages must be >= 1", 2)
    fmt = export_format(args.output, args.format)
    if fmt is None:
        return fail(f"{args.output}: cannot tell the format from the extension (use .html or .md, or --format "
                    "html|md)", 2)
    preflight(args.output, inputs=[args.file])
    result = load(args.file, strict=args.strict, pack_deltas=True)  # folded packed: runs held as rows
    if result is None or result.header is None:
        return 1
    banner = ""
    if result.error is not None:
        err = result.error
        where = f"line {err.line}" if err.line is not None else "the file"
        banner = f"The session log is malformed at {where}: {err.message}. Everything before it is shown."
    title = args.title or _session_title(result.records) or os.path.basename(args.file)
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
