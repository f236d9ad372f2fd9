"""The Claude Code reader (FORMATS §4): what each real record becomes, every fixture through ``check_log``, and the
mapping rules on small records written here (responses split over records, duplicates, turns, compaction, rewinds,
titles, subagents, the live tail)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler.formats import detect
from assembler.interop.base import RAW, LineLoader, json_args, read_lines
from assembler.interop.claude import ClaudeCodeReader, split_sidechains
from assembler.logfile import LoadResult
from tests.interop_support import check_log, interop_file, interop_files, of_type

SAMPLES = "claude-code/claude-code-log-1.7.0/dev-docs/messages/claude-code"
REAL = "claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data"
PROJECT = f"{REAL}/real_projects/-src-experiments-claude_p"
MAIN_ID = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"


def _read(path: Path, context: dict[str, Any] | None = None) -> tuple[ClaudeCodeReader, LoadResult]:
    reader = ClaudeCodeReader(path.name, context)
    return reader, read_lines(reader, path.read_bytes())


def _sample(rel: str) -> tuple[ClaudeCodeReader, LoadResult, dict[str, Any]]:
    """A one-record sample read alone; an inline sidechain record (1.0.x, no ``agentId``) is read from the child
    log it is routed to."""
    path = interop_file(f"{SAMPLES}/{rel}")
    reader, result = _read(path)
    children = reader.children
    return reader, children[0].result if children else result, json.loads(path.read_bytes())


def _pair(name: str) -> LoadResult:
    """A tool's use and result samples read as one file (the result needs its call to know the tool)."""
    data = b"".join(interop_file(f"{SAMPLES}/tools/{name}-{part}.jsonl").read_bytes().rstrip(b"\n") + b"\n"
                    for part in ("tool_use", "tool_result"))
    logs = split_sidechains(data, "s.jsonl")
    check_log(logs[-1].result)
    return logs[-1].result


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def _usage_sum(results: list[LoadResult]) -> dict[str, int]:
    total: dict[str, int] = {}
    for result in results:
        for event in of_type(result, "assistant/chunk"):
            chunk = event["data"]["chunk"]
            if chunk["type"] == "usage":
                for k, v in chunk["usage"].items():
                    total[k] = total.get(k, 0) + v
    return total


