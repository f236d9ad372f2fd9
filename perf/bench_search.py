"""Search across sessions: the index build time and size for a folder of N generated
sessions, the time to re-index after one of them grows, and the search answer time (median).

    python -m perf.bench_search [--sessions N] [--turns T] [--json OUT]

Writes N sessions of our format (T turns each: a prompt, an answer, a tool call with its arguments and result;
words drawn from a fixed pseudo-vocabulary by a seeded generator) into a temporary folder, indexes them from nothing
with the server's indexer (``server.indexer.SearchIndexer.run_pass``, one thread, the fold included), appends two
turns to one session and re-indexes, then answers a set of queries (rare, middling and common words, prefixes,
phrases) through the route's own function (``search_api._answer``: query rules, FTS5, snippets, id mapping), each
10 times, and reports the median and the worst. Figures, never a timed assertion; the goal (an answer
<= 100 ms at 10,000 sessions) is reported as met or not.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assembler.chunk_rows import pack_chunk_runs
from assembler.demo import DemoBuilder
from assembler.records import encode

__all__ = ["main", "run", "write_sessions"]

_SYLLABLES = ["ka", "lo", "mi", "ner", "pu", "sta", "vo", "ri", "den", "shu", "tal", "bex", "qui", "zor", "fen", "ga"]


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _text(rng: random.Random, vocab: list[str], n: int) -> str:
    # Zipf-like: a few words are common, most are rare, as in prose.
    return " ".join(vocab[min(len(vocab) - 1, int(rng.paretovariate(1.1))) - 1] for _ in range(n))


def _session(rng: random.Random, vocab: list[str], sid: str, turns: int, first_turn: int = 1,
             b: DemoBuilder | None = None) -> tuple[DemoBuilder, bytes]:
    b = b or DemoBuilder()
    for turn in range(first_turn, first_turn + turns):
        b.add("turn/start", {"turn": turn})
        b.add("user/message", {"id": f"{sid}-u{turn}", "role": "user", "source": {"kind": "user"},
                               "content": [{"type": "text", "text": _text(rng, vocab, 25)}]}, surfaceOp="append")
        b.add("step/start", {"turn": turn, "step": 1})
        seqs: list[int] = []
        content = [b.stream_block(turn, 1, 0, "text", _text(rng, vocab, 80), seqs),
                   b.stream_block(turn, 1, 1, "tool-call", json.dumps({"command": _text(rng, vocab, 6)}), seqs,
                                  call=(f"{sid}-c{turn}", "bash"))]
        b.add("assistant/message", {"turn": turn, "step": 1, "message": {
            "role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"},
            "id": f"{sid}-a{turn}"}}, sourceEventSeqs=seqs, surfaceOp="append")
        b.add("tool/call", {"turn": turn, "step": 1, "callId": f"{sid}-c{turn}", "name": "bash",
                            "arguments": json.dumps({"command": "x"})})
        b.add("tool/result", {"turn": turn, "step": 1, "message": {
            "role": "tool", "source": {"kind": "tool", "callId": f"{sid}-c{turn}"},
            "content": [{"type": "tool-result", "toolCallId": f"{sid}-c{turn}", "isError": False,
                         "content": [{"type": "text", "text": _text(rng, vocab, 40)}]}]}}, surfaceOp="append")
        b.add("step/end", {"turn": turn, "step": 1})
        b.add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    header = {"type": "session", "version": 0, "id": sid, "createdAt": 1_767_225_600_000}
    lines = [encode(header)] + [encode(r) for r in pack_chunk_runs(b.events)]
    return b, b"\n".join(lines) + b"\n"


def write_sessions(folder: Path, n: int, turns: int, seed: int = 21) -> tuple[list[str], dict[str, DemoBuilder]]:
    """``n`` sessions under ``folder`` (100 per subfolder); returns the vocabulary and each file's builder."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    builders = {}
    for i in range(n):
        path = folder / f"batch-{i // 100:03d}" / f"s{i:05d}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        b, data = _session(rng, vocab, f"s{i:05d}", turns)
        path.write_bytes(data)
        builders[str(path)] = b
    return vocab, builders


def _index_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def run(sessions: int, turns: int) -> dict[str, Any]:
    from assembler.server.indexer import SearchIndexer
    from assembler.server.registry import SessionRegistry
    from assembler.server.search_api import _answer

    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        root = Path(tmp) / "sessions"
        t0 = time.perf_counter()
        vocab, builders = write_sessions(root, sessions, turns)
        write_s = time.perf_counter() - t0
        source_bytes = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
        registry = SessionRegistry([root])
        indexer = SearchIndexer(registry, Path(tmp) / "index" / "sessions.fts5.sqlite3")
        t0 = time.perf_counter()
        indexer.run_pass()
        build_s = time.perf_counter() - t0
        rows = indexer.store.row_count()
        indexer.store._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = _index_bytes(indexer.path)

        grown = sorted(builders)[len(builders) // 2]
        rng = random.Random(7)
        _, data = _session(rng, vocab, Path(grown).stem, 2, first_turn=turns + 1, b=builders[grown])
        Path(grown).write_bytes(data)
        t0 = time.perf_counter()
        indexer.run_pass()
        regrow_s = time.perf_counter() - t0

        queries = [vocab[0], vocab[5], vocab[60], vocab[600], vocab[3000], vocab[1][:3] + "*", vocab[40][:4] + "*",
                   f'"{vocab[0]} {vocab[1]}"', f"{vocab[2]} {vocab[90]}", "nosuchwordanywhere"]
        times: dict[str, list[float]] = {q: [] for q in queries}
        totals: dict[str, int] = {}
        for _ in range(10):
            for q in queries:
                t0 = time.perf_counter()
                status, value = _answer(indexer, registry, q, 20)
                times[q].append((time.perf_counter() - t0) * 1000)
                assert status == 200, value
                totals[q] = value["total"]
        indexer.store.close()
    per_query = {q: {"median_ms": round(statistics.median(v), 2), "max_ms": round(max(v), 2), "rows": totals[q]}
                 for q, v in times.items()}
    medians = [statistics.median(v) for v in times.values()]
    median_ms = statistics.median([x for v in times.values() for x in v])
    return {
        "sessions": sessions, "turns": turns, "rows": rows, "source_bytes": source_bytes,
        "write_s": round(write_s, 2), "build_s": round(build_s, 2),
        "build_sessions_per_s": round(sessions / build_s, 1), "index_bytes": size,
        "index_to_source": round(size / source_bytes, 3), "regrow_one_s": round(regrow_s, 3),
        "search_median_ms": round(median_ms, 2), "search_worst_median_ms": round(max(medians), 2),
        "queries": per_query,
        "goal_search_100ms": {"met": max(medians) <= 100, "note": "the goal: <= 100 ms at 10,000 sessions"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.bench_search", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    result = run(args.sessions, args.turns)
    text = json.dumps(result, indent=2)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
