"""The Codex rollout reader (FORMATS.md §5): what each record of the real rollouts becomes, and small hand-written
rollouts for what those do not hold (the older generation, steering, aborts, compaction, subagents, repeated and
empty token counts, the copies in either order, completion events, apply_patch, live tails)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from assembler.formats import UnknownFormat, by_name, detect
from assembler.interop.base import RAW, SOURCE, LineLoader, read_lines
from assembler.interop.codex import CodexReader
from assembler.render import render_section
from assembler.render.codex_tools import patch_text
from assembler.render.tools import tool_summary
from assembler.surface import SurfaceManager, derive_messages
from assembler.tooltext import parse_patch
from tests.interop_support import check_log, interop_file, of_type

MADSHN = "codex/madshn+localpush@219b539/src-tauri/tests/fixtures/codex/2026-02-23/raw/sessions/"
OPEN_CALL = MADSHN + "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
ONE_TASK = MADSHN + "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
DESKTOP = ("codex/codemie-ai+codemie-code@8e8d4ce/src/agents/plugins/codex/__tests__/fixtures/"
           "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
_SHA = re.compile(r"sha=([0-9a-f]{8})")


def load(rel: str) -> tuple[Any, list[dict[str, Any]]]:
    path = interop_file(rel)
    data = path.read_bytes()
    return read_lines(CodexReader(path.name), data), [json.loads(x) for x in data.splitlines() if x.strip()]


def read(lines: list[Any], name: str = "rollout-test.jsonl") -> Any:
    text = "\n".join(x if type(x) is str else json.dumps(x) for x in lines) + "\n"
    return read_lines(CodexReader(name), text.encode())


def env(kind: str, payload: dict[str, Any], ts: str = "2026-01-01T10:00:00.000Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def item(ptype: str, **fields: Any) -> dict[str, Any]:
    return env("response_item", {"type": ptype, **fields})


def event(ptype: str, **fields: Any) -> dict[str, Any]:
    return env("event_msg", {"type": ptype, **fields})


def text_item(role: str, text: str, **extra: Any) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return item("message", role=role, content=[{"type": part, "text": text}], **extra)


def usage(inp: int, cached: int, out: int, reasoning: int) -> dict[str, int]:
    return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
            "reasoning_output_tokens": reasoning, "total_tokens": inp + out}


def token_count(total: dict[str, int], last: dict[str, int] | None = None) -> dict[str, Any]:
    return event("token_count", info={"total_token_usage": total, "last_token_usage": last or total,
                                      "model_context_window": 200000}, rate_limits=None)


META = env("session_meta", {"id": "thread-1", "timestamp": "2026-01-01T09:59:59.000Z", "cwd": "/home/user/proj",
                            "originator": "codex-tui", "cli_version": "0.120.0", "source": "cli",
                            "model_provider": "openai", "base_instructions": {"text": "You are Codex."}})
CTX = env("turn_context", {"turn_id": "t1", "cwd": "/home/user/proj", "model": "gpt-5", "effort": "medium"})


def user_texts(result: Any, kind: str) -> list[str]:
    out = []
    for e in of_type(result, "user/message"):
        if e["data"]["source"]["kind"] == kind:
            out.append("".join(b.get("text", "") for b in e["data"]["content"]))
    return out


def by_seq(result: Any) -> dict[int, dict[str, Any]]:
    return {e["seq"]: e for e in result.records}


def raws(result: Any, record_type: str) -> list[dict[str, Any]]:
    return [e for e in of_type(result, RAW) if e["data"]["recordType"] == record_type]


def shown_text(event: dict[str, Any]) -> str:
    """The text an event shows: a block-end chunk's block or a message's content."""
    data = event["data"]
    if event["type"] == "assistant/chunk":
        return data["chunk"]["block"]["text"]
    return "".join(b.get("text", "") for b in data["content"])


def source_line(result: Any, seq: int) -> int:
    """The line of the source record that made event ``seq``."""
    for e in of_type(result, SOURCE):
        if seq in e["data"]["events"]:
            return int(e["data"]["origin"]["line"])
    raise AssertionError(seq)


def assert_copies_point_at_their_twin(result: Any, lines: list[dict[str, Any]]) -> int:
    """Every hidden copy is raw, ``duplicateOf`` the event that shows the same (redacted) text: the redaction
    marker keeps each text's hash, so the pair is checked by it. Returns how many copies there were."""
    events = by_seq(result)
    copies = [e for e in of_type(result, RAW) if "duplicateOf" in e["data"]
              and e["data"]["recordType"] in ("event_msg/agent_message", "event_msg/agent_reasoning",
                                              "response_item/message")]
    for copy in copies:
        target = events[copy["data"]["duplicateOf"]]
        record = copy["data"]["record"]["payload"]
        text = record.get("message") or record.get("text") or record["content"][0]["text"]
        assert _SHA.findall(text) == _SHA.findall(shown_text(target)), (copy, target)
    return len(copies)


