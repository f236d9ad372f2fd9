"""A published site's search index (issue 21 item 4, publish half): on the real fixtures the shards ``publish`` writes
answer the same hits as the server's index (``GET /api/search``'s own function), in one shard or split into several;
a republish after one session changed rewrites only the shard holding it (and the filter file, whose other entries
are carried over); query syntax errors are a 400 answer with the reason, never an exception; the shards open from
their bytes the way the page's worker opens them (``Viewer.site_index_open``, ``site_search``); with the site's
filter (``server.site_filter``) a search needs fewer shards and its answer is, for random queries, exactly the answer
of every shard."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from assembler.browser.viewer import Viewer
from assembler.server.indexer import SearchIndexer
from assembler.server.publish import publish
from assembler.server.registry import SessionRegistry
from assembler.server.search_api import _answer
from assembler.server.site_filter import decode_filter
from assembler.server.site_index import INDEX_DIR
from assembler.server.site_paths import CATALOG, MANIFEST
from tests.corpus import require_corpus, session_logs
from tests.interop_support import interop_file
from tests.unit.test_publish_pages import make_viewer
from tests.unit.test_search_index import INTEROP

HOSTILE = ['"open', "*", "!!!", 'NEAR(a b) OR text:x', '"a"b', "x" * 501, "AND", '"" *', "-- ; DROP TABLE rows"]


def corpus_folder(tmp: Path) -> Path:
    """The real fixtures, copied at test time into one folder (the server and publish read the same paths): our own
    logs and one log of each other harness."""
    require_corpus()
    root = tmp / "corpus"
    for i, src in enumerate(p for p in session_logs() if p.name == "session.jsonl"):
        dst = root / "ours" / f"{i:03d}-{src.parent.name}" / "session.jsonl"
        dst.parent.mkdir(parents=True)
        shutil.copyfile(src, dst)
    for rel in INTEROP:
        src = interop_file(rel)
        (root / "other").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, root / "other" / src.name)
    return root


def server_index(root: Path, tmp: Path) -> tuple[SearchIndexer, SessionRegistry]:
    registry = SessionRegistry([root])
    indexer = SearchIndexer(registry, tmp / "server-index" / "i.sqlite3")
    indexer.run_pass()
    return indexer, registry


def published(root: Path, out: Path, static: Path, shard_bytes: int) -> dict[str, Any]:
    report = asyncio.run(publish([str(root)], out, static_dir=static, index_shard_bytes=shard_bytes))
    assert not report.refused and report.index is not None
    return json.loads((out / CATALOG).read_bytes())


def site_viewer(out: Path, catalog: dict[str, Any]) -> tuple[Viewer, list[str]]:
    """A viewer holding the site's shards, opened from their bytes as the worker hands them over."""
    viewer = Viewer()
    names = [s["file"] for s in catalog["index"]["shards"]]
    assert viewer.site.missing(names) == names
    for name in names:
        opened = json.loads(viewer.site_index_open(name, memoryview((out / name).read_bytes())))
        assert opened["ok"] and opened["sessions"] > 0, opened
    assert viewer.site.missing(names) == []
    return viewer, names


def site_answer(viewer: Viewer, names: list[str], query: str, limit: int = 100) -> tuple[int, dict[str, Any]]:
    value = json.loads(viewer.site_search(query, limit, names))
    return value["status"], value["body"]


