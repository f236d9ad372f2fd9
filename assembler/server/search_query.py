"""What a search box query may say, turned into an FTS5 expression that can only mean what the rules allow.

Rules: a query is words and ``"quoted phrases"`` separated by spaces; every term must occur in the row (AND); a
trailing ``*`` on a word or a closing quote makes it a prefix (``index*``, ``"search ind"*``). Nothing else is
syntax: FTS5 operators (``AND``, ``OR``, ``NOT``, ``NEAR``), column filters (``text:``), parentheses, ``^``, ``+``
and ``-`` are ordinary text, because each term is passed to FTS5 as a double-quoted string (inner quotes doubled).
Words are what FTS5's ``unicode61`` tokenizer keeps (letters and digits; punctuation separates), matched
case-insensitively. A query that is empty, longer than ``MAX_QUERY_CHARS``, has more than ``MAX_TERMS`` terms, an
unclosed quote, a ``*`` with no word before it, or no letter or digit at all is a ``QueryError`` naming the fault
(the server answers 400). Pure.
"""

from __future__ import annotations

import re

__all__ = ["MAX_QUERY_CHARS", "MAX_TERMS", "QueryError", "Term", "parse_query", "fts_query"]

MAX_QUERY_CHARS = 500
MAX_TERMS = 16

_WORDY = re.compile(r"[^\W_]")  # a character the unicode61 tokenizer keeps in a token


class QueryError(ValueError):
    """A query the rules do not allow; the message says why, for the reader."""


class Term:
    """One term: its text (a word or a phrase's words) and whether it is a prefix."""

    __slots__ = ("text", "prefix", "phrase")

    def __init__(self, text: str, prefix: bool, phrase: bool) -> None:
        self.text = text
        self.prefix = prefix
        self.phrase = phrase

    def fts(self) -> str:
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")

    def __repr__(self) -> str:
        return f"Term({self.text!r}, prefix={self.prefix}, phrase={self.phrase})"


def parse_query(query: str) -> list[Term]:
    """The terms of ``query`` (see the module rules).

    Raises:
        QueryError: the query breaks a rule.
    """
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is too long ({len(query)} characters; at most {MAX_QUERY_CHARS})")
    terms: list[Term] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
            continue
        if ch == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise QueryError('a quote is not closed: write "exact words" with a quote at each end')
            text = query[i + 1:end]
            i = end + 1
            prefix = i < n and query[i] == "*"
            while i < n and query[i] == "*":
                i += 1
            if i < n and not query[i].isspace() and query[i] != '"':
                raise QueryError('put a space after a closing quote (or a * to search for a prefix)')
            terms.append(Term(text, prefix, True))
            continue
        j = i
        while j < n and not query[j].isspace() and query[j] != '"':
            j += 1
        word = query[i:j]
        i = j
        stripped = word.rstrip("*")
        if not stripped:
            raise QueryError("a * must follow a word (index* finds index, indexed, indexing)")
        terms.append(Term(stripped, stripped != word, False))
    if not terms:
        raise QueryError("nothing to search for: type a word")
    if len(terms) > MAX_TERMS:
        raise QueryError(f"too many terms ({len(terms)}; at most {MAX_TERMS})")
    for term in terms:
        if not _WORDY.search(term.text):
            raise QueryError(f"{term.fts()} holds no letter or digit to search for")
    return terms


def fts_query(query: str) -> str:
    """The FTS5 MATCH expression for ``query``: its terms, each quoted, ANDed.

    Raises:
        QueryError: as ``parse_query``.
    """
    return " ".join(term.fts() for term in parse_query(query))
