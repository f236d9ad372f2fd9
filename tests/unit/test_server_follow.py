"""Follow over SSE against a real uvicorn server on 127.0.0.1: snapshot, live scalar frames as the file grows,
Last-Event-ID resume, and no task left behind by a client that leaves mid-stream.

No sleeps: where a test needs the server to have read the file, it awaits the source's ``update`` on the server's
loop; where it needs a follower gone, it awaits the end of the source's watcher task."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from assembler.chunk_rows import expand_records, pack_chunk_runs
from assembler.history import MessageIndex
from assembler.journal import session_journal
from assembler.records import EventFrame, EventRecord, SnapshotFrame, decode_follow_frame, decode_page, encode
from assembler.server import create_app
from assembler.store.jsonl import read_session
from perf.kept_window import KeptWindow
from perf.load_follow import HEADER, LogGenerator, ServerThread, append_batch, run_load, window_events


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServerThread, Path, LogGenerator]]:
    path = tmp_path / "live.jsonl"
    gen = LogGenerator(7)
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, gen.take(300))
    app = create_app([tmp_path], serve_static=False, poll_interval=0.02)
    with ServerThread(app) as server:
        yield server, path, gen


def frames(response: httpx.Response, raw: list[bytes] | None = None) -> Iterator[tuple[str | None, Any]]:
    """(id, frame) pairs of an SSE response; the JSON of each frame is appended to ``raw`` when given."""
    last_id = None
    for line in response.iter_lines():
        if line.startswith("id: "):
            last_id = line[4:]
        elif line.startswith("data: "):
            data = line[6:].encode()
            if raw is not None:
                raw.append(data)
            yield last_id, decode_follow_frame(data)


def source_update(server: ServerThread, session: str = "live") -> None:
    """Have the session's source read what is new and fan it out, now, on the server's loop."""
    async def update() -> None:
        await server.app.state.registry.lookup(session).update()
    server.call(update())


def watcher_task(server: ServerThread, session: str = "live") -> asyncio.Task[None]:
    async def get() -> asyncio.Task[None]:
        task = server.app.state.registry.lookup(session).watcher
        assert task is not None
        return task  # type: ignore[no-any-return]
    return server.call(get())


def await_done(server: ServerThread, task: asyncio.Task[None]) -> None:
    """Wait (on the server's loop) until ``task`` has finished, then for the step that follows it."""
    async def wait() -> None:
        await asyncio.wait({task}, timeout=10)
        assert task.done()
        await asyncio.sleep(0)  # one loop step: tasks finishing in the same step as the watcher are gone too
    server.call(wait(), timeout=15)


def test_snapshot_then_live_member_events(served: Any) -> None:
    server, path, gen = served
    url = f"{server.base_url}/api/sessions/live/follow"
    with httpx.Client(timeout=10) as client, client.stream("GET", url, params={"maxMessages": 3}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        raw: list[bytes] = []
        stream = frames(response, raw)
        sid, snapshot = next(stream)
        assert isinstance(snapshot, SnapshotFrame)
        result = read_session(path)
        expected = MessageIndex(result.records).snapshot(result.header or {}, 3)
        assert raw[0] == encode(expected)
        assert snapshot.cursor == 299 and sid == "299"
        # A run of deltas appended live is stored as a packed row but must arrive as its member events.
        batch = [{"type": "assistant/chunk", "seq": 300 + k, "time": k,
                  "data": {"turn": 9, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": str(k)}}}
                 for k in range(5)]
        assert len(pack_chunk_runs(batch)) == 1
        line = encode(pack_chunk_runs(batch)[0]) + b"\n"
        with open(path, "ab") as stream_out:
            stream_out.write(line[:10])  # a partial line waits for its newline
            stream_out.flush()
            source_update(server)  # the server has read the partial line
            stream_out.write(line[10:])
        got = [next(stream) for _ in range(5)]
        assert all(isinstance(f, EventFrame) for _, f in got)
        assert [f.event.seq for _, f in got] == [300, 301, 302, 303, 304]
        assert [i for i, _ in got] == ["300", "301", "302", "303", "304"]
        assert [f.event.data["chunk"]["text"] for _, f in got] == ["0", "1", "2", "3", "4"]


def test_disconnect_mid_stream_leaves_no_task(served: Any) -> None:
    server, path, gen = served
    registry = server.app.state.registry
    baseline = server.task_count()
    url = f"{server.base_url}/api/sessions/live/follow"
    with httpx.Client(timeout=10) as client:
        with client.stream("GET", url) as response:
            stream = frames(response)
            next(stream)
            append_batch(path, gen.take(20))
            next(stream)
            assert registry.follower_count() == 1 and registry.active_watchers() == 1
            watcher = watcher_task(server)
        # The client has gone; nothing may stay behind, even with no further writes.
        await_done(server, watcher)
        assert registry.follower_count() == 0 and registry.active_watchers() == 0
        assert server.task_count() <= baseline


def test_one_watcher_shared_by_followers(served: Any) -> None:
    server, path, gen = served
    registry = server.app.state.registry
    url = f"{server.base_url}/api/sessions/live/follow"
    with httpx.Client(timeout=10) as client:
        with client.stream("GET", url) as a, client.stream("GET", url) as b:
            streams = frames(a), frames(b)
            for stream in streams:
                next(stream)
            assert registry.follower_count() == 2 and registry.active_watchers() == 1
            watcher = watcher_task(server)
    await_done(server, watcher)
    assert registry.active_watchers() == 0


def test_last_event_id_resume_is_accepted_by_the_journal(served: Any) -> None:
    server, path, gen = served
    url = f"{server.base_url}/api/sessions/live/follow"
    journal = KeptWindow(session_journal(5))
    with httpx.Client(timeout=10) as client:
        with client.stream("GET", url, params={"maxMessages": 5}) as response:
            stream = frames(response)
            _, snap = next(stream)
            journal.opened(snap.cursor, snap.records, snap.hasMore)
            append_batch(path, gen.take(10))
            for _ in range(4):
                _, frame = next(stream)
                journal.entry(EventRecord(frame.event))
        stale = journal.last_cursor
        append_batch(path, gen.take(40))  # the log moves on while we are away
        journal.reconnect()
        headers = {"last-event-id": str(stale)}
        with client.stream("GET", url, params={"maxMessages": 5}, headers=headers) as response:
            _, snap = next(frames(response))
            assert snap.cursor == 349
            journal.opened(snap.cursor, snap.records, snap.hasMore)
        while journal.has_more:
            request = journal.request_prepend()
            page = client.get(f"{server.base_url}/api/sessions/live/page",
                              params={"throughSeq": request.through, "beforeSeq": request.before,
                                      "maxMessages": 5})
            decoded = decode_page(page.content)
            journal.page(request, decoded.records, decoded.hasMore)
    expected = list(expand_records(read_session(path).records))
    assert window_events(journal.window) == [msgspec.json.decode(encode(e)) for e in expected]


def test_bad_last_event_id_and_max_messages_are_400(served: Any) -> None:
    server, _, _ = served
    url = f"{server.base_url}/api/sessions/live/follow"
    with httpx.Client(timeout=10) as client:
        response = client.get(url, headers={"last-event-id": "x"})
        assert response.status_code == 400 and response.json()["error"] == "bad-request"
        response = client.get(url, params={"maxMessages": 0})
        assert response.status_code == 400 and "maxMessages" in response.json()["detail"]


def test_small_load_ends_with_exactly_the_log() -> None:
    report = run_load(followers=6, events=1500, initial=500, lossy=2, reconnectors=2, disconnectors=2)
    assert report["ok"], report["failures"]
    assert report["repairs"] > 0 and report["reconnects"] >= 2
    assert report["leftover"] == {"followers": 0, "watchers": 0, "tasks_over_baseline": 0}
