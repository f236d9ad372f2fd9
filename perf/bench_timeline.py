"""The whole run's trajectory overview of a big session: ``GET /api/sessions/ID/timeline`` on a
``--turns``-turn session of ``perf.turns`` (our own generator), served by the product's app (Starlette's test client,
no network): the first answer's time (the session read and every record folded: ``timeline.run_timeline``), the
median of ``--repeat`` answers kept by file version, the JSON's size (plain, gzipped, and as sent: the client accepts
gzip) and its span count.

    .venv/bin/python -m perf.bench_timeline [--turns 5000] [--repeat 5] [--json OUT]

Nothing is asserted (STYLE 15).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from perf.turns import many_turns_bytes


def run(turns: int, repeat: int) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from assembler.server import create_app

    with tempfile.TemporaryDirectory(prefix="bench-timeline-") as tmp:
        root = Path(tmp) / "sessions"
        root.mkdir()
        data = many_turns_bytes(turns)
        (root / "big.jsonl").write_bytes(data)
        client = TestClient(create_app([root], serve_static=False), base_url="http://127.0.0.1")
        t0 = time.perf_counter()
        first_page = client.get("/api/sessions/big/page")
        page_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        answer = client.get("/api/sessions/big/timeline")
        first_s = time.perf_counter() - t0
        answer.raise_for_status()
        kept = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            again = client.get("/api/sessions/big/timeline")
            kept.append(time.perf_counter() - t0)
            assert again.content == answer.content
        value = answer.json()
        return {"turns": turns, "fileBytes": len(data), "firstPageS": round(page_s, 3),
                "firstPageBytes": len(first_page.content), "timelineFirstS": round(first_s, 3),
                "timelineKeptMedianS": round(statistics.median(kept), 4), "timelineBytes": len(answer.content),
                "timelineGzipBytes": len(gzip.compress(answer.content)),
                "timelineWireBytes": answer.num_bytes_downloaded, "spans": value["total"],
                "timed": value["timed"], "turnMarks": len(value["turns"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    result = run(args.turns, args.repeat)
    text = json.dumps(result, indent=1)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
