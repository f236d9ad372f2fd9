"""interop/claude_layout: what a Claude Code file's place in a project folder tells its reader (the sidecar, the
parent session), the project a file belongs to, the first recorded time of a file's head, and the uuids a project's
files share, each to the oldest file holding it. The server's ``context_of`` gives the same context from disk."""

from __future__ import annotations

import json
from pathlib import Path

from assembler.interop.claude_layout import (
    HEAD_BYTES,
    SIDECAR_MAX,
    ProjectUuids,
    first_time,
    layout_context,
    project_of,
    sidecar_of,
)
from assembler.server.registry import context_of
from tests.claude_projects import AGENT, META, PARENT, claude_projects


def test_sidecar_of_names_the_meta_json_beside_a_jsonl_only() -> None:
    assert sidecar_of("p/s/subagents/agent-a1.jsonl") == "p/s/subagents/agent-a1.meta.json"
    assert sidecar_of("p/s.json") is None
    assert sidecar_of("p/agent-a1.meta.json") is None


def test_a_subagent_file_gets_its_sidecar_and_parent_session() -> None:
    meta = json.dumps({"agentType": "Explore", "description": "Look around"}).encode()
    assert layout_context("proj/sess-1/subagents/agent-a1.jsonl", meta) == {
        "agentMeta": {"agentType": "Explore", "description": "Look around"}, "parentSession": "sess-1"}
    assert layout_context("/home/u/.claude/projects/p/sess-1/subagents/agent-a1.jsonl", None) == {
        "parentSession": "sess-1"}
    assert layout_context("proj/agent-a1.jsonl", meta) == {"agentMeta": json.loads(meta)}  # 2.0.x: beside


def test_a_bad_or_oversized_sidecar_is_ignored_and_other_files_get_nothing() -> None:
    assert layout_context("proj/agent-a1.jsonl", b"{not json") is None
    assert layout_context("proj/agent-a1.jsonl", b"[1, 2]") is None  # valid JSON, not an object
    big = json.dumps({"description": "x" * SIDECAR_MAX}).encode()
    assert layout_context("proj/agent-a1.jsonl", big) is None
    assert layout_context("proj/session.jsonl", None) is None
    assert layout_context("proj/log.eval", b"{}") is None


def test_the_project_of_a_subagent_is_its_parents_folder() -> None:
    assert project_of("projects/-src-app/s1.jsonl") == "projects/-src-app"
    assert project_of("projects/-src-app/s1/subagents/agent-a.jsonl") == "projects/-src-app"
    assert project_of("s1.jsonl") == ""
    assert project_of("sess/subagents/x.jsonl") == ""  # the session folder is at the top
    assert project_of("subagents/x.jsonl") == "subagents"  # no session folder above it: the folder itself


def test_first_time_is_the_first_record_time_of_the_head(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    data = (projects / "-src-experiments-claude_p" / f"{PARENT}.jsonl").read_bytes()
    first = json.loads(data.split(b"\n", 1)[0])["timestamp"]  # 2026-01-23T17:34:42.719Z: the queue-operation line
    assert first_time(data) == first_time(json.dumps({"timestamp": first}).encode() + b"\n") == 1769189682719
    assert first_time(data[:HEAD_BYTES]) == 1769189682719
    assert first_time(b"") is None
    assert first_time(b"garbage\n{\"type\":\"summary\",\"summary\":\"t\",\"leafUuid\":\"u\"}\n") is None
    cut = data.split(b"\n", 1)[0][:40]  # a first line cut short: no complete record, no time
    assert first_time(cut) is None


def test_project_uuids_belong_to_the_oldest_file_holding_them() -> None:
    project = ProjectUuids()
    project.rank("b.jsonl", 2000)
    project.rank("a.jsonl", 1000)
    project.rank("resumed.jsonl", 1000, mtime=5.0)  # same first time as a.jsonl (copied records), written later
    project.rank("empty.jsonl", None)
    assert project.order(["empty.jsonl", "b.jsonl", "resumed.jsonl", "a.jsonl"]) == [
        "a.jsonl", "resumed.jsonl", "b.jsonl", "empty.jsonl"]
    seen_by_resumed = project.before("resumed.jsonl")
    assert "u1" not in seen_by_resumed and len(seen_by_resumed) == 0
    project.add("a.jsonl", ["u1", "u2"])
    project.add("resumed.jsonl", ["u1", "u2", "u3"])
    assert "u1" in seen_by_resumed and seen_by_resumed["u2"] == "a.jsonl"  # a live view: a.jsonl was read after
    assert "u3" not in seen_by_resumed and seen_by_resumed.get("u3") is None
    assert dict(project.before("b.jsonl")) == {"u1": "a.jsonl", "u2": "a.jsonl", "u3": "resumed.jsonl"}
    assert len(project.before("a.jsonl")) == 0  # the oldest file sees nothing before it
    project.add("b.jsonl", ["u1"])  # a newer file never takes a uuid from an older one
    assert project.holder("u1") == "a.jsonl"


def test_the_servers_context_of_reads_the_same_layout_from_disk(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    agent = projects / "-src-experiments-claude_p" / PARENT / "subagents" / f"{AGENT}.jsonl"
    assert context_of(agent) == {"agentMeta": META, "parentSession": PARENT}
    assert context_of(agent) == layout_context(agent.as_posix(), agent.with_name(f"{AGENT}.meta.json").read_bytes())
    assert context_of(projects / "-src-experiments-claude_p" / f"{PARENT}.jsonl") is None
