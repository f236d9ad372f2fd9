"""The plain text of a chat node, for the page's "Copy text" button: its text blocks when it has any, else the text
of its fully rendered HTML (every section open, no slice limit)."""

from __future__ import annotations

from html.parser import HTMLParser

from .. import render
from ..render.texts import node_text_blocks
from ..views import ViewNode

__all__ = [
    "plain_text",
]

_BLOCK_TAGS = frozenset({"p", "div", "pre", "li", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6", "summary",
                         "details", "table", "ul", "ol", "blockquote"})


class _Text(HTMLParser):
    """Collects text; block-level tags become line breaks; buttons (Show more) are left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "button":
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "button":
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)

    def text(self) -> str:
        lines = "".join(self.parts).split("\n")
        out: list[str] = []
        for line in lines:
            if line.strip() or (out and out[-1] != ""):
                out.append(line.rstrip() if line.strip() else "")
        return "\n".join(out).strip("\n")


def plain_text(node: ViewNode) -> str:
    """The node's text: its text blocks joined by blank lines, or its rendered HTML as text."""
    blocks = node_text_blocks(node)
    if blocks:
        return "\n\n".join(text for _kind, text in blocks)
    parser = _Text()
    parser.feed(render.render_node(node, limit=None, lazy=False))
    parser.close()
    return parser.text()
