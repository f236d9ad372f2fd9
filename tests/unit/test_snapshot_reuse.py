"""A served session's follow snapshot frame is made once per state of the file: opened again (another reader, a
reconnect) while its reader has told nothing new, the same bytes go out without encoding the session again; a new
line, a fault or a rewrite makes a new frame, so a reused frame is never stale."""

from __future__ import annotations

import asyncio
from pathlib import Path

from assembler.records import decode_follow_frame
from assembler.server.registry import SessionRegistry
from assembler.server.source import Follower, SessionSource
from perf.bench_browser import unpacked_log


async def snapshot(source: SessionSource, max_messages: int = 50) -> bytes:
    follower = Follower()
    frame = await source.subscribe(follower, max_messages)
    source.unsubscribe(follower)
    return frame


def records_in(frame: bytes) -> int:
    data = frame.split(b"data: ", 1)[1].rstrip(b"\n")
    return len(decode_follow_frame(data).records)  # type: ignore[union-attr]


def test_a_frame_is_reused_until_the_file_changes(tmp_path: Path) -> None:
    lines = unpacked_log(3, 300).splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:200]))
    registry = SessionRegistry([tmp_path])

    async def run() -> None:
        source = await registry.find("s")
        first = await snapshot(source)
        assert await snapshot(source) is first  # nothing new: the same bytes
        other = await snapshot(source, 10)
        assert other is not first and records_in(other) <= records_in(first)  # another page size: its own frame
        with open(path, "ab") as f:
            f.write(b"".join(lines[200:]))
        grown = await snapshot(source, 10)
        assert grown is not other and b'"cursor":%d' % (len(lines) - 2) in grown
        with open(path, "ab") as f:
            f.write(b'{"type": "turn/end", oops\n')
        faulty = await snapshot(source, 10)
        assert faulty is not grown and b'"error":{"error":"malformed-session"' in faulty
        path.write_bytes(b"".join(lines[:50]))  # rewritten in place, shorter
        rewritten = await snapshot(source, 10)
        assert rewritten is not faulty and b'"cursor":%d' % 48 in rewritten and b'"error"' not in rewritten

    asyncio.run(run())
