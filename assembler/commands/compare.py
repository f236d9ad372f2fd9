"""``compare``: two session logs (any readable format, e.g. a Claude Code run beside one of ours) compared turn by
turn (``assembler.compare``), written as JSON (the turn-by-turn summary, for scripts and CI), Markdown or a static
HTML page (``render.compare``).

Rules: the format comes from ``--format``, else from the output's extension (``.json``, ``.md``/``.markdown``,
``.html``/``.htm``); no ``-o`` or ``-o -`` writes JSON (or ``--format``) on standard output; any other extension
without ``--format`` is a usage error (exit 2). Each log is read as ``export`` reads it (packed rows never
expanded) and folded through the default Definitions; the comparison uses the chat nodes only. A malformed log is
``FILE:LINE: error: message`` on stderr; what was read before the fault is still compared, and the exit status is
1. ``--session-a``/``--session-b`` pick the session of a file that holds several (default ``--session``, else the
first). The JSON is ``{"a": SOURCE, "b": SOURCE, "session": ..., "turns": [...]}`` with ``SOURCE = {"file": PATH,
"session": KEY|null, "title": S}`` and ``session``/``turns`` as the ``assembler.compare`` docstring says.
"""

from __future__ import annotations

import argparse
import gc
import os
from typing import Any

import msgspec

from ..errors import AssemblerError
from ..formats import ZSTD
from ..history import MessageIndex
from ..jsontext import utf8_text
from ..views import NodeDisplay, ViewNode
from ._common import fail, load, session_key, warn_faults
from ._output import error, output, preflight
from .exporting import fold_page, session_title

__all__ = ["register", "cmd_compare", "compare_format"]

_EXTENSIONS = {".json": "json", ".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}


def register(sub: Any) -> None:
    p = sub.add_parser("compare", help="compare two sessions turn by turn (JSON summary, Markdown or static HTML)")
    p.add_argument("file_a", metavar="A", help="the reference session log")
    p.add_argument("file_b", metavar="B", help="the session log to compare with it")
    p.add_argument("-o", "--output", default=None, metavar="OUT.json|OUT.md|OUT.html",
                   help="the file to write (the format follows its extension); none or '-': JSON on standard output")
    p.add_argument("--format", choices=("json", "md", "html"), help="json, md or html (default: from the extension)")
    p.add_argument("--session-a", metavar="KEY", help="which session of A, when A holds several")
    p.add_argument("--session-b", metavar="KEY", help="which session of B, when B holds several")
    p.add_argument("--title", help="the document title (default: the two session titles)")
    p.add_argument("--strict", action="store_true", help="a torn last line is an error")
    p.set_defaults(func=cmd_compare)


def compare_format(output: str | None, given: str | None) -> str | None:
    """``json``, ``md`` or ``html``: ``given``, else by the output's extension (JSON on standard output); None when
    neither says."""
    if given is not None:
        return given
    if output is None or output == "-":
        return "json"
    lower = output.lower()
    for ext, fmt in _EXTENSIONS.items():
        if lower.endswith(ext) or lower.endswith(ext + ZSTD.suffixes[0]):
            return fmt
    return None


class _Side(msgspec.Struct, frozen=True):
    file: str
    session: str | None
    title: str
    nodes: list[ViewNode]
    displays: dict[str, NodeDisplay]
    ok: bool


def _side(path: str, key: str | None, strict: bool, faults: list[Any]) -> _Side | None:
    result = load(path, strict=strict, pack_deltas=True, session=key)
    if result is None or result.header is None:
        return None
    page = MessageIndex(result.records).session_page(None, None, None)
    try:
        nodes, displays = fold_page(page.records, page.hasMore, faults)
    except AssemblerError as exc:
        error(path, str(exc))
        return None
    title = session_title(result.records) or os.path.basename(path)
    return _Side(path, key, title, nodes, dict(displays), result.ok)


def _label(side: _Side) -> str:
    where = f"{side.file} ({side.session})" if side.session else side.file
    return f"{where}: {side.title}"


def cmd_compare(args: argparse.Namespace) -> int:
    fmt = compare_format(args.output, args.format)
    if fmt is None:
        return fail(f"{args.output}: cannot tell the format from the extension (use .json, .md or .html, or "
                    "--format json|md|html)", 2)
    inputs = [args.file_a, args.file_b]
    preflight(args.output, inputs=inputs)
    # Both folds' objects live until the comparison is written: the cycle collector would only walk them again and
    # again as they grow, so it is paused meanwhile, as the page's loads pause it (browser.gcpause).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _compare(args, fmt, inputs)
    finally:
        if enabled:
            gc.enable()


def _compare(args: argparse.Namespace, fmt: str, inputs: list[str]) -> int:
    from .. import compare as comparing
    from ..render.compare import render_comparison_html, render_comparison_markdown
    from ..render.toolrows import tool_error

    sides = []
    for path, key in ((args.file_a, args.session_a), (args.file_b, args.session_b)):
        faults: list[Any] = []
        side = _side(path, key if key is not None else session_key(), args.strict, faults)
        if side is None:
            return 1
        warn_faults(path, faults)
        sides.append(side)
    a, b = sides
    comparison = comparing.compare(a.nodes, b.nodes, failed=tool_error)
    title = args.title or f"{a.title} vs {b.title}"
    if fmt == "json":
        document = {"a": {"file": a.file, "session": a.session, "title": a.title},
                    "b": {"file": b.file, "session": b.session, "title": b.title},
                    **msgspec.to_builtins(comparison)}
        data = msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n"
    elif fmt == "md":
        data = utf8_text(render_comparison_markdown(comparison, title=title, label_a=_label(a), label_b=_label(b)))
    else:
        data = utf8_text(render_comparison_html(comparison, title=title, label_a=_label(a), label_b=_label(b),
                                                nodes_a=a.nodes, nodes_b=b.nodes, displays_a=a.displays,
                                                displays_b=b.displays))
    with output(args.output, inputs=inputs) as out:
        out.write(data)
    return 0 if a.ok and b.ok else 1
