"""Terminal escape sequences in transcript text: shown as a terminal shows them, never as raw control characters.

Commands print colours and styles with ANSI escape sequences (``ESC [ … m``), and harnesses copy them into their
logs (Claude Code's hook notices, Bash output). ``strip_ansi`` removes every escape sequence (CSI, OSC, and the
two-character ones) from text shown as plain text; ``ansi_html`` escapes terminal output and turns the SGR styles it
understands (bold, dim, italic, underline, the 16 foreground colours) into ``<span class="ansi-…">`` elements,
dropping every other sequence. Classes only, never a ``style`` attribute (the CSP forbids inline styles). The
original bytes stay in the log and in "Show records". Pure.
"""

from __future__ import annotations

import html
import re

__all__ = ["ansi_html", "strip_ansi"]

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST), a charset designation (ESC ( B), any other two-character sequence.
_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()*+][0-~]|[0-~])")
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_STYLES = {1: "bold", 2: "dim", 3: "italic", 4: "underline"}
_RESETS = {21: 1, 22: 1, 23: 3, 24: 4}  # 22 ends bold and dim alike


def strip_ansi(text: str) -> str:
    """``text`` without its escape sequences (a stray ESC included)."""
    if "\x1b" not in text:
        return text
    return _SEQUENCE.sub("", text).replace("\x1b", "")


def ansi_html(text: str) -> str:
    """Terminal output as escaped HTML: SGR styles as spans, every other escape sequence dropped."""
    if "\x1b" not in text:
        return html.escape(text, quote=True)
    out: list[str] = []
    styles: set[int] = set()
    colour: int | None = None
    pos = 0
    for found in _SGR.finditer(text):
        _piece(out, text[pos:found.start()], styles, colour)
        pos = found.end()
        colour = _apply(found.group(1), styles, colour)
    _piece(out, text[pos:], styles, colour)
    return "".join(out)


def _apply(params: str, styles: set[int], colour: int | None) -> int | None:
    """The state after one SGR sequence's parameters (empty means reset)."""
    codes = [int(p) for p in params.split(";") if p.isdigit()] or [0]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            styles.clear()
            colour = None
        elif code in _STYLES:
            styles.add(code)
        elif code in _RESETS:
            styles.discard(_RESETS[code])
            if code == 22:
                styles.discard(2)
        elif 30 <= code <= 37:
            colour = code - 30
        elif 90 <= code <= 97:
            colour = code - 90 + 8
        elif code == 39:
            colour = None
        elif code in (38, 48):  # 256-colour or true colour: its arguments are skipped, the colour is not shown
            i += 2 if codes[i + 1:i + 2] == [5] else 4
        i += 1
    return colour


def _piece(out: list[str], raw: str, styles: set[int], colour: int | None) -> None:
    text = html.escape(strip_ansi(raw), quote=True)
    if not text:
        return
    classes = [f"ansi-{_STYLES[s]}" for s in sorted(styles)]
    if colour is not None:
        classes.append(f"ansi-fg{colour}")
    out.append(f'<span class="{" ".join(classes)}">{text}</span>' if classes else text)
