"""Untrusted markdown and code → safe HTML: markdown-it-py and Pygments set up once, plus escaping and link checks.

Rules (DESIGN rule 7): raw HTML off, links limited to http, https, mailto and same-page ``#fragments``, images never
loaded, text nested deeper than ``MAX_NESTING`` shown unrendered rather than dropped, code highlighted with CSS
classes only (no ``style`` attributes) and never by a guessed lexer. Pure: no I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight as _pygments_highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]

from .ansi import strip_ansi

__all__ = [
    "HIGHLIGHT_LIMIT",
    "MAX_NESTING",
    "escape",
    "is_safe_link",
    "code_html",
    "markdown_html",
]

HIGHLIGHT_LIMIT = 100_000
"""Code blocks longer than this are shown escaped but unhighlighted (a lexer on megabytes is not bounded)."""
MAX_NESTING = 40
"""markdown-it's ``maxNesting``: deeper blockquotes/lists stop nesting instead of recursing."""

_SAFE_LINK = re.compile(r"^(?:https?:|mailto:|#)", re.IGNORECASE)


def escape(text: Any) -> str:
    """HTML-escape any value's string form (quotes included, so it is safe in attributes too), without terminal
    escape sequences (``ansi.strip_ansi``: a raw ESC shows as a stray glyph)."""
    return html.escape(strip_ansi(text if type(text) is str else str(text)), quote=True)


def is_safe_link(url: str) -> bool:
    """True for http:, https:, mailto: and same-page ``#fragment`` links; everything else is refused."""
    return bool(_SAFE_LINK.match(url.strip()))


# --- code highlighting ------------------------------------------------------------------------------------------

_formatter = HtmlFormatter(nowrap=True)  # classes only; never noclasses (that would emit style attributes)
_lexers: dict[str, Lexer | None] = {}


def _lexer(lang: str) -> Lexer | None:
    lang = lang.strip().lower()
    if not lang or len(lang) > 40:
        return None
    if lang not in _lexers:
        try:
            _lexers[lang] = get_lexer_by_name(lang, stripnl=False)
        except ClassNotFound:
            _lexers[lang] = None
    return _lexers[lang]


def code_html(code: str, lang: str = "") -> str:
    """A ``<pre class="code highlight">`` block: highlighted when ``lang`` names a known lexer and the code is not
    huge, else escaped. Never guesses a lexer from the content."""
    lexer = _lexer(lang) if len(code) <= HIGHLIGHT_LIMIT else None
    body = _pygments_highlight(code, lexer, _formatter) if lexer is not None else escape(code)
    label = f' data-lang="{escape(lang.strip()[:40])}"' if lang.strip() else ""
    return f'<pre class="code highlight"{label}><code>{body}</code></pre>\n'


# --- markdown --------------------------------------------------------------------------------------------------


def _highlight(code: str, lang: str, attrs: str) -> str:
    return code_html(code, lang)


def _render_image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
                  env: EnvType) -> str:
    # Never an <img>: the page must not request another host. A safe source becomes a plain link.
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    if src and is_safe_link(src) and not src.startswith("#"):
        return (f'<a class="md-image" href="{escape(src)}" target="_blank" rel="noopener noreferrer nofollow"'
                f' referrerpolicy="no-referrer">[image: {escape(alt)}]</a>')
    return f'<span class="md-image">[image: {escape(alt)}]</span>'


def _render_link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
                      env: EnvType) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if not href.startswith("#"):
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer nofollow")
        token.attrSet("referrerpolicy", "no-referrer")
    return self.renderToken(tokens, idx, options, env)


_OVERFLOW = "transcript_nesting_overflow"


def _make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.validateLink = is_safe_link  # type: ignore[method-assign]
    md.add_render_rule("image", _render_image)
    md.add_render_rule("link_open", _render_link_open)
    # markdown-it drops every block nested deeper than maxNesting ("we should not care about content"); we do care,
    # so note when it happens and show that text unrendered instead (see markdown_html).
    tokenize = md.block.tokenize

    def guarded_tokenize(state: Any, start_line: int, end_line: int) -> None:
        if state.level >= MAX_NESTING and start_line < end_line:
            state.env[_OVERFLOW] = True
        tokenize(state, start_line, end_line)

    md.block.tokenize = guarded_tokenize  # type: ignore[method-assign,assignment]
    return md


_md = _make_markdown()


def markdown_html(text: str) -> str:
    """Render untrusted markdown to HTML (raw HTML shown as text, unsafe links left as text). Text nested deeper
    than ``MAX_NESTING`` would be dropped by markdown-it, so such text is shown as escaped plain text instead."""
    env: dict[str, Any] = {}
    tokens = _md.parse(text, env)
    if env.get(_OVERFLOW):
        return f'<div class="plain md-too-deep">{escape(text)}</div>'
    return str(_md.renderer.render(tokens, _md.options, env))

