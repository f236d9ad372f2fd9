"""Bounded loopback load: N followers of one growing session, all on 127.0.0.1, each ending with exactly the log.

A real uvicorn server runs in a background thread over a temp folder; a writer appends M events in packed batches
while N httpx streaming clients follow it through a journal (``assembler.journal.session_journal``). Some followers
lose live frames on purpose (their journal repairs the gap from a page), some reconnect with a stale
``Last-Event-ID`` mid-run, some disconnect mid-stream and never come back. At the end every surviving follower pages
back to seq 0 and its window must equal the log: no gap, no duplicate. The server must be left with no follower and
no watcher task. Stops by itself; ``--json`` writes the report.

    .venv/bin/python -m perf.load_follow --followers 50 --events 10000 --json build/perf/load_follow.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import msgspec
import uvicorn

from assembler.chunk_rows import expand_row, pack_chunk_runs
from assembler.journal import PageRequest, session_journal
from assembler.records import (
    EventFrame,
    EventRecord,
    HistoryRecord,
    SnapshotFrame,
    decode_follow_frame,
    decode_page,
    encode,
)
from assembler.server import create_app
from perf.kept_window import KeptWindow

__all__ = ["LogGenerator", "ServerThread", "FollowerStats", "run_load", "window_events", "main"]

T = TypeVar("T")
HEADER = {"type": "session", "version": 0, "id": "load", "createdAt": 0}


class LogGenerator:
    """A deterministic, endless, realistic log: turns of a user message, steps of chunk runs (text, reasoning,
    tool-call deltas between ``block-start``/``block-end``), an ``assistant/message`` citing its chunks, tool
    results. ``take(n)`` returns the next ``n`` events (seq continues)."""

    def __init__(self, seed: int = 0, time0: int = 1_700_000_000_000) -> None:
        self.rng = random.Random(seed)
        self.seq = 0
        self.time = time0
        self._stream = self._events()

    def _event(self, etype: str, data: Any, **extra: Any) -> dict[str, Any]:
        self.time += self.rng.choice((0, 1, 1, 3, 17))
        event = {"type": etype, "seq": self.seq, "time": self.time, "data": data, **extra}
        self.seq += 1
        return event

    def _events(self) -> Iterator[dict[str, Any]]:
        rng = self.rng
        turn = 0
        while True:
            turn += 1
            yield self._event("turn/start", {"turn": turn})
            yield self._event("user/message", {"id": f"u{turn}", "role": "user",
                                               "content": [{"type": "text", "text": f"question {turn}"}],
                                               "source": {"kind": "user"}}, surfaceOp="append")
            for step in range(1, rng.randint(1, 3) + 1):
                yield self._event("step/start", {"turn": turn, "step": step})
                cited: list[int] = []
                for index, kind in enumerate(rng.sample(["reasoning-delta", "text-delta", "tool-call-delta"],
                                                        rng.randint(1, 3))):
                    start = self._event("assistant/chunk", {"turn": turn, "step": step,
                                                            "chunk": {"type": "block-start", "index": index}})
                    cited.append(start["seq"])
                    yield start
                    for k in range(rng.choice((1, 2, 5, 20, 60))):
                        if kind == "tool-call-delta":
                            chunk: dict[str, Any] = {"type": kind, "index": index, "id": f"call{turn}.{step}",
                                                     "argumentsDelta": f'"a{k}"'}
                        else:
                            chunk = {"type": kind, "index": index, "text": rng.choice(("a", " b", "é", "\n"))}
                        delta = self._event("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})
                        cited.append(delta["seq"])
                        yield delta
                    end = self._event("assistant/chunk", {"turn": turn, "step": step,
                                                          "chunk": {"type": "block-end", "index": index}})
                    cited.append(end["seq"])
                    yield end
                yield self._event("assistant/message", {"turn": turn, "step": step,
                                                        "message": {"role": "assistant", "content": []}},
                                  surfaceOp="append", sourceEventSeqs=cited)
                if rng.random() < 0.3:
                    yield self._event("tool/result", {"turn": turn, "step": step}, surfaceOp="append")
            yield self._event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})

    def take(self, n: int) -> list[dict[str, Any]]:
        return [next(self._stream) for _ in range(n)]


def append_batch(path: Path, events: list[dict[str, Any]]) -> None:
    """Append one packed batch, as the JSONL backend does (PROTOCOL 2.2: packed per append batch)."""
    with open(path, "ab") as stream:
        stream.write(b"".join(encode(r) + b"\n" for r in pack_chunk_runs(events)))


class _Server(uvicorn.Server):
    """A uvicorn server that says when it has started (an event to wait on, not a flag to poll)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        self.ready.set()