# -- the real rollouts -------------------------------------------------------------------------------------------

def test_open_call_rollout_header_prompt_and_context() -> None:
    result, lines = load(OPEN_CALL)
    check_log(result)
    meta = lines[0]["payload"]
    assert result.header["sessionId"] == meta["id"] and result.header["cwd"] == meta["cwd"]
    assert result.header["harnessVersion"] == "0.104.0-alpha.1" and result.header["originator"] == "Codex Desktop"
    assert result.header["id"] == "019c8a70-dda7-7f33-98ea-f30553347322"  # the thread id: a child names it
    assert result.header["createdAt"] == 1771849178535 and result.header["version"] == 0
    (header,) = of_type(result, "request/header")
    assert header["data"] == {"header": {"config": {"provider": "openai"}, "system": meta["base_instructions"]["text"]},
                              "reason": "initial"}
    # the one typed prompt comes from user_message; its response_item copy (line 9) is raw, duplicateOf it
    (prompt,) = [e for e in of_type(result, "user/message") if e["data"]["source"]["kind"] == "user"]
    assert shown_text(prompt) == lines[9]["payload"]["message"] and source_line(result, prompt["seq"]) == 10
    (copy,) = raws(result, "response_item/message")
    assert copy["data"]["origin"] == {"line": 9} and copy["data"]["duplicateOf"] == prompt["seq"]
    # four developer messages and three user items with no prompt behind them: model context, not prompts
    forms = [e["data"]["source"] for e in of_type(result, "user/message") if e["data"]["source"]["kind"] == "plugin"]
    assert [f["form"] for f in forms] == ["developer", "developer", "context", "context", "developer", "developer",
                                          "context"]
    assert {f["plugin"] for f in forms} == {"codex"}
    assert assert_copies_point_at_their_twin(result, lines) == 3  # the prompt, one reasoning, one message


def test_open_call_rollout_ends_on_an_unanswered_call_in_an_open_turn() -> None:
    result, lines = load(OPEN_CALL)
    (call,) = of_type(result, "tool/call")
    assert call["data"]["callId"] == lines[17]["payload"]["call_id"]
    assert call["data"]["arguments"] == lines[17]["payload"]["arguments"]
    assert of_type(result, "tool/result") == []
    assert of_type(result, "turn/end") == [] and of_type(result, "step/end") == []  # nothing invented
    (message,) = of_type(result, "assistant/message")
    assert [b["type"] for b in message["data"]["message"]["content"]] == ["reasoning", "text", "tool-call"]
    assert message["data"]["message"]["content"][1]["phase"] == "commentary"
    last = lines[18]["payload"]["info"]["last_token_usage"]
    assert message["data"]["usage"] == {"inputTokens": last["input_tokens"] - last["cached_input_tokens"],
                                        "cacheReadTokens": last["cached_input_tokens"],
                                        "outputTokens": last["output_tokens"] - last["reasoning_output_tokens"],
                                        "reasoningTokens": last["reasoning_output_tokens"]}
    (null_count,) = raws(result, "event_msg/token_count")  # info: null at the turn's start
    assert null_count["data"]["origin"] == {"line": 13} and "duplicateOf" not in null_count["data"]
    (context,) = of_type(result, "request/context")
    assert context["data"] == {"model": "gpt-5.3-codex", "provider": "openai", "contextWindow": 258400}


