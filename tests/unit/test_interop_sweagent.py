"""SWE-agent (``.traj``) and mini-swe-agent (``.traj.json``) readers (FORMATS.md §8, §9): what each record of the
SWE-agent 1.x fixture becomes, and hand-written samples of the shapes without a fixture (SWE-agent 0.x with a
sub-agent, mini-swe-agent's oldest bare list, 1.x and 2.x with text actions and with tool calls). Over 400 lines:
the two readers of one family share this file (and its samples, which the property test mutates too)."""

from __future__ import annotations

import json
from typing import Any

from assembler.interop.base import RAW, SOURCE
from assembler.interop.sweagent import read_mini, read_traj
from assembler.logfile import LoadResult
from tests.interop_support import check_log, interop_file, of_type

SWE_FIXTURE = ("swe-agent/SWE-agent+SWE-agent@3ea751c/tests/test_data/trajectories/"
               "gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/"
               "6e44b9__sweagenttestrepo-1c2844.traj")


def _read(reader: Any, doc: Any, name: str = "run.traj") -> LoadResult:
    logs = reader(json.dumps(doc).encode(), name)
    assert len(logs) == 1 and logs[0].key == ""
    return logs[0].result  # type: ignore[no-any-return]


def _source_of(result: LoadResult, ptr: str) -> dict[str, Any]:
    found = [e for e in result.records if e["type"] in (SOURCE, RAW) and e["data"]["origin"] == {"pointer": ptr}]
    assert len(found) == 1, (ptr, found)
    return found[0]


def _made(result: LoadResult, ptr: str) -> list[dict[str, Any]]:
    return [result.records[s] for s in _source_of(result, ptr)["data"].get("events", [])]


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


# -- SWE-agent 1.x: the fixture --------------------------------------------------------------------------------


def test_swe_fixture_history_becomes_one_turn_of_steps() -> None:
    path = interop_file(SWE_FIXTURE)
    doc = json.loads(path.read_bytes())
    result = read_traj(path.read_bytes(), path.name)[0].result
    check_log(result)
    assert result.header["id"] == "6e44b9__sweagenttestrepo-1c2844"
    assert all(e["time"] == 0 for e in result.records)  # SWE-agent records no times
    header = of_type(result, "request/header")
    assert len(header) == 1 and header[0]["data"]["reason"] == "initial"
    assert header[0]["data"]["header"]["system"] == doc["history"][0]["content"]
    assert header[0]["data"]["header"]["config"] == {"model": "gpt-4o"}  # from replay_config, not the path
    task = _made(result, "/history/1")
    assert _types(task) == ["turn/start", "user/message"]
    assert task[1]["data"]["source"] == {"kind": "user"}
    assert task[1]["data"]["content"] == [{"type": "text", "text": doc["history"][1]["content"]}]
    assert len(of_type(result, "turn/start")) == 1
    history = doc["history"]
    assistants = [i for i, m in enumerate(history) if m["role"] == "assistant"]
    assert len(of_type(result, "step/start")) == len(assistants) == 4
    for i in assistants:
        made = _made(result, f"/history/{i}")
        message = next(e for e in made if e["type"] == "assistant/message")["data"]["message"]
        recorded = history[i]["tool_calls"][0]
        assert message["content"][0] == {"type": "text", "text": history[i]["thought"]}
        assert message["content"][1] == {"type": "tool-call", "id": recorded["id"],
                                         "name": recorded["function"]["name"],
                                         "arguments": recorded["function"]["arguments"]}  # the string as recorded
        assert "usage" not in next(e for e in made if e["type"] == "assistant/message")["data"]
        call = next(e for e in made if e["type"] == "tool/call")
        assert call["data"]["callId"] == recorded["id"] and call["data"]["arguments"] == \
            recorded["function"]["arguments"]