def _source_usage(records: list[dict[str, Any]]) -> tuple[int, dict[str, int]]:
    """(distinct message ids, the usage of each id's last record summed), from the source records themselves."""
    last: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.get("type") == "assistant" and r["message"].get("usage"):
            last[r["message"]["id"]] = r["message"]["usage"]
    total = {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    for u in last.values():
        total["inputTokens"] += u["input_tokens"]
        total["outputTokens"] += u["output_tokens"]
        total["cacheReadTokens"] += u["cache_read_input_tokens"]
        total["cacheWriteTokens"] += u["cache_creation_input_tokens"]
    return len(last), total


# -- every fixture -------------------------------------------------------------------------------------------------

def _fixtures() -> Iterator[Any]:
    files = interop_files("claude-code", ".jsonl")
    if not files:
        yield pytest.param(None, marks=pytest.mark.skip(reason="claude-code fixtures not found"))
    for path in files:
        yield pytest.param(path, id=path.name)


@pytest.mark.parametrize("path", list(_fixtures()))
def test_every_fixture_reads_cleanly_with_its_children(path: Path) -> None:
    data = path.read_bytes()
    if data:
        assert detect(data, complete=True).name == "claude-code"
    logs = split_sidechains(data, path.name)
    for log in logs:
        check_log(log.result)
        assert log.result.warnings == []
    source_lines = sum(1 for line in data.split(b"\n") if line.strip())
    kept = [e for e in logs[0].result.records if e["type"] in ("interop/source", RAW)]
    assert len(kept) == source_lines  # every line is kept in the main log (sidechain lines as stubs)


def test_empty_file_is_an_empty_session() -> None:
    path = interop_file(f"{REAL}/real_projects/-Users-dain-workspace-JSSoundRecorder/"
                        "2c5941bd-b9de-41d6-9414-221d175776f7.jsonl")
    _, result = _read(path)
    assert result.records == [] and result.error is None
    assert result.header is not None and result.header["id"] == "2c5941bd-b9de-41d6-9414-221d175776f7"
    check_log(result)


# -- the one-record samples ----------------------------------------------------------------------------------------

def test_assistant_record_is_one_step_with_usage_and_no_finish_when_stop_reason_is_null() -> None:
    _, result, rec = _sample("assistant/assistant.jsonl")
    assert len(of_type(result, "step/start")) == 1
    chunks = [e["data"]["chunk"] for e in of_type(result, "assistant/chunk")]
    assert [c["type"] for c in chunks] == ["block-end", "usage"]
    assert chunks[1]["usage"] == {"inputTokens": 4, "outputTokens": 2, "cacheReadTokens": 12008,
                                  "cacheWriteTokens": 4756}
    (message,) = of_type(result, "assistant/message")
    assert message["data"]["message"]["id"] == rec["message"]["id"]
    assert message["data"]["message"]["source"] == {"kind": "model", "provider": "anthropic",
                                                    "model": "claude-opus-4-1-20250805"}
    assert message["sourceEventSeqs"] == [e["seq"] for e in of_type(result, "assistant/chunk")]
    assert of_type(result, "request/context")[0]["data"] == {"provider": "anthropic",
                                                              "model": "claude-opus-4-1-20250805"}
    header = result.header
    assert header is not None
    assert (header["sessionId"], header["cwd"], header["sourceVersion"], header["gitBranch"]) == (
        rec["sessionId"], rec["cwd"], "1.0.128", "main")
    assert header["createdAt"] == message["time"] == 1759165670508


def test_thinking_becomes_a_reasoning_block() -> None:
    _, result, rec = _sample("assistant/thinking.jsonl")
    (message,) = of_type(result, "assistant/message")
    (block,) = message["data"]["message"]["content"]
    assert block == {"type": "reasoning", "text": rec["message"]["content"][0]["thinking"]}


def _tool_names() -> list[str]:
    return sorted({p.name.split("-tool_")[0] for p in interop_files("claude-code", "-tool_use.jsonl")})


@pytest.mark.parametrize("name", _tool_names() or ["Bash"])
def test_tool_use_is_a_tool_call_block_and_a_tool_call_event(name: str) -> None:
    _, result, rec = _sample(f"tools/{name}-tool_use.jsonl")
    uses = [b for b in rec["message"]["content"] if b["type"] == "tool_use"]
    calls = of_type(result, "tool/call")
    assert [(c["data"]["callId"], c["data"]["name"], c["data"]["arguments"]) for c in calls] == [
        (u["id"], u["name"], json_args(u["input"])) for u in uses]
    blocks = of_type(result, "assistant/message")[0]["data"]["message"]["content"]
    assert [b for b in blocks if b["type"] == "tool-call"] == [
        {"type": "tool-call", "id": u["id"], "name": u["name"], "arguments": json_args(u["input"])} for u in uses]
    todo = of_type(result, "todo/write")
    if name == "TodoWrite":
        assert todo[0]["data"]["todos"] == [{"content": t["content"], "status": t["status"]}
                                            for t in uses[0]["input"]["todos"]]
    else:
        assert todo == []


@pytest.mark.parametrize("name", sorted({p.name[:-len(".jsonl")] for p in interop_files(
    "claude-code", ".jsonl") if "-tool_result" in p.name}) or ["Bash-tool_result"])
def test_tool_result_keeps_what_the_model_got_and_the_side_copy_in_meta(name: str) -> None:
    _, result, rec = _sample(f"tools/{name}.jsonl")
    (event,) = of_type(result, "tool/result")
    block = rec["message"]["content"][0]
    (tr,) = event["data"]["message"]["content"]
    assert tr["toolCallId"] == block["tool_use_id"] and tr["isError"] is bool(block.get("is_error"))
    recorded = block["content"]
    texts = [recorded] if type(recorded) is str else [b["text"] for b in recorded if b["type"] == "text"]
    assert [b["text"] for b in tr["content"]] == [t for t in texts if t]
    assert event["data"]["meta"]["toolUseResult"] == rec["toolUseResult"]
    if type(rec["toolUseResult"]) is str:
        assert event["data"]["meta"]["view"] == {"kind": "error", "text": rec["toolUseResult"]}


def test_tool_result_views_by_tool() -> None:
    def view(name: str) -> dict[str, Any]:
        return of_type(_pair(name), "tool/result")[0]["data"]["meta"]["view"]  # type: ignore[no-any-return]

    bash = view("Bash")
    assert bash == {"kind": "shell", "stdout": "", "stderr": "", "interrupted": False}
    multi = view("MultiEdit")
    assert multi["kind"] == "diff" and multi["path"].endswith("tokenizer.js")
    assert len(multi["edits"]) == 3 and multi["patch"][0]["lines"][0].startswith("-")
    write = view("Write")
    assert write["kind"] == "diff" and "create" not in write and write["new"].startswith("# Online LLM")
    read = view("Read")
    assert read == {"kind": "read", "path": read["path"], "startLine": 95, "numLines": 15, "totalLines": 148,
                    "fileType": "text"}
    todo = view("TodoWrite")
    assert todo["kind"] == "todo" and todo["oldTodos"] == [] and [t["status"] for t in todo["todos"]] == [
        "pending", "pending"]
    assert view("BashOutput")["status"] == "running"
    assert view("Edit")["kind"] == "error"  # the recorded side copy is the CLI's error text


def test_task_result_links_its_subagent_by_agent_id() -> None:
    _, result, rec = _sample("tools/Task-tool_result.jsonl")
    meta = of_type(result, "tool/result")[0]["data"]["meta"]
    # no Task call in this one-record file: the tool name is unknown, so no view; the side copy is still kept
    assert meta["toolUseResult"]["agentId"] == "ea02459f"
    result = _pair("Task")
    meta = of_type(result, "tool/result")[0]["data"]["meta"]
    assert meta["subagent"] == {"kind": "subagent", "parentSessionId": "s", "childSessionId": "agent-ea02459f",
                                "mode": "one-shot"}
    assert meta["view"]["kind"] == "subagent" and meta["view"]["totalToolUseCount"] == 14


def _only_message(rel: str) -> tuple[LoadResult, dict[str, Any]]:
    _, result, _ = _sample(rel)
    (message,) = of_type(result, "user/message")
    return result, message["data"]


@pytest.mark.parametrize(("rel", "source", "turn"), [
    ("user/user.jsonl", {"kind": "user"}, True),
    ("user/bash_input.jsonl", {"kind": "plugin", "plugin": "claude-code", "form": "bash-input"}, True),
    ("user/bash_output.jsonl", {"kind": "plugin", "plugin": "claude-code", "form": "bash-output"}, False),
    ("user/command_output.jsonl", {"kind": "plugin", "plugin": "claude-code", "form": "command-output"}, False),
    ("user/user_command.jsonl", {"kind": "plugin", "plugin": "claude-code", "form": "command"}, True),
    ("user/user_slash_command.jsonl", {"kind": "plugin", "plugin": "claude-code", "form": "meta"}, False),
    ("user/image.jsonl", {"kind": "user"}, True),
    ("user/user_sidechain.jsonl", {"kind": "user"}, True),
])
def test_each_user_sample_is_classified(rel: str, source: dict[str, Any], turn: bool) -> None:
    result, message = _only_message(rel)
    assert message["source"] == source
    assert bool(of_type(result, "turn/start")) is turn


def test_slash_command_becomes_a_command_run() -> None:
    result, _ = _only_message("user/user_command.jsonl")
    (run,) = of_type(result, "command/run")
    assert run["data"]["name"] == "model" and "args" not in run["data"]
    (done,) = of_type(result, "command/done")  # no output in this one-record file: ended at the end of input
    assert done["data"] == {"commandId": run["data"]["commandId"], "kind": "done"}


def test_command_output_completes_its_command() -> None:
    data = (interop_file(f"{SAMPLES}/user/user_command.jsonl").read_bytes().rstrip(b"\n") + b"\n"
            + interop_file(f"{SAMPLES}/user/command_output.jsonl").read_bytes())
    result = read_lines(ClaudeCodeReader("s.jsonl"), data)
    check_log(result)
    (done,) = of_type(result, "command/done")
    assert done["data"]["kind"] == "success"
    assert done["data"]["text"].startswith("Set model to")


def test_image_block_is_an_attachment_with_its_data() -> None:
    result, message = _only_message("user/image.jsonl")
    rec = json.loads(interop_file(f"{SAMPLES}/user/image.jsonl").read_bytes())
    images = [b for b in message["content"] if b["type"] == "image"]
    source = [b for b in rec["message"]["content"] if b["type"] == "image"][0]["source"]
    att = images[0]["attachment"]
    assert att["mediaType"] == "image/png" and att["encoding"] == "base64"
    assert att["data"] is not None and att["data"] == source["data"]
    assert abs(att["bytes"] - len(source["data"]) * 3 / 4) < 3


def test_warmup_subagent_is_flagged() -> None:
    result, _ = _only_message("user/user_sidechain.jsonl")
    header = result.header
    assert header is not None and header["warmup"] is True and header["origin"] == "subagent"
    assert header["parentSession"] == "7864f562-717b-4d70-a1cb-b588f7826a1a"
    assert of_type(result, "subagent/descriptor")[0]["data"]["mode"] == "one-shot"


def test_summary_only_file_gives_titles_not_a_session() -> None:
    reader, result, rec = _sample("system/summary.jsonl")
    assert result.header is not None and result.header["summaryOnly"] is True
    assert reader.titles == [(rec["leafUuid"], rec["summary"])]
    assert of_type(result, "session/title") == []  # the leaf is in another file
    assert of_type(result, RAW)[0]["data"]["record"] == rec


@pytest.mark.parametrize(("rel", "notice"), [
    ("system/queue_operation.jsonl", "Queue enqueue: /init"),
    ("system/system_info.jsonl", "Running \x1b[1mPostToolUse:MultiEdit\x1b[22m..."),
    ("system/file_history_snapshot.jsonl", None),
])
def test_bookkeeping_records_stay_raw(rel: str, notice: str | None) -> None:
    _, result, rec = _sample(rel)
    (raw,) = of_type(result, RAW)
    assert raw["data"]["record"] == rec and raw["data"].get("notice") == notice
    assert len(result.records) == 1


# -- the 2.1.x project and the 1.0.x inline sidechains -------------------------------------------------------------

def test_project_main_session_links_its_subagent() -> None:
    path = interop_file(f"{PROJECT}/{MAIN_ID}.jsonl")
    reader, result = _read(path)
    check_log(result)
    assert reader.children == []
    assert len(of_type(result, "step/start")) == 2
    (call,) = of_type(result, "tool/call")
    (res,) = of_type(result, "tool/result")
    assert res["sourceEventSeqs"] == [call["seq"]] and call["data"]["name"] == "Task"
    assert res["data"]["meta"]["subagent"] == {"kind": "subagent", "parentSessionId": MAIN_ID,
                                               "childSessionId": "agent-a2271d1", "mode": "one-shot"}
    assert res["data"]["meta"]["view"]["agentId"] == "a2271d1"
    assert _usage_sum([result]) == _source_usage(_records(path))[1]


def test_project_subagent_file_is_a_child_linked_to_its_parent() -> None:
    path = interop_file(f"{PROJECT}/{MAIN_ID}/subagents/agent-a2271d1.jsonl")
    meta = {"agentType": "Explore", "description": "Explore codebase structure"}
    reader, result = _read(path, {"agentMeta": meta})
    check_log(result)
    header = result.header
    assert header is not None
    assert header["id"] == "agent-a2271d1" and header["parentSession"] == MAIN_ID
    assert header["agentId"] == "a2271d1" and header["subagentLabel"] == "Explore codebase structure"
    assert "warmup" not in header
    (desc,) = of_type(result, "subagent/descriptor")
    assert desc["data"] == {"version": 2, "mode": "one-shot", "provider": "claude-code",
                            "label": "Explore codebase structure", "agentType": "Explore"}
    records = _records(path)
    ids, usage = _source_usage(records)
    assert len(of_type(result, "step/start")) == len(of_type(result, "assistant/message")) == ids == 10
    assert _usage_sum([result]) == usage  # once per message id, from its last record
    calls = {c["data"]["callId"]: c["seq"] for c in of_type(result, "tool/call")}
    results = of_type(result, "tool/result")
    assert len(calls) == len(results) == 24
    assert all(r["sourceEventSeqs"] == [calls[r["data"]["message"]["source"]["callId"]]] for r in results)
    # each block-end carries its own record's time
    times = [e["time"] for e in of_type(result, "assistant/chunk") if e["data"]["chunk"]["type"] == "block-end"]
    from assembler.interop.base import iso_ms
    assert times == [iso_ms(r["timestamp"]) for r in records if r["type"] == "assistant"]


def test_subagent_file_without_meta_labels_itself_from_its_prompt() -> None:
    path = interop_file(f"{PROJECT}/{MAIN_ID}/subagents/agent-a2271d1.jsonl")
    _, result = _read(path)
    assert result.header is not None and result.header["subagentLabel"].startswith("Give me a comprehensive")


def test_inline_sidechains_become_a_child_session() -> None:
    path = interop_file(f"{REAL}/sidechain.jsonl")
    logs = split_sidechains(path.read_bytes(), path.name)
    assert [log.key for log in logs] == ["", "sidechain:a42c6fa0-5937-49b4-b1ad-42e99d44bef9"]
    main, child = logs[0].result, logs[1].result
    for log in logs:
        check_log(log.result)
    # the main log shows only its own chain: one step with the Task call, no sidechain prompt
    assert of_type(main, "user/message") == [] and len(of_type(main, "step/start")) == 1
    (call,) = of_type(main, "tool/call")
    stubs = [e["data"]["record"] for e in of_type(main, RAW)]
    assert len(stubs) == 7 and {s["childSession"] for s in stubs} == {logs[1].key}
    header = child.header
    assert header is not None
    assert header["parentSession"] == "sidechain" and header["parentCallId"] == call["data"]["callId"]
    assert header["subagentLabel"] == "Debug failing test output" == logs[1].label
    (prompt,) = of_type(child, "user/message")
    assert prompt["data"]["content"][0]["text"] == json.loads(call["data"]["arguments"])["prompt"]
    records = _records(path)
    ids, usage = _source_usage([r for r in records if r["isSidechain"]])
    assert len(of_type(child, "step/start")) == ids == 3
    assert _usage_sum([child]) == usage
    assert len(of_type(child, "tool/result")) == 1  # the second Read's result is not in the file


# -- rules on records written here ---------------------------------------------------------------------------------

_T0 = "2025-01-01T10:00:00.000Z"


def _ts(second: int) -> str:
    return f"2025-01-01T10:00:{second:02d}.000Z"


def _user(uuid: str, parent: str | None, content: Any, second: int = 0, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": _ts(second),
            "message": {"role": "user", "content": content}, **extra}


def _assistant(uuid: str, parent: str, mid: str, block: dict[str, Any], second: int = 0,
               stop: str | None = None, out: int = 2, **extra: Any) -> dict[str, Any]:
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 200,
             "output_tokens": out}
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": _ts(second),
            "message": {"id": mid, "model": "claude-x", "role": "assistant", "content": [block],
                        "stop_reason": stop, "usage": usage}, **extra}


