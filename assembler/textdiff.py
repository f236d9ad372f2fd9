"""A word-level diff of two texts (the final answers of two compared turns, ``compare``).

Rules: pure. Texts are split into runs of whitespace and of non-whitespace; texts of more than ``WORD_DIFF_LIMIT``
words are diffed line by line instead (``difflib.SequenceMatcher`` is quadratic at worst). The result is runs of
``("equal" | "delete" | "insert", text)``: ``delete`` only in the first text, ``insert`` only in the second; a
change is its deletion then its insertion; the ``equal`` and ``delete`` runs joined give the first text back, the
``equal`` and ``insert`` runs the second.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Literal

__all__ = ["Op", "WORD_DIFF_LIMIT", "word_diff"]

Op = Literal["equal", "insert", "delete"]
WORD_DIFF_LIMIT = 20_000


_TOKEN = re.compile(r"\s+|\S+")


def word_diff(a: str, b: str) -> list[tuple[Op, str]]:
    """``a`` → ``b`` as ``(op, text)`` runs (``equal``, ``delete``: only in ``a``, ``insert``: only in ``b``), by
    words (by lines above ``WORD_DIFF_LIMIT`` words); whitespace alone between two changes joins them."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    if max(len(ta), len(tb)) > WORD_DIFF_LIMIT:
        ta, tb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    runs: list[tuple[str, str, str]] = []  # (op, a text, b text)
    for code, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        runs.append((code, "".join(ta[i1:i2]), "".join(tb[j1:j2])))
    # A whitespace-only equal run between two changes reads better folded into both of them.
    merged: list[tuple[str, str, str]] = []
    for k, (tag, x, y) in enumerate(runs):
        between = 0 < k < len(runs) - 1 and runs[k - 1][0] != "equal" and runs[k + 1][0] != "equal"
        if tag == "equal" and between and not x.strip():
            tag = "replace"
        if merged and merged[-1][0] != "equal" and tag != "equal":
            _, px, py = merged[-1]
            merged[-1] = ("replace", px + x, py + y)
        else:
            merged.append((tag, x, y))
    out: list[tuple[Op, str]] = []
    for tag, x, y in merged:
        if tag == "equal":
            out.append(("equal", x))
            continue
        if x:
            out.append(("delete", x))
        if y:
            out.append(("insert", y))
    return out
