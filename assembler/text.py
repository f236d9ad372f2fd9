"""Text predicates shared by every Definition: the JS ``trim`` whitespace set and JS number spelling.

Rules: "blank" always means "empty after stripping exactly the JS ``String.prototype.trim`` set" (ASSEMBLY 5.3),
never Python's ``str.strip()`` default set, which differs (U+001C–U+001F, U+0085 and U+FEFF). Pure, no I/O.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JS_WHITESPACE", "is_blank", "js_trim", "js_number_str", "safe_index"]

JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""Exactly the characters JS ``trim`` strips (ASSEMBLY 5.3, "exact blank test")."""

_MAX_SAFE = 2**53 - 1


def is_blank(text: str) -> bool:
    """True when ``text`` is empty after JS ``trim``. Linear in ``len(text)``; call it on fragments, not on
    growing accumulations (DESIGN rule 3)."""
    return not text.strip(JS_WHITESPACE)


def js_trim(text: str) -> str:
    """JS ``text.trim()``."""
    return text.strip(JS_WHITESPACE)


def js_number_str(value: Any) -> str:
    """JS ``String(value)`` for the numbers used as ids (``1.0`` spells ``"1"``); other values via ``str``."""
    if type(value) is float and value.is_integer() and abs(value) <= _MAX_SAFE:
        return str(int(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def safe_index(value: Any) -> int | None:
    """``value`` as an int when it is a JS safe integer >= 0 (``Number.isSafeInteger``), else None."""
    if type(value) is int:
        return value if 0 <= value <= _MAX_SAFE else None
    if type(value) is float and value.is_integer() and 0 <= value <= _MAX_SAFE:
        return int(value)
    return None