def queries(indexer: SearchIndexer) -> list[str]:
    """Words of several frequencies taken from the server's index (its FTS5 vocabulary), prefixes and phrases."""
    con = indexer.store._con
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, row_text, row)")
    words = [t for t, n in con.execute("SELECT term, doc FROM temp.vocab ORDER BY doc, term")
             if t.isascii() and t.isalpha() and len(t) > 3 and 2 <= n <= 90]
    assert len(words) > 100
    picked = words[:: len(words) // 10][:10]
    rare = [w for w, in con.execute("SELECT term FROM temp.vocab WHERE doc = 1 AND length(term) > 5 ORDER BY term")
            if w.isascii() and w.isalpha()][:2]
    return [*picked, *rare, picked[3][:4] + "*", picked[6][:3] + "*", f'"{picked[2]}"', f"{picked[1]} {picked[5]}",
            '"the file"', '"read the"*', "nosuchwordanywhere"]


def comparable(body: dict[str, Any]) -> tuple[Any, ...]:
    """An answer's hits as a set (the order of equal ranks is the index's own) and its counts."""
    hits = sorted(json.dumps(r, sort_keys=True) for r in body["results"])
    return hits, body["total"], body["more"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, SearchIndexer, SessionRegistry]:
    tmp = tmp_path_factory.mktemp("pubsearch")
    root = corpus_folder(tmp)
    indexer, registry = server_index(root, tmp)
    return tmp, root, indexer, registry


def test_one_shard_answers_as_the_server_does(corpus: tuple[Path, Path, SearchIndexer, SessionRegistry]) -> None:
    tmp, root, indexer, registry = corpus
    out = tmp / "site-one"
    catalog = published(root, out, make_viewer(tmp / "v1"), 16 << 20)
    assert len(catalog["index"]["shards"]) == 1
    assert catalog["index"]["sessions"] == len(catalog["sessions"]) > 100
    assert catalog["index"]["rows"] == indexer.store.row_count()
    viewer, names = site_viewer(out, catalog)
    for query in queries(indexer):
        status, served = _answer(indexer, registry, query, 100)
        assert status == 200
        mine, body = site_answer(viewer, names, query)
        assert mine == 200
        assert body["results"] == served["results"] or comparable(body) == comparable(served), query
        assert (body["total"], body["more"]) == (served["total"], served["more"]), query
        assert body["indexing"] == {"done": len(catalog["sessions"]), "pending": 0}
    assert any(site_answer(viewer, names, q)[1]["results"] for q in queries(indexer))
    # a snippet's marks fall on the words searched for
    word = queries(indexer)[4]
    for hit in site_answer(viewer, names, word)[1]["results"]:
        assert [hit["snippet"][a:b].lower() for a, b in hit["marks"]] == [word] * len(hit["marks"])


def test_shards_answer_the_same_hits_and_a_republish_rewrites_one(
        corpus: tuple[Path, Path, SearchIndexer, SessionRegistry]) -> None:
    tmp, root, indexer, registry = corpus
    out = tmp / "site-many"
    static = make_viewer(tmp / "v2")
    catalog = published(root, out, static, 64 << 10)
    shards = catalog["index"]["shards"]
    assert len(shards) >= 3
    manifest = json.loads((out / MANIFEST).read_bytes())["index"]
    assert sorted(s for shard in manifest["shards"] for s in shard["sessions"]) == \
        sorted(e["id"] for e in catalog["sessions"])  # every listed session in exactly one shard
    assert all((out / s["file"]).stat().st_size == s["bytes"] for s in shards)
    assert all((out / f"{s['file']}.gz").is_file() for s in shards)  # precompressed beside it
    viewer, names = site_viewer(out, catalog)
    for query in queries(indexer):
        served = _answer(indexer, registry, query, 100)[1]
        body = site_answer(viewer, names, query)[1]
        assert (body["total"], body["more"]) == (served["total"], served["more"]), query
        if served["total"] <= 100:  # every hit in the answer: the same set, whatever the merged order
            assert comparable(body) == comparable(served), query

    filter_file = catalog["index"]["filter"]["file"]
    old_filter = decode_filter((out / filter_file).read_bytes())
    assert [f.file for f in old_filter.shards] == [s["file"] for s in shards]
    assert [f.sessions for f in old_filter.shards] == [len(s["sessions"]) for s in manifest["shards"]]

    # one session grows: only the shard holding it is written again, the others are kept as they are
    target = sorted(root.rglob("session.jsonl"))[5]
    sid = next(e["id"] for e in catalog["sessions"] if e["path"].endswith(target.relative_to(root).as_posix()))
    old = {s["file"]: (out / s["file"]).stat().st_mtime_ns for s in shards}
    holder = next(s["file"] for s in manifest["shards"] if sid in s["sessions"])
    with open(target, "ab") as stream:
        stream.write(b'{"type":"turn/start","data":{"turn":99}}\n{"type":"user/message","data":{"id":"u-more",'
                     b'"role":"user","source":{"kind":"user"},'
                     b'"content":[{"type":"text","text":"zyxwvutsrq once more"}]},"surfaceOp":"append"}\n'
                     b'{"type":"turn/end","data":{"turn":99,"reason":{"kind":"completed"}}}\n')
    report = asyncio.run(publish([str(root)], out, static_dir=static, index_shard_bytes=64 << 10))
    assert report.rewritten == 1 and report.index_written >= 1 and not report.errors, report.errors
    again = json.loads((out / CATALOG).read_bytes())
    new_files = {s["file"] for s in again["index"]["shards"]}
    assert holder not in new_files and not (out / holder).exists()  # rebuilt, the old one removed after the swap
    kept = set(old) - {holder}
    assert kept <= new_files and all((out / f).stat().st_mtime_ns == old[f] for f in kept)
    assert len(new_files - set(old)) == report.index_written
    # the filter file follows: a new name, the old one removed, an entry per shard, the kept shards' as they were
    new_filter_file = again["index"]["filter"]["file"]
    assert new_filter_file != filter_file and not (out / filter_file).exists()
    assert (out / new_filter_file).stat().st_size == again["index"]["filter"]["bytes"]
    new_filter = decode_filter((out / new_filter_file).read_bytes())
    assert [f.file for f in new_filter.shards] == [s["file"] for s in again["index"]["shards"]]
    assert all(f in old_filter.shards for f in new_filter.shards if f.file in kept)
    new_holder = next(s["file"] for s in json.loads((out / MANIFEST).read_bytes())["index"]["shards"]
                      if sid in s["sessions"])
    viewer_f = Viewer()
    assert json.loads(viewer_f.site_filter_open(new_filter_file, (out / new_filter_file).read_bytes()))["ok"]
    assert new_holder in json.loads(viewer_f.site_index_plan("zyxwvutsrq", sorted(new_files), new_filter_file))
    indexer.run_pass()
    viewer, names = site_viewer(out, again)
    for query in ["zyxwvutsrq", *queries(indexer)[:6]]:
        served = _answer(indexer, registry, query, 100)[1]
        body = site_answer(viewer, names, query)[1]
        assert body["total"] == served["total"], query
        if served["total"] <= 100:
            assert comparable(body) == comparable(served), query
    assert [r["session"] for r in site_answer(viewer, names, "zyxwvutsrq")[1]["results"]] == [sid]


def test_query_errors_are_answers(corpus: tuple[Path, Path, SearchIndexer, SessionRegistry]) -> None:
    tmp, root, indexer, registry = corpus
    out = tmp / "site-one"
    if not (out / CATALOG).is_file():
        published(root, out, make_viewer(tmp / "v3"), 16 << 20)
    viewer, names = site_viewer(out, json.loads((out / CATALOG).read_bytes()))
    for query in HOSTILE:
        status, body = site_answer(viewer, names, query)
        served_status, served = _answer(indexer, registry, query, 100)
        assert status == served_status and status in (200, 400), query
        if status == 400:
            assert body == served and body["error"] == "bad-query" and body["detail"], query
    status, body = site_answer(viewer, names, '"unclosed')
    assert status == 400 and "quote" in body["detail"]
    # a shard not handed over yet is said, not searched without
    assert json.loads(Viewer().site_search("word", 5, names))["status"] == 409


def test_a_site_without_index_and_a_bad_shard(tmp_path: Path) -> None:
    from tests.unit.test_server import write_log

    root = tmp_path / "logs"
    write_log(root / "a.jsonl", 30)
    out = tmp_path / "site"
    report = asyncio.run(publish([str(root)], out, static_dir=make_viewer(tmp_path), index_shard_bytes=None))
    assert report.index is None and "index" not in json.loads((out / CATALOG).read_bytes())
    assert not (out / INDEX_DIR).exists()
    opened = json.loads(Viewer().site_index_open("search/x.sqlite", b"not sqlite at all" * 100))
    assert not opened["ok"] and "search/x.sqlite" in opened["error"]
    other = sqlite3.connect(":memory:")
    other.execute("CREATE TABLE t(x)")  # an SQLite file, but no shard
    empty = other.serialize()
    assert not json.loads(Viewer().site_index_open("search/y.sqlite", empty))["ok"]


@pytest.fixture(scope="module")
def filtered(corpus: tuple[Path, Path, SearchIndexer, SessionRegistry]) -> tuple[Viewer, list[str], str, list[str],
                                                                                   list[str]]:
    """A site of many shards with every shard and its filter open; the words and row texts of the server's index."""
    tmp, root, indexer, _ = corpus
    out = tmp / "site-filtered"
    catalog = published(root, out, make_viewer(tmp / "v4"), 96 << 10)
    viewer, names = site_viewer(out, catalog)
    assert len(names) >= 5
    filter_file = catalog["index"]["filter"]["file"]
    opened = json.loads(viewer.site_filter_open(filter_file, memoryview((out / filter_file).read_bytes())))
    assert opened == {"ok": True, "shards": len(names)}
    con = indexer.store._con
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, row_text, row)")
    words = [t for t, in con.execute("SELECT term FROM temp.vocab ORDER BY doc, term")]
    texts = [t for t, in con.execute("SELECT text FROM row_text ORDER BY rowid LIMIT 400")]
    return viewer, names, filter_file, words, texts


