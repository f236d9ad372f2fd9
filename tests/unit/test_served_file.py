"""One reader per served file (``server.catalog.ServedFile``): the session list and a session's pages and followers
are served from one pass over the file's bytes, and a followed file's live lines reach the wire as they were read
(no server-side packing of delta runs into rows that the follow path then expands again)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

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


def test_a_followed_files_delta_lines_reach_followers_as_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """The lines of a run of deltas go on the wire as the file holds them (no row expanded back into events on the
    server); the index keeps the row they were read into; other events are framed as decoded."""
    import assembler.server.source as source_module

    lines = unpacked_log(2, 200).splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:20]))
    registry = SessionRegistry([tmp_path])
    expanded: list[object] = []
    real = source_module.expand_records

    def spy(records: Any) -> Any:
        records = list(records)
        expanded.extend(r for r in records if type(r) is not dict)
        return real(records)

    monkeypatch.setattr(source_module, "expand_records", spy)

    async def follow() -> tuple[list[object], bytes]:
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
        return new, wire

    new, wire = asyncio.run(follow())
    assert any(type(r) is not dict for r in new)  # the history holds rows
    assert expanded == []  # no row was expanded for the wire
    frames = [part for part in wire.split(b"\n\n") if part]
    assert len(frames) == len(lines) - 20
    for frame, line in zip(frames, lines[20:], strict=True):
        data = frame[frame.index(b"data: ") + 6:]
        event = decode_follow_frame(data).event  # type: ignore[attr-defined]
        assert frame.startswith(b"id: %d\n" % event.seq)
        if b'"-delta"' in line or b'-delta"' in line:
            assert data == b'{"type":"event","event":' + line.rstrip() + b"}"  # the line as the file holds it


def test_a_run_missing_a_seq_is_sent_as_its_events(tmp_path: Path) -> None:
    """A delta line that leaves its seq to be rebuilt is not sent as written (a client needs the seq)."""
    import msgspec

    lines = unpacked_log(2, 200).splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:20]))
    registry = SessionRegistry([tmp_path])
    bare = []
    for line in lines[20:]:
        value = msgspec.json.decode(line)
        if value["type"] == "assistant/chunk":
            del value["seq"]
        bare.append(msgspec.json.encode(value) + b"\n")

    async def follow() -> bytes:
        source = await registry.find("s")
        follower = Follower()
        await source.subscribe(follower, 50)
        with open(path, "ab") as f:
            f.write(b"".join(bare))
        await source.update()
        wire = follower.take()
        source.unsubscribe(follower)
        return wire

    frames = [part for part in asyncio.run(follow()).split(b"\n\n") if part]
    seqs = [decode_follow_frame(f[f.index(b"data: ") + 6:]).event.seq for f in frames]  # type: ignore[attr-defined]
    assert seqs == list(range(20 - 1, len(lines) - 1))


def test_crlf_delta_lines_are_sent_without_a_carriage_return(tmp_path: Path) -> None:
    """A carriage return ends a line of an event stream: lines that hold one go out re-encoded."""
    lines = [line.rstrip(b"\n") + b"\r\n" for line in unpacked_log(2, 200).splitlines(keepends=True)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:20]))
    registry = SessionRegistry([tmp_path])

    async def follow() -> bytes:
        source = await registry.find("s")
        follower = Follower()
        await source.subscribe(follower, 50)
        with open(path, "ab") as f:
            f.write(b"".join(lines[20:]))
        await source.update()
        wire = follower.take()
        source.unsubscribe(follower)
        return wire

    wire = asyncio.run(follow())
    assert b"\r" not in wire
    frames = [part for part in wire.split(b"\n\n") if part]
    seqs = [decode_follow_frame(f[f.index(b"data: ") + 6:]).event.seq for f in frames]  # type: ignore[attr-defined]
    assert seqs == list(range(20 - 1, len(lines) - 1))


@pytest.mark.parametrize("first", [b"", b'{"type": "session", "vers'])
def test_a_file_first_read_empty_or_half_written_shows_what_is_written_after(tmp_path: Path, first: bytes) -> None:
    """A recorder creates its file, then writes: a file listed while empty (or while its first line was half
    written) was read to its end as complete; once it grows, the list and the page read it again from the start
    (an empty file used to stay an empty session for good)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(first)
    registry = SessionRegistry([tmp_path])
    data = unpacked_log(2, 50)

    async def list_then_write() -> tuple[int, int]:
        await registry.listing(None)
        source = await registry.find("s")
        await source.update()
        path.write_bytes(data)
        (entries, _) = await registry.listing(None)
        await source.update()
        [(_, served)] = entries
        return served.event_count, source.index.event_count

    listed, opened = asyncio.run(list_then_write())
    assert listed == opened == data.count(b"\n") - 1