def test_one_task_rollout_steps_usage_and_calls() -> None:
    result, lines = load(ONE_TASK)
    check_log(result)
    messages = of_type(result, "assistant/message")
    assert len(of_type(result, "step/start")) == len(of_type(result, "step/end")) == len(messages) == 6
    # usage: each counted token_count's last_token_usage once; together they are the last total
    counts = [x["payload"]["info"] for x in lines if x["payload"].get("type") == "token_count" and x["payload"]["info"]]
    total = counts[-1]["total_token_usage"]
    steps = [m["data"]["usage"] for m in messages]
    assert sum(u["inputTokens"] + u["cacheReadTokens"] for u in steps) == total["input_tokens"]
    assert sum(u["cacheReadTokens"] for u in steps) == total["cached_input_tokens"]
    assert sum(u["outputTokens"] + u["reasoningTokens"] for u in steps) == total["output_tokens"]
    assert sum(u["reasoningTokens"] for u in steps) == total["reasoning_output_tokens"]
    # the token_count written again after each output is raw, duplicateOf the usage chunk it repeats
    kept = raws(result, "event_msg/token_count")
    repeats = [r for r in kept if "duplicateOf" in r["data"]]
    assert len(repeats) == 5 and [r["data"]["record"]["payload"]["info"] for r in kept if r not in repeats] == [None]
    events = by_seq(result)
    for rep in repeats:
        chunk = events[rep["data"]["duplicateOf"]]
        assert chunk["data"]["chunk"]["type"] == "usage"
        assert rep["data"]["record"]["payload"]["info"]["total_token_usage"] == \
            lines[source_line(result, chunk["seq"]) - 1]["payload"]["info"]["total_token_usage"]
    # every call paired with its output by call_id, in the step that made it
    calls = {c["data"]["callId"]: c for c in of_type(result, "tool/call")}
    results = of_type(result, "tool/result")
    assert len(calls) == len(results) == 5
    for r in results:
        call = calls[r["data"]["message"]["source"]["callId"]]
        assert r["sourceEventSeqs"] == [call["seq"]] and r["data"]["step"] == call["data"]["step"]
    assert assert_copies_point_at_their_twin(result, lines) == 13  # 6 reasoning, 6 messages, 1 prompt
    (end,) = of_type(result, "turn/end")
    assert end["data"]["reason"] == {"kind": "completed"}
    assert messages[-1]["data"]["message"]["content"][-1]["phase"] == "final_answer"
    assert len(of_type(result, "request/context")) == 1  # turn_context repeated unchanged at every call
    assert len(raws(result, "turn_context")) == 5


def test_desktop_rollout_turns_from_prompts_exit_codes_and_hidden_reasoning() -> None:
    result, lines = load(DESKTOP)
    value = check_log(result)
    prompts = [x["payload"]["message"] for x in lines if x["payload"].get("type") == "user_message"]
    assert user_texts(result, "user") == prompts and len(prompts) == 3
    # no task events: each prompt opens a turn that ends at the next; the last stays open
    assert [e["data"]["turn"] for e in of_type(result, "turn/start")] == [1, 2, 3]
    assert [e["data"] for e in of_type(result, "turn/end")] == [{"turn": 1, "reason": {"kind": "completed"}},
                                                                {"turn": 2, "reason": {"kind": "completed"}}]
    calls = of_type(result, "tool/call")
    outputs = {e["data"]["message"]["source"]["callId"]: e for e in of_type(result, "tool/result")}
    assert len(calls) == len(outputs) == 38
    codes = {}
    for line in lines:
        p = line["payload"]
        if p.get("type") == "function_call_output":
            found = re.search(r"^Process exited with code (\d+)$", p["output"].split("\nOutput:\n")[0], re.M)
            codes[p["call_id"]] = int(found.group(1)) if found else None
    for call_id, code in codes.items():
        assert outputs[call_id].get("data", {}).get("meta", {}).get("exitCode") == code, call_id
    assert sorted(c for c in codes.values() if c) == [1]  # the one failing command (ps not permitted)
    names = {c["data"]["name"] for c in calls}
    assert names == {"exec_command", "mcp__node_repl__js"}  # the MCP tool's namespace joined to its name
    # reasoning with an empty summary: an empty reasoning block; the encrypted part only as replay state
    reasoning = [x["payload"] for x in lines if x["payload"].get("type") == "reasoning"]
    blocks = [c["data"]["chunk"]["block"] for c in of_type(result, "assistant/chunk")
              if c["data"]["chunk"]["block"]["type"] == "reasoning"]
    assert len(blocks) == len(reasoning) == 16 and {b["text"] for b in blocks} == {""}
    states = [s for m in of_type(result, "assistant/message")
              for s in m["data"]["message"]["source"].get("replayState", {}).get("reasoning", [])]
    assert [s["encryptedContent"] for s in states] == [r["encrypted_content"] for r in reasoning]
    assert not any(r["encrypted_content"] in json.dumps(b) for r in reasoning for b in blocks)
    assert of_type(result, "assistant/chunk") and not any(
        c["data"]["chunk"]["type"] == "usage" for c in of_type(result, "assistant/chunk"))  # no token_count
    kinds = [n.data.kind for n in value.chat if n.kind == "input-message"]
    assert kinds == ["user", "user", "user"]


@pytest.mark.parametrize("rel", [OPEN_CALL, ONE_TASK, DESKTOP])
def test_every_fixture_is_detected_read_whole_and_kept_record_by_record(rel: str) -> None:
    result, lines = load(rel)
    check_log(result)
    assert detect(interop_file(rel).read_bytes()[:65536], complete=False) is by_name("codex")
    kept = sorted(e["data"]["origin"]["line"] for e in of_type(result, SOURCE) + of_type(result, RAW))
    assert kept == list(range(1, len(lines) + 1))  # every line once, in file order
    assert result.warnings == [] and result.error is None


# -- hand-written rollouts ---------------------------------------------------------------------------------------

