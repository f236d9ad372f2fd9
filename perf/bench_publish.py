"""``publish`` at scale: the time to publish N generated sessions, the site's bytes (plain, and
its gzip and brotli variants), the search index's bytes and shards, and the time to republish after one session
changes (and after none), and what a search on the published page fetches of the index.

    python -m perf.bench_publish [--sessions N] [--turns T] [--shard-mb MB] [--json OUT]

Sessions come from ``perf.bench_search.write_sessions`` (our format, T turns each: a prompt, a streamed answer, a
tool call and its result; seeded words). The site is published with the command's own function
(``server.publish.publish``: pages, catalog, secret scan, search index shards, precompressed variants) and the
viewer ``serve`` would serve (a checkout's ``build/site``; ``--static DIR`` names another). Then the same folder is
published again unchanged, then after one session grew by two turns. Each publish is timed once (wall clock, one
process): figures, never a timed assertion.

``search_fetch``: for typical queries (a word in one shard only, a common word, a middling one, prefixes, a phrase,
two words, an absent word) the bytes a page that has fetched nothing yet downloads to answer it, as the worker does
it (``Viewer.site_filter_open``, ``site_index_plan``: the filter file, then the shards the query needs), against
what it downloaded before shards had a filter (every shard); ``plain`` bytes and ``served`` bytes (each file's
smallest variant: what a host with ``gzip_static``/``brotli_static`` sends), the filter file's size and the time to
make every shard's filter from its file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from perf.bench_search import _session, write_sessions

__all__ = ["main", "run"]


def _bytes(site: Path) -> dict[str, int]:
    """Bytes of the site's files by kind: plain files, their ``.gz`` and ``.br`` variants; the plain ones split into
    the viewer, the sessions' pages, the search index and the catalog and manifest."""
    out = {"plain": 0, "gz": 0, "br": 0, "files": 0, "viewer": 0, "pages": 0, "index": 0, "lists": 0}
    for path in site.rglob("*"):
        if not path.is_file():
            continue
        size = path.stat().st_size
        rel = path.relative_to(site).as_posix()
        if rel.endswith(".gz"):
            out["gz"] += size
            continue
        if rel.endswith(".br"):
            out["br"] += size
            continue
        out["plain"] += size
        out["files"] += 1
        kind = ("pages" if rel.startswith("sessions/") else "index" if rel.startswith("search/")
                else "lists" if rel in ("catalog.json", "site.json") else "viewer")
        out[kind] += size
    return out


def _served_bytes(site: Path) -> int:
    """What a host with gzip_static/brotli_static serves for every file: its smallest variant."""
    total = 0
    for path in site.rglob("*"):
        if path.is_file() and not path.name.endswith((".gz", ".br")):
            sizes = [path.stat().st_size] + [v.stat().st_size for v in (path.with_name(path.name + ".gz"),
                                                                       path.with_name(path.name + ".br"))
                                             if v.is_file()]
            total += min(sizes)
    return total


def _served(path: Path) -> int:
    """A file's smallest variant (plain, ``.gz``, ``.br``)."""
    return min(v.stat().st_size for v in (path, path.with_name(path.name + ".gz"), path.with_name(path.name + ".br"))
               if v.is_file())


def _queries(site: Path, shards: list[str], vocab: list[str]) -> list[str]:
    """Typical queries: a word found in one shard only (from the shards' own vocabularies), the commonest word, a
    middling one, a common and a rare prefix, a phrase, two words, an absent word."""
    import sqlite3

    found: dict[str, int] = {}
    for name in shards:
        con = sqlite3.connect(f"file:{site / name}?mode=ro", uri=True)
        con.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, row_text, row)")
        for term, in con.execute("SELECT term FROM temp.v"):
            found[term] = found.get(term, 0) + 1
        con.close()
    rare = min((t for t, n in found.items() if n == 1 and t.isalpha() and len(t) > 6), default=vocab[-1])
    return [rare, vocab[0], vocab[60], vocab[40][:4] + "*", rare[:6] + "*", f'"{vocab[0]} {vocab[1]}"',
            f"{vocab[2]} {vocab[90]}", "nosuchwordanywhere"]


