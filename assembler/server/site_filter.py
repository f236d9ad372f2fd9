"""Which of a published site's index shards can hold a hit for a query: per shard, a Bloom filter of the words it
holds, all shards' filters in one small static file (``search/filter-HASH.bin``) that the page's worker fetches with
its first search, so a search fetches only the shards that may answer (``site_search``, ``browser.sitesearch``).

Rules:

* Keys. A shard's words are its FTS5 vocabulary (``fts5vocab``: every token exactly as its tokenizer stored it).
  Each word ``w`` gives the key ``=w`` and, for each of its prefixes of ``PREFIX_MIN`` to ``prefix_max`` characters,
  ``<prefix``. A query (``search_query``: every term must occur in one row) needs, for each term, the tokens of its
  text as FTS5 tokenizes a query (the same tokenizer, run by this SQLite on the term's text, so case folding and
  word breaks are FTS5's, never Python's): ``=t`` for each whole token, and for a prefix term's last token ``p``,
  ``<p[:prefix_max]`` when ``p`` has at least ``PREFIX_MIN`` characters (a shorter prefix needs nothing). A shard
  holding a matching row holds every key its query needs, so a shard is skipped only when its filter lacks one.
* No false negatives. A Bloom filter says "maybe" for every key it was built with; it says "maybe" for a key it was
  not built with about 1% of the time (``BITS_PER_KEY``, ``HASHES``): a shard fetched for nothing, never a hit lost.
  When the needs cannot be worked out (this SQLite lacks FTS5, FTS5 refuses the expression the shards would be
  asked, a term's text cannot be encoded) every shard is needed, so the answer (hits, counts, or the error) is the
  one all shards give. A query the rules refuse needs no shard (its answer, a 400, does not read one).
* The file: msgpack of ``SiteFilter`` (version, ``prefix_max``, per shard its file, session count, hash count and
  bit array); a file of another version or shape is a ``FilterError``. A shard the file does not name is needed.
  A key's bit positions are the ``hashes`` little-endian 32-bit words of the blake2b digest of its UTF-8 bytes, each
  modulo the filter's bits (the same on CPython and Pyodide). Pure, apart from SQLite in memory to tokenize a query.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Iterable, Sequence

import msgspec

from .search_index import TOKENIZE
from .search_query import QueryError, Term, parse_query

__all__ = ["BITS_PER_KEY", "FILTER_VERSION", "FilterError", "HASHES", "PREFIX_MAX", "PREFIX_MIN", "ShardFilter",
           "SiteFilter", "build_shard_filter", "decode_filter", "encode_filter", "needed_shards", "query_keys",
           "shard_words", "word_keys"]

FILTER_VERSION = 1
PREFIX_MIN = 2
"""Prefixes shorter than this are not kept (nearly every shard holds a word of one letter's prefix)."""
PREFIX_MAX = 10
"""Prefixes longer than this are kept as their first ``PREFIX_MAX`` characters (a long word's tail adds keys, not
selectivity)."""
BITS_PER_KEY = 10
HASHES = 4
"""With ``BITS_PER_KEY`` bits per key, four hashes make a filter say "maybe" for an absent key about 1.2% of the
time."""


class FilterError(ValueError):
    """A filter file that is not one this page reads (the message says why)."""


class ShardFilter(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One shard's filter: its file (as the catalog names it), how many sessions it holds, and a Bloom filter of
    ``len(bits) * 8`` bits with ``hashes`` hashes per key."""

    file: str
    sessions: int
    hashes: int
    bits: bytes

    def may_hold(self, keys: Iterable[str]) -> bool:
        """False only when the shard holds none of its words for some key (then it cannot answer)."""
        m = len(self.bits) * 8
        if m == 0:
            return True
        bits = self.bits
        for key in keys:
            for at in _positions(key, m, self.hashes):
                if not bits[at >> 3] & (1 << (at & 7)):
                    return False
        return True


class SiteFilter(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The site's filter file: every shard's filter."""

    version: int
    prefix_max: int
    shards: list[ShardFilter]


_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE = msgspec.msgpack.Decoder(SiteFilter).decode


def _key_bytes(key: str) -> bytes:
    return key.encode("utf-8", "surrogateescape")


def _positions(key: str, m: int, hashes: int) -> Iterable[int]:
    digest = hashlib.blake2b(_key_bytes(key), digest_size=4 * hashes).digest()
    return (x % m for x in struct.unpack(f"<{hashes}I", digest))


def word_keys(words: Iterable[str], prefix_max: int = PREFIX_MAX) -> set[str]:
    """The keys a shard holding ``words`` answers "maybe" for (see the module rules)."""
    keys: set[str] = set()
    for word in words:
        keys.add("=" + word)
        for end in range(PREFIX_MIN, min(len(word), prefix_max) + 1):
            keys.add("<" + word[:end])
    return keys


def build_shard_filter(file: str, sessions: int, words: Iterable[str], prefix_max: int = PREFIX_MAX) -> ShardFilter:
    """The filter of shard ``file`` holding ``sessions`` sessions and ``words``."""
    keys = word_keys(words, prefix_max)
    m = max(64, -(-len(keys) * BITS_PER_KEY // 8) * 8)
    bits = bytearray(m // 8)
    # _positions, inlined: a shard has 10^5 keys or more
    blake2b, unpack = hashlib.blake2b, struct.Struct(f"<{HASHES}I").unpack
    for key in keys:
        for x in unpack(blake2b(_key_bytes(key), digest_size=4 * HASHES).digest()):
            at = x % m
            bits[at >> 3] |= 1 << (at & 7)
    return ShardFilter(file, sessions, HASHES, bytes(bits))


def shard_words(con: sqlite3.Connection) -> tuple[list[str], int]:
    """A shard's words (its FTS5 vocabulary) and how many sessions it holds, read through ``con``."""
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.site_filter_vocab USING fts5vocab(main, row_text, row)")
    factory, con.text_factory = con.text_factory, _text
    try:
        words = [term for term, in con.execute("SELECT term FROM temp.site_filter_vocab")]
    finally:
        con.text_factory = factory
        con.execute("DROP TABLE temp.site_filter_vocab")
    sessions = int(con.execute("SELECT count(*) FROM sessions").fetchone()[0])
    return words, sessions


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")  # a key's bytes are the stored token's, whatever they are


def encode_filter(shards: Sequence[ShardFilter], prefix_max: int = PREFIX_MAX) -> bytes:
    """The filter file's bytes."""
    return _ENCODE(SiteFilter(FILTER_VERSION, prefix_max, list(shards)))


def decode_filter(data: bytes | bytearray | memoryview) -> SiteFilter:
    """The filter file from its bytes.

    Raises:
        FilterError: not a filter file of this version.
    """
    try:
        found = _DECODE(data)
    except msgspec.DecodeError as exc:
        raise FilterError(f"not a search filter file ({exc})") from None
    if found.version != FILTER_VERSION:
        raise FilterError(f"a search filter file of version {found.version} (this page reads {FILTER_VERSION})")
    if found.prefix_max < PREFIX_MIN or any(not 1 <= s.hashes <= 16 for s in found.shards):
        raise FilterError("a search filter file with impossible parameters")
    return found


def _query_tokens(terms: Sequence[Term], match: str) -> list[list[str]] | None:
    """Each term's tokens as FTS5 tokenizes them, in order; None when FTS5 is missing or refuses ``match``."""
    try:
        con = sqlite3.connect(":memory:")
    except sqlite3.Error:
        return None
    con.text_factory = _text
    try:
        con.execute(f"CREATE VIRTUAL TABLE q USING fts5(text, tokenize='{TOKENIZE}')")
        con.execute("CREATE VIRTUAL TABLE temp.qv USING fts5vocab(main, q, instance)")
        con.executemany("INSERT INTO q(rowid, text) VALUES (?, ?)", ((i, t.text) for i, t in enumerate(terms)))
        con.execute("SELECT count(*) FROM q WHERE q MATCH ?", (match,)).fetchone()  # as the shards are asked
        tokens: list[list[str]] = [[] for _ in terms]
        for doc, term in con.execute("SELECT doc, term FROM temp.qv ORDER BY doc, offset"):
            tokens[int(doc)].append(term)
        return tokens
    except (sqlite3.Error, UnicodeError, ValueError):
        return None
    finally:
        con.close()


def query_keys(query: str, prefix_max: int = PREFIX_MAX) -> set[str] | None:
    """The keys a shard must hold to answer ``query``; None when they cannot be worked out (every shard is needed).

    Raises:
        QueryError: the query breaks the rules (``search_query.parse_query``).
    """
    terms = parse_query(query)
    tokens = _query_tokens(terms, " ".join(t.fts() for t in terms))
    if tokens is None:
        return None
    keys: set[str] = set()
    for term, words in zip(terms, tokens, strict=True):
        if not words:
            continue  # FTS5 ignores a phrase of no token in an AND
        whole = words[:-1] if term.prefix else words
        keys.update("=" + w for w in whole)
        if term.prefix and len(words[-1]) >= PREFIX_MIN:
            keys.add("<" + words[-1][:prefix_max])
    return keys


def needed_shards(filt: SiteFilter | None, names: Sequence[str], query: str) -> list[str]:
    """The shards among ``names`` (in their order) that may hold a hit for ``query``: none for a query the rules
    refuse, all without a filter or when the query's keys cannot be worked out."""
    try:
        parse_query(query)
    except QueryError:
        return []
    keys = None if filt is None else query_keys(query, filt.prefix_max)
    if filt is None or keys is None:
        return list(names)
    by_file = {entry.file: entry for entry in filt.shards}
    return [name for name in names if (entry := by_file.get(name)) is None or entry.may_hold(keys)]
