"""Gemini CLI readers (FORMATS.md §7): what each message of the JSON fixture becomes, a damaged document salvaged,
and hand-written JSONL samples of the newer generation (replaced ids, ``$set``, ``$rewindTo`` before and after a
settle, ``$set.messages``, subagent files, tool responses recorded as user messages, following a live file)."""

from __future__ import annotations

import json
from typing import Any

from assembler.interop.base import RAW, SOURCE, LineLoader, read_lines
from assembler.interop.gemini import GeminiReader, read_json
from assembler.logfile import LoadResult
from tests.interop_support import check_log, interop_file, of_type

FIXTURE = ("gemini-cli/codemie-ai+codemie-code@8e8d4ce/tests/integration/metrics/fixtures/gemini/"
           "session-2025-12-01T21-45-5b959dae.json")


def _group(result: LoadResult, origin: dict[str, Any]) -> dict[str, Any]:
    """The group of the record at ``origin`` (a notice written inside a group shares its origin: skipped)."""
    inner = {s for e in of_type(result, SOURCE) for s in e["data"]["events"]}
    found = [e for e in result.records if e["type"] in (SOURCE, RAW) and e["data"]["origin"] == origin
             and e["seq"] not in inner]
    assert len(found) == 1, (origin, found)
    return found[0]


def _made(result: LoadResult, origin: dict[str, Any]) -> list[dict[str, Any]]:
    return [result.records[s] for s in _group(result, origin)["data"].get("events", [])]


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def _message(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "assistant/message")["data"]  # type: ignore[no-any-return]


# -- the JSON generation: the fixture -----------------------------------------------------------------------------


def test_fixture_messages() -> None:
    path = interop_file(FIXTURE)
    doc = json.loads(path.read_bytes())
    (log,) = read_json(path.read_bytes(), path.name)
    result = log.result
    check_log(result)
    assert result.warnings == []
    assert result.header["id"] == doc["sessionId"] and result.header["createdAt"] == 1764625534362
    meta = _group(result, {"pointer": ""})
    assert meta["type"] == RAW and meta["data"]["record"]["projectHash"] == doc["projectHash"]
    msgs = doc["messages"]
    first = _made(result, {"pointer": "/messages/0"})
    assert _types(first) == ["turn/start", "user/message"]
    assert first[1]["data"]["content"] == [{"type": "text", "text": "hi"}] and first[1]["data"]["id"] == msgs[0]["id"]
    assert first[1]["time"] == 1764625534362
    reply = _made(result, {"pointer": "/messages/1"})
    data = _message(reply)
    thoughts = msgs[1]["thoughts"]
    # subject on the first line (the Think row's title), the description as recorded: literal "\n" kept
    assert data["message"]["content"][0] == {"type": "reasoning",
                                             "text": f"{thoughts[0]['subject']}\n\n{thoughts[0]['description']}"}
    assert data["message"]["content"][0]["text"].startswith("Assessing the Prompt's Intent\n\n\\n\\n\n\n")
    assert data["message"]["content"][2] == {"type": "text", "text": msgs[1]["content"]}
    assert data["message"]["source"] == {"kind": "model", "model": "gemini-3-pro-image-preview"}
    assert data["usage"] == {"inputTokens": 2752, "outputTokens": 55, "cacheReadTokens": 0, "reasoningTokens": 156}
    blocks = [e for e in reply if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "block-end"]
    assert [b["time"] for b in blocks] == [1764625539982, 1764625540010, 1764625540110]  # each thought's own time
    assert reply[0]["type"] == "step/start" and reply[0]["time"] == 1764625539982
    assert _types(_made(result, {"pointer": "/messages/2"})) == ["turn/end", "turn/start", "user/message"]