@st.composite
def real_query(draw: st.DrawFn, words: list[str], texts: list[str]) -> str:
    """One to three terms: an indexed word (rare to common), cut to a prefix or not, its case changed; two words side
    by side in a row, as a phrase; a piece of a row's text; or arbitrary text."""
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["word", "prefix", "phrase", "piece", "text"]))
        if kind in ("word", "prefix"):
            word = draw(st.sampled_from(words))
            term = word[:draw(st.integers(1, len(word)))] + "*" if kind == "prefix" else word
        elif kind == "phrase":
            row = draw(st.sampled_from(texts)).split()
            at = draw(st.integers(0, max(0, len(row) - 2)))
            term = '"' + " ".join(row[at:at + 2]).replace('"', "") + '"' + draw(st.sampled_from(["", "*"]))
        elif kind == "piece":
            row = draw(st.sampled_from(texts))
            at = draw(st.integers(0, max(0, len(row) - 1)))
            term = "".join(row[at:at + draw(st.integers(1, 12))].split()).replace('"', "") or "x"
        else:
            term = "".join(draw(st.text(min_size=1, max_size=8)).split()).replace('"', "") or "y"
        terms.append(draw(st.sampled_from([term, term.upper(), term.capitalize()])))
    return " ".join(terms)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_filtered_answers_are_the_answers_of_every_shard(
        filtered: tuple[Viewer, list[str], str, list[str], list[str]], data: st.DataObject) -> None:
    viewer, names, filter_file, words, texts = filtered
    query = data.draw(real_query(words, texts))
    limit = data.draw(st.sampled_from([5, 20, 100]))
    every = json.loads(viewer.site_search(query, limit, names))
    only = json.loads(viewer.site_search(query, limit, names, filter_file))
    assert only == every, query
    assert json.loads(viewer.site_index_plan(query, names, filter_file)) == []  # every shard is open already
    needed = viewer.site.needed(query, names, filter_file)
    event("answered with hits" if only["body"].get("results") else "answered with none" if only["status"] == 200
          else "refused")
    event("some shards skipped" if len(needed) < len(names) else "every shard needed")


