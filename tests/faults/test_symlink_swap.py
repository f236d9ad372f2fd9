"""Symlink swaps while serving (issue 9 item 12): a served file is replaced by a symlink to a file outside the
served folder after the scan, before an open. Pages, follow and raw refuse it (403/404) and never send a byte of
the outside file, over a real server on 127.0.0.1; a follower already streaming is cut off instead of being fed the
outside file's lines. The outside file looks like a session, so a server that followed the link would serve it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from assembler.records import encode
from assembler.server import create_app
from perf.load_follow import HEADER, LogGenerator, ServerThread, append_batch

SECRET = b"TOP-SECRET-LINE"


def secret_session(path: Path, n: int = 50) -> None:
    """A valid session log outside the served folder; every event carries ``SECRET``."""
    events = [{"type": "x/secret", "seq": i, "time": i, "data": {"s": SECRET.decode()}} for i in range(n)]
    path.write_bytes(b"".join(encode(v) + b"\n" for v in [{"type": "session", "id": "secret"}, *events]))


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[ServerThread, Path, Path]]:
    """(the running server, the served folder with ``live.jsonl`` and ``sub/nested.jsonl``, the outside file)."""
    root = tmp_path / "served"
    root.mkdir()
    for rel in ("live.jsonl", "sub/nested.jsonl"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(HEADER) + b"\n")
        append_batch(path, LogGenerator(3).take(200))
    outside = tmp_path / "outside.jsonl"
    secret_session(outside)
    with ServerThread(create_app([root], serve_static=False, poll_interval=0.02)) as thread:
        yield thread, root, outside


def swap(path: Path, target: Path) -> None:
    """Replace ``path`` by a symlink to ``target`` in one rename (as an attacker racing the server would)."""
    link = path.with_name(path.name + ".swap")
    link.symlink_to(target)
    link.replace(path)


@pytest.mark.parametrize("route", ["page", "raw", "follow", "page?maxMessages=1"])
@pytest.mark.parametrize("sid", ["live", "sub/nested"])
def test_a_file_swapped_between_scan_and_open_is_refused(server: tuple[ServerThread, Path, Path], route: str,
                                                        sid: str) -> None:
    thread, root, outside = server
    with httpx.Client(base_url=thread.base_url, timeout=30) as client:
        listed = client.get("/api/sessions").json()["sessions"]
        assert sid in {s["id"] for s in listed}  # scanned (and opened once) while it was a regular file
        swap(root / f"{sid}.jsonl", outside)
        response = client.get(f"/api/sessions/{sid}/{route}")
        assert response.status_code in (403, 404), response.text
        assert SECRET not in response.content
        assert response.json()["error"] in ("forbidden", "not-found")
        listed = client.get("/api/sessions").json()["sessions"]
        assert SECRET not in encode(listed)


def test_a_folder_swapped_for_a_symlink_is_refused(server: tuple[ServerThread, Path, Path], tmp_path: Path) -> None:
    thread, root, outside = server
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    secret_session(elsewhere / "nested.jsonl")
    with httpx.Client(base_url=thread.base_url, timeout=30) as client:
        assert client.get("/api/sessions/sub/nested/raw").status_code == 200
        (root / "sub").rename(tmp_path / "old-sub")
        (root / "sub").symlink_to(elsewhere, target_is_directory=True)
        for route in ("page", "raw", "follow"):
            response = client.get(f"/api/sessions/sub/nested/{route}")
            assert response.status_code in (403, 404) and SECRET not in response.content


def test_a_follower_is_cut_off_when_its_file_is_swapped(server: tuple[ServerThread, Path, Path]) -> None:
    thread, root, outside = server
    live = root / "live.jsonl"
    received = b""
    with httpx.Client(base_url=thread.base_url, timeout=30) as client:
        with client.stream("GET", "/api/sessions/live/follow") as response:
            assert response.status_code == 200
            chunks = response.iter_bytes()
            received += next(chunks)  # the snapshot
            assert b'"snapshot"' in received or b"cursor" in received
            secret_session(outside, n=400)  # longer than the live file: a reader that followed it sees growth
            swap(live, outside)
            deadline = time.monotonic() + 20
            for chunk in chunks:  # ends when the server closes the stream
                received += chunk
                assert time.monotonic() < deadline, "the follow stream was not closed after the swap"
        assert SECRET not in received
        assert client.get("/api/sessions/live/follow").status_code in (403, 404)