def test_fixture_tool_calls_and_results() -> None:
    path = interop_file(FIXTURE)
    doc = json.loads(path.read_bytes())
    result = read_json(path.read_bytes(), path.name)[0].result
    made = _made(result, {"pointer": "/messages/3"})
    recorded = doc["messages"][3]["toolCalls"][0]
    call = next(e for e in made if e["type"] == "tool/call")
    assert call["data"]["callId"] == recorded["id"] and call["data"]["name"] == "list_directory"
    assert call["data"]["arguments"] == json.dumps(recorded["args"], separators=(",", ":"))
    assert {"type": "tool-call", "id": recorded["id"], "name": "list_directory",
            "arguments": call["data"]["arguments"]} in _message(made)["message"]["content"]
    output = next(e for e in made if e["type"] == "tool/result")
    assert output["data"]["message"]["content"][0]["content"] == \
        [{"type": "text", "text": recorded["result"][0]["functionResponse"]["response"]["output"]}]
    assert output["data"]["meta"] == {"status": "success", "resultDisplay": "Listed 5 item(s).",
                                      "displayName": "ReadFolder", "description": recorded["description"]}
    assert output["sourceEventSeqs"] == [call["seq"]]
    # one message, three calls: one step, each result at its call's own recorded time
    many = _made(result, {"pointer": "/messages/10"})
    assert _types(many).count("tool/call") == 3 and _types(many).count("step/start") == 1
    times = [e["time"] for e in many if e["type"] == "tool/result"]
    assert times == [1764625691367, 1764625775822, 1764625780294]
    # cached 5675 of input 7973 (FORMATS §2.8: input - cached + tool)
    assert _message(_made(result, {"pointer": "/messages/7"}))["usage"]["inputTokens"] == 7973 - 5675
    assert len(of_type(result, "turn/start")) == 3 and len(of_type(result, "step/start")) == 11
    assert of_type(result, "session/title") == []  # the fixture records no summary


def test_damaged_json_salvages_the_complete_messages_before_the_damage() -> None:
    path = interop_file(FIXTURE)
    data = path.read_bytes()
    doc = json.loads(data)
    cut = data.index(doc["messages"][5]["id"].encode()) + 10  # inside message 5
    (log,) = read_json(data[:cut], path.name)
    result = log.result
    check_log(result, allow_error=True)
    error = result.error
    assert error is not None and error.line is not None and error.column is not None
    assert error.location == f"{error.line}:{error.column}" and "invalid JSON" in error.message
    assert error.line == data[:cut].count(b"\n") + 1
    assert result.warnings == [f"line {error.line}, column {error.column}: the document is damaged; the 5 complete "
                               "message(s) before the damage were read"]
    assert len([e for e in of_type(result, SOURCE) if e["data"]["origin"]["pointer"].startswith("/messages/")]) == 5
    assert result.header["id"] == doc["sessionId"]


def test_json_of_the_wrong_shape() -> None:
    result = read_json(b'{"sessionId": "s", "projectHash": "h", "messages": {}}', "x.json")[0].result
    assert result.error is not None and result.error.location == "/messages"
    doc = {"sessionId": "s", "projectHash": "h", "summary": "Fix the build", "messages": [
        {"id": "m1", "type": "user", "content": "go", "timestamp": "2025-01-01T00:00:00Z"},
        {"id": "m2", "type": "gemini", "content": 7},
        {"id": "m3", "type": "warning", "content": "Low disk space"}]}
    result = read_json(json.dumps(doc).encode(), "x.json")[0].result
    check_log(result)
    assert _group(result, {"pointer": "/messages/1"})["type"] == RAW
    assert result.warnings and result.warnings[0].startswith("/messages/1: message not understood")
    warning = _group(result, {"pointer": "/messages/2"})
    assert warning["type"] == RAW and warning["data"]["notice"] == "Low disk space"
    (title,) = of_type(result, "session/title")
    assert title["data"] == {"title": "Fix the build", "source": {"kind": "recorded"}}


# -- the JSONL generation ------------------------------------------------------------------------------------------

T = "2026-01-01T10:00:{:02d}.000Z"


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode() + b"\n"


def _user(mid: str, text: str, t: int) -> dict[str, Any]:
    return {"id": mid, "timestamp": T.format(t), "type": "user", "content": [{"text": text}]}


def _gemini(mid: str, text: str, t: int, **more: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"id": mid, "timestamp": T.format(t), "type": "gemini", "content": text,
                             "model": "gemini-2.5-pro"}
    value.update(more)
    return value


LS_CALL = {"id": "ls-1", "name": "list_directory", "args": {"dir_path": "/w"}, "status": "success",
           "timestamp": T.format(3), "resultDisplay": "Listed 2 item(s).", "displayName": "ReadFolder",
           "result": [{"functionResponse": {"id": "ls-1", "name": "list_directory",
                                            "response": {"output": "a\nb"}}}]}
TOKENS = {"input": 900, "output": 20, "cached": 600, "thoughts": 15, "tool": 5, "total": 940}
THOUGHT = {"subject": "Plan", "description": "\\n\\nlook first", "timestamp": T.format(2)}
HEAD = {"sessionId": "sess-1", "projectHash": "abc", "startTime": T.format(0), "lastUpdated": T.format(0),
        "kind": "main"}

