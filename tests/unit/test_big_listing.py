"""A big folder is listed as it is read (issue 21 item 6): past ``LIST_BUDGET_FILES`` files the first answer comes
after ``LIST_BUDGET_S`` of reading with what was read and ``pending`` counting the rest, which a background task
reads on, so a later answer is complete; a small folder is always one complete answer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from assembler.server import create_app
from assembler.server import registry as registry_module
from tests.browser.session_builder import Session


def folder(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        s = Session(f"s{i:04d}")
        s.user(f"question {i}")
        s.assistant([("text", f"answer {i}")])
        s.end_step()
        s.end_turn()
        (root / f"s{i:04d}.jsonl").write_bytes(s.to_bytes())
    return root


def test_a_big_folder_answers_early_then_completes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "LIST_BUDGET_FILES", 10)  # "big" for this test: 60 files
    monkeypatch.setattr(registry_module, "LIST_BUDGET_S", 0.0)  # nothing read before the first answer
    root = folder(tmp_path / "sessions", 60)
    app = create_app([root], serve_static=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        # The lifespan's warm-up reads them all; the first request may come before it has read any.
        first = client.get("/api/sessions").json()
        assert first["pending"] + len(first["sessions"]) == 60
        for _ in range(200):
            body = client.get("/api/sessions").json()
            if body["pending"] == 0:
                break
            time.sleep(0.05)
        assert body["pending"] == 0 and len(body["sessions"]) == 60
        assert {e["id"] for e in body["sessions"]} == {f"s{i:04d}" for i in range(60)}


def test_a_small_folder_is_listed_whole(tmp_path: Path) -> None:
    root = folder(tmp_path / "few", 5)
    with TestClient(create_app([root], serve_static=False), base_url="http://127.0.0.1") as client:
        body = client.get("/api/sessions").json()
    assert body["pending"] == 0 and len(body["sessions"]) == 5


def test_the_budget_cuts_the_first_answer_and_the_background_reads_on(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from assembler.server.registry import SessionRegistry

    monkeypatch.setattr(registry_module, "LIST_BUDGET_FILES", 10)
    root = folder(tmp_path / "many", 30)

    async def run() -> tuple[int, int, int, int]:
        registry = SessionRegistry([root])
        entries, pending = await registry.listing(0.0)  # the budget is spent before the first file
        assert registry._reading_on is not None
        await registry._reading_on  # the background listing reads every file
        later, after = await registry.listing(0.0)  # nothing read now, but everything was read before
        registry.stop_reading()
        return len(entries), pending, len(later), after

    assert asyncio.run(run()) == (0, 30, 30, 0)