def search_fetch(site: Path, index: dict[str, Any], vocab: list[str]) -> dict[str, Any]:
    """What a search fetches of the published index (see the module docstring), per query, on a fresh page."""
    from assembler.browser.viewer import Viewer
    from assembler.server.site_index import _shard_filter

    shards = [s["file"] for s in index["shards"]]
    t0 = time.perf_counter()
    for name in shards:  # what publish spent on the filters (made again here: it is not timed apart there)
        _shard_filter(name, site / name)
    filter_build_s = time.perf_counter() - t0
    every = {"plain": sum((site / f).stat().st_size for f in shards), "served": sum(_served(site / f) for f in shards)}
    filter_file = index["filter"]["file"]
    filt = {"plain": (site / filter_file).stat().st_size, "served": _served(site / filter_file)}
    per_query = {}
    for query in _queries(site, shards, vocab):
        viewer = Viewer()
        viewer.site_filter_open(filter_file, (site / filter_file).read_bytes())
        needed = json.loads(viewer.site_index_plan(query, shards, filter_file))
        for name in needed:
            viewer.site_index_open(name, (site / name).read_bytes())
        body = json.loads(viewer.site_search(query, 20, shards, filter_file))["body"]
        per_query[query] = {
            "shards": len(needed), "rows": body["total"],
            "plain_bytes": filt["plain"] + sum((site / f).stat().st_size for f in needed),
            "served_bytes": filt["served"] + sum(_served(site / f) for f in needed)}
    return {"shards": len(shards), "filter_build_s": round(filter_build_s, 2), "filter_bytes": filt["plain"],
            "filter_served_bytes": filt["served"],
            "before_plain_bytes": every["plain"], "before_served_bytes": every["served"], "queries": per_query}


def run(sessions: int, turns: int, shard_mb: float, static: Path) -> dict[str, Any]:
    from assembler.server.publish import publish

    shard_bytes = int(shard_mb * (1 << 20))
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp:
        root = Path(tmp) / "sessions"
        vocab, builders = write_sessions(root, sessions, turns)
        source_bytes = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
        site = Path(tmp) / "site"

        def once() -> tuple[float, Any]:
            t0 = time.perf_counter()
            report = asyncio.run(publish([str(root)], site, static_dir=static, index_shard_bytes=shard_bytes))
            return time.perf_counter() - t0, report

        first_s, first = once()
        sizes = _bytes(site)
        served = _served_bytes(site)
        fetch = search_fetch(site, first.index, vocab) if first.index else None
        same_s, same = once()

        grown = sorted(builders)[len(builders) // 2]
        _, data = _session(random.Random(7), vocab, Path(grown).stem, 2, first_turn=turns + 1, b=builders[grown])
        Path(grown).write_bytes(data)
        one_s, one = once()
        index = first.index or {"shards": []}
    return {
        "sessions": sessions, "turns": turns, "source_bytes": source_bytes, "shard_mb": shard_mb,
        "publish_s": round(first_s, 2), "sessions_per_s": round(sessions / first_s, 1),
        "site_bytes": sizes["plain"], "site_files": sizes["files"], "gzip_bytes": sizes["gz"],
        "brotli_bytes": sizes["br"], "served_smallest_bytes": served,
        "viewer_bytes": sizes["viewer"], "pages_bytes": sizes["pages"], "lists_bytes": sizes["lists"],
        "index_bytes": sizes["index"], "index_shards": len(index["shards"]),
        "index_rows": sum(s["rows"] for s in index["shards"]),
        "republish_unchanged_s": round(same_s, 2), "unchanged_written": same.rewritten,
        "republish_one_changed_s": round(one_s, 2), "one_changed_written": one.rewritten,
        "one_changed_shards_written": one.index_written,
        "errors": len(first.errors) + len(one.errors),
        "search_fetch": fetch,
    }


def main(argv: list[str] | None = None) -> int:
    from assembler.server.site import find_site
    from assembler.server.site_index import DEFAULT_SHARD_BYTES

    parser = argparse.ArgumentParser(prog="python -m perf.bench_publish", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--shard-mb", type=float, default=DEFAULT_SHARD_BYTES / (1 << 20))
    parser.add_argument("--static", default=None, metavar="DIR", help="the viewer build (default: serve's)")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    static = Path(args.static) if args.static else find_site()
    if static is None:
        parser.error("no built viewer (run `make build`, or pass --static DIR)")
    result = run(args.sessions, args.turns, args.shard_mb, static)
    text = json.dumps(result, indent=2)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