def test_a_search_needs_only_the_shards_that_may_answer(
        corpus: tuple[Path, Path, SearchIndexer, SessionRegistry],
        filtered: tuple[Viewer, list[str], str, list[str], list[str]]) -> None:
    _, _, indexer, _ = corpus
    viewer, names, filter_file, _, _ = filtered
    tmp = Path(indexer.store.path).parents[1]
    fresh = Viewer()  # nothing open yet: the plan names what to fetch
    data = (tmp / "site-filtered" / filter_file).read_bytes()
    assert json.loads(fresh.site_filter_open(filter_file, data))["ok"]
    needs, wasted = [], 0
    for query in queries(indexer):
        plan = json.loads(fresh.site_index_plan(query, names, filter_file))
        answering = [n for n in names if json.loads(viewer.site_search(query, 1000, [n]))["body"]["total"]]
        assert set(answering) <= set(plan) and plan == [n for n in names if n in plan], query
        needs.append(len(plan))
        if " " not in query:  # one word: a shard fetched for nothing is a false positive (about 1.2% by design);
            wasted += len(plan) - len(answering)  # a phrase's words may sit apart in a shard: it is fetched, rightly
    assert min(needs) <= 1 and sum(needs) < len(names) * len(needs) / 3, needs
    assert wasted <= max(3, 0.05 * len(names) * len(needs)), (wasted, needs)
    assert json.loads(fresh.site_index_plan('"unclosed', names, filter_file)) == []  # a refused query reads none
    assert json.loads(fresh.site_index_plan("word", names, None)) == names  # without the filter: every shard
    # the answer counts every shard's sessions, fetched or not
    rare = queries(indexer)[10]
    for name in json.loads(fresh.site_index_plan(rare, names, filter_file)):
        assert json.loads(fresh.site_index_open(name, (tmp / "site-filtered" / name).read_bytes()))["ok"]
    body = json.loads(fresh.site_search(rare, 20, names, filter_file))["body"]
    assert body == json.loads(viewer.site_search(rare, 20, names))["body"]
    assert body["indexing"]["done"] > 100
    bad = json.loads(Viewer().site_filter_open("search/f.bin", b"garbage"))
    assert not bad["ok"] and "search/f.bin" in bad["error"]