def test_older_generation_bare_meta_items_and_state_lines() -> None:
    result = read([
        {"id": "old-1", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": "Be brief.", "git": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                        "text": "<environment_context>cwd</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}], "encrypted_content": None},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"},
        {"record_type": "state"},
        {"type": "function_call_output", "call_id": "c1",
         "output": "{\"output\":\"a.txt\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One file."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
    ])
    check_log(result)
    assert result.header["sessionId"] == "old-1" and result.header["createdAt"] == 1746093600000
    assert of_type(result, "request/header")[0]["data"]["header"]["instructions"] == "Be brief."
    assert user_texts(result, "user") == ["list the files", "thanks"]  # bare user items are the prompts
    assert [e["data"]["source"]["form"] for e in of_type(result, "user/message")
            if e["data"]["source"]["kind"] == "plugin"] == ["environment_context"]
    assert [e["data"]["turn"] for e in of_type(result, "turn/start")] == [1, 2]
    (out,) = of_type(result, "tool/result")
    assert out["data"]["message"]["content"][0]["content"] == [{"type": "text", "text": "a.txt\n"}]
    assert out["data"]["meta"] == {"metadata": {"exit_code": 0, "duration_seconds": 0.1}, "exitCode": 0}
    assert len(raws(result, "state")) == 2
    assert {e["time"] for e in result.records if e["type"] != "request/header"} >= {0}
    assert all(e["time"] == 0 for e in of_type(result, "assistant/message"))  # items carry no timestamps


def test_a_prompt_typed_inside_an_open_task_is_steering() -> None:
    result = read([META, event("task_started", turn_id="t1", model_context_window=200000), CTX,
                   text_item("user", "fix the bug"), event("user_message", message="fix the bug", images=[]),
                   text_item("assistant", "Looking."), token_count(usage(100, 0, 10, 0)),
                   event("user_message", message="also add a test", images=[]), text_item("user", "also add a test"),
                   text_item("assistant", "Done both."), token_count(usage(250, 100, 30, 5), usage(150, 100, 20, 5)),
                   event("task_complete", turn_id="t1", duration_ms=15000, time_to_first_token_ms=4000)])
    value = check_log(result)
    assert len(of_type(result, "turn/start")) == 1
    assert user_texts(result, "user") == ["fix the bug", "also add a test"]
    (splice,) = of_type(result, "agent/inbox/spliced")
    steering = [e for e in of_type(result, "user/message") if e["data"]["source"]["kind"] == "user"][1]
    assert splice["data"]["target"] == "next-step" and splice["data"]["inserted"][0]["id"] == steering["data"]["id"]
    assert [n.data.kind for n in value.chat if n.kind == "input-message"] == ["user", "steering"]
    copies = raws(result, "response_item/message")
    assert [c["data"]["duplicateOf"] for c in copies] == [e["seq"] for e in of_type(result, "user/message")]
    (end,) = of_type(result, "turn/end")
    assert end["data"] == {"turn": 1, "reason": {"kind": "completed"}, "durationMs": 15000, "ttftMs": 4000}