def test_swe_fixture_observations_answer_their_calls_with_execution_time() -> None:
    path = interop_file(SWE_FIXTURE)
    doc = json.loads(path.read_bytes())
    result = read_traj(path.read_bytes(), path.name)[0].result
    calls = {e["data"]["callId"]: e["seq"] for e in of_type(result, "tool/call")}
    tools = [i for i, m in enumerate(doc["history"]) if m["role"] == "tool"]
    assert len(tools) == 4
    for k, i in enumerate(tools):
        (made,) = _made(result, f"/history/{i}")
        assert made["type"] == "tool/result"
        call_id = doc["history"][i]["tool_call_ids"][0]
        block = made["data"]["message"]["content"][0]
        assert block["toolCallId"] == call_id and block["isError"] is False
        assert block["content"] == [{"type": "text", "text": doc["history"][i]["content"]}]
        assert made["sourceEventSeqs"] == [calls[call_id]]
        assert made["data"]["meta"] == {"execution_time": doc["trajectory"][k]["execution_time"]}
        # the trajectory entry of that step follows its result, raw (model context, never a new message)
        trajectory = _source_of(result, f"/trajectory/{k}")
        assert trajectory["type"] == RAW and trajectory["seq"] > made["seq"]
        assert trajectory["data"]["record"] == doc["trajectory"][k]


def test_swe_fixture_info_ends_the_turn_with_the_submission_notice() -> None:
    path = interop_file(SWE_FIXTURE)
    doc = json.loads(path.read_bytes())
    result = read_traj(path.read_bytes(), path.name)[0].result
    # the final submit step has no history message: its trajectory entry stays raw, after the last result
    submit = _source_of(result, "/trajectory/4")
    assert submit["type"] == RAW and submit["data"]["record"]["action"] == "submit"
    notice = _source_of(result, "/info/submission")
    assert notice["type"] == RAW
    assert notice["data"]["notice"].startswith("Submission (exit status: submitted)\n\n```\n")
    assert doc["info"]["submission"] in notice["data"]["notice"]
    end = _made(result, "/info/exit_status")
    assert end[-1]["type"] == "turn/end" and end[-1]["data"]["reason"] == {"kind": "completed"}
    assert result.header["usage"] == {"inputTokens": 7141, "outputTokens": 243}  # session usage only
    stats = _source_of(result, "/info/model_stats")
    assert stats["type"] == RAW and stats["data"]["record"]["api_calls"] == 5
    assert _source_of(result, "/info")["data"]["record"].keys() == {"edited_files30", "edited_files50",
                                                                     "edited_files70"}
    for key in ("/environment", "/replay_config"):
        assert _source_of(result, key)["type"] == RAW
    # every history element is kept with what it became
    for i in range(len(doc["history"])):
        assert _source_of(result, f"/history/{i}")["type"] == SOURCE


# -- SWE-agent 0.x and a sub-agent --------------------------------------------------------------------------------

SWE_0X: dict[str, Any] = {
    "environment": "swe_main",
    "trajectory": [
        {"action": "ls -a\n", "observation": "a.py\nb.py", "response": "Let me look.\n```\nls -a\n```",
         "state": "{\"open_file\": \"n/a\"}", "thought": "Let me look.\n", "execution_time": 1.5},
        {"action": "submit\n", "observation": "", "response": "Done.\n```\nsubmit\n```", "state": "{}",
         "thought": "Done.\n"},
    ],
    "history": [
        {"role": "system", "content": "SETTING: you are a programmer.", "agent": "primary"},
        {"role": "user", "content": "Here is a demonstration: ...", "agent": "primary", "is_demo": True},
        {"role": "user", "content": "ISSUE: fix the bug", "agent": "primary"},
        {"role": "assistant", "content": "Let me look.\n```\nls -a\n```", "thought": "Let me look.\n",
         "action": "ls -a\n", "agent": "primary"},
        {"role": "user", "content": "a.py\nb.py\n(Open file: n/a)", "agent": "primary"},
        {"role": "user", "content": "Edit this file: a.py", "agent": "edit_file"},
        {"role": "assistant", "content": "Edited.", "thought": "Edited.", "action": "edit 1:1\nx\nend_of_edit\n",
         "agent": "edit_file"},
        {"role": "user", "content": "File updated.", "agent": "edit_file"},
        {"role": "assistant", "content": "Done.\n```\nsubmit\n```", "thought": "Done.\n", "action": "submit\n",
         "agent": "primary"},
    ],
    "info": {"exit_status": "exit_cost", "model_stats": {"total_cost": 3.1, "instance_cost": 3.1,
                                                         "tokens_sent": 1000, "tokens_received": 50,
                                                         "api_calls": 2}},
}


