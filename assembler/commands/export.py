"""``export``: a session log → one self-contained static HTML transcript that needs no JavaScript.

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
from ._common import fail, load, warn_faults
from ._output import error, output, preflight

__all__ = ["register", "cmd_export", "export_html"]


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="write a self-contained static HTML transcript (no JavaScript)")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html", help="the HTML file to write")
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


def export_html(records: list[Any], *, title: str, max_messages: int | None = None,
                banner: str = "", faults: list[Any] | None = None) -> str:
    """The export document for a session's storage records (``LoadResult.records``). Events no Definition could
    fold (shown raw) are added to ``faults`` when given.

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
    return render.render_document(nodes, title=title, context=context, banner=banner)


def cmd_export(args: argparse.Namespace) -> int:
    if args.max_messages is not None and args.max_messages < 1:
        return fail("--max-messages must be >= 1", 2)
    preflight(args.output, inputs=[args.file])
    result = load(args.file, strict=args.strict)
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
        document = export_html(result.records, title=title, max_messages=args.max_messages, banner=banner,
                               faults=faults)
    except AssemblerError as exc:
        error(args.file, str(exc))
        return 1
    warn_faults(args.file, faults)
    with output(args.output, inputs=[args.file]) as out:
        out.write(document.encode("utf-8"))
    return 0 if result.ok else 1
