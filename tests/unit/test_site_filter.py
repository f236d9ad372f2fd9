"""A published site's shard filter (``server.site_filter``): the keys a query needs (FTS5's own tokens: case folding
and word breaks, prefixes, phrases), the Bloom filter (every key it was built with says "maybe", few others do), the
file's round trip and its refusals, and which shards a query needs."""

from __future__ import annotations

import sqlite3

import msgspec
import pytest

from assembler.server.search_index import TOKENIZE
from assembler.server.search_query import QueryError
from assembler.server.site_filter import (
    FILTER_VERSION,
    PREFIX_MAX,
    FilterError,
    ShardFilter,
    SiteFilter,
    build_shard_filter,
    decode_filter,
    encode_filter,
    needed_shards,
    query_keys,
    shard_words,
    word_keys,
)


def test_query_keys_are_fts5_tokens() -> None:
    assert query_keys("Hello") == {"=hello"}
    assert query_keys("foo-bar") == {"=foo", "=bar"}  # one phrase of two tokens
    assert query_keys('"read the"') == {"=read", "=the"}
    assert query_keys("index*") == {"<index"}
    assert query_keys('"read the"*') == {"=read", "<the"}  # only a phrase's last token is a prefix
    assert query_keys('"foo-"*') == {"<foo"}
    assert query_keys("a* word") == {"=word"}  # a one-letter prefix needs nothing
    assert query_keys("internationalization*") == {"<" + "internationalization"[:PREFIX_MAX]}
    assert query_keys("İstanbul") == {"=İstanbul"}  # FTS5's folding, not Python's ("i̇stanbul")
    assert query_keys("STRAẞE") == {"=straße"}
    # a letter to Python (Lo since Unicode 8) that this FTS5's tables keep as a mark: a phrase of no token, which
    # FTS5 ignores in an AND
    assert query_keys("\u19b0 word") == {"=word"}


def test_query_keys_cannot_tell_when_fts5_refuses_the_query() -> None:
    assert query_keys("abc\x00def") is None  # FTS5 reads a MATCH string up to a NUL: every shard answers
    with pytest.raises(QueryError):
        query_keys('"unclosed')


def test_word_keys() -> None:
    assert word_keys(["a", "abc"]) == {"=a", "=abc", "<ab", "<abc"}
    long = "x" * 30
    assert word_keys([long]) == {"=" + long} | {"<" + "x" * n for n in range(2, PREFIX_MAX + 1)}


def test_a_filter_says_maybe_for_every_word_and_rarely_otherwise() -> None:
    words = [f"w{i}q{i * 7919 % 10007}" for i in range(5000)]
    shard = build_shard_filter("search/a.sqlite", 12, words)
    assert all(shard.may_hold({"=" + w}) for w in words)
    assert all(shard.may_hold(query_keys(w[:k] + "*") or set()) for w in words[::50] for k in range(2, len(w) + 1))
    assert not shard.may_hold({"=nosuchword"}) or not shard.may_hold({"=otherword"})
    absent = sum(shard.may_hold({f"=absent{i}"}) for i in range(20_000)) / 20_000
    assert absent < 0.03, absent  # about 1.2% by design
    assert len(shard.bits) * 8 >= 10 * len(word_keys(words))


def test_an_empty_filter_always_says_maybe() -> None:
    assert ShardFilter("f", 1, 1, b"").may_hold({"=anything"})


def test_the_file_round_trips_and_refuses_others() -> None:
    shards = [build_shard_filter("search/a.sqlite", 3, ["alpha", "beta"]),
              build_shard_filter("search/b.sqlite", 4, ["gamma"])]
    data = encode_filter(shards)
    back = decode_filter(memoryview(data))
    assert back == SiteFilter(FILTER_VERSION, PREFIX_MAX, shards)
    with pytest.raises(FilterError, match="not a search filter file"):
        decode_filter(b"not msgpack at all")
    with pytest.raises(FilterError, match="not a search filter file"):
        decode_filter(msgspec.msgpack.encode({"version": 1, "prefix_max": 10, "shards": [{"file": 3}]}))
    with pytest.raises(FilterError, match="version 99"):
        decode_filter(msgspec.msgpack.encode(SiteFilter(99, PREFIX_MAX, shards)))
    with pytest.raises(FilterError, match="impossible"):
        decode_filter(encode_filter([ShardFilter("f", 1, 0, b"\0" * 8)]))


def test_needed_shards() -> None:
    filt = decode_filter(encode_filter([build_shard_filter("a", 1, ["alpha", "shared"]),
                                        build_shard_filter("b", 1, ["beta", "shared"])]))
    names = ["a", "b", "c"]  # "c" is not in the filter: always needed
    assert needed_shards(filt, names, "alpha") == ["a", "c"]
    assert needed_shards(filt, names, "shared") == ["a", "b", "c"]
    assert needed_shards(filt, names, "alpha beta") == ["c"]  # both words in one row: no shard holds both
    assert needed_shards(filt, names, "be*") == ["b", "c"]
    assert needed_shards(filt, names, '"unclosed') == []  # a refused query reads no shard
    assert needed_shards(None, names, "alpha") == names  # no filter: every shard
    assert needed_shards(filt, names, "alpha\x00") == names  # the needs cannot be worked out: every shard


def test_shard_words_are_the_fts5_vocabulary() -> None:
    con = sqlite3.connect(":memory:")
    con.executescript(f"CREATE TABLE sessions(id INTEGER PRIMARY KEY);"
                      f"CREATE VIRTUAL TABLE row_text USING fts5(text, tokenize='{TOKENIZE}');"
                      "INSERT INTO sessions VALUES (1), (2);"
                      "INSERT INTO row_text(text) VALUES ('Hello, wörld! İstanbul'), ('hello again');")
    words, sessions = shard_words(con)
    assert sorted(words) == ["again", "hello", "wörld", "İstanbul"] and sessions == 2
    assert shard_words(con)[0] == words  # its scratch table is gone again
