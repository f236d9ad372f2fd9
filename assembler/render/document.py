"""Whole documents for the static export: one node as an ``<article>``, a list of nodes as a complete HTML page.

Rules (DESIGN rule 7): the page inlines the stylesheet and sets a Content-Security-Policy that allows no script at
all; every node renders fully (``limit=None``, not lazy) since nothing on the page can ask for more. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..views import NodeDisplay, ViewNode
from .css import stylesheet
from .markdown import escape
from .nodes import render_node

Displays = Mapping[str, NodeDisplay]

__all__ = [
    "render_article",
    "render_document",
    "static_page",
]


def render_article(node: ViewNode, *, display: NodeDisplay | None = None, limit: int | None = None,
                   lazy: bool = False, keyed: bool = False) -> str:
    """One node as a complete ``<article>`` (the static export's form; the page builds its own wrapper). ``keyed``:
    the article names its node (``data-key``) and leaves out its ``id`` anchor, for a page that asks for its lazy
    parts (the compare view, where both sides may hold the same seq)."""
    seq = node.anchorSeq
    kind = escape(node.kind)
    anchor = f' id="seq-{escape(seq)}"' if seq is not None and not keyed else ""
    key = f' data-key="{escape(node.key)}"' if keyed else ""
    hidden = " hidden" if node.visibility == "hidden" else ""
    return (f'<article class="node kind-{kind}" data-kind="{kind}"{key} data-seq="{escape(seq)}"{anchor}{hidden}>'
            f'{render_node(node, display=display, limit=limit, lazy=lazy)}</article>\n')


def render_document(nodes: Iterable[ViewNode], *, title: str, displays: Displays | None = None,
                    banner: str = "") -> str:
    """A complete static HTML transcript: inline CSS, a CSP with no script at all, every node fully rendered
    (Think rows are native ``<details>``; nothing needs JavaScript) with the display the assembler decided for it."""
    shown = displays or {}
    body = "".join(render_article(node, display=shown.get(node.key), limit=None, lazy=False) for node in nodes
                   if node.visibility != "hidden")
    notice = f'<div class="notice notice-error" role="alert">{escape(banner)}</div>' if banner else ""
    return _page(title, notice, body)


def render_sections(sections: Iterable[tuple[str, Iterable[ViewNode], Displays | None, str]], *,
                    title: str) -> str:
    """One static HTML document of several sessions (an Inspect log's samples): a ``<section>`` each with its
    heading and its own notice (``(label, nodes, displays, banner)``)."""
    parts = []
    for label, nodes, displays, banner in sections:
        notice = f'<div class="notice notice-error" role="alert">{escape(banner)}</div>' if banner else ""
        shown = displays or {}
        body = "".join(render_article(node, display=shown.get(node.key), limit=None, lazy=False) for node in nodes
                       if node.visibility != "hidden")
        parts.append(f'<section class="export-session"><h2 class="export-session-title">{escape(label)}</h2>'
                     f'{notice}{body}</section>\n')
    return _page(title, "", "".join(parts))


def static_page(title: str, body: str, *, notice: str = "", extra_css: str = "") -> str:
    """A complete static page around ``body`` (HTML): the export's head (inline stylesheet plus ``extra_css``, the
    CSP with no script), ``title`` as its heading, ``notice`` (HTML) above the body."""
    return _page(title, notice, body, extra_css)


def _page(title: str, notice: str, body: str, extra_css: str = "") -> str:
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{stylesheet()}"
        "body { margin: 0; padding: 1rem; background: var(--bg); color: var(--fg); font: 15px/1.5 var(--font); }\n"
        # A long export opens fast: rows off screen skip layout and paint until scrolled to (find-in-page still
        # finds them); printed, every row is laid out.
        "article.node { content-visibility: auto; contain-intrinsic-size: auto 5rem; }\n"
        "@media print { article.node { content-visibility: visible; } }\n"
        f"{extra_css}</style>\n</head>\n<body>\n"
        f'<header><h1 class="export-title">{escape(title)}</h1></header>\n{notice}'
        f'<main class="transcript">\n{body}</main>\n</body>\n</html>\n'
    )
