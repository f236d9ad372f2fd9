"""OpenHands trajectory reader (FORMATS.md §10): what each event of the fixture becomes, and hand-written samples of
what it lacks (system prompt, parallel calls of one response, think, errors, state changes, condensation by ids
and by range, a delegate with its child's events)."""

from __future__ import annotations

import json
from typing import Any

from assembler.interop.base import RAW, SOURCE
from assembler.interop.openhands import read_trajectory
from assembler.logfile import LoadResult
from tests.interop_support import check_log, interop_file, of_type

FIXTURE = "openhands/All-Hands-AI+OpenHands@156d068/tests/runtime/trajs/basic.json"


def _read(doc: Any, name: str = "trajectory.json") -> LoadResult:
    (log,) = read_trajectory(json.dumps(doc).encode(), name)
    return log.result


def _group(result: LoadResult, index: int) -> dict[str, Any]:
    (found,) = [e for e in result.records if e["type"] in (SOURCE, RAW)
                and e["data"]["origin"] == {"pointer": f"/{index}"}]
    return found


def _made(result: LoadResult, index: int) -> list[dict[str, Any]]:
    return [result.records[s] for s in _group(result, index)["data"].get("events", [])]


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_fixture_events() -> None:
    path = interop_file(FIXTURE)
    doc = json.loads(path.read_bytes())
    result = read_trajectory(path.read_bytes(), path.name)[0].result
    check_log(result)
    assert result.header["id"] == "basic"
    prompt = _made(result, 0)
    assert _types(prompt) == ["turn/start", "user/message"]
    assert prompt[1]["data"]["content"] == [{"type": "text", "text": doc[0]["args"]["content"]}]
    assert prompt[1]["data"]["id"] == "oh-0"
    assert prompt[1]["time"] == 1738017896900  # 2025-01-27T22:44:56.900854, no zone: read as UTC
    edit = _made(result, 1)
    assert _types(edit) == ["step/start", "assistant/chunk", "assistant/chunk", "assistant/chunk",
                            "assistant/chunk", "assistant/message", "tool/call"]
    message = edit[5]["data"]
    response = doc[1]["tool_call_metadata"]["model_response"]
    recorded = response["choices"][0]["message"]["tool_calls"][0]
    assert message["message"]["id"] == response["id"]
    assert message["message"]["source"] == {"kind": "model", "model": "claude-3-5-sonnet-20241022"}
    assert message["message"]["content"] == [
        {"type": "text", "text": doc[1]["args"]["thought"]},
        {"type": "tool-call", "id": recorded["id"], "name": "str_replace_editor",
         "arguments": recorded["function"]["arguments"]}]
    # prompt_tokens 3486 holds the 3482 written to the cache: input 4 (FORMATS §2.8)
    assert message["usage"] == {"inputTokens": 4, "outputTokens": 1135, "cacheReadTokens": 0,
                                "cacheWriteTokens": 3482}
    assert edit[4]["data"]["chunk"] == {"type": "finish", "reason": {"kind": "tool-calls"}}
    assert edit[6]["data"] == {"turn": 1, "step": 1, "callId": "toolu_017nBp7UfiGqyrA7j77HgtFP",
                               "name": "str_replace_editor", "arguments": recorded["function"]["arguments"]}
    (observation,) = _made(result, 2)
    block = observation["data"]["message"]["content"][0]
    assert block == {"type": "tool-result", "toolCallId": "toolu_017nBp7UfiGqyrA7j77HgtFP",
                     "content": [{"type": "text", "text": doc[2]["content"]}], "isError": False}
    assert observation["sourceEventSeqs"] == [edit[6]["seq"]]
    assert observation["data"]["meta"] == dict(doc[2]["extras"], observation="edit")
    finish = _made(result, 3)
    assert _types(finish)[-3:] == ["assistant/message", "step/end", "turn/end"]  # finish: a block, no tool/call
    final = next(e for e in finish if e["type"] == "assistant/message")
    assert final["data"]["message"]["content"][0] == {"type": "text", "text": doc[3]["args"]["thought"]}
    # cache_read_input_tokens and prompt_tokens_details.cached_tokens are the same 3482 tokens: subtracted once
    assert final["data"]["usage"] == {"inputTokens": 6, "outputTokens": 177, "cacheReadTokens": 3482,
                                      "cacheWriteTokens": 1158}
    assert finish[-1]["data"]["reason"] == {"kind": "completed"}


