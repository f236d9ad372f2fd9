"""View nodes → safe HTML: the one renderer the viewer page (in Pyodide) and ``export`` (on CPython) share.

Rules (DESIGN rules 7-8): transcript text is untrusted. Markdown goes through markdown-it-py ("commonmark" plus
tables and strikethrough) with raw HTML off, a nesting limit, links limited to http, https, mailto and same-page
``#fragments``; images are never loaded (they render as a link or their alt text); code is highlighted by Pygments
with CSS classes only (no ``style`` attributes); every other string is escaped. Rendering is bounded: text renders
in slices of about ``SLICE_CHARS`` characters cut at a paragraph boundary, with a "Show more" control, and a
collapsed Think block renders its body only when asked (``lazy=True``). Nodes arrive as plain dicts (the JSON form
of a ``ViewNode``); unknown kinds and shapes render as a generic row, never an error. Pure: no I/O.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
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

__all__ = [
    "SLICE_CHARS",
    "HIGHLIGHT_LIMIT",
    "MAX_NESTING",
    "RenderContext",
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
    "node_label",
    "stylesheet",
    "pygments_css",
]

SLICE_CHARS = 20_000
"""About how many characters of one text block render at once; the rest waits behind "Show more"."""
HIGHLIGHT_LIMIT = 100_000
"""Code blocks longer than this are shown escaped but unhighlighted (a lexer on megabytes is not bounded)."""
MAX_NESTING = 40
"""markdown-it's ``maxNesting``: deeper blockquotes/lists stop nesting instead of recursing."""
_SUMMARY_CHARS = 160

