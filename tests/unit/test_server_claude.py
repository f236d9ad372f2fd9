"""The server on a ``~/.claude/projects``-shaped folder (built at test time from the real logs): the list carries
what grouping needs (each entry's project ``cwd``, a subagent's ``parentSession`` naming its parent's
``sessionId``, its label from the ``.meta.json``, inline sidechains as sessions of their file), sidecars are not
listed, a Codex rollout read in small pieces lists as read whole; a growing Claude Code file is followed over SSE
(an append becomes events within a second, a torn last line waits for its end, the newest response is closed once
the file is idle)."""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from assembler.records import EventFrame, EventRecord, SnapshotFrame
from assembler.server import create_app
from assembler.server.catalog import TAIL_IDLE_S
from perf.load_follow import ServerThread
from tests.claude_projects import (
    AGENT,
    CWD,
    EMPTY,
    INLINE,
    INLINE_CWD,
    META,
    PARENT,
    add_resumed,
    claude_projects,
    records_of,
)
from tests.interop_support import interop_file
from tests.unit.test_server_follow import frames, source_update

CODEX = ("codex/codemie-ai+codemie-code@8e8d4ce/src/agents/plugins/codex/__tests__/fixtures/"
         "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
APP = "-src-experiments-claude_p"


def client_of(root: Path) -> Any:
    from starlette.testclient import TestClient

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette's note on httpx
        return TestClient(create_app([root], serve_static=False), base_url="http://localhost")


def listing(root: Path) -> list[dict[str, Any]]:
    response = client_of(root).get("/api/sessions")
    assert response.status_code == 200
    return response.json()["sessions"]  # type: ignore[no-any-return]


def test_a_projects_folder_lists_what_grouping_by_project_and_parent_needs(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    entries = {e["id"]: e for e in listing(projects)}
    parent = entries[f"{APP}/{PARENT}"]
    child = entries[f"{APP}/{PARENT}/subagents/{AGENT}"]
    empty = entries[f"-Users-dain-workspace-JSSoundRecorder/{EMPTY}"]
    main = entries[f"-Users-dain-workspace-claude-code-log/{INLINE}"]
    sidechains = [e for sid, e in entries.items() if sid.startswith(f"-Users-dain-workspace-claude-code-log/{INLINE}/")]
    assert len(entries) == 4 + len(sidechains) and sidechains  # no .meta.json entry
    # Grouping by project: the recorded cwd (the folder's encoded name is not reversible), else the folder.
    assert parent["cwd"] == child["cwd"] == CWD and main["cwd"] == INLINE_CWD and "cwd" not in empty
    # The subagent is listed under its parent, never as a row of its own: the entries say which.
    assert parent["sessionId"] == PARENT and "parentSession" not in parent
    assert child["parentSession"] == parent["sessionId"] and child["subagentLabel"] == META["description"]
    assert all(e["parentSession"] == main["sessionId"] and e["cwd"] == INLINE_CWD for e in sidechains)
    for entry in (parent, child, main, *sidechains):
        assert entry["harness"] == "Claude Code" and entry["turnCount"] >= 1 and entry["lastActivitySource"] == "events"
    for entry in (parent, child):
        assert entry["usage"]["outputTokens"] > 0
    assert child["model"] == "claude-haiku-4-5-20251001" and parent["model"] == "claude-opus-4-5-20251101"
    assert not any(e.get("warmup") for e in entries.values())


def test_an_idle_claude_files_newest_response_is_counted_in_the_list(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    path = projects / APP / f"{PARENT}.jsonl"
    fresh = {e["id"]: e for e in listing(projects)}[f"{APP}/{PARENT}"]
    then = time.time() - TAIL_IDLE_S - 5
    os.utime(path, (then, then))
    idle = {e["id"]: e for e in listing(projects)}[f"{APP}/{PARENT}"]
    # The last response (the answer after the subagent's result) is held while the file may grow, and closed as
    # pages close it once the file is idle: then its usage counts.
    assert idle["eventCount"] > fresh["eventCount"]
    assert idle["usage"]["outputTokens"] > fresh["usage"]["outputTokens"]


def test_a_codex_rollout_read_in_small_pieces_lists_as_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    import assembler.server.catalog as catalog

    (tmp_path / "rollout.jsonl").write_bytes(interop_file(CODEX).read_bytes())
    whole = listing(tmp_path)
    monkeypatch.setattr(catalog, "READ_PIECE", 4096)  # records dropped between pieces, responses spanning them
    pieces = listing(tmp_path)
    assert pieces == whole and whole[0]["harness"] == "Codex" and whole[0]["error"] is None


def _duplicates(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data["duplicateOf"] for e in events if e.type == "interop/raw" and "duplicateOf" in e.data]


def _events_of(client: Any, sid: str) -> list[Any]:
    from assembler.chunk_rows import expand_records
    from assembler.records import decode_page

    response = client.get(f"/api/sessions/{sid}/page", params={"maxMessages": 1000})
    assert response.status_code == 200
    return [getattr(r, "event", r) for r in expand_records(decode_page(response.content).records)]


@pytest.mark.parametrize("listed_first", [True, False])
def test_a_resumed_sessions_copies_are_shown_once_in_the_oldest_file(tmp_path: Path, listed_first: bool) -> None:
    projects = claude_projects(tmp_path)
    original, resumed = add_resumed(projects)
    client = client_of(projects)
    if listed_first:
        entries = {e["id"]: e for e in client.get("/api/sessions").json()["sessions"]}
        alone = listing(_alone(tmp_path / "alone", original))[0]
        assert entries[f"{APP}/{PARENT}"]["turnCount"] == alone["turnCount"] == 1  # the original is whole
        assert entries[f"{APP}/{PARENT}"]["usage"] == alone["usage"]
        assert entries[f"{APP}/0resumed"]["turnCount"] == 1  # its own turn; the copied one is the original's
        usage = entries[f"{APP}/0resumed"].get("usage", {})
        assert usage.get("cacheReadTokens", 0) < alone["usage"]["cacheReadTokens"]
    # Its page (asked for before or after the list was read) keeps each copy raw, naming the older file.
    events = _events_of(client, f"{APP}/0resumed")
    duplicates = _duplicates(events)
    assert len(duplicates) == sum(1 for r in records_of(original) if "uuid" in json.loads(r))
    assert {d["file"] for d in duplicates} == {str(original.resolve())}
    assert not _duplicates(_events_of(client, f"{APP}/{PARENT}"))  # the oldest file keeps its records


def _alone(folder: Path, path: Path) -> Path:
    folder.mkdir()
    (folder / path.name).write_bytes(path.read_bytes())
    st = path.stat()
    os.utime(folder / path.name, (st.st_atime, st.st_mtime))
    return folder


# -- following a growing Claude Code file --------------------------------------------------------------------

@pytest.fixture
def growing(tmp_path: Path) -> Iterator[tuple[ServerThread, Path, list[bytes]]]:
    """The 2.1.17 session's first three records (the prompt) in a served project folder; the rest to append."""
    projects = claude_projects(tmp_path)
    path = projects / APP / f"{PARENT}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]))
    app = create_app([projects], serve_static=False, poll_interval=0.05)
    with ServerThread(app) as server:
        yield server, path, lines[3:]


def _events(stream: Iterator[tuple[str | None, Any]], until: str) -> list[dict[str, Any]]:
    """Event frames up to and including the first of type ``until``."""
    out: list[dict[str, Any]] = []
    while True:
        try:
            _, frame = next(stream)
        except httpx.ReadTimeout:
            raise AssertionError(f"no {until} within a second after {[e['type'] for e in out]}") from None
        assert isinstance(frame, EventFrame), frame
        out.append({"type": frame.event.type, "seq": frame.event.seq, "data": frame.event.data})
        if frame.event.type == until:
            return out


def test_a_growing_claude_file_is_followed_over_sse(growing: tuple[ServerThread, Path, list[bytes]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import assembler.server.catalog as catalog

    monkeypatch.setattr(catalog, "TAIL_IDLE_S", 0.3)  # the idle spell after which the newest response is closed
    server, path, rest = growing
    sid = f"{APP}/{PARENT}"
    url = f"{server.base_url}/api/sessions/{sid}/follow"
    # Reads wait at most a second: an append the watcher (polling every 50 ms) does not send by then fails the test.
    timeout = httpx.Timeout(10, read=1.0)
    with httpx.Client(timeout=timeout) as client, client.stream("GET", url) as response:
        stream = frames(response)
        _, snapshot = next(stream)
        assert isinstance(snapshot, SnapshotFrame)
        prompt = [r.event for r in snapshot.records if isinstance(r, EventRecord) and r.event.type == "user/message"]
        assert prompt and "Use the Explore task" in json.dumps(prompt[0].data)
        with path.open("ab") as out:
            out.write(rest[0] + rest[1])  # the Task call and its result: the call's response ends with the result
        got = _events(stream, "tool/result")
        calls = [e for e in got if e["type"] == "tool/call"]
        assert calls and calls[0]["data"]["name"] == "Task"
        assert got[-1]["data"]["message"]["content"][0]["toolCallId"] == calls[0]["data"]["callId"]
        seqs = [e["seq"] for e in got]
        assert seqs == list(range(snapshot.cursor + 1, snapshot.cursor + 1 + len(seqs)))
        # A torn last line waits for its end: the server reads half of it first, then the rest; a half read as a line
        # would be an error frame (the stream's `event: error`), not the answer's events.
        answer = rest[2]
        with path.open("ab") as out:
            out.write(answer[:100])
        source_update(server, sid)
        with path.open("ab") as out:
            out.write(answer[100:])
        # The answer is the newest response: Claude Code never marks its end, so it closes once the file is idle
        # (no write for TAIL_IDLE_S), within a second here.
        tail = _events(stream, "assistant/message")
        assert tail[0]["seq"] == seqs[-1] + 1  # nothing was lost or sent twice in between
        text = json.dumps(tail[-1]["data"]["message"]["content"])
        assert "Here's an overview of the **claude-code-log** project organization" in text
        assert not [e for e in tail if e["type"] == "interop/raw" and "error" in json.dumps(e["data"])]
