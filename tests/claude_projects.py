"""A ``~/.claude/projects``-shaped folder built at test time from the real Claude Code logs in the fixtures (their
bytes copied into a temporary folder, never into the repo), for the folder, list and follow tests.

Layout (FORMATS §4.1, §4.7)::

    projects/-src-experiments-claude_p/29ccd257-….jsonl                       a 2.1.17 session with a Task call
    projects/-src-experiments-claude_p/29ccd257-…/subagents/agent-a2271d1.jsonl   its subagent
    projects/-src-experiments-claude_p/29ccd257-…/subagents/agent-a2271d1.meta.json  written here (the fixture has none)
    projects/-Users-dain-workspace-JSSoundRecorder/2c5941bd-….jsonl          a zero-byte session
    projects/-Users-dain-workspace-claude-code-log/df749439-….jsonl          1.0.35: inline sidechains
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.interop_support import interop_file

REAL = "claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data"
PARENT = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"
AGENT = "agent-a2271d1"
EMPTY = "2c5941bd-b9de-41d6-9414-221d175776f7"
INLINE = "df749439-8556-41bf-9965-9f49cf38bf2a"
CWD = "/src/experiments/claude_p"
INLINE_CWD = "/Users/dain/workspace/claude-code-log"
META = {"agentType": "Explore", "description": "Survey the code organisation"}
PARENT_PROMPT = "Use the Explore task in sub-agents with Haiku model"  # the session's first prompt (real text)
AGENT_PROMPT = "Give me a comprehensive overview of the code organization"  # the subagent's (real text)


def claude_projects(root: Path) -> Path:
    """Builds the folder under ``root``; returns its ``projects`` folder (files writable)."""
    projects = root / "projects"
    app = projects / "-src-experiments-claude_p"
    subagents = app / PARENT / "subagents"
    subagents.mkdir(parents=True)
    real = f"{REAL}/real_projects/-src-experiments-claude_p"
    (app / f"{PARENT}.jsonl").write_bytes(interop_file(f"{real}/{PARENT}.jsonl").read_bytes())
    (subagents / f"{AGENT}.jsonl").write_bytes(interop_file(f"{real}/{PARENT}/subagents/{AGENT}.jsonl").read_bytes())
    (subagents / f"{AGENT}.meta.json").write_text(json.dumps(META))
    empty = projects / "-Users-dain-workspace-JSSoundRecorder"
    empty.mkdir()
    (empty / f"{EMPTY}.jsonl").write_bytes(b"")
    inline = projects / "-Users-dain-workspace-claude-code-log"
    inline.mkdir()
    (inline / f"{INLINE}.jsonl").write_bytes(interop_file(f"{REAL}/sidechain.jsonl").read_bytes())
    return projects


def records_of(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip()]


def add_resumed(projects: Path) -> tuple[Path, Path]:
    """A session resumed from the 2.1.17 one, beside it: its history copied (same uuids and times), then a turn of
    its own (real records of another session). Its name sorts first and its first record time is the original's:
    only the order of writing tells them apart (the original's mtime is a minute earlier). Every file of the folder
    is made idle (an hour old). Returns ``(original, resumed)``."""
    app = projects / "-src-experiments-claude_p"
    original = app / f"{PARENT}.jsonl"
    messages = "claude-code/claude-code-log-1.7.0/dev-docs/messages/claude-code"
    own = records_of(interop_file(f"{messages}/user/user.jsonl")) + records_of(
        interop_file(f"{messages}/assistant/assistant.jsonl"))
    resumed = app / "0resumed.jsonl"
    resumed.write_bytes(b"\n".join(records_of(original) + own) + b"\n")
    then = time.time() - 3600
    for p in projects.rglob("*"):
        if p.is_file():
            os.utime(p, (then, then))
    os.utime(original, (then - 60, then - 60))
    return original, resumed


WARMUP_AGENT = "agent-w4rm0001"


def add_warmup(projects: Path) -> Path:
    """A 2.0.x pre-warmed agent beside the 2.1.17 session (FORMATS §4.1): only a ``Warmup`` prompt and a canned
    reply. Hand-written records of the documented shape (the fixtures hold none)."""
    app = projects / "-src-experiments-claude_p"
    base = {"isSidechain": True, "userType": "external", "cwd": CWD, "sessionId": PARENT, "version": "2.0.5",
            "agentId": WARMUP_AGENT.removeprefix("agent-")}
    records = [
        {**base, "parentUuid": None, "type": "user", "uuid": "w-1", "timestamp": "2026-01-23T17:30:00.000Z",
         "message": {"role": "user", "content": "Warmup"}},
        {**base, "parentUuid": "w-1", "type": "assistant", "uuid": "w-2", "timestamp": "2026-01-23T17:30:01.000Z",
         "message": {"id": "msg_w", "type": "message", "role": "assistant", "model": "claude-haiku-4-5-20251001",
                     "content": [{"type": "text", "text": "Ready."}], "stop_reason": "end_turn",
                     "usage": {"input_tokens": 3, "output_tokens": 2}}},
    ]
    path = app / f"{WARMUP_AGENT}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