def test_turn_aborted_ends_the_turn_aborted_by_the_user() -> None:
    result = read([META, event("task_started", turn_id="t1"), CTX, event("user_message", message="go"),
                   text_item("assistant", "Working"), event("turn_aborted", turn_id="t1", reason="interrupted"),
                   text_item("user", "<turn_aborted>The user interrupted.</turn_aborted>")])
    check_log(result)
    (end,) = of_type(result, "turn/end")
    assert end["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    assert of_type(result, "step/end")[0]["seq"] < end["seq"]
    assert [e["data"]["source"].get("form") for e in of_type(result, "user/message")] == [None, "turn_aborted"]


def test_compaction_writes_the_replacement_history_as_the_replacement_copies() -> None:
    history = [text_item("developer", "<permissions instructions>ask first</permissions instructions>")["payload"],
               text_item("user", "fix the bug")["payload"],
               text_item("user", "Summary: the bug is in a.py")["payload"]]
    result = read([META, text_item("developer", "<permissions instructions>ask first</permissions instructions>"),
                   event("task_started", turn_id="t1"), CTX, event("user_message", message="fix the bug"),
                   text_item("assistant", "Reading a.py"),
                   item("function_call", name="exec_command", arguments="{\"cmd\":\"cat a.py\"}", call_id="c1"),
                   token_count(usage(100, 0, 10, 0)),
                   item("function_call_output", call_id="c1", output="Process exited with code 0\nOutput:\nx"),
                   env("compacted", {"message": "Summary: the bug is in a.py", "replacement_history": history}),
                   event("context_compacted"), text_item("assistant", "Continuing."),
                   token_count(usage(150, 50, 20, 0), usage(50, 50, 10, 0))])
    value = check_log(result)
    start, summary, end = (of_type(result, t)[0] for t in ("compaction/start", "compaction/summary",
                                                          "compaction/end"))
    replacements = [e for e in of_type(result, "user/message") if e["data"]["source"].get("plugin") == "compact"]
    assert [e["data"]["source"]["form"] for e in replacements] == ["replacement/developer", "replacement/user",
                                                                  "replacement/user"]
    assert all(type(e["surfaceOp"]) is dict for e in replacements)  # every copy is a replace: model-only
    assert summary["data"]["summary"] == [{"type": "text", "text": "Summary: the bug is in a.py"}]
    shadowed = summary["data"]["shadowedSeqs"]
    assert len(shadowed) == 4  # permissions context, prompt, assistant message, tool result
    cited = [s for e in replacements for s in e["sourceEventSeqs"]]
    assert sorted(cited) == sorted(shadowed)  # the range split among the copies, each citing what it shadows
    assert start["seq"] < summary["seq"] < replacements[0]["seq"] == summary["seq"] + 1 and replacements[-1]["seq"] \
        < end["seq"]
    (notice,) = raws(result, "event_msg/context_compacted")
    assert notice["data"]["duplicateOf"] == start["seq"]
    surface = SurfaceManager(result.records)
    texts = ["".join(b.get("text", "") for b in m["content"]) for m in derive_messages(surface)]
    assert texts == ["<permissions instructions>ask first</permissions instructions>", "fix the bug",
                     "Summary: the bug is in a.py", "Continuing."]
    chat_inputs = [n.data.kind for n in value.chat if n.kind == "input-message"]
    assert chat_inputs == ["context", "user"]  # the copies are not conversation
    assert [n.kind for n in value.chat].count("compaction") == 1


def test_compaction_without_replacement_history_replaces_the_surface_with_its_summary() -> None:
    result = read([META, event("user_message", message="hi"), text_item("assistant", "hello"),
                   env("compacted", {"message": "They said hi."})])
    check_log(result)
    (copy,) = [e for e in of_type(result, "user/message") if e["data"]["source"].get("plugin") == "compact"]
    assert copy["data"]["source"]["form"] == "summary"
    assert [m["content"] for m in derive_messages(SurfaceManager(result.records))] == [
        [{"type": "text", "text": "They said hi."}]]


def test_a_subagent_rollout_names_its_parent() -> None:
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "parent-thread", "depth": 1,
                                           "agent_nickname": "Scout", "agent_role": "explorer"}}}
    meta = env("session_meta", {**META["payload"], "id": "child-thread", "source": spawn})
    result = read([meta, event("user_message", message="explore"), text_item("assistant", "Found it.")])
    value = check_log(result)
    assert result.header["parentSession"] == "parent-thread" and result.header["sessionId"] == "child-thread"
    assert result.header["origin"] == "subagent" and result.header["delegationDepth"] == 1
    (descriptor,) = of_type(result, "subagent/descriptor")
    assert descriptor["data"]["label"] == "Scout" and descriptor["data"]["mode"] == "continuable"
    assert descriptor["data"]["parentSessionId"] == "parent-thread"
    assert [n.data.title for n in value.chat if n.kind == "subagent"] == ["This session is a subagent: Scout"]
    review = read([env("session_meta", {**META["payload"], "source": {"subagent": "review"}})])
    assert of_type(review, "subagent/descriptor")[0]["data"]["label"] == "review"
    assert "parentSession" not in review.header
    unknown = read([env("session_meta", {**META["payload"], "source": {"subagent": {"new_kind": {}}}})])
    assert of_type(unknown, "subagent/descriptor") == [] and "origin" not in unknown.header


def test_a_token_count_written_twice_counts_once() -> None:
    total = usage(1000, 800, 60, 20)
    result = read([META, event("user_message", message="q"), text_item("assistant", "a"), token_count(total),
                   token_count(total)])
    check_log(result)
    chunks = [c for c in of_type(result, "assistant/chunk") if c["data"]["chunk"]["type"] == "usage"]
    assert [c["data"]["chunk"]["usage"] for c in chunks] == [
        {"inputTokens": 200, "cacheReadTokens": 800, "outputTokens": 40, "reasoningTokens": 20}]
    (repeat,) = raws(result, "event_msg/token_count")
    assert repeat["data"]["duplicateOf"] == chunks[0]["seq"]


def test_a_token_count_without_info_is_kept_raw_and_counts_nothing() -> None:
    result = read([META, event("task_started", turn_id="t1"), event("token_count", info=None, rate_limits={}),
                   event("user_message", message="q"), text_item("assistant", "a")])
    check_log(result)
    (kept,) = raws(result, "event_msg/token_count")
    assert "duplicateOf" not in kept["data"]
    assert "usage" not in of_type(result, "assistant/message")[0]["data"]


