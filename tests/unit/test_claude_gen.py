"""The Claude Code session generator (``perf/claude_gen.py``) writes files the reader reads with no warning."""

from __future__ import annotations

import json

from assembler.formats import detect
from assembler.interop.claude import split_sidechains
from perf.claude_gen import generate
from tests.interop_support import check_log, of_type


def test_generated_session_reads_with_no_warnings_and_is_deterministic() -> None:
    data = generate(60_000, seed=3)
    assert len(data) >= 60_000 and data == generate(60_000, seed=3) and data != generate(60_000, seed=4)
    assert detect(data, complete=True).name == "claude-code"
    (log,) = split_sidechains(data, "gen.jsonl")
    result = log.result
    assert result.error is None and result.warnings == []
    check_log(result)
    records = [json.loads(line) for line in data.splitlines()]
    ids = {r["message"]["id"] for r in records if r["type"] == "assistant"}
    assert len(of_type(result, "assistant/message")) == len(ids)  # one step per response, records merged
    multi = sum(1 for i in ids if sum(1 for r in records if r.get("message", {}).get("id") == i) > 1)
    assert multi > 0
    calls = of_type(result, "tool/call")
    assert calls and len(of_type(result, "tool/result")) == len(calls)
    assert {c["data"]["name"] for c in calls} >= {"Bash", "Read", "Edit", "Write", "TodoWrite"}
    assert len(of_type(result, "turn/end")) == len(of_type(result, "turn/start"))  # each turn ends with its duration


def test_generated_sidechains_become_child_sessions() -> None:
    logs = split_sidechains(generate(40_000, seed=5, sidechains=True), "gen.jsonl")
    assert len(logs) > 1
    for log in logs:
        assert log.result.warnings == []
        check_log(log.result)
    links = [r["data"]["meta"]["subagent"]["childSessionId"] for r in of_type(logs[0].result, "tool/result")
             if "subagent" in r["data"].get("meta", {})]
    assert links == [log.key for log in logs[1:]]
