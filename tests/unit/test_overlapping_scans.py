"""Two scans of the served roots may overlap (a listing's and an unknown id's, each in a worker thread): the one that
started first and ends last must not put back a list that misses a file the later one found, or a session copied
into the folder between the two is "unknown" and its page gets a 404."""

from __future__ import annotations

import threading
from pathlib import Path

from assembler.server.registry import SessionRegistry
from tests.browser.session_builder import Session


def write(path: Path, sid: str) -> None:
    s = Session(sid)
    s.user("question")
    s.assistant([("text", "answer")])
    s.end_step()
    s.end_turn()
    path.write_bytes(s.to_bytes())


def test_an_earlier_scan_that_ends_last_does_not_replace_a_later_one(tmp_path: Path) -> None:
    write(tmp_path / "old.jsonl", "old")
    registry = SessionRegistry([tmp_path])
    walked = threading.Event()
    go_on = threading.Event()
    walk = registry.walk

    def slow_walk() -> tuple[dict[str, Path], dict[Path, Path]]:
        found = walk()
        if threading.current_thread().name == "early":
            walked.set()
            go_on.wait(10)  # the early scan has walked the folder, then waits
        return found

    registry.walk = slow_walk  # type: ignore[method-assign]
    early = threading.Thread(target=registry.scan, name="early")
    early.start()
    assert walked.wait(10)
    write(tmp_path / "new.jsonl", "new")  # copied in after the early scan walked
    assert "new" in registry.scan()  # the later scan (an unknown id's rescan) finds it
    go_on.set()
    early.join(10)
    assert sorted(registry.listed_ids) == ["new", "old"]
    assert registry.lookup("new").file.path == (tmp_path / "new.jsonl").resolve()

