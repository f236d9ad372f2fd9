"""The session list of a big folder (the goal: a first answer within 1 s of start-up at 10,000 sessions): ``serve``
started on a folder of ``--sessions`` generated sessions (``perf.bench_search.write_sessions``, our own generator),
the time from the server's start to its first ``GET /api/sessions`` answer (what it lists then, and how many files
are still pending) and to the first complete answer (``pending`` 0), and the median time of a listing once every file
is read. Whole server in a thread (uvicorn, lifespan on: the warm-up and the search index run as in ``serve``;
``--no-index`` leaves the index out).

    .venv/bin/python -m perf.bench_list [--sessions 10000] [--turns 2] [--no-index] [--json OUT]

Nothing is asserted (STYLE 15): the goal (first answer <= 1 s after start-up) is judged in ``perf.goals``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from perf.bench_search import write_sessions


def _get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=120) as response:
        value: dict[str, Any] = json.loads(response.read())
        return value


def run(sessions: int, turns: int, index: bool) -> dict[str, Any]:
    import uvicorn

    from assembler.server import create_app
    from assembler.server.hosts import listening_socket

    with tempfile.TemporaryDirectory(prefix="bench-list-") as tmp:
        root = Path(tmp) / "sessions"
        t0 = time.perf_counter()
        write_sessions(root, sessions, turns)
        written = time.perf_counter() - t0
        app = create_app([root], serve_static=False, index_dir=Path(tmp) / "index" if index else None)
        sock = listening_socket("127.0.0.1", 0)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/api/sessions"
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        start = time.perf_counter()
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.005)
        up = time.perf_counter() - start
        try:
            first = _get(url)
            first_s = time.perf_counter() - start
            polls = 1
            body = first
            while body.get("pending", 0) > 0:
                time.sleep(0.25)
                body = _get(url)
                polls += 1
            complete_s = time.perf_counter() - start
            warm = []
            for _ in range(5):
                t = time.perf_counter()
                _get(url)
                warm.append(time.perf_counter() - t)
        finally:
            server.should_exit = True
            thread.join(timeout=30)
    return {"benchmark": "list", "sessions": sessions, "turns": turns, "index": index,
            "writeS": round(written, 2), "startupS": round(up, 3),
            "firstAnswerS": round(first_s, 3), "firstListed": len(first.get("sessions", [])),
            "firstPending": first.get("pending", 0), "completeS": round(complete_s, 2), "polls": polls,
            "listed": len(body.get("sessions", [])), "warmListMedianS": round(statistics.median(warm), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--no-index", action="store_true")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    report = run(args.sessions, args.turns, not args.no_index)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(out.suffix + ".tmp")
        tmp.write_text(text + "\n")
        tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