def _result(uuid: str, parent: str, call: str, text: str, second: int = 0, **extra: Any) -> dict[str, Any]:
    return _user(uuid, parent, [{"type": "tool_result", "tool_use_id": call, "content": text}], second, **extra)


def _tool(call: str, name: str = "Bash", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": name, "input": args or {"command": "ls"}}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _run(*records: dict[str, Any], context: dict[str, Any] | None = None) -> tuple[ClaudeCodeReader, LoadResult]:
    reader = ClaudeCodeReader("s.jsonl", context)
    result = read_lines(reader, _jsonl(*records))
    check_log(result)
    assert result.warnings == []
    return reader, result


def test_response_merged_by_message_id_across_a_hook_line_and_finished_by_its_last_record() -> None:
    hook = {"type": "system", "uuid": "h1", "parentUuid": "a1", "content": "Running hook", "timestamp": _ts(2)}
    _, result = _run(
        _user("u1", None, "hi"),
        _assistant("a1", "u1", "m1", {"type": "thinking", "thinking": "hmm", "signature": "x"}, 1),
        hook,
        _assistant("a2", "a1", "m1", _text("(no content)"), 3),
        _assistant("a3", "a2", "m1", _tool("c1"), 4, stop="tool_use", out=50),
        _result("u2", "a3", "c1", "out", 5, toolUseResult={"stdout": "out", "stderr": "", "interrupted": False}),
        _assistant("a4", "u2", "m2", _text("done"), 6, stop="end_turn", out=7),
    )
    assert len(of_type(result, "step/start")) == 2
    first, second = of_type(result, "assistant/message")
    assert [b["type"] for b in first["data"]["message"]["content"]] == ["reasoning", "tool-call"]
    chunks = [e for e in of_type(result, "assistant/chunk") if e["data"]["step"] == 1]
    assert [(c["data"]["chunk"]["type"], c["time"]) for c in chunks] == [
        ("block-end", 1735725601000), ("block-end", 1735725604000), ("usage", 1735725604000),
        ("finish", 1735725604000)]
    assert chunks[3]["data"]["chunk"]["reason"] == {"kind": "tool-calls"}
    assert _usage_sum([result]) == {"inputTokens": 8, "outputTokens": 57, "cacheReadTokens": 400,
                                    "cacheWriteTokens": 200}
    assert of_type(result, "assistant/chunk")[-1]["data"]["chunk"]["reason"] == {"kind": "stop"}
    raws = {e["data"]["origin"]["line"]: e["data"] for e in of_type(result, RAW)}
    assert raws[3]["notice"] == "Running hook" and raws[4]["recordType"] == "assistant"  # the placeholder


def test_a_record_of_a_closed_response_opens_a_continuation_step_counting_only_what_it_adds() -> None:
    _, result = _run(
        _user("u1", None, "hi"),
        _assistant("a1", "u1", "m1", _tool("c1"), 1, out=3),
        _result("u2", "a1", "c1", "out", 2),
        _assistant("a2", "a1", "m1", _tool("c2"), 3, out=40),
        _result("u3", "a2", "c2", "out", 4),
    )
    steps = of_type(result, "step/start")
    assert len(steps) == 2
    usages = [e["data"]["chunk"]["usage"] for e in of_type(result, "assistant/chunk")
              if e["data"]["chunk"]["type"] == "usage"]
    assert usages == [{"inputTokens": 4, "outputTokens": 3, "cacheReadTokens": 200, "cacheWriteTokens": 100},
                      {"inputTokens": 0, "outputTokens": 37, "cacheReadTokens": 0, "cacheWriteTokens": 0}]
    assert [m["data"]["message"]["id"] for m in of_type(result, "assistant/message")] == ["m1", "m1"]


def test_duplicate_uuid_is_kept_raw_and_seen_uuids_hide_a_projects_repeats() -> None:
    u1 = _user("u1", None, "hi")
    reader, result = _run(u1, _assistant("a1", "u1", "m1", _text("yo")), u1)
    (dup,) = of_type(result, RAW)
    assert dup["data"]["duplicateOf"] == {"uuid": "u1", "line": 1} and dup["data"]["record"] == u1
    assert reader.uuids == ["u1", "a1"]
    later, result = _run(u1, _user("u5", None, "again", 9), context={"seenUuids": {"u1": "first.jsonl"}})
    (dup,) = of_type(result, RAW)
    assert dup["data"]["duplicateOf"] == {"uuid": "u1", "file": "first.jsonl"}
    assert later.uuids == ["u5"] and len(of_type(result, "user/message")) == 1
    _, result = _run(u1, context={"seenUuids": {"u1"}})
    assert of_type(result, RAW)[0]["data"]["duplicateOf"] == {"uuid": "u1"}


def test_turns_end_completed_aborted_and_with_a_recorded_duration() -> None:
    duration = {"type": "system", "subtype": "turn_duration", "durationMs": 12000, "uuid": "s1",
                "parentUuid": "a1", "timestamp": _ts(3)}
    _, result = _run(
        _user("u1", None, "one"),
        _assistant("a1", "u1", "m1", _text("ok"), 1, stop="end_turn"),
        duration,
        _user("u2", "s1", "two", 4),
        _assistant("a2", "u2", "m2", _tool("c1"), 5),
        _user("u3", "a2", [_text("[Request interrupted by user for tool use]")], 6),
        _user("u4", "u3", "three", 7),
    )
    ends = [e["data"] for e in of_type(result, "turn/end")]
    assert ends == [{"turn": 1, "reason": {"kind": "completed"}, "durationMs": 12000},
                    {"turn": 2, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}]
    sources = [m["data"]["source"] for m in of_type(result, "user/message")]
    assert sources[2] == {"kind": "plugin", "plugin": "claude-code", "form": "interrupt"}
    assert len(of_type(result, "turn/start")) == 3  # the last turn has no recorded end: left open


def test_api_error_record_ends_the_turn_with_an_error_not_model_output() -> None:
    error = _assistant("a1", "u1", "m-err", _text("API Error: 500 overloaded"), 1, isApiErrorMessage=True)
    error["message"]["model"] = "<synthetic>"
    _, result = _run(_user("u1", None, "hi"), error)
    assert of_type(result, "assistant/message") == [] and _usage_sum([result]) == {}
    (end,) = of_type(result, "turn/end")
    assert end["data"]["reason"] == {"kind": "error", "error": {"message": "API Error: 500 overloaded",
                                                                "code": "api_error"}}


def test_compaction_replaces_the_surface_with_the_summary() -> None:
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None,
                "logicalParentUuid": "a1", "content": "Conversation compacted", "timestamp": _ts(2),
                "compactMetadata": {"trigger": "manual", "preTokens": 1000}}
    summary = _user("u2", "b1", "This session is being continued from a previous conversation ...", 3,
                    isCompactSummary=True, isVisibleInTranscriptOnly=True)
    _, result = _run(_user("u1", None, "hi"), _assistant("a1", "u1", "m1", _text("yo"), 1), boundary, summary)
    types = [e["type"] for e in result.records if e["type"].startswith("compaction/")]
    assert types == ["compaction/start", "compaction/summary", "compaction/end"]
    before = [e["seq"] for e in result.records if e.get("surfaceOp") == "append"]
    (summ,) = of_type(result, "compaction/summary")
    assert summ["data"]["shadowedSeqs"] == before and summ["data"]["shadowedTokenCount"] == 1000
    replacement = of_type(result, "user/message")[-1]
    assert replacement["data"]["source"] == {"kind": "plugin", "plugin": "compact"}
    assert replacement["surfaceOp"] == {"op": "replace", "start": before[0], "end": before[-1]}


