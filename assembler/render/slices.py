"""Bounded text: long text blocks render in slices of about ``SLICE_CHARS`` characters behind "Show more", and long
unbroken runs of characters in slices of at most ``RUN_CHARS`` that can wrap.

Rules (DESIGN rule 8): a cut falls at a paragraph boundary outside a code fence when it can; a markdown slice that
starts or ends inside a fence is reopened and closed so each slice renders on its own. Linear in the offset. A run
of more than ``RUN_CHARS`` characters with no white space in the HTML's text (one long "word": base64, a minified
line, a hash, a token a model repeated) gets a ``<wbr>`` break opportunity every ``RUN_CHARS`` characters
(``break_long_runs``): Chromium lays a single run out in time that grows with the square of its
length (a 300,000-character run of Arabic letters or of combining accents took 2.8-5.2 s, one of a million letters
7-60 s), bounded pieces lay out in linear time. A break never separates a combining mark, a joiner or a variation
selector from the character before it, never cuts an entity, and never touches a tag or its attributes. Pure.
"""

from __future__ import annotations

import re
import unicodedata

from .markdown import escape, markdown_html

__all__ = [
    "RUN_CHARS",
    "SLICE_CHARS",
    "break_long_runs",
    "slice_text",
    "sliced",
]

SLICE_CHARS = 20_000
"""About how many characters of one text block render at once; the rest waits behind "Show more"."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

RUN_CHARS = 128
"""The longest run of characters without white space the HTML of a text block has between break opportunities."""

_TAG = re.compile(r"(<[^>]*>)")  # our HTML escapes ``>`` in attribute values, so a tag ends at the first ``>``
_LONG_RUN = re.compile(rf"[^\s<>]{{{RUN_CHARS + 1},}}")
_JOINERS = frozenset("\u200c\u200d\ufe0e\ufe0f\u034f")


def _stays_with_previous(c: str) -> bool:
    """A character that must not start a piece: a combining mark, a joiner, a variation selector, a skin tone."""
    return (c in _JOINERS or unicodedata.category(c) in ("Mn", "Mc", "Me") or "\U0001f3fb" <= c <= "\U0001f3ff"
            or "\U000e0100" <= c <= "\U000e01ef")


def _broken_run(match: re.Match[str]) -> str:
    run = match.group()
    pieces = []
    start, n = 0, len(run)
    while n - start > RUN_CHARS:
        cut = start + RUN_CHARS
        amp = run.rfind("&", max(start, cut - 12), cut)  # an entity (``&amp;``, ``&#x27;``) is never cut
        if amp != -1 and run.find(";", amp, cut) == -1:
            end = run.find(";", cut)
            cut = end + 1 if end != -1 and end - amp <= 12 else cut
        while cut < n and (_stays_with_previous(run[cut]) or run[cut - 1] == "\u200d"):
            cut += 1
        pieces.append(run[start:cut])
        start = cut
    pieces.append(run[start:])
    return "<wbr>".join(p for p in pieces if p)


def break_long_runs(html: str) -> str:
    """``html`` with a ``<wbr>`` every ``RUN_CHARS`` characters of each longer run without white space in its text
    (never inside a tag). Linear in the length of ``html``."""
    if len(html) <= RUN_CHARS or _LONG_RUN.search(html) is None:
        return html
    parts = _TAG.split(html)
    for i in range(0, len(parts), 2):  # even parts are text, odd ones tags
        if len(parts[i]) > RUN_CHARS:
            parts[i] = _LONG_RUN.sub(_broken_run, parts[i])
    return "".join(parts)


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


def sliced(text: str, *, markdown: bool, key: str, block: int, offset: int = 0, limit: int | None) -> str:
    """A text block's HTML from ``offset``: everything when ``limit`` is None, else one slice + "Show more"."""
    if limit is None:
        rest = text[offset:] if offset else text
        return break_long_runs(markdown_html(rest) if markdown else f'<div class="plain">{escape(rest)}</div>')
    body, next_offset = (_markdown_slice if markdown else _plain_slice)(text, offset, limit)
    body = break_long_runs(body)
    if next_offset is not None:
        body += _show_more(key, block, next_offset, len(text))
    return body