def test_swe_0x_commands_become_calls_named_by_their_first_word() -> None:
    result = _read(read_traj, SWE_0X, "trajectories/u/gpt4__x__default__t-0.00/inst-1.traj")
    check_log(result)
    assert result.header["id"] == "inst-1"
    demo = _made(result, "/history/1")
    assert _types(demo) == ["user/message"]
    assert demo[0]["data"]["source"] == {"kind": "plugin", "plugin": "swe-agent", "form": "demonstration"}
    assert _types(_made(result, "/history/2")) == ["turn/start", "user/message"]
    step = _made(result, "/history/3")
    message = next(e for e in step if e["type"] == "assistant/message")["data"]["message"]
    assert message["content"] == [
        {"type": "text", "text": "Let me look.\n"},
        {"type": "tool-call", "id": "/history/3", "name": "ls", "arguments": '{"command":"ls -a\\n"}'}]
    (result_event,) = _made(result, "/history/4")
    assert result_event["type"] == "tool/result"
    assert result_event["data"]["message"]["content"][0]["toolCallId"] == "/history/3"
    assert result_event["data"]["meta"] == {"execution_time": 1.5}
    assert _source_of(result, "/trajectory/0")["seq"] > result_event["seq"]
    assert header_model(result) is None  # 0.x records no replay_config: no model is guessed from the path


def header_model(result: LoadResult) -> Any:
    return of_type(result, "request/header")[0]["data"]["header"]["config"].get("model")


def test_swe_other_agent_is_a_labelled_section() -> None:
    result = _read(read_traj, SWE_0X)
    starts, ends = of_type(result, "tool-workflow/agent-start"), of_type(result, "tool-workflow/agent-end")
    assert len(starts) == len(ends) == 1
    assert starts[0]["data"]["label"] == "edit_file"
    inside = [e for e in result.records if starts[0]["seq"] < e["seq"] < ends[0]["seq"] and e["type"] != SOURCE]
    assert inside and all(e["data"].get("agent") == "edit_file" for e in inside)
    # the sub-agent's first user message is its context, not a second task or turn
    assert len(of_type(result, "turn/start")) == 1
    edit = next(e for e in _made(result, "/history/5") if e["type"] == "user/message")
    assert edit["data"]["source"]["kind"] == "plugin"
    (answer,) = [e for e in _made(result, "/history/7") if e["type"] == "tool/result"]
    assert answer["data"]["message"]["content"][0]["toolCallId"] == "/history/6"
    # the main agent's submit is after the section; the main agent's events carry no label
    submit = next(e for e in _made(result, "/history/8") if e["type"] == "tool/call")
    assert submit["seq"] > ends[0]["seq"] and "agent" not in submit["data"]


def test_swe_exit_status_other_than_submitted_is_an_error_end() -> None:
    result = _read(read_traj, SWE_0X)
    (end,) = of_type(result, "turn/end")
    assert end["data"]["reason"] == {"kind": "error", "error": {"message": "exit_cost", "code": "exit_cost"}}
    assert not [e for e in of_type(result, RAW) if "notice" in e["data"]]  # no submission recorded: no notice
    assert result.header["usage"] == {"inputTokens": 1000, "outputTokens": 50}


def test_swe_running_trajectory_leaves_the_turn_open() -> None:
    doc = dict(SWE_0X, info={})
    result = _read(read_traj, doc)
    check_log(result)
    assert of_type(result, "turn/end") == []


def test_swe_invalid_json_names_line_and_column() -> None:
    logs = read_traj(b'{"history": [\n  {"role": "user", "content": "x"},\n  {"role": }\n]}', "t.traj")
    check_log(logs[0].result, allow_error=True)
    error = logs[0].result.error
    assert error is not None and error.location == "3:12" and "invalid JSON" in error.message
    assert str(error).startswith("line 3, column 12: invalid JSON")


def test_swe_history_of_the_wrong_type_is_an_error_with_its_pointer() -> None:
    result = _read(read_traj, {"history": {"role": "user"}, "trajectory": [], "info": {}})
    check_log(result, allow_error=True)
    assert result.error is not None and result.error.location == "/history"
    assert "expected an array, got an object" in result.error.message