def test_a_counted_token_count_after_its_response_closed_is_a_usage_step() -> None:
    result = read([META, event("task_started", turn_id="t1"), event("user_message", message="q"),
                   item("function_call", name="exec_command", arguments="{}", call_id="c1"),
                   item("function_call_output", call_id="c1", output="ok"), token_count(usage(10, 0, 5, 0))])
    check_log(result)
    last = of_type(result, "assistant/message")[-1]
    assert last["data"]["message"]["content"] == [] and last["data"]["usage"]["inputTokens"] == 10


@pytest.mark.parametrize("order", ["ui-first", "item-first"])
def test_each_message_once_whichever_copy_comes_first(order: str) -> None:
    pairs = [(event("agent_reasoning", text="plan"),
              item("reasoning", summary=[{"type": "summary_text", "text": "plan"}], encrypted_content="E1")),
             (event("agent_message", message="Hello", phase="final_answer"),
              text_item("assistant", "Hello", phase="final_answer"))]
    body = [x for ui, it in pairs for x in ((ui, it) if order == "ui-first" else (it, ui))]
    result = read([META, event("user_message", message="hi"), *body, token_count(usage(10, 0, 5, 1))])
    check_log(result)
    (message,) = of_type(result, "assistant/message")
    assert message["data"]["message"]["content"] == [{"type": "reasoning", "text": "plan"},
                                                     {"type": "text", "text": "Hello", "phase": "final_answer"}]
    assert message["data"]["message"]["source"]["replayState"] == {"reasoning": [{"index": 0,
                                                                                  "encryptedContent": "E1"}]}
    copies = raws(result, "event_msg/agent_reasoning") + raws(result, "event_msg/agent_message")
    events = by_seq(result)
    assert [shown_text(events[c["data"]["duplicateOf"]]) for c in copies] == ["plan", "Hello"]


def test_a_ui_copy_without_its_item_is_shown_instead() -> None:
    result = read([META, event("user_message", message="hi"), event("agent_reasoning", text="hmm"),
                   event("agent_message", message="Hi there"), token_count(usage(10, 0, 5, 0))])
    check_log(result)
    (message,) = of_type(result, "assistant/message")
    assert message["data"]["message"]["content"] == [{"type": "reasoning", "text": "hmm"},
                                                     {"type": "text", "text": "Hi there"}]
    assert of_type(result, RAW) == []


def test_completion_events_go_to_the_result_meta_or_stay_raw_after_it() -> None:
    end = {"call_id": "c1", "command": ["bash", "-lc", "false"], "exit_code": 2, "aggregated_output": "x" * 50,
           "stdout": "", "stderr": "boom", "duration": {"secs": 0, "nanos": 5}}
    result = read([META, event("user_message", message="run"),
                   item("function_call", name="exec_command", arguments="{\"cmd\":\"false\"}", call_id="c1"),
                   event("exec_command_end", **end),
                   item("function_call_output", call_id="c1", output="Process exited with code 2\nOutput:\nboom"),
                   item("function_call", name="exec_command", arguments="{\"cmd\":\"true\"}", call_id="c2"),
                   item("function_call_output", call_id="c2", output="Process exited with code 0\nOutput:\n"),
                   event("exec_command_end", call_id="c2", exit_code=0)])
    check_log(result)
    first, second = of_type(result, "tool/result")
    assert first["data"]["meta"]["exitCode"] == 2
    assert first["data"]["meta"]["commandEnd"] == {"command": ["bash", "-lc", "false"], "exit_code": 2,
                                                   "duration": {"secs": 0, "nanos": 5}}  # outputs not copied
    (late,) = [e for e in raws(result, "event_msg/exec_command_end") if "duplicateOf" in e["data"]]
    assert late["data"]["duplicateOf"] == second["seq"]


