"""The shard filter never skips a shard that answers (``server.site_filter``): for random rows split into shards
(FTS5 tables with the index's tokenizer) and random queries (words of the rows cut to prefixes, case changed, joined
into phrases, with punctuation, letters of other scripts, and arbitrary text), every shard in which FTS5 finds a
match for the query's expression is one the filter says the query needs."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.server.search_index import TOKENIZE
from assembler.server.search_query import QueryError, fts_query
from assembler.server.site_filter import build_shard_filter, decode_filter, encode_filter, needed_shards, shard_words

ALPHABET = "abcdeéöß İıẞǅ-_.,'\"*0123456789日本"
WORDS = st.text(alphabet="abcdeéößİıẞǅ日本0129", min_size=1, max_size=12)
ROW = st.lists(st.tuples(WORDS, st.sampled_from([" ", "-", ", ", ".", "_", "'"])), min_size=1, max_size=12).map(
    lambda parts: "".join(w + sep for w, sep in parts))


def shard(rows: list[str]) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE sessions(id INTEGER PRIMARY KEY)")
    con.execute("INSERT INTO sessions VALUES (1)")
    con.execute(f"CREATE VIRTUAL TABLE row_text USING fts5(text, tokenize='{TOKENIZE}', prefix='2 3 4')")
    con.executemany("INSERT INTO row_text(text) VALUES (?)", [(r,) for r in rows])
    return con


def matches(con: sqlite3.Connection, query: str) -> int:
    return int(con.execute("SELECT count(*) FROM row_text WHERE row_text MATCH ?", (fts_query(query),)).fetchone()[0])


@st.composite
def query_from(draw: st.DrawFn, rows: list[str]) -> str:
    """A query made of pieces of the rows: cut, case changed, quoted, starred, or arbitrary text."""
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        row = draw(st.sampled_from(rows))
        start = draw(st.integers(0, len(row) - 1))
        piece = row[start:start + draw(st.integers(1, 14))]
        piece = draw(st.sampled_from([piece, piece.upper(), piece.lower(), piece.title()]))
        piece = draw(st.one_of(st.just(piece), st.text(alphabet=ALPHABET, min_size=1, max_size=8)))
        if draw(st.booleans()):
            piece = '"' + piece.replace('"', "") + '"'
        else:
            piece = piece.replace('"', "").replace(" ", "")
        if draw(st.booleans()):
            piece += "*"
        terms.append(piece)
    return " ".join(terms)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(ROW, min_size=1, max_size=6), min_size=1, max_size=4), st.data())
def test_no_shard_that_answers_is_skipped(shards: list[list[str]], data: st.DataObject) -> None:
    cons = [shard(rows) for rows in shards]
    names = [f"search/{i}.sqlite" for i in range(len(cons))]
    filt = decode_filter(encode_filter([build_shard_filter(name, shard_words(con)[1], shard_words(con)[0])
                                        for name, con in zip(names, cons, strict=True)]))
    everything = [r for rows in shards for r in rows]
    for _ in range(5):
        query = data.draw(query_from(everything))
        try:
            answering = [name for name, con in zip(names, cons, strict=True) if matches(con, query)]
        except QueryError:
            assert needed_shards(filt, names, query) == []
            continue
        except sqlite3.OperationalError:  # FTS5 refuses it: the answer is its error, from every shard
            assert needed_shards(filt, names, query) == names
            continue
        needed = needed_shards(filt, names, query)
        assert set(answering) <= set(needed), (query, answering, needed)