class ServerThread:
    """A real uvicorn server for ``app`` on 127.0.0.1 (ephemeral port) in a background thread."""

    def __init__(self, app: Any, start_timeout: float = 20) -> None:
        self.app = app
        self.server = _Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                                             timeout_graceful_shutdown=1))
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)
        self.start_timeout = start_timeout
        self.loop: asyncio.AbstractEventLoop | None = None
        self.base_url = ""

    def __enter__(self) -> ServerThread:
        self.thread.start()
        if not self.server.ready.wait(self.start_timeout) or not self.server.started:
            raise RuntimeError("uvicorn did not start")
        listener = self.server.servers[0]
        self.loop = listener.get_loop()
        port = listener.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 10) -> T:
        """Run ``coro`` on the server's event loop and return its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def task_count(self) -> int:
        async def count() -> int:
            return len(asyncio.all_tasks())
        return self.call(count())

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def window_events(records: list[HistoryRecord]) -> list[Any]:
    """The logical events of a journal window, as plain values (rows expanded: verification only)."""
    out: list[Any] = []
    for record in records:
        if type(record) is EventRecord:
            out.append(msgspec.to_builtins(record.event))
        else:
            out.extend(expand_row(record.event.to_storage()))
    return out


@dataclass
class FollowerStats:
    name: str
    frames: int = 0
    live: int = 0
    dropped: int = 0
    repairs: int = 0
    reconnects: int = 0
    pages: int = 0
    ok: bool = False
    error: str | None = None
    window: list[HistoryRecord] = field(default_factory=list, repr=False)


async def _fetch_page(client: httpx.AsyncClient, url: str, request: PageRequest) -> Any:
    params: dict[str, int] = {"throughSeq": request.through}
    if request.before is not None:
        params["beforeSeq"] = request.before
    if request.max_messages is not None:
        params["maxMessages"] = request.max_messages
    response = await client.get(url + "/page", params=params)
    response.raise_for_status()
    return decode_page(response.content)


async def _handle(client: httpx.AsyncClient, url: str, journal: KeptWindow[HistoryRecord], outputs: list[Any],
                  stats: FollowerStats) -> None:
    while outputs:
        output = outputs.pop(0)
        if isinstance(output, PageRequest):
            stats.pages += 1
            stats.repairs += output.kind == "repair"
            page = await _fetch_page(client, url, output)
            outputs.extend(journal.page(output, page.records, page.hasMore))


async def follow(client: httpx.AsyncClient, url: str, target: int, stats: FollowerStats, *,
                 drop_every: int = 0, reconnect_after: int = 0, disconnect_after: int = 0,
                 max_messages: int = 50, opened: asyncio.Semaphore | None = None) -> None:
    """Follow ``url`` until the journal has applied ``target``, then page back to seq 0. ``opened`` is released
    once, when the first snapshot has been applied (the writer waits for every follower before it starts)."""
    journal = KeptWindow(session_journal(max_messages))
    connected_once = False
    reconnect_at = reconnect_after
    while journal.last_cursor is None or journal.last_cursor < target:
        headers = {"accept": "text/event-stream"}
        if connected_once:
            journal.reconnect()
            stats.reconnects += 1
            if journal.last_cursor is not None:
                headers["last-event-id"] = str(journal.last_cursor)
            await asyncio.sleep(0.05)  # stay away while the log grows: the resume cursor is stale
        connected_once = True
        async with client.stream("GET", url + "/follow", params={"maxMessages": max_messages},
                                 headers=headers) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                frame = decode_follow_frame(line[6:].encode())
                stats.frames += 1
                if type(frame) is EventFrame:
                    stats.live += 1
                    if disconnect_after and stats.live >= disconnect_after:
                        return  # leave mid-stream; the server must clean up after us
                    if drop_every and stats.live % drop_every == 0:
                        stats.dropped += 1
                        continue  # a lost frame: the next one leaves a gap
                    outputs = journal.entry(EventRecord(frame.event))
                else:
                    outputs = journal.opened(frame.cursor, frame.records, frame.hasMore)
                await _handle(client, url, journal, outputs, stats)
                if opened is not None and type(frame) is SnapshotFrame:
                    opened.release()
                    opened = None
                if journal.last_cursor is not None and journal.last_cursor >= target:
                    break
                if reconnect_at and stats.live >= reconnect_at:
                    reconnect_at = 0
                    break
    while journal.has_more:
        request = journal.request_prepend(max_messages)
        await _handle(client, url, journal, [request], stats)
    stats.window = journal.window


async def _run(base_url: str, sid: str, path: Path, gen: LogGenerator, *, followers: int, events: int, batch: int,
               interval: float, lossy: int, reconnectors: int, disconnectors: int) -> dict[str, Any]:
    target = gen.seq + events - 1
    url = f"{base_url}/api/sessions/{sid}"
    limits = httpx.Limits(max_connections=followers + disconnectors + 16, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0), limits=limits) as client:
        stats = [FollowerStats(f"f{i}") for i in range(followers + disconnectors)]
        opened = asyncio.Semaphore(0)
        tasks = []
        for i, st in enumerate(stats):
            kwargs: dict[str, int] = {}
            if i >= followers:
                kwargs["disconnect_after"] = 5 + i
            elif i < lossy:
                kwargs["drop_every"] = 97 + i
            elif i < lossy + reconnectors:
                kwargs["reconnect_after"] = events // 3
            tasks.append(asyncio.create_task(follow(client, url, target, st, opened=opened, **kwargs)))

        async def write() -> None:
            # Every follower opens before the log grows, however loaded the machine is, so each one sees the
            # growth as live frames (the report's live-frame count does not depend on timing).
            for _ in stats:
                await asyncio.wait_for(opened.acquire(), timeout=60)
            left = events
            while left:
                n = min(batch, left)
                await asyncio.to_thread(append_batch, path, gen.take(n))
                left -= n
                await asyncio.sleep(interval)

        started = time.perf_counter()
        results = await asyncio.gather(write(), *tasks, return_exceptions=True)
        elapsed = time.perf_counter() - started
    for st, result in zip(stats, results[1:], strict=True):
        if isinstance(result, BaseException):
            st.error = f"{type(result).__name__}: {result}"
    if isinstance(results[0], BaseException):
        raise results[0]
    return {"elapsed_s": round(elapsed, 3), "target": target, "stats": stats}


def run_load(followers: int = 50, events: int = 10_000, *, initial: int = 2_000, batch: int = 100,
             interval: float = 0.01, lossy: int = 2, reconnectors: int = 2, disconnectors: int = 2,
             poll: float = 0.05, seed: int = 0) -> dict[str, Any]:
    """Run the load and verify every follower. Returns a JSON-ready report (``ok`` says whether all passed)."""
    with tempfile.TemporaryDirectory(prefix="load-follow-") as tmp:
        path = Path(tmp) / "load.jsonl"
        gen = LogGenerator(seed)
        truth = gen.take(initial)
        path.write_bytes(encode(HEADER) + b"\n")
        append_batch(path, truth)
        app = create_app([tmp], serve_static=False, poll_interval=poll)
        with ServerThread(app) as server:
            baseline = server.task_count()
            result = asyncio.run(_run(server.base_url, "load", path, gen, followers=followers, events=events,
                                      batch=batch, interval=interval, lossy=lossy, reconnectors=reconnectors,
                                      disconnectors=disconnectors))
            registry = app.state.registry
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and (registry.follower_count() or registry.active_watchers()
                                                   or server.task_count() > baseline):
                time.sleep(0.05)
            leftover = {"followers": registry.follower_count(), "watchers": registry.active_watchers(),
                        "tasks_over_baseline": server.task_count() - baseline}
        log = LogGenerator(seed).take(initial + events)
        expected = [msgspec.json.decode(encode(e)) for e in log]
        stats: list[FollowerStats] = result["stats"]
        for st in stats[:followers]:
            if st.error is None:
                got = window_events(st.window)
                st.ok = got == expected
                if not st.ok:
                    st.error = f"window has {len(got)} events, log has {len(expected)}"
        for st in stats[followers:]:
            st.ok = st.error is None
    ok = all(st.ok for st in stats) and not any(leftover.values())
    return {
        "scenario": "follow-load",
        "followers": followers, "disconnectors": disconnectors, "lossy": lossy, "reconnectors": reconnectors,
        "initial_events": initial, "appended_events": events, "batch": batch, "elapsed_s": result["elapsed_s"],
        "live_frames": sum(st.live for st in stats), "dropped_frames": sum(st.dropped for st in stats),
        "repairs": sum(st.repairs for st in stats), "reconnects": sum(st.reconnects for st in stats),
        "pages": sum(st.pages for st in stats), "leftover": leftover, "ok": ok,
        "failures": [{"follower": st.name, "error": st.error} for st in stats if not st.ok],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--followers", type=int, default=50)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--interval", type=float, default=0.01)
    parser.add_argument("--json", metavar="OUT", help="write the report here")
    args = parser.parse_args(argv)
    report = run_load(args.followers, args.events, batch=args.batch, interval=args.interval)
    text = json.dumps(report, indent=2)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
