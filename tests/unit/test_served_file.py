"""One reader per served file (``server.catalog.ServedFile``): the session list and a session's pages and followers
are served from one pass over the file's bytes, and a followed file's live lines reach the wire as they were read
(no server-side packing of delta runs into rows that the follow path then expands again)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from assembler.records import decode_follow_frame
from assembler.server import catalog
from assembler.server.registry import SessionRegistry
from assembler.server.source import Follower
from perf.bench_browser import unpacked_log


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bytes handed out by every piece-sized ``os.pread`` (the readers' reads; identity hashes read a KiB)."""
    real = os.pread
    got: list[int] = []

    def pread(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        if n == catalog.READ_PIECE:
            got.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", pread)
    return got


def test_a_session_listed_and_opened_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = unpacked_log(3, 300).splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:200]))
    reads = _count_reads(monkeypatch)
    registry = SessionRegistry([tmp_path])

    async def open_list_grow_list() -> int:
        source = await registry.find("s")
        await source.update()  # the page's read
        (entries, _) = await registry.listing(None)  # the list: nothing new to read
        with open(path, "ab") as f:
            f.write(b"".join(lines[200:]))
        await registry.listing(None)  # the list reads the appended lines once ...
        await source.update()  # ... and the page has them without reading them again
        return source.index.event_count

    events = asyncio.run(open_list_grow_list())
    assert events == len(lines) - 1
    assert sum(reads) == path.stat().st_size  # each byte read once, for the list and the page together
    served = registry.catalog.known(path)
    assert served is not None and served.event_count == events


def test_a_followed_files_delta_lines_reach_followers_as_read(tmp_path: Path) -> None:
    lines = unpacked_log(2, 200).splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:20]))
    registry = SessionRegistry([tmp_path])

    async def follow() -> tuple[list[object], bytes, int]:
        source = await registry.find("s")
        follower = Follower()
        await source.subscribe(follower, 50)
        before = len(source.index.records)
        with open(path, "ab") as f:
            f.write(b"".join(lines[20:]))
        await source.update()
        new = source.index.records[before:]
        wire = follower.take()
        source.unsubscribe(follower)
        return new, wire, source.index.event_count

    new, wire, events = asyncio.run(follow())
    assert len(new) == len(lines) - 20 and all(type(r) is dict for r in new)  # one record a line, no row made
    frames = [decode_follow_frame(part[part.index(b"data: ") + 6:]) for part in wire.split(b"\n\n") if part]
    assert [f.event.seq for f in frames] == list(range(events - len(new), events))  # type: ignore[attr-defined]
