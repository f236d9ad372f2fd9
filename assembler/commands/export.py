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
from ._common import fail, load, max_line_bytes, report_problems, session_key, warn_faults
from ._output import error, output, preflight

__all__ = ["register", "cmd_export", "export_html", "export_document", "export_sessions", "export_format"]

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


def _folded(records: list[Any], max_messages: int | None, banner: str,
            faults: list[Any] | None) -> tuple[list[Any], Any, str]:
    """A session's chat nodes, their render context and the banner (with a note when older history is left out)."""
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
    return nodes, context, banner


def export_document(records: list[Any], *, title: str, max_messages: int | None = None,
                    banner: str = "", fmt: str = "html", faults: list[Any] | None = None) -> str:
    """The export document (``html`` or ``md``) for a session's storage records (``LoadResult.records``). Events
    no Definition could fold (shown raw) are added to ``faults`` when given.

    Raises:
        AssemblerError: the records break the assembler contract, or an event is not a valid wire event.
    """
    from .. import render

    nodes, context, banner = _folded(records, max_messages, banner, faults)
    if fmt == "md":
        return render.render_markdown(nodes, title=title, context=context, banner=banner)
    return render.render_document(nodes, title=title, context=context, banner=banner)


def export_sessions(sessions: list[tuple[str, list[Any], str]], *, title: str, max_messages: int | None = None,
                    fmt: str = "html", faults: list[Any] | None = None) -> str:
    """One export document of several sessions (``(label, records, banner)`` each: an Inspect log's samples), a
    section each.

    Raises:
        as ``export_document``.
    """
    from .. import render
    from ..render.markdown_export import md_text

    folded = [(label, *_folded(records, max_messages, banner, faults)) for label, records, banner in sessions]
    if fmt == "md":
        parts = [f"# {md_text(title)}"]
        for label, nodes, context, banner in folded:
            body = render.render_markdown(nodes, title=label, context=context, banner=banner)
            parts.append(_demoted(body))
        return "\n\n".join(parts) + "\n"
    return render.render_sections([(label, nodes, context, banner) for label, nodes, context, banner in folded],
                                  title=title)


def _demoted(markdown: str) -> str:
    """Every heading one level down (outside fenced code): a session's document as a section of a larger one."""
    out = []
    fence: str | None = None
    for line in markdown.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        if fence is None and line.startswith("#"):
            line = "#" + line
        out.append(line)
    return "\n".join(out).rstrip("\n")


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
        parts.append((s.label or s.key or os.path.basename(args.file), s.result.records, _banner(s.result.error)))
    try:
        document = export_sessions(parts, title=args.title or os.path.basename(args.file),
                                   max_messages=args.max_messages,
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
    result = load(args.file, strict=args.strict)
    if result is None or result.header is None:
        return 1
    banner = _banner(result.error)
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