def test_rewind_keeps_both_branches_and_the_last_one_is_the_surface() -> None:
    _, result = _run(
        _user("u1", "r0", "first try"),
        _assistant("a1", "u1", "m1", _text("answer 1"), 1),
        _user("u2", "r0", "second try", 2),
        _assistant("a2", "u2", "m2", _text("answer 2"), 3),
    )
    (branch,) = of_type(result, "interop/branch")
    first_prompt = of_type(result, "user/message")[0]["seq"]
    assert branch["data"]["parentUuid"] == "r0" and branch["data"]["abandoned"]["start"] == first_prompt
    rewind = [m for m in of_type(result, "user/message") if m["data"]["source"].get("form") == "rewind"]
    assert rewind[0]["surfaceOp"]["op"] == "replace" and rewind[0]["data"]["content"] == []
    from assembler.surface import SurfaceManager, derive_messages
    texts = [m["content"][0]["text"] for m in derive_messages(SurfaceManager(result.records)) if m["content"]]
    assert texts == ["second try", "answer 2"]
    # both branches stay in the chat, in file order
    assert [m["data"]["content"][0]["text"] for m in of_type(result, "user/message") if m["data"]["content"]] == [
        "first try", "second try"]


def test_parallel_tool_results_are_not_a_branch() -> None:
    _, result = _run(
        _user("u1", None, "hi"),
        _assistant("a1", "u1", "m1", _tool("c1"), 1),
        _assistant("a2", "a1", "m1", _tool("c2"), 1),
        _result("u2", "a1", "c1", "x", 2), _result("u3", "a2", "c2", "y", 2),
    )
    assert of_type(result, "interop/branch") == [] and len(of_type(result, "tool/result")) == 2