def test_swe_element_with_wrong_types_is_raw_with_a_warning() -> None:
    doc = dict(SWE_0X, history=[*SWE_0X["history"][:3], {"role": "assistant", "content": 5, "agent": "primary"},
                                *SWE_0X["history"][4:]])
    result = _read(read_traj, doc)
    check_log(result)
    raw = _source_of(result, "/history/3")
    assert raw["type"] == RAW and raw["data"]["record"]["content"] == 5
    assert any(w.startswith("/history/3/content: assistant not understood") for w in result.warnings)


# -- mini-swe-agent ---------------------------------------------------------------------------------------------

MINI_OLDEST = [
    {"role": "system", "content": "You are a helpful assistant that can do anything."},
    {"role": "user", "content": "Please solve this issue: the tests fail."},
    {"role": "assistant", "content": "THOUGHT: look first.\n\n```bash\nls -la\n```"},
    {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"},
    {"role": "assistant", "content": "THOUGHT: done.\n\n```bash\necho MINI_SWE_AGENT_FINAL_OUTPUT\n```"},
]


def test_mini_oldest_bare_list() -> None:
    result = _read(read_mini, MINI_OLDEST, "last_mini_run.traj.json")
    check_log(result)
    assert result.header["id"] == "last_mini_run" and result.header["format"] == "mini-swe-agent"
    assert of_type(result, "request/header")[0]["data"]["header"]["system"].startswith("You are a helpful")
    assert _types(_made(result, "/1")) == ["turn/start", "user/message"]
    step = next(e for e in _made(result, "/2") if e["type"] == "assistant/message")["data"]["message"]
    assert step["content"] == [
        {"type": "text", "text": "THOUGHT: look first."},  # the command block is cut from the text
        {"type": "tool-call", "id": "/2", "name": "bash", "arguments": '{"command":"ls -la"}'}]
    (observation,) = _made(result, "/3")
    block = observation["data"]["message"]["content"][0]
    assert block["toolCallId"] == "/2" and block["isError"] is False
    assert block["content"][0]["text"].startswith("<returncode>0</returncode>")  # shown as recorded
    assert of_type(result, "turn/end") == []  # no exit recorded: the turn stays open
    assert all(e["time"] == 0 for e in result.records)


def _response(rid: str, prompt: int, completion: int, cached: int | None = None, reasoning: int | None = None,
              finish: str = "stop") -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return {"id": rid, "model": "claude-sonnet-4", "choices": [{"finish_reason": finish, "index": 0}],
            "usage": usage}


MINI_1X: dict[str, Any] = {
    "info": {"exit_status": "Submitted", "submission": "diff --git a/x.py b/x.py\n+fixed\n",
             "model_stats": {"instance_cost": 0.05, "api_calls": 2}, "mini_version": "1.17.0",
             "config": {"agent": {"step_limit": 0}, "model": {"model_name": "anthropic/claude-sonnet-4"}}},
    "messages": [
        {"role": "system", "content": "You are a helpful assistant.", "timestamp": 1735725600.0},
        {"role": "user", "content": "Fix x.py", "timestamp": 1735725600.5},
        {"role": "assistant", "content": "THOUGHT: edit it.\n\n```bash\nsed -i s/a/b/ x.py\n```",
         "timestamp": 1735725602.0, "extra": {"response": _response("r1", 1200, 80, cached=1000, reasoning=30)}},
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\nerror\n</output>",
         "timestamp": 1735725603.25},
        {"role": "assistant", "content": "THOUGHT: submit.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n"
                                         "```", "timestamp": 1735725604.0,
         "extra": {"response": _response("r2", 1400, 20)}},
        {"role": "user", "content": "diff --git a/x.py b/x.py\n+fixed\n", "timestamp": 1735725605.0},
    ],
    "trajectory_format": "mini-swe-agent-1",
}