def test_every_tool_kind_keeps_its_arguments_and_pairs_by_call_id() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch"
    args = "{\"cmd\":  \"ls\" , \"yield_time_ms\":1000}"  # not compact JSON: kept byte for byte
    result = read([META, event("user_message", message="do it"),
                   item("function_call", name="exec_command", arguments=args, call_id="c1"),
                   item("custom_tool_call", name="apply_patch", input=patch, call_id="c2", status="completed"),
                   item("local_shell_call", call_id="c3", status="completed",
                        action={"type": "exec", "command": ["ls", "-la"]}),
                   item("web_search_call", id="ws_1", status="completed",
                        action={"type": "search", "query": "codex rollout"}),
                   item("custom_tool_call_output", call_id="c2",
                        output=json.dumps({"output": "Success. Updated a.py\n", "metadata": {"exit_code": 0}})),
                   item("local_shell_call_output", call_id="c3", output="total 0"),
                   item("function_call_output", call_id="c1", output="Process exited with code 0\nOutput:\nx")])
    value = check_log(result)
    calls = {c["data"]["callId"]: c["data"] for c in of_type(result, "tool/call")}
    assert calls["c1"]["arguments"] == args and calls["c2"]["arguments"] == patch
    assert calls["c3"] == {**calls["c3"], "name": "local_shell",
                           "arguments": "{\"type\":\"exec\",\"command\":[\"ls\",\"-la\"]}"}
    assert calls["ws_1"]["name"] == "web_search" and calls["ws_1"]["arguments"] == \
        "{\"type\":\"search\",\"query\":\"codex rollout\"}"
    results = {e["data"]["message"]["source"]["callId"]: e for e in of_type(result, "tool/result")}
    assert set(results) == {"c1", "c2", "c3"}  # a hosted search has no result
    assert results["c2"]["data"]["message"]["content"][0]["content"] == [{"type": "text",
                                                                          "text": "Success. Updated a.py\n"}]
    assert results["c2"]["data"]["meta"] == {"metadata": {"exit_code": 0}, "exitCode": 0}
    assert [e["data"]["step"] for e in of_type(result, "step/end")] == [1]  # one model call, closed by its outputs
    # the rows: apply_patch as a diff, exec_command as a terminal with its exit status
    tools = {n.data.callId: n for n in value.chat if n.kind == "tool"}
    diff = render_section(tools["c2"], 0)
    assert '<span class="del">-    return 1</span>' in diff and '<span class="add">+    return 2</span>' in diff
    assert "a.py (updated)" in diff
    terminal = render_section(tools["c1"], 0)
    assert 'class="terminal"' in terminal and "exit status 0" in terminal
    assert 'class="terminal"' in render_section(tools["c3"], 0)
    assert tool_summary("apply_patch", patch) == "apply_patch: a.py +1 −1"
    assert tool_summary("local_shell", calls["c3"]["arguments"]) == "local_shell: ls -la"
    assert tool_summary("shell", json.dumps({"command": ["bash", "-lc", "rg -n x"]})) == "shell: rg -n x"


def test_an_output_written_before_its_call_is_the_row_and_the_call_only_a_block() -> None:
    result = read([META, event("user_message", message="go"), item("function_call_output", call_id="c1", output="x"),
                   item("function_call", name="exec_command", arguments="{}", call_id="c1"),
                   item("function_call", name="exec_command", arguments="{}", call_id="c1")])
    value = check_log(result)  # the fold would refuse a call that starts after its own result
    assert of_type(result, "tool/call") == [] and len(of_type(result, "tool/result")) == 1
    assert [n.data.callId for n in value.chat if n.kind == "tool"] == ["c1"]
    assert [e["data"]["chunk"]["block"]["type"] for e in of_type(result, "assistant/chunk")] == ["tool-call"] * 2


def test_apply_patch_grammar_as_a_unified_diff() -> None:
    patch = ("*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Delete File: old.txt\n"
             "*** Update File: src/a.py\n*** Move to: src/b.py\n@@ class A:\n     x = 1\n-    y = 2\n+    y = 3\n"
             "*** End of File\n*** End Patch\n")
    files = parse_patch(patch)
    assert files is not None and [(f.op, f.path, f.move_to, f.added, f.removed) for f in files] == [
        ("add", "new.txt", None, 2, 0), ("delete", "old.txt", None, 0, 0), ("update", "src/a.py", "src/b.py", 1, 1)]
    assert patch_text(files) == ("--- /dev/null\n+++ b/new.txt\n+hello\n+world\n"
                                 "--- a/old.txt\n+++ /dev/null\n"
                                 "--- a/src/a.py\n+++ b/src/b.py\n@@ class A: @@\n     x = 1\n-    y = 2\n+    y = 3")
    assert parse_patch("not a patch") is None and parse_patch("*** Begin Patch\n*** End Patch") is None


def test_update_plan_is_a_checklist_row() -> None:
    plan = {"explanation": "steps", "plan": [{"step": "read", "status": "completed"},
                                             {"step": "fix", "status": "in_progress"}]}
    result = read([META, event("user_message", message="plan"),
                   item("function_call", name="update_plan", arguments=json.dumps(plan), call_id="p1"),
                   item("function_call_output", call_id="p1", output="Plan updated")])
    (row,) = [n for n in check_log(result).chat if n.kind == "tool"]
    body = render_section(row, 0)
    assert 'class="checklist"' in body and "☑ read" in body and "◐ fix" in body
    assert tool_summary("update_plan", json.dumps(plan)) == "update_plan: 2 items, 1 done"