SESSION = [
    HEAD,                                                                          # 1
    _user("u1", "list files", 1),                                                  # 2
    {"$set": {"lastUpdated": T.format(1)}},                                         # 3
    _gemini("g1", "", 2, thoughts=[THOUGHT], tokens=TOKENS),                       # 4
    _gemini("g1", "", 2, thoughts=[THOUGHT], tokens=TOKENS, toolCalls=[LS_CALL]),  # 5: the same id again
    {"id": "u2", "timestamp": T.format(3), "type": "user",                         # 6: the response, as sent
     "content": [{"functionResponse": {"id": "ls-1", "name": "list_directory", "response": {"output": "a\nb"}}}]},
    _gemini("g2", "Two files.", 4, tokens=TOKENS),                                 # 7
    {"$set": {"summary": "Listing files", "lastUpdated": T.format(4)}},             # 8
    {"id": "i1", "timestamp": T.format(5), "type": "info", "content": "Request cancelled."},  # 9
    _user("u3", "now delete them", 6),                                             # 10
    _gemini("g3", "Deleting.", 7),                                                 # 11
    {"$rewindTo": "u3"},                                                           # 12
    _user("u4", "never mind; count them", 8),                                      # 13
    _gemini("g4", "2", 9),                                                         # 14
]


def _jsonl(values: list[dict[str, Any]]) -> bytes:
    return b"".join(_line(v) for v in values)


def test_jsonl_replay_writes_each_message_once_with_its_newest_copy() -> None:
    result = read_lines(GeminiReader("chats/session-2026-01-01T10-00-sess-1.jsonl"), _jsonl(SESSION))
    check_log(result)
    assert result.header["id"] == "sess-1" and result.header["createdAt"] == 1767261600000
    assert "parentSession" not in result.header
    assert _types(_made(result, {"line": 2})) == ["turn/start", "user/message"]
    first = _group(result, {"line": 4})
    assert first["type"] == RAW and first["data"]["duplicateOf"] == {"line": 5}
    step = _made(result, {"line": 5})
    assert first["seq"] < step[0]["seq"]  # written where the message first appeared
    data = _message(step)
    assert data["message"]["content"][0] == {"type": "reasoning", "text": "Plan\n\n\\n\\nlook first"}
    assert data["usage"] == {"inputTokens": 305, "outputTokens": 20, "cacheReadTokens": 600, "reasoningTokens": 15}
    (result_event,) = [e for e in step if e["type"] == "tool/result"]
    assert result_event["data"]["meta"]["resultDisplay"] == "Listed 2 item(s)."
    assert result_event["time"] == 1767261603000
    # the tool response the CLI also records as a user message adds nothing: its call has its result
    assert _group(result, {"line": 6})["type"] == RAW
    assert len(of_type(result, "turn/start")) == 2  # u1 and u4; the tool response is no prompt
    assert _types(_made(result, {"line": 7}))[0] == "step/start"
    assert of_type(result, "session/title")[0]["data"]["title"] == "Listing files"
    assert _group(result, {"line": 9})["data"]["notice"] == "Request cancelled."
    assert _group(result, {"line": 3})["type"] == RAW


def test_jsonl_rewind_drops_the_branch_from_the_chat() -> None:
    result = read_lines(GeminiReader("s.jsonl"), _jsonl(SESSION))
    for line in (10, 11):
        dropped = _group(result, {"line": line})
        assert dropped["type"] == RAW and dropped["data"]["discardedBy"] == {"line": 12}
    rewind = _group(result, {"line": 12})
    assert rewind["type"] == RAW
    assert rewind["data"]["notice"] == "Rewound to message u3: 2 message(s) dropped from the conversation"
    texts = [e["data"]["content"][0]["text"] for e in of_type(result, "user/message")]
    assert texts == ["list files", "never mind; count them"]
    assert [e["data"]["message"]["id"] for e in of_type(result, "assistant/message")] == ["g1", "g2", "g4"]


def test_jsonl_following_live_adds_what_a_later_copy_brings() -> None:
    reader = GeminiReader("s.jsonl")
    loader = LineLoader(reader)
    loader.feed(_jsonl(SESSION[:4]))
    assert loader.result.records == []  # held back until the file is idle
    added = loader.close_tail()
    assert added > 0 and len(of_type(loader.result, "tool/call")) == 0
    loader.feed(_jsonl(SESSION[4:5]))  # g1 again, now with its call and result
    loader.close_tail()
    late = _made(loader.result, {"line": 5})
    assert _types(late) == ["tool/call", "tool/result"]
    first_step = of_type(loader.result, "step/start")[0]["data"]
    assert late[0]["data"]["step"] == first_step["step"] and late[1]["data"]["turn"] == first_step["turn"]
    loader.feed(_jsonl([_gemini("g1", "changed text", 2, toolCalls=[LS_CALL])]))
    loader.close_tail()
    changed = _group(loader.result, {"line": 6})
    assert changed["type"] == RAW and changed["data"]["duplicateOf"] == {"line": 4}
    assert any(w.startswith("line 6: message g1 changed after it was written") for w in loader.result.warnings)
    result = loader.finish()
    check_log(result)