def test_titles_from_summaries_custom_and_ai_titles() -> None:
    reader, result = _run(
        {"type": "summary", "summary": "Later leaf", "leafUuid": "a1"},
        _user("u1", None, "hi"),
        {"type": "summary", "summary": "Known leaf", "leafUuid": "u1"},
        _assistant("a1", "u1", "m1", _text("yo"), 1),
        {"type": "custom-title", "customTitle": "Mine", "sessionId": "s"},
        {"type": "ai-title", "aiTitle": "Generated", "sessionId": "s"},
    )
    assert [t["data"]["title"] for t in of_type(result, "session/title")] == ["Known leaf", "Later leaf", "Mine"]
    assert reader.titles == [("a1", "Later leaf"), ("u1", "Known leaf")]
    assert result.header is not None and "summaryOnly" not in result.header


def test_hook_additional_context_is_injected_context() -> None:
    attachment = {"type": "attachment", "uuid": "t1", "parentUuid": "u1", "timestamp": _T0,
                  "attachment": {"type": "hook_additional_context", "content": ["line one", "line two"]}}
    _, result = _run(_user("u1", None, "hi"), attachment)
    message = of_type(result, "user/message")[-1]["data"]
    assert message["source"]["form"] == "hook-context" and message["content"][0]["text"] == "line one\nline two"