def test_title_images_and_context_markers() -> None:
    result = read([META, text_item("user", "# AGENTS.md instructions for /p\n<INSTRUCTIONS>x</INSTRUCTIONS>"),
                   text_item("user", "<environment_context>\n<cwd>/p</cwd>\n</environment_context>"),
                   text_item("developer", "<collaboration_mode>plan</collaboration_mode>"),
                   event("user_message", message="see", images=["data:image/png;base64,AAAA"]),
                   event("thread_name_updated", thread_id="thread-1", thread_name="Fix the bug")])
    check_log(result)
    assert [e["data"]["source"].get("form") for e in of_type(result, "user/message")] == [
        "agents_md", "environment_context", "collaboration_mode", None]
    prompt = of_type(result, "user/message")[-1]["data"]["content"]
    assert prompt[1] == {"type": "image", "attachment": {"url": "data:image/png;base64,AAAA",
                                                         "mediaType": "image/png"}}
    assert of_type(result, "session/title")[0]["data"] == {"title": "Fix the bug", "source": {"kind": "recorded"}}


def test_error_and_warning_events_are_raw_notices() -> None:
    result = read([META, event("error", message="stream disconnected"), event("warning", message=None)])
    check_log(result)
    assert [e["data"].get("notice") for e in of_type(result, RAW)] == ["stream disconnected", "warning"]


def test_live_tail_closes_an_idle_response_and_leaves_the_turn_open() -> None:
    loader = LineLoader(CodexReader("rollout-live.jsonl"))
    lines = [META, event("task_started", turn_id="t1"), event("user_message", message="go"),
             item("reasoning", summary=[], encrypted_content="E"),
             item("function_call", name="exec_command", arguments="{\"cmd\":\"sleep 9\"}", call_id="c1")]
    loader.feed(("\n".join(json.dumps(x) for x in lines) + "\n").encode())
    assert of_type(loader.result, "assistant/message") == []
    assert loader.close_tail() > 0
    assert len(of_type(loader.result, "assistant/message")) == 1
    assert of_type(loader.result, "step/end") == []  # its call is still running
    loader.feed((json.dumps(item("function_call_output", call_id="c1", output="done")) + "\n").encode())
    loader.close_tail()
    result = loader.finish()
    check_log(result)
    assert len(of_type(result, "step/end")) == 1 and of_type(result, "turn/end") == []


def test_a_held_copy_is_kept_before_a_bad_line() -> None:
    data = (json.dumps(META) + "\n" + json.dumps(event("agent_message", message="partial")) + "\n{not json\n").encode()
    result = read_lines(CodexReader("r.jsonl"), data)
    check_log(result, allow_error=True)
    assert result.error is not None and result.error.line == 3
    (chunk,) = of_type(result, "assistant/chunk")  # the held copy, written before the error stopped the read
    assert chunk["data"]["chunk"]["block"] == {"type": "text", "text": "partial"}
    assert [e["data"]["origin"] for e in of_type(result, SOURCE)] == [{"line": 1}, {"line": 2}]


def test_a_held_copy_is_kept_before_a_line_the_loader_refuses() -> None:
    """The loader stops on a line too long without calling the reader: ``LineReader.flush`` still writes what the
    reader held back, before the error."""
    data = (json.dumps(event("agent_reasoning", text="thinking")) + "\n" + "{" + " " * 300 + "}\n").encode()
    result = read_lines(CodexReader("r.jsonl"), data, max_line_bytes=200)
    check_log(result, allow_error=True)
    assert result.error is not None and result.error.line == 2
    (chunk,) = of_type(result, "assistant/chunk")
    assert chunk["data"]["chunk"]["block"] == {"type": "reasoning", "text": "thinking"}


def test_a_field_of_the_wrong_type_keeps_the_line_raw_with_a_warning() -> None:
    result = read([META, event("user_message", message="q"), item("function_call", name="x", arguments=5,
                                                                  call_id="c1")])
    check_log(result)
    assert len(result.warnings) == 1 and "line 3" in result.warnings[0] and "$.payload.arguments" in \
        result.warnings[0]
    assert of_type(result, "tool/call") == []


def test_a_tui_recording_is_refused_clearly() -> None:
    recording = (b'{"ts":"2026-01-01T10:00:00Z","dir":"meta","kind":"session_start","cwd":"/p"}\n'
                 b'{"ts":"2026-01-01T10:00:01Z","dir":"to_tui","kind":"codex_event","payload":{"msg":{}}}\n'
                 b'{"ts":"2026-01-01T10:00:02Z","dir":"from_tui","kind":"key_event","event":"Enter"}\n')
    with pytest.raises(UnknownFormat):
        detect(recording, complete=True)
    result = read_lines(CodexReader("session-x.jsonl"), recording)
    assert result.error is not None and result.error.line == 1
    assert "TUI session recording" in str(result.error) and result.records == []