def test_jsonl_rewind_after_a_settle_shadows_what_was_written() -> None:
    reader = GeminiReader("s.jsonl")
    loader = LineLoader(reader)
    loader.feed(_jsonl(SESSION[:7]))
    loader.close_tail()
    loader.feed(_jsonl([{"$rewindTo": "g2"}, _user("u9", "try again", 9)]))
    result = loader.finish()
    check_log(result)
    rewind = _made(result, {"line": 8})
    # the surface from g2 on is replaced by a copy of the node before it (the ls result)
    copy = rewind[0]
    assert copy["type"] == "tool/result" and copy["surfaceOp"]["op"] == "replace"
    g2 = next(e for e in of_type(result, "assistant/message") if e["data"]["message"]["id"] == "g2")
    assert copy["surfaceOp"]["end"] == g2["seq"]
    assert rewind[1]["type"] == RAW and "1 message(s) dropped" in rewind[1]["data"]["notice"]
    assert of_type(result, "user/message")[-1]["surfaceOp"] == "append"


def test_jsonl_set_messages_replaces_the_model_history() -> None:
    history = [_user("u1", "list files (masked)", 1), _gemini("g2", "Two files.", 4)]
    values = [*SESSION[:7], {"$set": {"messages": history, "lastUpdated": T.format(5)}}, _user("u5", "more", 6)]
    result = read_lines(GeminiReader("s.jsonl"), _jsonl(values))
    check_log(result)
    made = _made(result, {"line": 8})
    assert _types(made) == ["compaction/start", "compaction/summary", "user/message", "assistant/message",
                            "compaction/end"]
    user_copy, model_copy = made[2], made[3]
    assert user_copy["data"]["content"] == [{"type": "text", "text": "list files (masked)"}]
    assert user_copy["surfaceOp"]["op"] == "replace" and model_copy["surfaceOp"]["op"] == "replace"
    assert model_copy["data"]["message"]["content"] == [{"type": "text", "text": "Two files."}]
    shadowed = made[1]["data"]["shadowedSeqs"]
    assert model_copy["surfaceOp"]["end"] == shadowed[-1]
    # the written messages stay append-origin (chat shows them); the next prompt appends after the copies
    assert of_type(result, "user/message")[-1]["surfaceOp"] == "append"


def test_jsonl_subagent_file_names_its_parent() -> None:
    head = dict(HEAD, sessionId="child-9", kind="subagent", directories=["/w"])
    data = _jsonl([head, _user("c1", "inspect the repo", 1), _gemini("c2", "It is a CLI.", 2)])
    result = read_lines(GeminiReader("chats/parent-123/child-9.jsonl"), data)
    check_log(result)
    assert result.header["id"] == "child-9" and result.header["parentSession"] == "parent-123"
    (descriptor,) = of_type(result, "subagent/descriptor")
    assert descriptor["data"] == {"mode": "one-shot", "provider": "gemini-cli", "childSessionId": "child-9",
                                  "parentSessionId": "parent-123"}
    told = read_lines(GeminiReader("child-9.jsonl", {"parentSession": "p-from-edge"}), data)
    assert told.header["parentSession"] == "p-from-edge"


def test_jsonl_call_of_a_subagent_links_its_child() -> None:
    call = {"id": "agent-1", "name": "codebase_investigator", "args": {"objective": "map it"}, "status": "success",
            "timestamp": T.format(3), "agentId": "child-9", "displayName": "Codebase Investigator",
            "result": [{"functionResponse": {"id": "agent-1", "name": "codebase_investigator",
                                             "response": {"output": "report"}}}]}
    result = read_lines(GeminiReader("s.jsonl"), _jsonl([HEAD, _user("u1", "go", 1),
                                                         _gemini("g1", "", 2, toolCalls=[call])]))
    check_log(result)
    (start,) = of_type(result, "tool-workflow/agent-start")
    (end,) = of_type(result, "tool-workflow/agent-end")
    assert start["data"] == {"runId": "agent-1", "seq": 1, "label": "Codebase Investigator", "childId": "child-9",
                             "turn": 1}
    assert end["data"]["outcome"] == "success"