def test_text_beside_tool_results_is_context_and_redacted_thinking_passes_through() -> None:
    _, result = _run(
        _user("u1", None, "hi"),
        _assistant("a1", "u1", "m1", {"type": "redacted_thinking", "data": "zzz"}, 1),
        _assistant("a2", "a1", "m1", _tool("c1"), 1),
        _user("u2", "a2", [{"type": "tool_result", "tool_use_id": "c1", "is_error": True,
                            "content": [_text("boom")]}, _text("<system-reminder>x</system-reminder>")], 2),
    )
    content = of_type(result, "assistant/message")[0]["data"]["message"]["content"]
    assert content[0] == {"type": "redacted-reasoning"}
    (res,) = of_type(result, "tool/result")
    assert res["data"]["message"]["content"][0]["isError"] is True
    assert of_type(result, "user/message")[-1]["data"]["source"]["form"] == "system-reminder"


def test_close_tail_finishes_the_idle_step_and_a_later_record_continues() -> None:
    reader = ClaudeCodeReader("s.jsonl")
    loader = LineLoader(reader)
    loader.feed(_jsonl(_user("u1", None, "hi"), _assistant("a1", "u1", "m1", _text("part"), 1)))
    assert of_type(loader.result, "assistant/message") == []  # the newest response stays open while following
    loader.close_tail()
    assert len(of_type(loader.result, "assistant/message")) == 1 and of_type(loader.result, "step/end")
    loader.feed(_jsonl(_assistant("a2", "a1", "m1", _text("more"), 2, stop="end_turn", out=9)))
    result = loader.finish()
    check_log(result)
    assert len(of_type(result, "step/start")) == 2
    assert _usage_sum([result])["outputTokens"] == 9
    # a step whose call waits for its result stays open at the tail (the tool is running)
    reader = ClaudeCodeReader("s.jsonl")
    loader = LineLoader(reader)
    loader.feed(_jsonl(_user("u1", None, "hi"), _assistant("a1", "u1", "m1", _tool("c1"), 1)))
    loader.close_tail()
    assert len(of_type(loader.result, "assistant/message")) == 1 and of_type(loader.result, "step/end") == []


def test_wrong_typed_field_is_a_raw_record_with_a_warning_and_bad_json_an_error() -> None:
    bad = _user("u1", None, "hi")
    bad["timestamp"] = 5
    reader = ClaudeCodeReader("s.jsonl")
    result = read_lines(reader, _jsonl(bad, _user("u2", None, "ok")) + b"{not json\n" + _jsonl(_user("u3", None, "x")))
    check_log(result, allow_error=True)
    assert result.warnings and "line 1" in result.warnings[0]
    assert result.error is not None and result.error.line == 3
    assert [m["data"]["content"][0]["text"] for m in of_type(result, "user/message")] == ["ok"]