_SAFE_LINK = re.compile(r"^(?:https?:|mailto:|#)", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def escape(text: Any) -> str:
    """HTML-escape any value's string form (quotes included, so it is safe in attributes too)."""
    return html.escape(text if type(text) is str else str(text), quote=True)


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


# --- slicing ---------------------------------------------------------------------------------------------------


def _open_fence_at(text: str, offset: int) -> str | None:
    """The fence line (e.g. "```python") still open at ``offset``, or None. Linear in ``offset``."""
    if offset <= 0:
        return None
    opener: str | None = None
    marker = ""
    for line in text[:offset].split("\n"):
        m = _FENCE.match(line)
        if m is None:
            continue
        if opener is None:
            opener, marker = line.strip(), m.group(1)
        elif m.group(1)[0] == marker[0] and len(m.group(1)) >= len(marker) and not line.strip()[len(m.group(1)):]:
            opener = None
    return opener


def slice_text(text: str, offset: int = 0, limit: int = SLICE_CHARS) -> tuple[str, int | None]:
    """The slice of ``text`` starting at ``offset`` and the offset where the next one starts (None at the end).

    The cut falls at the last blank line outside a code fence within ``limit`` characters, else at the last line
    break, else at the last space, else exactly at ``limit``. A tail shorter than a quarter of ``limit`` is kept
    with the slice rather than shown behind its own "Show more".
    """
    n = len(text)
    if n - offset <= limit + limit // 4:
        return text[offset:], None
    window_end = offset + limit
    floor = offset + limit // 4
    cut = -1
    in_fence = _open_fence_at(text, offset) is not None
    pos = offset
    last_line_break = -1
    while pos < window_end:
        nl = text.find("\n", pos, window_end)
        if nl == -1:
            break
        line = text[pos:nl]
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.strip() and pos > floor:
            cut = pos
        if nl + 1 > floor:
            last_line_break = nl + 1
        pos = nl + 1
    if cut == -1:
        cut = last_line_break
    if cut == -1:
        space = text.rfind(" ", floor, window_end)
        cut = space + 1 if space != -1 else window_end
    return text[offset:cut], cut


def _markdown_slice(text: str, offset: int, limit: int) -> tuple[str, int | None]:
    """Markdown HTML of one slice; a slice that starts or ends inside a code fence is closed and reopened."""
    chunk, next_offset = slice_text(text, offset, limit)
    opener = _open_fence_at(text, offset)
    if opener is not None:
        chunk = opener + "\n" + chunk
    if next_offset is not None and _open_fence_at(chunk, len(chunk)) is not None:
        chunk = chunk + "\n" + "```"
    return markdown_html(chunk), next_offset


def _plain_slice(text: str, offset: int, limit: int) -> tuple[str, int | None]:
    chunk, next_offset = slice_text(text, offset, limit)
    return f'<div class="plain">{escape(chunk)}</div>', next_offset


def _show_more(key: str, block: int, offset: int, total: int) -> str:
    left = total - offset
    return (f'<button type="button" class="show-more" data-key="{escape(key)}" data-block="{block}"'
            f' data-offset="{offset}">Show more ({left:,} more characters)</button>')


def _sliced(text: str, *, markdown: bool, key: str, block: int, offset: int = 0, limit: int | None) -> str:
    """A text block's HTML from ``offset``: everything when ``limit`` is None, else one slice + "Show more"."""
    if limit is None:
        return markdown_html(text) if markdown else f'<div class="plain">{escape(text)}</div>'
    body, next_offset = (_markdown_slice if markdown else _plain_slice)(text, offset, limit)
    if next_offset is not None:
        body += _show_more(key, block, next_offset, len(text))
    return body


# --- helpers over node data -------------------------------------------------------------------------------------


class RenderContext:
    """What a node's HTML may need beyond the node itself: turn start times (for "Ran for") and the call ids that
    have their own tool row (so an assistant step does not repeat them)."""

    __slots__ = ("turn_start_times", "shown_calls")

    def __init__(self, turn_start_times: Mapping[Any, int] | None = None, shown_calls: Iterable[str] = ()) -> None:
        self.turn_start_times = dict(turn_start_times or {})
        self.shown_calls = frozenset(shown_calls)


_EMPTY_CONTEXT = RenderContext()


def _first_line(text: str, limit: int = _SUMMARY_CHARS) -> str:
    for line in text.split("\n", 20):
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def _content_text(content: Any) -> str:
    """Plain text of a content value: a string, a list of content blocks (wire ``type`` or view ``kind``), or a
    tool result holding either."""
    if type(content) is str:
        return content
    if type(content) is list:
        parts = []
        for block in content:
            if type(block) is dict:
                btype = block.get("type", block.get("kind"))
                if btype in ("text", "reasoning") and type(block.get("text")) is str:
                    parts.append(block["text"])
                elif btype == "tool-result":
                    parts.append(_content_text(block.get("content")))
                elif btype == "image":
                    parts.append("[image]")
                elif btype == "other" and type(block.get("block")) is dict:
                    parts.append(_content_text([block["block"]]))
            elif type(block) is str:
                parts.append(block)
        return "\n".join(parts)
    if type(content) is dict:
        for key in ("blocks", "content"):
            if key in content:
                return _content_text(content[key])
        if type(content.get("text")) is str:
            return str(content["text"])
    return ""


def _pretty_json(raw: Any) -> tuple[str, bool]:
    """``(text, is_json)``: a JSON string pretty-printed (2 spaces) when it parses, else the raw text."""
    if type(raw) is not str:
        return json.dumps(raw, ensure_ascii=False, indent=2), True
    if len(raw) > HIGHLIGHT_LIMIT:
        return raw, False
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False, indent=2), True
    except ValueError:
        return raw, False


def _clock(ms: Any) -> str:
    if type(ms) not in (int, float) or ms <= 0:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def _duration(ms: Any) -> str:
    if type(ms) not in (int, float) or ms < 0:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _tokens(n: Any) -> str:
    if type(n) not in (int, float):
        return "?"
    if n >= 10_000:
        return f"{n / 1000:.1f}K"
    return f"{n:,.0f}"


def _data(node: Mapping[str, Any]) -> dict[str, Any]:
    data = node.get("data")
    return data if type(data) is dict else {}


def _tool_call(data: Mapping[str, Any]) -> Mapping[str, Any]:
    call = data.get("call")
    return call if type(call) is dict else data


def _tool_texts(data: Mapping[str, Any]) -> tuple[str, bool, str | None]:
    """``(arguments pretty-printed, arguments are JSON, result text or None)`` of a tool node's data."""
    call = _tool_call(data)
    args = call.get("arguments", call.get("argsRaw", call.get("args")))
    pretty, is_json = _pretty_json(args) if args not in (None, "") else ("", False)
    result = data.get("result")
    text = None if result is None else (result if type(result) is str else _content_text(result))
    return pretty, is_json, text