def test_jsonl_cancelled_call_without_result_and_error_results() -> None:
    cancelled = {"id": "sh-1", "name": "run_shell_command", "args": {"command": "rm -rf /"}, "status": "cancelled",
                 "timestamp": T.format(3)}
    failed = {"id": "rd-1", "name": "read_file", "args": {"file_path": "/nope"}, "status": "error",
              "timestamp": T.format(3), "result": [{"functionResponse": {"id": "rd-1", "name": "read_file",
                                                                         "response": {"error": "no such file"}}}]}
    result = read_lines(GeminiReader("s.jsonl"), _jsonl([HEAD, _user("u1", "go", 1),
                                                         _gemini("g1", "", 2, toolCalls=[cancelled, failed]),
                                                         {"id": "e1", "type": "error", "content": "API error 500"}]))
    check_log(result)
    assert [e["data"]["callId"] for e in of_type(result, "tool/call")] == ["sh-1", "rd-1"]
    (only,) = of_type(result, "tool/result")
    block = only["data"]["message"]["content"][0]
    assert block["toolCallId"] == "rd-1" and block["isError"] is True
    assert block["content"] == [{"type": "text", "text": "no such file"}]
    assert _group(result, {"line": 4})["data"]["notice"] == "API error 500"


def test_jsonl_bad_line_keeps_the_records_before_it() -> None:
    data = _jsonl(SESSION[:5]) + b'{"id": "g9", "type": \n' + _jsonl(SESSION[5:7])
    result = read_lines(GeminiReader("s.jsonl"), data)
    check_log(result, allow_error=True)
    assert result.error is not None and result.error.line == 6
    assert [e["data"]["message"]["id"] for e in of_type(result, "assistant/message")] == ["g1"]
    assert len(of_type(result, "tool/result")) == 1
    result = read_lines(GeminiReader("s.jsonl"), _jsonl(SESSION[:3]) + b"[1, 2]\n")
    assert result.error is not None and result.error.line == 4 and "expected a JSON object" in result.error.message
    assert len(of_type(result, "user/message")) == 1


def test_jsonl_line_holding_a_whole_legacy_record() -> None:
    legacy = dict(HEAD, messages=[_user("u1", "old prompt", 1), _gemini("g1", "old answer", 2)])
    result = read_lines(GeminiReader("s.jsonl"), _jsonl([legacy, _user("u2", "new prompt", 3)]))
    check_log(result)
    assert [e["data"]["content"][0]["text"] for e in of_type(result, "user/message")] == ["old prompt", "new prompt"]
    assert result.header["id"] == "sess-1"


def test_the_format_table_names_these_readers() -> None:
    from assembler.formats import by_name, detect, reader_of

    assert reader_of(by_name("gemini-json")) is read_json
    assert reader_of(by_name("gemini-jsonl")) is GeminiReader
    assert detect(_jsonl(SESSION), complete=True) is by_name("gemini-jsonl")
    doc = {"sessionId": "s", "projectHash": "h", "startTime": T.format(0), "messages": [_user("u1", "x", 1)]}
    assert detect(json.dumps(doc, indent=2).encode(), complete=True) is by_name("gemini-json")


def test_jsonl_call_recorded_only_as_a_part_is_answered_by_the_next_response() -> None:
    model = {"id": "g1", "timestamp": T.format(2), "type": "gemini", "content": [
        {"text": "thinking aloud", "thought": True},
        {"functionCall": {"id": "fc-1", "name": "glob", "args": {"pattern": "*.py"}}}]}
    answer = {"id": "u2", "timestamp": T.format(3), "type": "user", "content": [
        {"functionResponse": {"id": "fc-1", "name": "glob", "response": {"output": "a.py"}}},
        {"text": "(2 more files hidden)"}]}
    result = read_lines(GeminiReader("s.jsonl"), _jsonl([HEAD, _user("u1", "go", 1), model, answer]))
    check_log(result)
    content = _message(_made(result, {"line": 3}))["message"]["content"]
    assert content == [{"type": "reasoning", "text": "thinking aloud"},
                       {"type": "tool-call", "id": "fc-1", "name": "glob", "arguments": '{"pattern":"*.py"}'}]
    made = _made(result, {"line": 4})
    assert _types(made) == ["tool/result", "user/message"]
    assert made[0]["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "a.py"}]
    assert made[1]["data"]["source"] == {"kind": "plugin", "plugin": "gemini-cli", "form": "tool-response"}
    assert len(of_type(result, "turn/start")) == 1