def test_mini_1x_usage_times_and_submission() -> None:
    result = _read(read_mini, MINI_1X, "batch/inst-2/inst-2.traj.json")
    check_log(result)
    assert result.header["id"] == "inst-2"
    assert of_type(result, "request/header")[0]["data"]["header"]["config"] == \
        {"model": "anthropic/claude-sonnet-4"}
    first = next(e for e in _made(result, "/messages/2") if e["type"] == "assistant/message")
    # prompt 1200 holds 1000 cached; completion 80 holds 30 of reasoning (LiteLLM shape, FORMATS §2.8)
    assert first["data"]["usage"] == {"inputTokens": 200, "outputTokens": 50, "cacheReadTokens": 1000,
                                      "reasoningTokens": 30}
    assert first["data"]["message"]["source"]["model"] == "claude-sonnet-4"
    assert first["time"] == 1735725602000
    finish = [e for e in _made(result, "/messages/2") if e["type"] == "assistant/chunk"
              and e["data"]["chunk"]["type"] == "finish"]
    assert finish[0]["data"]["chunk"]["reason"] == {"kind": "stop"}
    (observation,) = _made(result, "/messages/3")
    assert observation["time"] == 1735725603250
    assert observation["data"]["message"]["content"][0]["isError"] is False  # a non-zero code is not an error
    # the last user message repeats the submission: the exit, not an observation of the pending call
    last = _made(result, "/messages/5")
    assert _types(last) == [RAW, "step/end", "turn/end"]
    assert last[0]["data"]["notice"].startswith("Submission (exit status: Submitted)")
    assert last[-1]["data"]["reason"] == {"kind": "completed"}
    assert len(of_type(result, "tool/result")) == 1  # the submit call has no result
    assert _source_of(result, "/info")["type"] == RAW  # the exit was already written from the messages


MINI_2X: dict[str, Any] = {
    "info": {"model_stats": {"instance_cost": 0.02, "api_calls": 2}, "mini_version": "2.1.0",
             "config": {"model": {"model_name": "openai/gpt-5"}}, "exit_status": "LimitsExceeded",
             "submission": ""},
    "messages": [
        {"role": "system", "content": "system prompt"},
        {"role": "user", "content": "task statement"},
        {"role": "assistant", "content": "I will list.\n\n```mswea_bash_command\nls\n```",
         "extra": {"actions": [{"command": "ls"}], "cost": 0.01, "timestamp": 1735725600.0,
                   "response": _response("r1", 500, 40)}},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nREADME\n</output>",
         "extra": {"raw_output": "README\n", "returncode": 0, "timestamp": 1735725601.0}},
        {"role": "assistant", "content": "Two commands.",
         "extra": {"cost": 0.01, "timestamp": 1735725602.0, "response": _response("r1", 500, 40)}},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks.",
         "extra": {"interrupt_type": "FormatError"}},
        {"role": "exit", "content": "LimitsExceeded", "extra": {"exit_status": "LimitsExceeded", "submission": ""}},
    ],
    "trajectory_format": "mini-swe-agent-1.1",
}


def test_mini_2x_text_actions_format_error_and_exit() -> None:
    result = _read(read_mini, MINI_2X)
    check_log(result)
    step = next(e for e in _made(result, "/messages/2") if e["type"] == "assistant/message")
    assert step["data"]["message"]["content"] == [
        {"type": "text", "text": "I will list."},
        {"type": "tool-call", "id": "/messages/2", "name": "bash", "arguments": '{"command":"ls"}'}]
    (observation,) = _made(result, "/messages/3")
    assert observation["data"]["meta"] == {"returncode": 0}
    # a second message of the same response id carries no usage again
    again = next(e for e in _made(result, "/messages/4") if e["type"] == "assistant/message")
    assert "usage" not in again["data"] and step["data"]["usage"]["inputTokens"] == 500
    # a user message with no pending call is context (the format error), not a prompt
    (context,) = _made(result, "/messages/5")
    assert context["data"]["source"] == {"kind": "plugin", "plugin": "mini-swe-agent", "form": "FormatError"}
    end = _made(result, "/messages/6")
    assert end[-1]["type"] == "turn/end"
    assert end[-1]["data"]["reason"] == {"kind": "error", "error": {"message": "LimitsExceeded",
                                                                     "code": "LimitsExceeded"}}
    assert not [e for e in end if e["type"] == RAW]  # an empty submission is no notice


