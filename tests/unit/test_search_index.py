"""The cross-session search index (issue 21 item 4): the index finds exactly the rows a brute-force scan of the same
chat row texts finds, on the real fixtures; an append indexes the new text without indexing anything twice; a
removed file's rows go; a failed write leaves the old index whole; hostile queries are 400 or results, never 500."""

from __future__ import annotations

import re
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # starlette 1.10 nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.browser.search import row_texts
from assembler.commands.exporting import fold_page
from assembler.history import MessageIndex
from assembler.server import create_app
from assembler.server import search_index as search_index_module
from assembler.server.indexer import SearchIndexer
from assembler.server.registry import SessionRegistry
from assembler.server.search_index import SearchStore, SearchUnavailable, check_fts5, search
from assembler.server.search_query import QueryError, fts_query, parse_query
from assembler.server.search_text import IndexedSession, file_sessions
from assembler.store.open import load_any, load_sessions, sniff
from assembler.views import hidden_by_default
from tests.corpus import require_corpus, session_logs
from tests.interop_support import interop_file

LOCAL = "http://127.0.0.1"
_TOKEN = re.compile(r"[^\W_]+")  # what FTS5's unicode61 tokenizer keeps as a token (letters and digits)

INTEROP = [
    "claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data/real_projects/"
    "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
    "codex/madshn+localpush@219b539/src-tauri/tests/fixtures/codex/2026-02-23/raw/sessions/"
    "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_formats.eval",
    "gemini-cli/codemie-ai+codemie-code@8e8d4ce/tests/integration/metrics/fixtures/gemini/"
    "session-2025-12-01T21-45-5b959dae.json",
]


def _brute_texts(path: Path) -> dict[tuple[str, str, str], str]:
    """``(path, session key, node key) -> lowered text`` of every shown chat row, folded here from the file (the
    page's extraction, ``row_texts``), independently of ``search_text``."""
    out: dict[tuple[str, str, str], str] = {}
    fmt = sniff(path)
    logs = [(s.key, s.result) for s in load_sessions(path)[1]] if fmt is not None and fmt.sessions == "many" \
        else [("", load_any(path, pack_deltas=True))]
    for key, result in logs:
        if result.header is None:
            continue
        page = MessageIndex(result.records).session_page(None, None, None)
        nodes, _ = fold_page(page.records, False)
        for node in nodes:
            if not hidden_by_default(node):
                out[(str(path), key, node.key)] = "\n".join(row_texts(node)).lower()
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[SearchStore, dict[tuple[str, str, str], list[str]]]:
    require_corpus()
    files = [p for p in session_logs() if p.name == "session.jsonl"] + [interop_file(r) for r in INTEROP]
    store = SearchStore(tmp_path_factory.mktemp("index") / "index.sqlite3")
    tokens: dict[tuple[str, str, str], list[str]] = {}
    for path in files:
        st = path.stat()
        store.replace_file(str(path), st.st_size, st.st_mtime_ns, file_sessions(path))
        for where, text in _brute_texts(path).items():
            found = _TOKEN.findall(text)
            if found:
                tokens[where] = found
    return store, tokens


def _hits(store: SearchStore, query: str) -> set[tuple[str, str, str]]:
    con = store.reader()
    try:
        hits, total = search(con, fts_query(query), 100_000)
    finally:
        con.close()
    assert total == len(hits)
    return {(h.path, h.session_key, h.key) for h in hits}