def node_text_blocks(node: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The node's sliceable text blocks: ``(kind, text)`` with kind ``markdown``, ``plain`` or ``think``. The
    ``data-block`` of "Show more" and of lazily opened sections indexes this list."""
    kind = node.get("kind")
    data = _data(node)
    if kind == "assistant-step":
        out: list[tuple[str, str]] = []
        for block in data.get("blocks") or []:
            if type(block) is not dict:
                continue
            bkind = block.get("kind")
            text = block.get("text")
            if bkind == "text" and type(text) is str:
                out.append(("markdown", text))
            elif bkind == "reasoning" and type(text) is str:
                out.append(("think", text))
        return out
    if kind == "tool":
        pretty, _, result = _tool_texts(data)
        return [("plain", pretty), ("plain", result or "")]
    if kind == "compaction":
        summary = _content_text(data.get("summary"))
        return [("markdown", summary)] if summary else []
    if kind == "input-message":
        text = _input_text(data) or ""
        return [("markdown" if _input_role(data) == "context" else "plain", text)]
    if kind == "command":
        line, output = _command_texts(data)
        return [("plain", line), ("plain", output or "")]
    return []


def _input_role(data: Mapping[str, Any]) -> str:
    role = data.get("role") or data.get("kind") or data.get("variant")
    return role if type(role) is str else "user"


def _input_text(data: Mapping[str, Any]) -> str | None:
    for key in ("blocks", "text", "content", "message"):
        if key in data:
            value = data[key]
            if type(value) is dict and key == "message":
                value = value.get("content")
            text = _content_text(value)
            if text or value == "" or value == []:
                return text
    return None


# --- node renderers ----------------------------------------------------------------------------------------------

def _think(key: str, block: int, text: str, *, limit: int | None, lazy: bool) -> str:
    title = escape(_first_line(text)) or "…"
    if lazy:
        body = f'<div class="think-body md" data-think-block="{block}" data-pending="1"></div>'
    else:
        body = f'<div class="think-body md">{_sliced(text, markdown=True, key=key, block=block, limit=limit)}</div>'
    return (f'<details class="think" data-block="{block}"><summary><span class="row-label">Think</span> '
            f'<span class="think-title">{title}</span></summary>{body}</details>')


def _tool_title(name: Any, args_pretty: str, *, error: bool, status: str) -> str:
    label = escape(name) if name not in (None, "") else "tool"
    summary = escape(_first_line(args_pretty.replace("\n", " "), 120)) if args_pretty else ""
    marks = '<span class="badge badge-error">Failed</span> ' if error else ""
    if status and not error and status not in ("done", "complete", "completed", "settled"):
        marks += f'<span class="badge">{escape(status)}</span> '
    tail = f' <span class="tool-args-summary">{summary}</span>' if summary else ""
    return f'{marks}<span class="row-label tool-name">{label}</span>{tail}'


def _tool_body(key: str, args_pretty: str, is_json: bool, result: str | None, *, error: bool,
               limit: int | None) -> str:
    parts = []
    if args_pretty:
        parts.append('<div class="tool-section"><div class="section-label">Arguments</div>')
        if is_json and (limit is None or len(args_pretty) <= limit):
            parts.append(code_html(args_pretty, "json"))
        else:
            parts.append(f'<div class="mono">{_sliced(args_pretty, markdown=False, key=key, block=0, limit=limit)}'
                         "</div>")
        parts.append("</div>")
    if result is not None:
        parts.append(f'<div class="tool-section tool-result{" is-error" if error else ""}">'
                     f'<div class="section-label">{"Error" if error else "Result"}</div><div class="mono">'
                     f'{_sliced(result, markdown=False, key=key, block=1, limit=limit)}</div></div>')
    return "".join(parts)


def _streamed_call(name: Any, args: Any) -> str:
    """A tool call still streaming inside an assistant step (its own tool row has not appeared yet)."""
    raw = args if type(args) is str else ""
    shown = raw if len(raw) <= SLICE_CHARS else raw[:SLICE_CHARS] + "…"
    return (f'<div class="tool tool-streaming"><div>{_tool_title(name, "", error=False, status="")}</div>'
            f'<div class="mono"><div class="plain">{escape(shown)}</div></div></div>')


def _render_assistant(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                      lazy: bool = True) -> str:
    key = str(node.get("key", ""))
    parts: list[str] = []
    text_index = 0
    for block in data.get("blocks") or []:
        if type(block) is not dict:
            continue
        bkind = block.get("kind")
        if bkind == "text" and type(block.get("text")) is str:
            text = block["text"]
            if text.strip():
                parts.append(f'<div class="assistant-text md">'
                             f'{_sliced(text, markdown=True, key=key, block=text_index, limit=limit)}</div>')
            text_index += 1
        elif bkind == "reasoning" and type(block.get("text")) is str:
            text = block["text"]
            if text.strip():
                parts.append(_think(key, text_index, text, limit=limit, lazy=lazy))
            text_index += 1
        elif bkind == "tool-call":
            call_id = block.get("callId")
            if type(call_id) is str and call_id in ctx.shown_calls:
                continue
            parts.append(_streamed_call(block.get("name"), block.get("argsRaw")))
        elif bkind == "image":
            parts.append('<div class="image-block">[image]</div>')
        else:
            inner = block.get("block")
            btype = inner.get("type") if type(inner) is dict else None
            parts.append(f'<div class="other-block">[{escape(btype or "content block")}]</div>')
    status = data.get("status")
    if status == "interrupted":
        parts.append('<p class="notice notice-interrupted">Interrupted</p>')
    elif status == "running":
        parts.append('<p class="notice notice-running" aria-label="streaming">…</p>')
    return "".join(parts)


def _render_turn_tail(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                      lazy: bool = True) -> str:
    bits: list[str] = []
    clock = _clock(data.get("time"))
    if clock:
        bits.append(f'<span class="tail-clock">{clock}</span>')
    start = ctx.turn_start_times.get(data.get("turn"))
    end = data.get("time")
    if type(start) is int and type(end) is int and end >= start:
        bits.append(f'<span class="tail-ran">Ran for {_duration(end - start)}</span>')
    ttft = data.get("ttftMs")
    if type(ttft) in (int, float):
        bits.append(f'<span class="tail-ttft">TTFT {_duration(ttft)}</span>')
    tps = data.get("tokensPerSecond")
    if type(tps) in (int, float):
        bits.append(f'<span class="tail-tps">{tps:.1f} tok/s</span>')
    usage = data.get("tokenUsage")
    if type(usage) is dict:
        use = [f'Input {_tokens(usage.get("uncachedInputTokens"))} tok',
               f'Output {_tokens(usage.get("outputTokens"))} tok']
        if type(usage.get("cacheReadTokens")) is int:
            use.append(f'Cache read {_tokens(usage["cacheReadTokens"])} tok')
        if type(usage.get("reasoningTokens")) is int:
            use.append(f'Reasoning {_tokens(usage["reasoningTokens"])} tok')
        bits.append(f'<span class="tail-usage">{" · ".join(use)}</span>')
    return f'<div class="turn-tail">{" ".join(bits)}</div>'


def _source_label(source: Any) -> str:
    if type(source) is not dict:
        return ""
    for key in ("plugin", "form", "name", "kind"):
        value = source.get(key)
        if type(value) is str and value:
            return value
    return ""


def _render_input(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                  lazy: bool = True) -> str:
    key = str(node.get("key", ""))
    role = _input_role(data)
    text = _input_text(data) or ""
    if role == "context":
        who = _source_label(data.get("source"))
        title = f'<span class="row-label">Context injection</span> <span class="context-source">{escape(who)}</span>'
        if lazy:
            body = '<div class="context-body md" data-think-block="0" data-pending="1"></div>' if text else ""
        else:
            body = (f'<div class="context-body md">{_sliced(text, markdown=True, key=key, block=0, limit=limit)}'
                    "</div>") if text else ""
        return f'<details class="context" data-block="0"><summary>{title}</summary>{body}</details>'
    label = "Steering" if role == "steering" else "User"
    clock = _clock(data.get("time"))
    stamp = f' <span class="message-clock">{clock}</span>' if clock else ""
    return (f'<div class="user-message role-{escape(role)}"><div class="role-label">{label}{stamp}</div>'
            f'{_sliced(text, markdown=False, key=key, block=0, limit=limit)}</div>')


def _tool_error(data: Mapping[str, Any]) -> bool:
    result = data.get("result")
    return bool(data.get("status") in ("error", "failed") or data.get("isError")
                or (type(result) is dict and (result.get("isError") or result.get("error"))))


def _render_tool(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                 lazy: bool = True) -> str:
    key = str(node.get("key", ""))
    pretty, is_json, result = _tool_texts(data)
    error = _tool_error(data)
    status = str(data.get("status") or "")
    title = _tool_title(_tool_call(data).get("name") or data.get("name"), pretty, error=error, status=status)
    if lazy:
        body = '<div class="tool-body" data-think-block="0" data-pending="1"></div>'
    else:
        body = f'<div class="tool-body">{_tool_body(key, pretty, is_json, result, error=error, limit=limit)}</div>'
    css = "tool tool-error" if error else "tool"
    return f'<details class="{css}" data-block="0"><summary>{title}</summary>{body}</details>'


def _notice(css: str, label: str, text: str) -> str:
    body = f' <span class="notice-text">{escape(text)}</span>' if text else ""
    return f'<div class="notice {css}"><span class="row-label">{escape(label)}</span>{body}</div>'


def _failure_text(data: Mapping[str, Any]) -> str:
    for key in ("message", "error", "failure"):
        value = data.get(key)
        if type(value) is str and value:
            return value
        if type(value) is dict:
            msg = value.get("message") or value.get("error")
            if type(msg) is str:
                return msg
    return ""


_ABORT_REASONS = {"user": "by the user", "parent": "by the parent agent", "disposed": "(session closed)",
                  "legacy": ""}


def _render_turn_notice(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                        lazy: bool = True) -> str:
    kind = data.get("kind")
    code = data.get("code")
    if kind == "max-tokens":
        return _notice("notice-max-tokens", "Max tokens", "The response stopped at the output token limit.")
    if kind == "interrupted":
        reason = data.get("reason")
        if type(reason) is dict:
            why = reason.get("reason") if reason.get("kind") == "hook" else _ABORT_REASONS.get(str(reason.get("kind")))
            text = " ".join(x for x in ("The turn was aborted", str(why or "")) if x) + "."
        else:
            text = "The turn was interrupted."
        return _notice("notice-interrupted", "Interrupted", text)
    if kind == "blocked":
        return _notice("notice-interrupted", "Blocked", "The turn was blocked.")
    label = "Error" + (f" ({code})" if type(code) is str and code else "")
    return _notice("notice-error", label, _failure_text(data) or "The turn ended with an error.")


def _render_retry(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                  lazy: bool = True) -> str:
    retry, max_retries = data.get("retry"), data.get("maxRetries")
    count = f"attempt {retry}/{max_retries}" if retry is not None and max_retries is not None else (
        f"attempt {retry}" if retry is not None else "")
    delay = data.get("delayMs")
    wait = f"after {_duration(delay)}" if type(delay) in (int, float) else ""
    code = data.get("code")
    failure = _failure_text(data)
    why = f"{code}: {failure}" if type(code) is str and code and failure else (failure or str(code or ""))
    text = " ".join(x for x in (count, wait, "—" if why else "", why) if x)
    return _notice("notice-retry", "Retrying", text)


def _render_compaction(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                       lazy: bool = True) -> str:
    rng = data.get("shadowedRange")
    tokens = data.get("shadowedTokenCount")
    count = None
    if type(rng) is dict and type(rng.get("start")) is int and type(rng.get("end")) is int:
        count = rng["end"] - rng["start"] + 1
    bits = [f"Compacted {count} history items" if count is not None else
            ("Pruned history" if data.get("kind") == "prune" else "Compacting history")]
    if type(tokens) in (int, float):
        bits.append(f"(~{_tokens(tokens)} tokens)")
    status = data.get("status")
    if status == "running":
        bits.append("…")
    error = data.get("error")
    css = "notice-compaction"
    if status == "error":
        css += " notice-error"
        bits.append("failed" + (f": {error}" if type(error) is str else
                                f": {error.get('message')}" if type(error) is dict and error.get("message") else ""))
    head = _notice(css, "compact", " ".join(bits))
    summary = _content_text(data.get("summary"))
    if not summary:
        return head
    key = str(node.get("key", ""))
    if lazy:
        body = '<div class="context-body md" data-think-block="0" data-pending="1"></div>'
    else:
        body = f'<div class="context-body md">{_sliced(summary, markdown=True, key=key, block=0, limit=limit)}</div>'
    return (f'{head}<details class="context" data-block="0"><summary><span class="row-label">Summary</span> '
            f'<span class="think-title">{escape(_first_line(summary))}</span></summary>{body}</details>')


def _render_event(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                  lazy: bool = True) -> str:
    etype = data.get("type", "event")
    return (f'<div class="event-row"><span class="row-label">{escape(etype)}</span> '
            f'<code class="event-summary">{escape(data.get("summary", ""))}</code></div>')


_COMMAND_STATUSES = frozenset({"running", "success", "error", "done"})


def _command_texts(data: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(command line as typed, done text or None)`` of a command node's data; the line is "" when unknown."""
    line = data.get("input")
    if type(line) is not str:
        name = data.get("name")
        line = f"/{name}" if type(name) is str else ""
    outcome = data.get("outcome")
    text = outcome.get("text") if type(outcome) is dict else None
    return line, text if type(text) is str else None


def _render_command(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                    lazy: bool = True) -> str:
    key = str(node.get("key", ""))
    line, output = _command_texts(data)
    status = data.get("status")
    status = status if type(status) is str and status in _COMMAND_STATUSES else "done"
    if status == "error":
        badge = ' <span class="badge badge-error">Failed</span>'
    elif status == "running":
        badge = ' <span class="badge">running</span>'
    else:
        badge = ""
    if line:
        shown = f'<div class="command-line">{_sliced(line, markdown=False, key=key, block=0, limit=limit)}</div>'
    else:  # the command/run is outside the loaded history: only its id is known
        shown = f'<span class="command-id">{escape(data.get("commandId", ""))}</span>'
    head = (f'<div class="command-input" role="group" aria-label="Command input">'
            f'<span class="row-label command-label">Command</span>{badge}{shown}</div>')
    body = ""
    if output:
        body = (f'<div class="command-output">'
                f'{_sliced(output, markdown=False, key=key, block=1, limit=limit)}</div>')
    return f'<div class="command-row command-{status}">{head}{body}</div>'


def _render_generic(node: Mapping[str, Any], data: dict[str, Any], ctx: RenderContext, limit: int | None,
                    lazy: bool = True) -> str:
    kind = str(node.get("kind", "node"))
    raw = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    title = _first_line(_input_text(data) or _failure_text(data) or "", 120)
    body = code_html(raw if len(raw) <= HIGHLIGHT_LIMIT else raw[:HIGHLIGHT_LIMIT] + "\n…", "json")
    return (f'<details class="generic"><summary><span class="row-label">{escape(kind)}</span> '
            f'<span class="generic-title">{escape(title)}</span></summary>{body}</details>')


_RENDERERS: dict[str, Callable[[Mapping[str, Any], dict[str, Any], RenderContext, int | None, bool], str]] = {
    "assistant-step": _render_assistant,
    "turn-tail": _render_turn_tail,
    "input-message": _render_input,
    "tool": _render_tool,
    "turn-notice": _render_turn_notice,
    "retry-notice": _render_retry,
    "compaction": _render_compaction,
    "command": _render_command,
    "event": _render_event,
}


def node_label(node: Mapping[str, Any]) -> str:
    """A short plain-text label for a node (used by placeholders and keyboard navigation)."""
    kind = str(node.get("kind", ""))
    data = _data(node)
    if kind == "assistant-step":
        for block in data.get("blocks") or []:
            if type(block) is dict and block.get("kind") == "text" and type(block.get("text")) is str:
                line = _first_line(block["text"], 80)
                if line:
                    return line
        return "Assistant"
    if kind == "command":
        line, _ = _command_texts(data)
        return _first_line(line, 80) or "Command"
    text = _input_text(data)
    if text:
        return _first_line(text, 80)
    return kind


def render_node(node: Mapping[str, Any], *, context: RenderContext | None = None, limit: int | None = SLICE_CHARS,
                lazy: bool = True) -> str:
    """The inner HTML of one chat node. ``limit`` bounds each text block (None renders everything); ``lazy``
    leaves collapsed bodies empty (``render_section`` fills them when opened)."""
    renderer = _RENDERERS.get(str(node.get("kind", "")), _render_generic)
    try:
        return str(renderer(node, _data(node), context or _EMPTY_CONTEXT, limit, lazy))
    except (KeyError, TypeError, ValueError, AttributeError):
        # An unexpected data shape must never break the page: show it as data instead.
        return _render_generic(node, _data(node), context or _EMPTY_CONTEXT, limit, lazy)


def render_block_slice(node: Mapping[str, Any], block: int, offset: int, *, limit: int = SLICE_CHARS) -> str:
    """The HTML of text block ``block`` of ``node`` from ``offset`` on (one slice, and "Show more" if needed)."""
    blocks = node_text_blocks(node)
    if not 0 <= block < len(blocks) or not 0 <= offset <= len(blocks[block][1]):
        return ""
    kind, text = blocks[block]
    return _sliced(text, markdown=kind != "plain", key=str(node.get("key", "")), block=block, offset=offset,
                   limit=limit)


def render_section(node: Mapping[str, Any], section: int, *, limit: int = SLICE_CHARS) -> str:
    """The body of a collapsed row (Think, context injection, compaction summary, tool), rendered when opened.
    ``section`` is the row's ``data-block``."""
    if node.get("kind") == "tool":
        data = _data(node)
        pretty, is_json, result = _tool_texts(data)
        return _tool_body(str(node.get("key", "")), pretty, is_json, result, error=_tool_error(data), limit=limit)
    return render_block_slice(node, section, 0, limit=limit)


def render_article(node: Mapping[str, Any], *, context: RenderContext | None = None, limit: int | None = None,
                   lazy: bool = False) -> str:
    """One node as a complete ``<article>`` (the static export's form; the page builds its own wrapper)."""
    seq = node.get("anchorSeq")
    kind = escape(node.get("kind", ""))
    anchor = f' id="seq-{escape(seq)}"' if seq is not None else ""
    hidden = " hidden" if node.get("visibility") == "hidden" else ""
    return (f'<article class="node kind-{kind}" data-kind="{kind}" data-seq="{escape(seq)}"{anchor}{hidden}>'
            f'{render_node(node, context=context, limit=limit, lazy=lazy)}</article>\n')


# --- stylesheet ---------------------------------------------------------------------------------------------------

_DARK_STYLE = "github-dark"
_LIGHT_STYLE = "default"


def pygments_css() -> str:
    """Token colours for ``.highlight`` in light and dark themes: dark when ``data-theme="dark"`` is set on the root,
    or when the system prefers dark and no explicit light theme is set."""
    light = HtmlFormatter(style=_LIGHT_STYLE)
    dark = HtmlFormatter(style=_DARK_STYLE)
    dark_explicit = ':root[data-theme="dark"] .highlight'
    dark_system = ':root:not([data-theme="light"]) .highlight'
    def defs(formatter: HtmlFormatter, selector: str) -> str:
        lines = formatter.get_background_style_defs(selector) + formatter.get_token_style_defs(selector)
        return "\n".join(lines)

    parts = [
        "/* Pygments token colours (generated by assembler.render.pygments_css) */",
        defs(light, ".highlight"),
        defs(dark, dark_explicit),
        "@media (prefers-color-scheme: dark) {",
        defs(dark, dark_system),
        "}",
    ]
    return "\n".join(parts) + "\n"


_TRANSCRIPT_CSS = """\
/* Transcript styles shared by the viewer page and the static export (assembler.render.stylesheet). */
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --panel: #f6f8fa;
  --user-bg: #ddf4ff; --accent: #0969da; --error-bg: #ffebe9; --error-fg: #82071e; --warn-fg: #7d4e00;
  --font: system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif;
  --mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", "Noto Sans Mono CJK SC", monospace;
}
:root[data-theme="dark"] {
  --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --panel: #151b23;
  --user-bg: #122d42; --accent: #4493f8; --error-bg: #3c1618; --error-fg: #ffa198; --warn-fg: #d29922;
}
@media (prefers-color-scheme: dark) {
  :root:not([data-theme="light"]) {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --panel: #151b23;
    --user-bg: #122d42; --accent: #4493f8; --error-bg: #3c1618; --error-fg: #ffa198; --warn-fg: #d29922;
  }
}
.transcript { max-width: 52rem; margin: 0 auto; overflow-wrap: anywhere; }
.node { padding: 0.35rem 0; }
.node:focus { outline: 2px solid var(--accent); outline-offset: 2px; border-radius: 4px; }
.node:target, .node.is-target { background: color-mix(in srgb, var(--accent) 12%, transparent); }
.row-label { font-weight: 600; }
.user-message { background: var(--user-bg); border-radius: 10px; padding: 0.5rem 0.75rem; margin-left: 3rem; }
.role-label { font-size: 0.75rem; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
.command-row { margin-left: 3rem; }
.command-input { background: var(--user-bg); border-radius: 10px; padding: 0.4rem 0.75rem; display: flex;
  flex-wrap: wrap; align-items: baseline; gap: 0 0.5rem; }
.command-label { font-size: 0.75rem; color: var(--muted); }
.command-line { font-family: var(--mono); font-size: 0.9rem; flex: 1 1 12rem; min-width: 0; }
.command-id { font-family: var(--mono); font-size: 0.8rem; color: var(--muted); }
.command-output { font-size: 0.9rem; color: var(--muted); border-left: 3px solid var(--border);
  padding: 0.2rem 0.6rem; margin: 0.3rem 0 0 0.5rem; max-height: 24rem; overflow: auto; }
.command-error .command-output { color: var(--error-fg); border-left-color: var(--error-fg); }
.plain, .plain-pre { white-space: pre-wrap; font: inherit; margin: 0; }
.plain-pre { font-family: var(--mono); font-size: 0.85rem; max-height: 24rem; overflow: auto; }
details { border: 1px solid var(--border); border-radius: 8px; padding: 0.3rem 0.6rem; margin: 0.3rem 0; }
details > summary { cursor: pointer; color: var(--muted); overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }
details[open] > summary { white-space: normal; margin-bottom: 0.3rem; }
details > summary .row-label { color: var(--fg); }
.think-body { color: var(--muted); }
.tool-error { border-color: var(--error-fg); }
.tool-section { margin-top: 0.4rem; }
.section-label { font-size: 0.75rem; color: var(--muted); text-transform: uppercase; }
.tool-result.is-error .plain-pre { color: var(--error-fg); }
.badge { font-size: 0.75rem; border: 1px solid var(--border); border-radius: 999px; padding: 0 0.4rem; }
.badge-error { color: var(--error-fg); border-color: var(--error-fg); }
.notice { font-size: 0.9rem; color: var(--muted); border-left: 3px solid var(--border); padding: 0.2rem 0.6rem; }
.notice-error, .notice-interrupted { color: var(--error-fg); border-left-color: var(--error-fg); }
.notice-retry, .notice-max-tokens { color: var(--warn-fg); border-left-color: var(--warn-fg); }
.turn-tail { font-size: 0.8rem; color: var(--muted); display: flex; flex-wrap: wrap; gap: 0 0.8rem; }
.md p { margin: 0.4rem 0; }
.md pre, pre.code { padding: 0.6rem; border-radius: 6px; overflow: auto; font-size: 0.85rem;
  border: 1px solid var(--border); }
.md code { font-family: var(--mono); font-size: 0.9em; }
.md :not(pre) > code { background: var(--panel); padding: 0.05rem 0.3rem; border-radius: 4px; }
.md table { border-collapse: collapse; } .md th, .md td { border: 1px solid var(--border); padding: 0.2rem 0.5rem; }
.md blockquote { margin: 0.4rem 0; padding-left: 0.8rem; border-left: 3px solid var(--border); color: var(--muted); }
.md a, a.md-image { color: var(--accent); }
.show-more { margin: 0.3rem 0; font: inherit; font-size: 0.85rem; color: var(--accent); background: none;
  border: 1px solid var(--border); border-radius: 6px; padding: 0.15rem 0.6rem; cursor: pointer; }
.other-block, .image-block { color: var(--muted); font-style: italic; }
.mono { font-family: var(--mono); font-size: 0.85rem; max-height: 28rem; overflow: auto; }
.tool-streaming { border: 1px dashed var(--border); border-radius: 8px; padding: 0.3rem 0.6rem; }
.event-row { font-size: 0.8rem; color: var(--muted); white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
.event-summary { font-family: var(--mono); }
.message-clock { margin-left: 0.5rem; text-transform: none; }
.export-title { font-size: 1.2rem; max-width: 52rem; margin: 0 auto 1rem; }
"""


def stylesheet() -> str:
    """The full transcript CSS: layout, light/dark colours and Pygments token classes."""
    return _TRANSCRIPT_CSS + pygments_css()


def render_document(nodes: Iterable[Mapping[str, Any]], *, title: str, context: RenderContext | None = None,
                    banner: str = "") -> str:
    """A complete static HTML transcript: inline CSS, a CSP with no script at all, every node fully rendered
    (Think rows are native ``<details>``; nothing needs JavaScript)."""
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    body = "".join(render_article(node, context=context, limit=None, lazy=False) for node in nodes
                   if node.get("visibility") != "hidden")
    notice = f'<div class="notice notice-error" role="alert">{escape(banner)}</div>' if banner else ""
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{stylesheet()}"
        "body { margin: 0; padding: 1rem; background: var(--bg); color: var(--fg); font: 15px/1.5 var(--font); }\n"
        "</style>\n</head>\n<body>\n"
        f'<header><h1 class="export-title">{escape(title)}</h1></header>\n{notice}'
        f'<main class="transcript">\n{body}</main>\n</body>\n</html>\n'
    )