MINI_TOOLS: dict[str, Any] = {
    "info": {"exit_status": "Submitted", "submission": "patch text"},
    "messages": [
        {"role": "system", "content": [{"type": "text", "text": "system prompt"}]},
        {"role": "user", "content": [{"type": "text", "text": "task"}]},
        {"role": "assistant", "content": "Checking two things.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"pwd\"}"}}],
         "extra": {"actions": [{"command": "ls", "tool_call_id": "call_a"},
                               {"command": "pwd", "tool_call_id": "call_b"}],
                   "timestamp": 1735725600.0, "response": _response("r1", 300, 30, finish="tool_calls")}},
        {"role": "tool", "tool_call_id": "call_b", "content": "<returncode>0</returncode>\n<output>\n/w\n</output>",
         "extra": {"returncode": 0, "timestamp": 1735725601.0}},
        {"role": "tool", "tool_call_id": "call_a", "content": "<returncode>0</returncode>\n<output>\nx\n</output>",
         "extra": {"returncode": 0, "timestamp": 1735725601.5}},
        {"role": "exit", "content": "patch text", "extra": {"exit_status": "Submitted", "submission": "patch text"}},
    ],
    "trajectory_format": "mini-swe-agent-1.1",
}


def test_mini_2x_tool_calls_as_recorded() -> None:
    result = _read(read_mini, MINI_TOOLS)
    check_log(result)
    calls = of_type(result, "tool/call")
    assert [(c["data"]["callId"], c["data"]["arguments"]) for c in calls] == [
        ("call_a", '{"command": "ls"}'), ("call_b", '{"command":"pwd"}')]  # arguments byte for byte
    finish = [e for e in _made(result, "/messages/2") if e["type"] == "assistant/chunk"
              and e["data"]["chunk"]["type"] == "finish"]
    assert finish[0]["data"]["chunk"]["reason"] == {"kind": "tool-calls"}
    (b,) = _made(result, "/messages/3")
    (a,) = _made(result, "/messages/4")
    assert b["data"]["message"]["content"][0]["toolCallId"] == "call_b"
    assert a["data"]["message"]["content"][0]["toolCallId"] == "call_a"
    assert b["sourceEventSeqs"] == [calls[1]["seq"]] and a["sourceEventSeqs"] == [calls[0]["seq"]]
    end = _made(result, "/messages/5")
    assert end[0]["type"] == RAW and end[0]["data"]["origin"] == {"pointer": "/messages/5/extra/submission"}
    assert "patch text" in end[0]["data"]["notice"]
    assert end[-1]["data"]["reason"] == {"kind": "completed"}
    assert _source_of(result, "/info")["type"] == RAW


def test_mini_refuses_unusable_documents_with_a_location() -> None:
    truncated = json.dumps(MINI_2X, indent=1).encode()[:300]
    result = read_mini(truncated, "x.traj.json")[0].result
    check_log(result, allow_error=True)
    assert result.error is not None and result.error.line is not None and result.error.column is not None
    assert "invalid JSON" in result.error.message
    result = _read(read_mini, {"info": {}, "messages": "none"})
    assert result.error is not None and result.error.location == "/messages"
    result = read_mini(b"  42", "x.traj.json")[0].result
    assert result.error is not None and result.error.location == "1:3"
    empty = read_mini(b"", "x.traj.json")[0].result
    assert empty.error is None and empty.records == []


def test_the_format_table_names_these_readers() -> None:
    from assembler.formats import by_name, detect, reader_of

    assert reader_of(by_name("swe-agent")) is read_traj
    assert reader_of(by_name("mini-swe-agent")) is read_mini
    assert detect(json.dumps(SWE_0X, indent=2).encode(), complete=True) is by_name("swe-agent")
    for doc in (MINI_OLDEST, MINI_1X, MINI_2X, MINI_TOOLS):
        assert detect(json.dumps(doc).encode(), complete=True) is by_name("mini-swe-agent")


def test_mini_second_system_message_is_a_changed_header() -> None:
    doc = dict(MINI_2X, messages=[*MINI_2X["messages"][:2], {"role": "system", "content": "new rules"},
                                  *MINI_2X["messages"][2:]])
    result = _read(read_mini, doc)
    check_log(result)
    assert [h["data"]["reason"] for h in of_type(result, "request/header")] == ["initial", "change"]
