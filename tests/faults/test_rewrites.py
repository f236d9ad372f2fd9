"""In-place rewrites (issue 9 item 16) and the server's memory and event loop (items 14, 15).

A served file truncated and rewritten past its old size between polls, or rewritten at the same size, is noticed and
read again: pages, the session list and followers (cut off, they reconnect to a fresh snapshot) show the new
content, never stale records or a stale fault. The list keeps no records; parsed sessions are an LRU cache; unknown
ids rescan in a thread at most once a second."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from assembler.records import encode
from assembler.server import create_app
from assembler.server.catalog import ServedFile
from assembler.server.registry import SessionRegistry
from assembler.server.source import SessionSource
from perf.load_follow import HEADER, LogGenerator, ServerThread, append_batch

LOCAL = "http://127.0.0.1"


def write(path: Path, n: int, seed: int, *, tail: bytes = b"") -> None:
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, LogGenerator(seed).take(n))
    if tail:
        with open(path, "ab") as out:
            out.write(tail)


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Truncate and write ``path`` through the same inode (as ``>`` in a shell does)."""
    ino = path.stat().st_ino
    with open(path, "r+b") as out:
        out.truncate(0)
        out.write(data)
    assert path.stat().st_ino == ino


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_truncated_and_regrown_past_the_old_size_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 100, seed=1, tail=b'{"type":"broken"\n')
    source = SessionSource(ServedFile(path, tmp_path))
    source.refresh_sync()
    assert source.error is not None and source.index.event_count == 100
    other = tmp_path / "other.jsonl"
    write(other, 400, seed=2)
    rewrite_in_place(path, other.read_bytes())
    assert path.stat().st_size > source.file.bytes_read
    _, reset = source.refresh_sync()
    assert reset and source.error is None  # no sticky fault from the old content
    fresh = SessionSource(ServedFile(other, tmp_path))
    fresh.refresh_sync()
    assert source.index.page(None, None, 10_000) == fresh.index.page(None, None, 10_000)


def test_rewritten_at_the_same_size_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 50, seed=3)
    source = SessionSource(ServedFile(path, tmp_path))
    source.refresh_sync()
    before = source.index.page(None, None, 10_000)
    data = path.read_bytes()
    changed = data.replace(b'"id":"load"', b'"id":"lOad"', 1)  # the same size, another header
    assert len(changed) == len(data) and changed != data
    rewrite_in_place(path, changed)
    bump_mtime(path)
    assert source.refresh_sync()[1] is True
    assert source.header is not None and source.header["id"] == "lOad"
    assert source.index.page(None, None, 10_000) == before  # the same events, read again from the new bytes
    assert source.refresh_sync() == ([], False)  # and nothing more until it changes again


def test_appends_are_read_on_not_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 50, seed=4)
    source = SessionSource(ServedFile(path, tmp_path))
    source.refresh_sync()
    append_batch(path, LogGenerator(4).take(80)[50:])
    new, reset = source.refresh_sync()
    assert not reset and source.index.event_count == 80


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[ServerThread, Path]]:
    path = tmp_path / "live.jsonl"
    write(path, 200, seed=5)
    with ServerThread(create_app([tmp_path], serve_static=False, poll_interval=0.02)) as thread:
        yield thread, path


def test_a_follower_reconnects_to_a_fresh_snapshot_when_the_file_is_rewritten(served: tuple[ServerThread, Path],
                                                                     tmp_path: Path) -> None:
    thread, path = served
    replacement = tmp_path / "replacement.jsonl.src"
    write(replacement, 260, seed=6)
    with httpx.Client(base_url=thread.base_url, timeout=30) as client:
        with client.stream("GET", "/api/sessions/live/follow") as response:
            lines = response.iter_lines()
            first = next(x for x in lines if x.startswith("data: "))
            assert msgspec.json.decode(first[6:])["type"] == "snapshot"
            rewrite_in_place(path, replacement.read_bytes())

            async def update() -> None:
                await thread.app.state.registry.lookup("live").update()
            thread.call(update())
            assert not any(x.startswith("data: ") for x in lines)  # cut off: no stale or mixed frame follows
        with client.stream("GET", "/api/sessions/live/follow") as response:  # the viewer reconnects
            frame = msgspec.json.decode(next(x for x in response.iter_lines() if x.startswith("data: "))[6:])
        assert frame["type"] == "snapshot" and frame["cursor"] == 259 and "error" not in frame
        listed = client.get("/api/sessions").json()["sessions"]
        assert [(s["id"], s["eventCount"], s["error"]) for s in listed] == [("live", 260, None)]


def test_the_session_list_keeps_metadata_only_and_follows_rewrites(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    for i in range(5):
        write(tmp_path / f"s{i}.jsonl", 100 + i, seed=i)
    app = create_app([tmp_path], serve_static=False)
    client = TestClient(app, base_url=LOCAL)
    listed = {s["id"]: s for s in client.get("/api/sessions").json()["sessions"]}
    assert {k: v["eventCount"] for k, v in listed.items()} == {f"s{i}": 100 + i for i in range(5)}
    registry: SessionRegistry = app.state.registry
    assert registry.sources == {}  # listing parsed no session for pages
    rewrite_in_place(tmp_path / "s0.jsonl", (tmp_path / "s4.jsonl").read_bytes())
    bump_mtime(tmp_path / "s0.jsonl")
    listed = {s["id"]: s for s in client.get("/api/sessions").json()["sessions"]}
    assert listed["s0"]["eventCount"] == 104


def test_parsed_sessions_are_an_lru_cache_bounded_in_bytes(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    for i in range(4):
        write(tmp_path / f"s{i}.jsonl", 300, seed=i)
    sizes = [(tmp_path / f"s{i}.jsonl").stat().st_size for i in range(4)]
    app = create_app([tmp_path], serve_static=False, cache_bytes=sizes[2] + sizes[3])
    client = TestClient(app, base_url=LOCAL)
    for i in (0, 1, 2, 3, 2):
        assert client.get(f"/api/sessions/s{i}/page").status_code == 200
    cached = [p.name for p, _ in app.state.registry.sources]
    assert cached == ["s3.jsonl", "s2.jsonl"]  # least recently used first; s0 and s1 evicted


def test_unknown_ids_rescan_in_a_thread_at_most_once_a_second(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    write(tmp_path / "a.jsonl", 10, seed=1)
    registry = SessionRegistry([tmp_path])
    scans: list[tuple[float, bool]] = []
    real_scan = registry.scan

    def counting_scan() -> dict[str, Any]:
        scans.append((time.monotonic(), threading.current_thread() is threading.main_thread()))
        return real_scan()

    monkeypatch.setattr(registry, "scan", counting_scan)

    async def run() -> list[Any]:
        missing = await asyncio.gather(*(registry.find(f"missing-{i}") for i in range(50)), return_exceptions=True)
        write(tmp_path / "b.jsonl", 10, seed=2)
        found = await registry.find("b")  # a new file: found by the next scan, which waits out the interval
        return [*missing, found]

    results = asyncio.run(run())
    assert all(getattr(r, "status_code", None) == 404 for r in results[:-1])
    assert results[-1].path.name == "b.jsonl"
    assert len(scans) == 2  # one scan for fifty unknown ids, one more for the new file
    assert not any(on_loop for _, on_loop in scans)  # never on the event loop's thread
    assert scans[1][0] - scans[0][0] >= 0.99  # at most one a second