def _metadata(call_id: str, name: str, rid: str, calls: list[tuple[str, str, str]], content: str = "",
              usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"function_name": name, "tool_call_id": call_id, "total_calls_in_response": len(calls),
            "model_response": {"id": rid, "model": "gpt-4o", "choices": [{"finish_reason": "tool_calls", "message": {
                "content": content, "role": "assistant",
                "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                               for i, n, a in calls]}}],
                "usage": usage or {"prompt_tokens": 100, "completion_tokens": 10}}}


PARALLEL = [("c1", "execute_bash", '{"command": "ls"}'), ("c2", "execute_bash", '{"command": "pwd"}')]
SAMPLE: list[dict[str, Any]] = [
    {"id": 0, "timestamp": "2025-01-01T10:00:00", "source": "agent", "message": "You are OpenHands agent.",
     "action": "system", "args": {"content": "You are OpenHands agent.", "tools": [{"type": "function"}],
                                  "openhands_version": "0.40", "agent_class": "CodeActAgent"}},
    {"id": 1, "timestamp": "2025-01-01T10:00:01", "source": "user", "message": "look around",
     "action": "message", "args": {"content": "look around", "image_urls": ["data:image/png;base64,AAAA"]}},
    {"id": 2, "timestamp": "2025-01-01T10:00:02", "source": "agent", "message": "Running command: ls",
     "action": "run", "tool_call_metadata": _metadata("c1", "execute_bash", "resp-1", PARALLEL, "Two at once."),
     "args": {"command": "ls", "thought": "Two at once."}},
    {"id": 3, "timestamp": "2025-01-01T10:00:03", "source": "agent", "message": "Command `ls` executed.",
     "cause": 2, "observation": "run", "content": "a.py",
     "tool_call_metadata": _metadata("c1", "execute_bash", "resp-1", PARALLEL, "Two at once."),
     "extras": {"command": "ls", "metadata": {"exit_code": 0}}, "success": True},
    {"id": 5, "timestamp": "2025-01-01T10:00:04", "source": "agent", "message": "Running command: pwd",
     "action": "run", "tool_call_metadata": _metadata("c2", "execute_bash", "resp-1", PARALLEL, "Two at once."),
     "args": {"command": "pwd", "thought": ""}},
    {"id": 6, "timestamp": "2025-01-01T10:00:05", "source": "agent", "message": "error", "cause": 5,
     "observation": "error", "content": "bash: pwd: failed", "extras": {"error_id": ""}},
    {"id": 7, "timestamp": "2025-01-01T10:00:06", "source": "agent", "message": "I am thinking...",
     "action": "think", "args": {"thought": "Weigh the options."}},
    {"id": 8, "timestamp": "2025-01-01T10:00:06", "source": "agent", "message": "",
     "cause": 7, "observation": "think", "content": "Your thought has been logged.", "extras": {}},
    {"id": 9, "timestamp": "2025-01-01T10:00:07", "source": "environment", "message": "",
     "observation": "agent_state_changed", "content": "", "extras": {"agent_state": "awaiting_user_input"}},
    {"id": 10, "timestamp": "2025-01-01T10:00:08", "source": "agent", "message": "All done.", "action": "finish",
     "args": {"final_thought": "All done.", "outputs": {}, "thought": ""}},
]


def test_system_prompt_and_image_prompt() -> None:
    result = _read(SAMPLE)
    check_log(result)
    (header,) = _made(result, 0)
    assert header["type"] == "request/header"
    assert header["data"]["header"] == {"config": {"agent_class": "CodeActAgent", "openhands_version": "0.40"},
                                        "system": "You are OpenHands agent.", "tools": [{"type": "function"}]}
    prompt = _made(result, 1)[1]
    assert prompt["data"]["content"][1] == {"type": "image", "attachment": {"url": "data:image/png;base64,AAAA"}}


def test_parallel_calls_of_one_response_are_one_step() -> None:
    result = _read(SAMPLE)
    first = _made(result, 2)
    message = next(e for e in first if e["type"] == "assistant/message")["data"]
    assert [b["type"] for b in message["message"]["content"]] == ["text", "tool-call", "tool-call"]
    assert message["usage"] == {"inputTokens": 100, "outputTokens": 10}
    second = _made(result, 4)
    assert _types(second) == ["tool/call"]  # the second call of resp-1: same step, no usage again
    assert second[0]["data"]["step"] == message["step"] and second[0]["data"]["arguments"] == '{"command": "pwd"}'
    assert len([e for e in of_type(result, "assistant/chunk") if e["data"]["chunk"]["type"] == "usage"]) == 1
    (ok,) = _made(result, 3)
    assert ok["data"]["message"]["content"][0]["isError"] is False
    assert ok["data"]["meta"] == {"command": "ls", "metadata": {"exit_code": 0}, "observation": "run",
                                  "success": True}
    (error,) = _made(result, 5)
    assert error["data"]["message"]["content"][0]["isError"] is True
    assert error["data"]["message"]["content"][0]["toolCallId"] == "c2"


def test_think_is_reasoning_and_state_changes_are_notices() -> None:
    result = _read(SAMPLE)
    think = _made(result, 6)
    message = next(e for e in think if e["type"] == "assistant/message")["data"]["message"]
    assert message["content"] == [{"type": "reasoning", "text": "Weigh the options."}]
    assert not [e for e in think if e["type"] == "tool/call"]
    ack = _group(result, 7)
    assert ack["type"] == RAW and "notice" not in ack["data"]
    state = _group(result, 8)
    assert state["type"] == RAW and state["data"]["notice"] == "Agent state: awaiting_user_input"
    finish = _made(result, 9)
    text = next(e for e in finish if e["type"] == "assistant/message")["data"]["message"]["content"]
    assert text == [{"type": "text", "text": "All done."},
                    {"type": "tool-call", "id": "oh-10", "name": "finish", "arguments": '{"final_thought":"All done.",'
                                                                                       '"outputs":{}}'}]
    assert finish[-1]["type"] == "turn/end" and finish[-1]["data"]["reason"] == {"kind": "completed"}


def _run(i: int, call: str, rid: str, command: str, t: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "timestamp": f"2025-01-01T10:00:{t:02d}", "source": "agent", "action": "run",
         "tool_call_metadata": _metadata(call, "execute_bash", rid, [(call, "execute_bash", "{}")]),
         "args": {"command": command, "thought": ""}},
        {"id": i + 1, "timestamp": f"2025-01-01T10:00:{t + 1:02d}", "source": "agent", "cause": i,
         "observation": "run", "content": f"out of {command}", "extras": {}},
    ]


def _prompt(i: int, text: str) -> dict[str, Any]:
    return {"id": i, "timestamp": "2025-01-01T10:00:00", "source": "user", "action": "message",
            "args": {"content": text}}


def test_condensation_by_ids_shadows_those_events_with_the_summary() -> None:
    doc = [_prompt(0, "go"), *_run(1, "a", "r1", "ls", 1), *_run(3, "b", "r2", "cat x", 3),
           *_run(5, "c", "r3", "make", 5),
           {"id": 7, "timestamp": "2025-01-01T10:00:08", "source": "agent", "action": "condensation",
            "args": {"forgotten_event_ids": [1, 2, 3, 4], "summary": "Listed and read x.", "summary_offset": 1}},
           *_run(8, "d", "r4", "test", 9)]
    result = _read(doc)
    check_log(result)
    made = _made(result, 7)
    assert _types(made) == ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
    forgotten = [e["seq"] for i in (1, 2, 3, 4) for e in _made(result, i)
                 if e["type"] in ("assistant/message", "tool/result")]
    replacement = made[2]
    assert replacement["data"]["source"] == {"kind": "plugin", "plugin": "compact"}
    assert replacement["data"]["content"] == [{"type": "text", "text": "Listed and read x."}]
    assert replacement["surfaceOp"] == {"op": "replace", "start": forgotten[0], "end": forgotten[-1]}
    assert sorted(replacement["sourceEventSeqs"]) == forgotten
    assert made[1]["data"]["shadowedSeqs"] == forgotten
    # the forgotten events stay in the log as append-origin events: chat still shows them
    assert all(result.records[s]["surfaceOp"] == "append" for s in forgotten)


def test_condensation_by_range_without_summary_and_split_runs() -> None:
    doc = [_prompt(0, "go"), *_run(1, "a", "r1", "ls", 1), *_run(3, "b", "r2", "cat", 3),
           *_run(5, "c", "r3", "make", 5),
           {"id": 7, "timestamp": "2025-01-01T10:00:08", "source": "agent", "action": "condensation",
            "args": {"forgotten_events_start_id": 1, "forgotten_events_end_id": 2}},
           {"id": 8, "timestamp": "2025-01-01T10:00:09", "source": "agent", "action": "condensation",
            "args": {"forgotten_event_ids": [0, 5, 6]}}]
    result = _read(doc)
    check_log(result)
    first = _made(result, 7)
    assert _types(first) == ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
    assert first[2]["data"]["content"] == []  # nothing recorded replaces them: an empty compact message
    second = _made(result, 8)
    # events 0 and 5-6 are not next to each other on the surface: two replaced ranges, the later one first
    replaced = [e for e in second if e["type"] == "user/message"]
    assert len(replaced) == 2
    assert replaced[0]["surfaceOp"]["start"] > replaced[1]["surfaceOp"]["end"]


def test_delegate_is_a_labelled_subagent_section() -> None:
    delegate = _metadata("d1", "delegate_to_browsing_agent", "r1",
                         [("d1", "delegate_to_browsing_agent", '{"task": "find the docs"}')])
    doc = [
        _prompt(0, "research it"),
        {"id": 1, "timestamp": "2025-01-01T10:00:01", "source": "agent", "action": "delegate",
         "tool_call_metadata": delegate,
         "args": {"agent": "BrowsingAgent", "inputs": {"task": "find the docs"}, "thought": "Delegating."}},
        {"id": 2, "timestamp": "2025-01-01T10:00:02", "source": "user", "action": "message",
         "args": {"content": "TASK: find the docs"}},
        *_run(3, "b1", "r2", "curl docs", 3),
        {"id": 5, "timestamp": "2025-01-01T10:00:05", "source": "agent", "action": "finish",
         "args": {"final_thought": "Found them.", "outputs": {"content": "docs"}, "thought": ""}},
        {"id": 6, "timestamp": "2025-01-01T10:00:06", "source": "agent", "observation": "delegate",
         "tool_call_metadata": delegate,
         "content": "Delegated agent finished with result:\n\nBrowsingAgent finishes task with content: docs",
         "extras": {"outputs": {"content": "docs"}}},
        {"id": 7, "timestamp": "2025-01-01T10:00:07", "source": "agent", "action": "finish",
         "args": {"final_thought": "Done.", "outputs": {}, "thought": ""}},
    ]
    result = _read(doc)
    check_log(result)
    opened = _made(result, 1)
    assert _types(opened)[-2:] == ["tool/call", "tool-workflow/agent-start"]
    start = opened[-1]["data"]
    assert start == {"runId": "d1", "seq": 1, "label": "BrowsingAgent", "turn": 1, "task": "find the docs"}
    assert "delegate" not in opened[-2]["data"]  # the delegate call is the parent's
    task = _made(result, 2)
    assert _types(task) == ["user/message"]
    assert task[0]["data"]["source"] == {"kind": "plugin", "plugin": "openhands", "form": "delegate-task"}
    child = [e for i in (2, 3, 4, 5) for e in _made(result, i)]
    assert child and all(e["data"]["delegate"] == {"callId": "d1", "agent": "BrowsingAgent"} for e in child)
    assert "turn/end" not in _types(child)  # the child's finish ends no turn
    closing = _made(result, 6)
    assert _types(closing) == ["tool/result", "tool-workflow/agent-end"]
    assert closing[0]["data"]["message"]["content"][0]["toolCallId"] == "d1"
    assert closing[1]["data"]["runId"] == "d1" and "delegate" not in closing[0]["data"]
    assert len(of_type(result, "turn/start")) == 1
    assert _made(result, 7)[-1]["type"] == "turn/end"


def test_duplicate_ids_and_wrong_types_are_kept_raw() -> None:
    doc = [_prompt(0, "go"), _prompt(0, "go"), {"id": "x", "action": "run", "source": "agent"},
           {"id": 3, "source": "agent", "action": "run", "args": "not an object"}]
    result = _read(doc)
    check_log(result)
    duplicate = _group(result, 1)
    assert duplicate["type"] == RAW and duplicate["data"]["duplicateOf"] == {"pointer": "/0"}
    assert _group(result, 2)["type"] == RAW and _group(result, 3)["type"] == RAW
    assert any(w.startswith("/2/id: run not understood") for w in result.warnings)
    assert any(w.startswith("/3/args: run not understood") for w in result.warnings)


def test_unusable_documents() -> None:
    (log,) = read_trajectory(b'[{"id": 0, "source": "user"}, {"id": 1,', "t.json")
    check_log(log.result, allow_error=True)
    assert log.result.error is not None and log.result.error.location == "1:40"
    assert "truncated" in log.result.error.message
    (log,) = read_trajectory(b'\n{"id": 0}', "t.json")
    assert log.result.error is not None and log.result.error.location == "2:1"
    assert "expected a JSON array" in log.result.error.message


def test_the_format_table_names_this_reader() -> None:
    from assembler.formats import by_name, detect, reader_of

    assert reader_of(by_name("openhands")) is read_trajectory
    assert detect(json.dumps(SAMPLE).encode(), complete=True) is by_name("openhands")