def test_a_site_published_before_filters_gets_one_on_republish(tmp_path: Path) -> None:
    """A manifest naming no filter (a site published before them): the kept shards' filters are made from their
    files, the same bytes a first publish writes; a filter file that cannot be read is made again the same way."""
    from tests.unit.test_server import write_log

    root = tmp_path / "logs"
    for i in range(4):
        write_log(root / f"s{i}.jsonl", 200, seed=i)
    out = tmp_path / "site"
    static = make_viewer(tmp_path)
    catalog = published(root, out, static, 8 << 10)
    assert len(catalog["index"]["shards"]) >= 2
    first = catalog["index"]["filter"]
    for damage in ("forget", "garble"):
        manifest = json.loads((out / MANIFEST).read_bytes())
        if damage == "forget":
            del manifest["index"]["filter"]
            (out / MANIFEST).write_text(json.dumps(manifest))
            (out / first["file"]).unlink()
        else:
            (out / first["file"]).write_bytes(b"garbled")
        report = asyncio.run(publish([str(root)], out, static_dir=static, index_shard_bytes=8 << 10))
        assert report.index_written == 0 and not report.errors
        again = json.loads((out / CATALOG).read_bytes())["index"]
        assert again["shards"] == catalog["index"]["shards"] and again["filter"] == first, damage
        assert decode_filter((out / first["file"]).read_bytes()).shards  # written again, whole
