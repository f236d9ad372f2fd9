"""View nodes → safe HTML: the one renderer the viewer page (in Pyodide) and ``export`` (on CPython) share.

Rules (DESIGN rules 7-8): transcript text is untrusted. Markdown goes through markdown-it-py ("commonmark" plus
tables and strikethrough) with raw HTML off, a nesting limit, links limited to http, https, mailto and same-page
``#fragments``; images are never loaded (they render as a link or their alt text); code is highlighted by Pygments
with CSS classes only (no ``style`` attributes); every other string is escaped. Rendering is bounded: text renders
in slices of about ``SLICE_CHARS`` characters cut at a paragraph boundary, with a "Show more" control, and a
collapsed Think block renders its body only when asked (``lazy=True``). Nodes are typed ``views.ViewNode``s, read
as they are (never converted to plain values); an unknown kind, or data that is not the Struct its kind names,
renders as a generic row, never an error. Each node renders with the ``NodeDisplay`` the assembler decided for it.
Pure: no I/O.

Modules: ``markdown`` (markdown-it and Pygments setup, escaping, safe links), ``slices`` (bounded text slices and
"Show more"), ``texts`` (a node's text blocks, label and data readers), ``nodes`` (node → HTML per kind, and the
lazily requested pieces), ``document`` (the static export's article and page), ``markdown_export`` (the Markdown
export), ``tools`` and ``toolrows`` (tool-aware rows), ``css`` (the stylesheet). Import from this package.
"""

from .css import (
    pygments_css,
    stylesheet,
)
from .document import (
    render_article,
    render_document,
    render_sections,
)
from .markdown import (
    HIGHLIGHT_LIMIT,
    MAX_NESTING,
    code_html,
    escape,
    is_safe_link,
    markdown_html,
)
from .markdown_export import (
    render_markdown,
)
from .nodes import (
    render_block_slice,
    render_node,
    render_section,
)
from .slices import (
    SLICE_CHARS,
    slice_text,
)
from .texts import (
    node_label,
    node_text_blocks,
)

__all__ = [
    "SLICE_CHARS",
    "HIGHLIGHT_LIMIT",
    "MAX_NESTING",
    "escape",
    "is_safe_link",
    "markdown_html",
    "code_html",
    "slice_text",
    "node_text_blocks",
    "render_node",
    "render_block_slice",
    "render_section",
    "render_article",
    "render_document",
    "render_sections",
    "render_markdown",
    "node_label",
    "stylesheet",
    "pygments_css",
]