def _words(tokens: dict[tuple[str, str, str], list[str]]) -> list[str]:
    """Words of several frequencies (every 2nd to 200th row), ASCII letters, picked deterministically."""
    rows_of: dict[str, int] = {}
    for found in tokens.values():
        for w in set(found):
            rows_of[w] = rows_of.get(w, 0) + 1
    picked = sorted(w for w, n in rows_of.items() if 2 <= n <= 200 and w.isascii() and w.isalpha() and len(w) > 3)
    assert len(picked) > 40
    return picked[:: len(picked) // 12][:12]


def test_words_match_a_brute_force_scan(corpus: tuple[SearchStore, dict[tuple[str, str, str], list[str]]]) -> None:
    store, tokens = corpus
    assert len({w[0] for w in tokens}) > 60  # the fixtures of several formats were indexed
    for word in _words(tokens):
        want = {where for where, found in tokens.items() if word in found}
        assert want and _hits(store, word) == want, word
        assert _hits(store, word.upper()) == want  # case-insensitive


def test_prefixes_and_phrases_match_a_brute_force_scan(
        corpus: tuple[SearchStore, dict[tuple[str, str, str], list[str]]]) -> None:
    store, tokens = corpus
    for word in _words(tokens):
        stem = word[:4]
        want = {where for where, found in tokens.items() if any(t.startswith(stem) for t in found)}
        assert _hits(store, stem + "*") == want, stem
        # a phrase: this word and the token after it somewhere
        where, found = next((w, f) for w, f in sorted(tokens.items()) if word in f[:-1])
        pair = (word, found[found.index(word) + 1])
        want = {w for w, f in tokens.items() if any(f[i] == pair[0] and f[i + 1] == pair[1] for i in range(len(f) - 1))}
        assert where in want and _hits(store, f'"{pair[0]} {pair[1]}"') == want, pair


def test_snippets_mark_the_match(corpus: tuple[SearchStore, dict[tuple[str, str, str], list[str]]]) -> None:
    store, tokens = corpus
    word = _words(tokens)[0]
    con = store.reader()
    hits, _ = search(con, fts_query(word), 20)
    con.close()
    assert hits
    for hit in hits:
        assert hit.marks and "\ue000" not in hit.snippet and "\ue001" not in hit.snippet
        for start, end in hit.marks:  # UTF-16 offsets: the same as Python's on these ASCII-only marks' texts
            units = hit.snippet.encode("utf-16-le", "surrogatepass")
            assert units[2 * start:2 * end].decode("utf-16-le").lower() == word


def test_query_rules() -> None:
    assert fts_query('say "exact words" index*') == '"say" "exact words" "index"*'
    assert fts_query('NEAR(a b) OR text:x') == '"NEAR(a" "b)" "OR" "text:x"'  # operators are words
    assert fts_query('"quo""te"*') == '"quo" "te"*'
    assert [(t.text, t.prefix, t.phrase) for t in parse_query('a* "b c"*')] == [("a", True, False), ("b c", True, True)]
    for bad in ['"open', "*", "***", "", "   ", "!!!", "x" * 501, " ".join("w" * 17), '"a"b']:
        with pytest.raises(QueryError):
            fts_query(bad)


def _tree(tmp_path: Path) -> tuple[Path, list[Path]]:
    require_corpus()
    root = tmp_path / "root"
    picked = [p for p in session_logs() if p.name == "session.jsonl" and p.stat().st_size > 20_000][:3]
    assert len(picked) == 3
    out = []
    for i, src in enumerate(picked):
        dst = root / f"s{i}" / "session.jsonl"
        dst.parent.mkdir(parents=True)
        shutil.copyfile(src, dst)
        out.append(dst)
    return root, out


def _fts_rows(store: SearchStore) -> int:
    con = store.reader()
    try:
        return int(con.execute("SELECT count(*) FROM row_text").fetchone()[0])
    finally:
        con.close()


def test_an_append_indexes_the_new_rows_only(tmp_path: Path) -> None:
    root, files = _tree(tmp_path)
    target = files[0]
    whole = target.read_bytes()
    lines = whole.splitlines(keepends=True)
    head = b"".join(lines[: len(lines) // 2])
    target.write_bytes(head)
    indexer = SearchIndexer(SessionRegistry([root]), tmp_path / "idx" / "i.sqlite3")
    indexer.run_pass()
    assert indexer.progress() == {"done": 3, "pending": 0}
    before = indexer.store.row_count()
    half_rows = {r.key: r for r in file_sessions(target)[0].rows}
    (tmp_path / "full.jsonl").write_bytes(whole)
    full_rows = {r.key: r for r in file_sessions(tmp_path / "full.jsonl")[0].rows}
    new_words = set(_TOKEN.findall(" ".join(r.text for k, r in full_rows.items() if k not in half_rows).lower()))
    old_words = set(_TOKEN.findall(" ".join(r.text for r in half_rows.values()).lower()))
    fresh = sorted(w for w in new_words - old_words if w.isascii() and w.isalpha() and len(w) > 3)
    assert fresh, "the second half adds words of its own"
    assert not _hits(indexer.store, fresh[0]) & {(str(target.resolve()), "", k) for k in full_rows}

    with open(target, "ab") as stream:
        stream.write(whole[len(head):])
    st = target.stat()
    written = indexer.index_file(target.resolve(), root.resolve(), st.st_size, st.st_mtime_ns)
    changed = sum(1 for k, r in full_rows.items() if k not in half_rows or half_rows[k] != r)
    assert written.written == changed and written.kept == len(full_rows) - changed  # old rows left alone
    assert written.kept > 0
    assert written.deleted == sum(1 for k in half_rows if k not in full_rows)
    assert indexer.store.row_count() == before - written.deleted + sum(1 for k in full_rows if k not in half_rows)
    assert _fts_rows(indexer.store) == indexer.store.row_count()  # nothing indexed twice
    assert (str(target.resolve()), "", next(k for k, r in full_rows.items() if fresh[0] in r.text.lower())) \
        in _hits(indexer.store, fresh[0])
    indexer.run_pass()  # the pass sees size and mtime as indexed: nothing to do
    assert indexer.progress() == {"done": 3, "pending": 0}


def test_a_removed_file_loses_its_hits(tmp_path: Path) -> None:
    root, files = _tree(tmp_path)
    indexer = SearchIndexer(SessionRegistry([root]), tmp_path / "idx" / "i.sqlite3")
    indexer.run_pass()
    gone = str(files[1].resolve())
    rows = {r.key for r in file_sessions(files[1])[0].rows}
    word = next(w for r in file_sessions(files[1])[0].rows for w in _TOKEN.findall(r.text.lower()) if len(w) > 3)
    assert any(h[0] == gone for h in _hits(indexer.store, word))
    total = indexer.store.row_count()
    files[1].unlink()
    indexer.run_pass()
    assert not any(h[0] == gone for h in _hits(indexer.store, word))
    assert indexer.store.row_count() == total - len(rows) and _fts_rows(indexer.store) == total - len(rows)
    assert indexer.progress() == {"done": 2, "pending": 0}


def test_a_failed_write_keeps_the_old_index(tmp_path: Path) -> None:
    root, files = _tree(tmp_path)
    store = SearchStore(tmp_path / "i.sqlite3")
    sessions = file_sessions(files[0])
    store.replace_file("f", 1, 1, sessions)
    count = store.row_count()

    def broken() -> object:
        yield IndexedSession("", "t", [], None)
        raise RuntimeError("the reader died")

    with pytest.raises(RuntimeError):
        store.replace_file("f", 2, 2, broken())  # type: ignore[arg-type]
    assert store.row_count() == count and store.file_states() == {"f": (1, 1, "")}
    store.close()
    reopened = SearchStore(tmp_path / "i.sqlite3")  # the file reopens whole
    assert reopened.row_count() == count


def test_no_fts5_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class NoFts:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("no such module: fts5")

        def close(self) -> None:
            pass

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: NoFts())
    with pytest.raises(SearchUnavailable, match="FTS5.*--no-index"):
        check_fts5()
    with pytest.raises(SearchUnavailable):
        create_app([tmp_path], serve_static=False, index_dir=tmp_path / "idx")


HOSTILE = ['"', '""', '"*"', "*", "**", "a**", "*a", "a*b", "NEAR(a b, 5)", "a NEAR b", "NEAR", "text:foo",
           "rowid:1", "{text}: x", "a OR b", "OR", "NOT x", "AND", "-x", "^x", "+x", "(", ")", "((a)", "'", "\\",
           "\x00", "x\x00y", "%", "%25", "'; DROP TABLE rows; --", '"a" "b"*', '" OR 1=1 --', "café*", "日本語",
           "🙂", "a" * 5000, "a " * 300, '"' * 999, "e" * 501, "\u202e", "\ufffd", "\ue000x\ue001", "bash",
           '"bash tool"']


def test_hostile_queries_are_400_or_results(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    app = create_app([root], serve_static=False, index_dir=tmp_path / "idx", index_interval=60)
    with TestClient(app, base_url=LOCAL) as client:
        assert app.state.indexer.wait_pass(0)
        for q in HOSTILE:
            r = client.get("/api/search", params={"q": q})
            assert r.status_code in (200, 400), (q, r.status_code, r.text)
            body = r.json()
            if r.status_code == 400:
                assert body["error"] == "bad-query" and body["detail"]
            else:
                assert set(body) == {"query", "results", "total", "more", "indexing"}
                assert body["indexing"] == {"done": 3, "pending": 0}
        for limit in ["0", "-1", "abc", "9" * 5000, "101", "", "1.5", "١"]:
            r = client.get("/api/search", params={"q": "bash", "limit": limit})
            assert r.status_code == 400, limit
        r = client.get("/api/search", params={"q": "bash", "limit": "2"})
        found = r.json()["results"]
        assert r.status_code == 200 and 0 < len(found) <= 2
        listed = {s["id"] for s in client.get("/api/sessions").json()["sessions"]}
        for hit in found:
            assert hit["session"] in listed and isinstance(hit["seq"], int) and hit["marks"]
            page = client.get(f"/api/sessions/{hit['session']}/page", params={"maxMessages": "1000000"})
            assert page.status_code == 200


def test_no_index_is_404(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    client = TestClient(create_app([root], serve_static=False), base_url=LOCAL)
    r = client.get("/api/search", params={"q": "bash"})
    assert r.status_code == 404 and "--no-index" in r.json()["detail"]


def test_many_matches_come_newest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assembler.server.search_text import IndexedRow

    store = SearchStore(tmp_path / "i.sqlite3")
    rows = [IndexedRow(f"k{i}", i, "alpha " * (1 + i % 3) + f"row{i}") for i in range(6)]
    store.replace_file("f", 1, 1, [IndexedSession("", "t", rows, None)])
    con = store.reader()
    ranked = [h.key for h in search(con, '"alpha"', 6)[0]]
    assert sorted(ranked) == sorted(r.key for r in rows) and ranked != [f"k{i}" for i in range(5, -1, -1)]
    monkeypatch.setattr(search_index_module, "RANKED_MAX", 3)
    assert [h.key for h in search(con, '"alpha"', 6)[0]] == [f"k{i}" for i in range(5, -1, -1)]
    assert [h.key for h in search(con, '"row2"', 6)[0]] == ["k2"]
    con.close()
