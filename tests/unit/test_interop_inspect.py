"""The Inspect AI reader (FORMATS.md §6): the real logs (one run as ``.eval`` and as ``.json``, a log with an image),
and hand-built logs for what those do not hold (tool calls, reasoning, errors, limits, several samples, a log being
written, a cut-off zip). Every session any test reads goes through ``check_log``."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import msgspec
import pytest

from assembler.interop.base import RAW, SOURCE, SessionLog, SourceError
from assembler.interop.inspect import LOG_KEY, log_errors, read_eval, read_json, sample_key
from assembler.interop.inspect_attachments import MEDIA_INLINE_MAX
from assembler.interop.inspect_content import REDACTED, token_usage
from assembler.interop.inspect_records import UsageRec
from tests.inspect_samples import agent_sample, log_doc, ts, usage
from tests.interop_support import check_log, interop_file, of_type

FIXTURES = "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/"


def _fixture(name: str) -> bytes:
    return interop_file(FIXTURES + name).read_bytes()


def _read(name: str) -> list[SessionLog]:
    data = _fixture(name)
    sessions = read_eval(data, name) if name.endswith(".eval") else read_json(data, name)
    for s in sessions:
        check_log(s.result, allow_error=s.result.error is not None)
    return sessions


def _only(sessions: list[SessionLog]) -> SessionLog:
    assert len(sessions) == 1, [s.key for s in sessions]
    return sessions[0]


def _raws(s: SessionLog, record_type: str) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(s.result, RAW) if e["data"]["recordType"] == record_type]


def _mapped(s: SessionLog) -> list[tuple[Any, ...]]:
    """The events that are not source records, with their citations as positions in this list (the raw records
    between them differ between containers, so seqs do)."""
    events = [e for e in s.result.records if not e["type"].startswith("interop/")]
    position = {e["seq"]: i for i, e in enumerate(events)}
    return [(e["type"], e["time"], e["data"], [position[q] for q in e.get("sourceEventSeqs", [])],
             e.get("surfaceOp")) for e in events]


# -- the real logs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["log_formats.eval", "log_formats.json", "log_images.json"])
def test_fixture_is_one_session_per_sample_and_epoch(name: str) -> None:
    s = _only(_read(name))
    assert s.key == "1_epoch_1"
    header = s.result.header
    assert header is not None
    task = "images" if "images" in name else "popularity"
    assert s.label == f"{task} · 1 · epoch 1"
    assert header["id"] == f"{name.rsplit('.', 1)[0]}:1_epoch_1"
    assert header["format"] == ("inspect-eval" if name.endswith(".eval") else "inspect-json")
    assert (header["task"], header["sampleId"], header["epoch"], header["status"]) == (task, 1, 1, "success")
    assert header["model"] == ("openai/gpt-4o" if "images" in name else "ollama/llama3.1")
    assert header["runId"] and header["createdAt"] > 1_700_000_000_000
    assert "evalId" not in header  # these logs predate eval_id: nothing invented
    assert s.result.warnings == []
    assert of_type(s.result, "session/title") == []


def test_messages_become_header_turn_prompt_and_step() -> None:
    s = _only(_read("log_formats.json"))
    kinds = [t for t, *_ in _mapped(s)]
    assert kinds == ["request/header", "turn/start", "user/message", "step/start", "assistant/chunk",
                     "assistant/chunk", "assistant/chunk", "assistant/message", "step/end", "turn/end"]
    (header,) = of_type(s.result, "request/header")
    assert header["data"]["header"]["system"].startswith("\nPlease note: In the following EXERCISE")
    assert header["data"]["header"]["config"] == {"provider": "ollama", "model": "llama3.1"}
    (user,) = of_type(s.result, "user/message")
    assert user["data"]["source"] == {"kind": "user"}
    assert user["data"]["content"][0]["text"].startswith("Is the following statement")
    (message,) = of_type(s.result, "assistant/message")
    assert message["data"]["message"]["content"] == [{"type": "text", "text": "No"}]
    assert message["data"]["message"]["source"] == {"kind": "model", "provider": "ollama", "model": "llama3.1"}
    chunks = [e["data"]["chunk"] for e in of_type(s.result, "assistant/chunk")]
    assert chunks[1:] == [{"type": "usage", "usage": {"inputTokens": 66, "outputTokens": 2}},
                          {"type": "finish", "reason": {"kind": "stop"}}]
    assert message["sourceEventSeqs"] == [e["seq"] for e in of_type(s.result, "assistant/chunk")]
    # times: the prompt at sample_init, the step at its model event; the system message has no event (0)
    assert header["time"] == 0
    assert user["time"] == 1729011193264  # 2024-10-15T12:53:13.264282-04:00
    assert message["time"] == 1729011193587
    (end,) = of_type(s.result, "turn/end")
    assert end["data"]["reason"] == {"kind": "completed"}


def test_input_is_not_shown_twice_and_model_input_is_not_a_message() -> None:
    s = _only(_read("log_formats.eval"))
    assert len(of_type(s.result, "user/message")) == 1
    (inp,) = _raws(s, "sample/input")
    assert inp["duplicateOf"] == "/messages/1"
    (model,) = _raws(s, "event/model")
    assert model["usedBy"] == [e["seq"] for e in s.result.records if e["type"] in (
        "step/start", "assistant/chunk", "assistant/message", "step/end")]
    # the model call's input keeps its references (it repeats the conversation); the text is in attachments once
    assert model["record"]["input"][1]["content"] == "tc://dfedc191e05d9d04e0c236656454a610"
    (init,) = _raws(s, "event/sample_init")
    assert init["record"]["sample"]["input"].startswith("Is the following statement")  # resolved
    assert init["usedBy"] == [e["seq"] for e in s.result.records if e["type"] in ("turn/start", "user/message")]


def test_every_record_is_kept_with_its_location() -> None:
    s = _only(_read("log_formats.eval"))
    sample = json.loads(zipfile.ZipFile(io.BytesIO(_fixture("log_formats.eval"))).read("samples/1_epoch_1.json"))
    origins = {(e["data"]["origin"].get("member"), e["data"]["origin"]["pointer"])
               for e in s.result.records if e["type"] in (RAW, SOURCE)}
    member = "samples/1_epoch_1.json"
    for i in range(len(sample["messages"])):
        assert (member, f"/messages/{i}") in origins
    for j in range(len(sample["events"])):
        assert (member, f"/events/{j}") in origins
    for part in ("input", "target", "output", "metadata", "store", "attachments"):
        assert (member, "/" + part) in origins
    assert (member, "/scores/match") in origins and (member, "") in origins
    for log_member in ("header.json", "_journal/start.json", "summaries.json", "_journal/summaries/1.json"):
        assert (log_member, "") in origins or (log_member, "/0") in origins
    assert ("reductions.json", "/0") in origins and ("reductions.json", "/0/samples/0") in origins
    # a mapped record's text is its original JSON
    (source,) = [e for e in of_type(s.result, SOURCE) if e["data"]["origin"]["pointer"] == "/messages/2"]
    assert json.loads(source["data"]["text"]) == sample["messages"][2]


def test_scores_and_target_are_notices() -> None:
    s = _only(_read("log_images.json"))
    (target,) = _raws(s, "sample/target")
    assert target["notice"] == "Target: bike, bicycle"
    (score_event,) = _raws(s, "event/score")
    assert score_event["notice"] == "Score: I (answer: [Abstract])"
    (score,) = _raws(s, "sample/score")  # the same score as the event: a copy, not shown again
    assert score["duplicateOf"] == "/samples/0/events/9" and "notice" not in score
    seqs = {d["recordType"]: e["seq"] for e in of_type(s.result, RAW) for d in [e["data"]]}
    assert seqs["sample/target"] < seqs["event/score"]


def test_image_log_resolves_its_attachment() -> None:
    s = _only(_read("log_images.json"))
    (user,) = of_type(s.result, "user/message")
    text, image = user["data"]["content"]
    assert text == {"type": "text", "text": "What is this a picture of?"}
    attachment = image["attachment"]
    assert attachment["attachmentId"] == "attachment://734b3dc396aa9924b5f2a48de42561d2"
    assert attachment["mediaType"] == "image/png" and attachment["detail"] == "auto"
    assert attachment["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert 6000 < attachment["bytes"] < 6500  # decoded size of the 8,5xx-character data URL
    (state,) = [d for d in _raws(s, "event/state") if d["origin"]["pointer"] == "/samples/0/events/2"]
    assert state["record"]["changes"][1]["value"].startswith("\nFor the following exercise")  # resolved
    (model,) = _raws(s, "event/model")
    assert model["record"]["input"][0]["content"] == "attachment://a20f78037f9b8c8ff928ac9b422ce4c9"
    # the image's data is copied only into the image block: other records keep its reference
    (init,) = _raws(s, "event/sample_init")
    assert init["record"]["sample"]["input"][0]["content"][1]["image"] == attachment["attachmentId"]
    (attachments,) = _raws(s, "sample/attachments")
    copies = [e for e in s.result.records if attachment["url"] in msgspec.json.encode(e).decode()]
    # the block, a state patch that has the data inline in the source itself, and the attachments record
    assert [e["data"].get("recordType", e["type"]) for e in copies] == ["user/message", "event/state",
                                                                        "sample/attachments"]
    assert s.result.warnings == []


def test_eval_and_its_json_conversion_give_the_same_sessions() -> None:
    (from_eval,) = _read("log_formats.eval")
    (from_json,) = _read("log_formats.json")
    assert (from_eval.key, from_eval.label) == (from_json.key, from_json.label)
    assert _mapped(from_eval) == _mapped(from_json)
    same = {k: v for k, v in from_eval.result.header.items() if k != "format"}
    assert same == {k: v for k, v in from_json.result.header.items() if k != "format"}
    kept = [(d["recordType"], d.get("notice")) for e in from_eval.result.records if e["type"] in (RAW, SOURCE)
            for d in [e["data"]] if d["recordType"].startswith(("message", "event"))]
    assert kept == [(d["recordType"], d.get("notice")) for e in from_json.result.records
                    if e["type"] in (RAW, SOURCE) for d in [e["data"]]
                    if d["recordType"].startswith(("message", "event"))]


# -- hand-built logs ---------------------------------------------------------------------------------------------

def _json_log(samples: list[dict[str, Any]], **over: Any) -> list[SessionLog]:
    sessions = read_json(json.dumps(log_doc(samples, **over)).encode(), "logs/run.json")
    for s in sessions:
        check_log(s.result, allow_error=s.result.error is not None)
    return sessions


def _zip(members: list[tuple[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in members:
            z.writestr(name, value if type(value) is bytes else json.dumps(value))
    return buffer.getvalue()


def _eval_log(samples: list[dict[str, Any]], *, header: bool = True) -> bytes:
    log = log_doc(samples)
    start = {"version": 2, "eval": log["eval"], "plan": log["plan"]}
    members: list[tuple[str, Any]] = [("_journal/start.json", start)]
    members += [(f"samples/{s['id']}_epoch_{s['epoch']}.json", s) for s in samples]
    if header:
        head = {k: v for k, v in log.items() if k != "samples"}
        members += [("summaries.json", [{"id": s["id"], "epoch": s["epoch"]} for s in samples]),
                    ("header.json", head)]
    return _zip(members)


def test_tool_calls_results_and_step_boundaries() -> None:
    s = _only(_json_log([agent_sample()]))
    r = s.result
    kinds = [t for t, *_ in _mapped(s)]
    assert kinds == [
        "request/header", "turn/start", "user/message",
        "step/start", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk",
        "assistant/chunk", "assistant/chunk", "assistant/message", "tool/call", "tool/call",
        "tool/result", "tool/result", "step/end",
        "turn/end", "turn/start", "user/message",
        "step/start", "assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/chunk",
        "assistant/message", "step/end", "turn/end"]
    first = of_type(r, "assistant/message")[0]["data"]["message"]
    assert first["id"] == "a1"
    reasoning, text, call1, call2 = first["content"]
    assert reasoning == {"type": "reasoning", "text": REDACTED, "redacted": True}
    assert text == {"type": "text", "text": "Looking."}
    assert call1 == {"type": "tool-call", "id": "c1", "name": "bash",
                     "arguments": '{"cmd":"ls -l","path":"the long text"}'}
    calls = of_type(r, "tool/call")
    assert [c["data"]["arguments"] for c in calls] == [call1["arguments"], '{"file":"x"}']
    ok, failed = of_type(r, "tool/result")
    assert ok["sourceEventSeqs"] == [calls[0]["seq"]] and failed["sourceEventSeqs"] == [calls[1]["seq"]]
    assert ok["data"]["message"]["content"][0] == {"type": "tool-result", "toolCallId": "c1", "isError": False,
                                                   "content": [{"type": "text", "text": "a.txt"}]}
    block = failed["data"]["message"]["content"][0]
    assert block["isError"] is True and block["content"] == [{"type": "text", "text": "read timed out"}]
    assert failed["data"]["meta"] == {"error": {"type": "timeout", "message": "read timed out"}}
    # times from the events: the step starts when its call starts, its blocks and message at completion,
    # tool results at their tool event's completion, and the step ends after the last one
    ms = 1735725600000  # 2025-01-01T10:00:00Z
    step_start = of_type(r, "step/start")[0]
    assert step_start["time"] == ms + 2000 and of_type(r, "assistant/message")[0]["time"] == ms + 3000
    assert (ok["time"], failed["time"]) == (ms + 5000, ms + 6000)
    assert of_type(r, "step/end")[0]["time"] == ms + 6000
    prompt, solver = of_type(r, "user/message")
    assert prompt["time"] == ms + 1000 and solver["time"] == 0  # no event records the solver's message
    assert solver["data"]["source"] == {"kind": "plugin", "plugin": "inspect", "form": "solver"}
    assert prompt["data"]["content"][1]["attachment"]["url"] == "data:image/png;base64,AAAA"
    second = of_type(r, "assistant/message")[1]["data"]["message"]
    assert second["content"][0] == {"type": "reasoning", "text": "Think."}
    assert second["source"] == {"kind": "model", "provider": "openai", "model": "gpt-x-2"}
    finishes = [e["data"]["chunk"]["reason"] for e in of_type(r, "assistant/chunk")
                if e["data"]["chunk"]["type"] == "finish"]
    assert finishes == [{"kind": "tool-calls"}, {"kind": "stop"}]
    assert r.header["createdAt"] == ms and r.header["evalId"] == "ev1"
    assert s.result.warnings == []


def test_model_events_matched_by_id_give_usage_and_the_grader_call_stays_raw() -> None:
    s = _only(_json_log([agent_sample()]))
    first, second = (e["data"]["usage"] for e in of_type(s.result, "assistant/message"))
    # 100 in + 20 out + 50 cache read = 170 recorded as total? no: total is 170, caches separate; reasoning inside
    assert first == {"inputTokens": 100, "outputTokens": 15, "cacheReadTokens": 50, "reasoningTokens": 5}
    assert second == {"inputTokens": 200, "outputTokens": 30}
    models = _raws(s, "event/model")
    assert [bool(m.get("usedBy")) for m in models] == [True, True, False]
    assert models[2]["record"]["model"] == "openai/grader"
    score = _raws(s, "event/score")[0]
    assert score["notice"] == "Score model_graded: C (answer: Done.) — the long text"
    (sample_score,) = _raws(s, "sample/score")
    assert sample_score["duplicateOf"] == "/samples/0/events/8"


def test_model_events_matched_in_order_without_ids() -> None:
    sample = agent_sample()
    for m in sample["messages"]:
        m.pop("id")
    for e in sample["events"]:
        if e["event"] == "model":
            e["output"]["choices"][0]["message"].pop("id")
        e.pop("message_id", None)
    s = _only(_json_log([sample]))
    usages = [e["data"].get("usage") for e in of_type(s.result, "assistant/message")]
    assert usages == [{"inputTokens": 100, "outputTokens": 15, "cacheReadTokens": 50, "reasoningTokens": 5},
                      {"inputTokens": 200, "outputTokens": 30}]
    assert [m["data"]["message"]["id"] for m in of_type(s.result, "assistant/message")] == [
        "7_epoch_1/messages/2", "7_epoch_1/messages/6"]  # ids from the location, the same in .eval and .json
    ok, failed = of_type(s.result, "tool/result")
    assert ok["time"] > 0 and failed["time"] > 0  # tool events matched by call id


@pytest.mark.parametrize(("usage", "expected"), [
    # caches separate from input_tokens (recent versions)
    (usage(100, 10, input_tokens_cache_read=40, input_tokens_cache_write=5),
     {"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 40, "cacheWriteTokens": 5}),
    # caches inside input_tokens (older OpenAI-family logs): total == input + output
    (usage(100, 10, input_tokens_cache_read=40, input_tokens_cache_write=5, total=110),
     {"inputTokens": 55, "outputTokens": 10, "cacheReadTokens": 40, "cacheWriteTokens": 5}),
    # reasoning inside output_tokens
    (usage(100, 10, reasoning_tokens=4), {"inputTokens": 100, "outputTokens": 6, "reasoningTokens": 4}),
    # reasoning added to the total separately
    (usage(100, 10, reasoning_tokens=4, total=114), {"inputTokens": 100, "outputTokens": 10,
                                                      "reasoningTokens": 4}),
    # caches inside and reasoning separate
    (usage(100, 10, input_tokens_cache_read=30, reasoning_tokens=4, total=114),
     {"inputTokens": 70, "outputTokens": 10, "cacheReadTokens": 30, "reasoningTokens": 4}),
])
def test_usage_is_normalised_from_the_recorded_totals(usage: dict[str, int], expected: dict[str, int]) -> None:
    warnings: list[str] = []
    got = token_usage(UsageRec(**usage), "/u", lambda p, m: warnings.append(m))
    assert got == expected and warnings == []
    # disjoint counts: together they are the recorded total, whichever way the source counted
    assert sum(got.values()) == usage["total_tokens"]


def test_inconsistent_usage_total_is_a_warning() -> None:
    warnings: list[str] = []
    got = token_usage(UsageRec(input_tokens=10, output_tokens=5, total_tokens=99), "/u",
                      lambda p, m: warnings.append(f"{p}: {m}"))
    assert got == {"inputTokens": 10, "outputTokens": 5}
    assert warnings and warnings[0].startswith("/u: total_tokens 99")


def test_sample_error_ends_the_turn_and_limit_is_a_notice() -> None:
    sample = agent_sample(error={"message": "RuntimeError('boom')", "traceback": "Traceback ..."},
                           limit={"type": "token", "limit": 5000})
    sample["events"].append({"event": "error", "timestamp": ts(11), "error": {"message": "RuntimeError('boom')",
                                                                              "traceback": "..."}})
    s = _only(_json_log([sample]))
    end = of_type(s.result, "turn/end")[-1]
    assert end["data"]["reason"] == {"kind": "error", "error": {"message": "RuntimeError('boom')",
                                                                "code": "sample-error"}}
    (limit,) = _raws(s, "sample/limit")
    assert limit["notice"] == "token limit (5000) reached"
    (error_event,) = _raws(s, "event/error")
    assert error_event["notice"] == "Error: RuntimeError('boom')"
    assert s.result.error is None  # a sample that failed is still read whole


def test_samples_listed_by_epoch_then_id_with_safe_keys() -> None:
    samples = [agent_sample(10, 1), agent_sample(2, 2), agent_sample(2, 1), agent_sample("a/b c", 1),
               agent_sample("Zé", 1)]
    sessions = _json_log(samples)
    assert [s.key for s in sessions] == ["2_epoch_1", "10_epoch_1", "Z%C3%A9_epoch_1", "a%2Fb%20c_epoch_1",
                                         "2_epoch_2"]
    assert sessions[3].label == "agent · a/b c · epoch 1"
    assert sessions[3].result.header["sampleId"] == "a/b c"
    assert sample_key("x~y", 3) == "x%7Ey_epoch_3"
    assert len({s.result.header["id"] for s in sessions}) == 5


def test_same_key_twice_gets_a_suffix() -> None:
    sessions = _json_log([agent_sample(1, 1), agent_sample("1", 1)])
    assert [s.key for s in sessions] == ["1_epoch_1", "1_epoch_1~2"]
    assert any("a second sample with key 1_epoch_1" in w for w in sessions[1].result.warnings)


def test_unresolved_attachment_is_shown_as_written_with_a_warning() -> None:
    sample = agent_sample(attachments={"img": "data:image/png;base64,AAAA"})  # "long" is missing
    s = _only(_json_log([sample]))
    first = of_type(s.result, "assistant/message")[0]["data"]["message"]["content"][2]
    assert first["arguments"] == '{"cmd":"ls -l","path":"attachment://long"}'
    (warning,) = [w for w in s.result.warnings if "attachment://long" in w]
    assert warning.startswith("/samples/0/events/0/sample/input: unresolved attachment reference "
                              "attachment://long (and 4 more places)")
    # the others: the call's arguments in the message and in its model call's output, the score event's and the
    # sample score's explanation; the model calls' inputs keep their references unread (never shown)


def test_large_image_is_not_copied_into_events() -> None:
    big = "data:image/png;base64," + "A" * (MEDIA_INLINE_MAX + 8)
    s = _only(_json_log([agent_sample(attachments={"long": "t", "img": big})]))
    image = of_type(s.result, "user/message")[0]["data"]["content"][1]["attachment"]
    assert "url" not in image and image["attachmentId"] == "attachment://img" and "omitted" in image
    assert image["bytes"] == (MEDIA_INLINE_MAX + 8) * 3 // 4
    (init,) = _raws(s, "event/sample_init")
    (attachments,) = _raws(s, "sample/attachments")
    assert attachments["record"]["img"] == big  # the data is kept once, in the attachments record
    assert init["record"]["sample"]["input"] == "t"


def test_wrong_types_are_raw_records_with_a_pointer() -> None:
    sample = agent_sample()
    sample["messages"][3]["content"] = 5
    sample["messages"].insert(1, "not a message")
    sample["events"][2]["output"]["usage"]["input_tokens"] = "many"
    s = _only(_json_log([sample]))
    warnings = "\n".join(s.result.warnings)
    assert "/samples/0/messages/1: message is a string, not an object" in warnings
    assert "/samples/0/messages/4/content: message not understood (Expected `str | array`, got `int`)" in warnings
    assert "/samples/0/events/2/output/usage/input_tokens: model event not understood (Expected `int`, got `str`)" \
        in warnings
    assert [d["origin"]["pointer"] for d in _raws(s, "message")] == ["/samples/0/messages/1",
                                                                    "/samples/0/messages/4"]
    assert len(of_type(s.result, "tool/result")) == 1  # the other result is the raw record


def test_invalid_json_names_line_and_column() -> None:
    with pytest.raises(SourceError) as caught:
        read_json(b'{"version": 2,\n  "eval": {"task": }\n}', "x.json")
    assert caught.value.line == 2 and caught.value.location == "2"
    assert "invalid JSON at column 20: Expecting value" in caught.value.message
    with pytest.raises(SourceError, match="expected a JSON object"):
        read_json(b"[1, 2]", "x.json")


def test_nan_constants_are_read() -> None:
    text = json.dumps(log_doc([agent_sample()])).replace('"stats": {', '"stats": {"x": NaN, ', 1)
    s = _only(read_json(text.encode(), "x.json"))
    check_log(s.result)


def test_log_without_samples_is_one_session_of_the_log() -> None:
    s = _only(_json_log([], status="error", error={"message": "no model", "traceback": ""}))
    assert s.key == LOG_KEY and s.label == "agent · log"
    (header,) = _raws(s, "header")
    assert header["notice"] == "Eval status: error; Eval error: no model"


# -- .eval containers ---------------------------------------------------------------------------------------------


def test_eval_zip_matches_its_json() -> None:
    samples = [agent_sample(3, 1), agent_sample(1, 1)]
    from_zip = read_eval(_eval_log(samples), "run.eval")
    from_json = _json_log(samples)
    assert [s.key for s in from_zip] == [s.key for s in from_json] == ["1_epoch_1", "3_epoch_1"]
    for a, b in zip(from_zip, from_json, strict=True):
        check_log(a.result)
        assert _mapped(a) == _mapped(b)
    assert _raws(from_zip[0], "summary")[0]["duplicateOf"] == {"member": "samples/1_epoch_1.json", "pointer": ""}


def test_eval_without_header_is_read_from_the_journal() -> None:
    data = _eval_log([agent_sample(1, 1), agent_sample(2, 1)], header=False)
    sessions = read_eval(data, "run.eval")
    assert [s.key for s in sessions] == ["1_epoch_1", "2_epoch_1"]
    for s in sessions:
        check_log(s.result)
        assert s.result.header["status"] == "started" and s.result.header["task"] == "agent"
        assert _raws(s, "start")[0]["notice"] == "Eval status: started"


def test_eval_journal_start_of_the_fixture_gives_status_started() -> None:
    fixture = zipfile.ZipFile(io.BytesIO(_fixture("log_formats.eval")))
    data = _zip([(n, fixture.read(n)) for n in ("_journal/start.json", "samples/1_epoch_1.json")])
    s = _only(read_eval(data, "log_formats.eval"))
    check_log(s.result)
    assert s.result.header["status"] == "started" and s.result.header["task"] == "popularity"
    (complete,) = _read("log_formats.eval")
    assert _mapped(s) == _mapped(complete)


def test_truncated_eval_keeps_the_samples_before_the_cut() -> None:
    samples = [agent_sample(1, 1), agent_sample(2, 1), agent_sample(3, 1)]
    data = _eval_log(samples, header=False)
    names = zipfile.ZipFile(io.BytesIO(data)).infolist()
    third = next(i for i in names if i.filename == "samples/3_epoch_1.json")
    cut = third.header_offset + 30 + len(third.filename) + third.compress_size // 2
    sessions = read_eval(data[:cut], "run.eval")
    assert [s.key for s in sessions] == ["1_epoch_1", "2_epoch_1", "3_epoch_1"]
    for s in sessions[:2]:
        check_log(s.result)
    broken = sessions[2]
    check_log(broken.result, allow_error=True)
    error = broken.result.error
    assert isinstance(error, SourceError) and error.member == "samples/3_epoch_1.json"
    assert error.location == "samples/3_epoch_1.json"
    assert "cut off" in error.message
    assert log_errors(sessions) == [error]


def test_truncated_fixture_header_is_an_error_of_the_log() -> None:
    data = _fixture("log_formats.eval")
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("header.json")
    sessions = read_eval(data[:info.header_offset + 60], "log_formats.eval")
    assert [s.key for s in sessions] == ["1_epoch_1", LOG_KEY]
    check_log(sessions[0].result)
    assert sessions[0].result.header["status"] == "started"  # read from the journal
    (error,) = log_errors(sessions)
    assert error.member == "header.json" and sessions[1].result.error is error


def test_bad_member_json_is_that_sample_s_error() -> None:
    data = _zip([("_journal/start.json", {"version": 2, "eval": {"task": "t"}}),
                 ("samples/1_epoch_1.json", agent_sample(1, 1)),
                 ("samples/2_epoch_1.json", b'{"id": 2, "epoch": 1, "messages": [}'),
                 ("samples/3_epoch_1.json", agent_sample(3, 1))])
    sessions = read_eval(data, "x.eval")
    assert [s.key for s in sessions] == ["1_epoch_1", "2_epoch_1", "3_epoch_1"]
    (error,) = log_errors(sessions)
    assert error.member == "samples/2_epoch_1.json" and "invalid JSON at line 1, column 36" in error.message
    assert sessions[1].result.error is error and sessions[1].result.header["sampleId"] == 2


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_relogged_sample_takes_the_later_member() -> None:
    early = agent_sample(1, 1, messages=[])
    data = _zip([("_journal/start.json", {"version": 2, "eval": {"task": "t"}}),
                 ("samples/1_epoch_1.json", early), ("samples/1_epoch_1.json", agent_sample(1, 1))])
    s = _only(read_eval(data, "x.eval"))
    check_log(s.result)
    assert len(of_type(s.result, "assistant/message")) == 2
    (old,) = _raws(s, "sample/superseded")
    assert old["record"]["messages"] == [] and old["duplicateOf"] == "samples/1_epoch_1.json"


def test_not_a_zip_is_an_error() -> None:
    with pytest.raises(SourceError, match="not a zip archive"):
        read_eval(b"hello", "x.eval")


def test_cut_central_directory_keeps_every_member() -> None:
    data = _fixture("log_formats.eval")
    sessions = read_eval(data[:-10], "log_formats.eval")  # the end of the zip's directory is missing
    assert [s.key for s in sessions] == ["1_epoch_1", LOG_KEY]
    complete = _only(_read("log_formats.eval"))
    assert _mapped(sessions[0]) == _mapped(complete)
    assert sessions[0].result.header["status"] == "success"  # header.json itself was stored whole
    (error,) = log_errors(sessions)
    assert error.location == "(central directory)" and "the file is incomplete" in error.message


def test_json_sample_without_usable_id_is_kept_beside_its_error() -> None:
    broken = agent_sample(2, 1)
    broken["id"] = None
    sessions = _json_log([agent_sample(1, 1), broken])
    assert [s.key for s in sessions] == ["1_epoch_1", "_sample_1"]
    error = sessions[1].result.error
    assert isinstance(error, SourceError) and error.location == "/samples/1/id"
    (kept,) = _raws(sessions[1], "sample")
    assert kept["origin"] == {"pointer": "/samples/1"} and kept["record"]["messages"] == broken["messages"]


def test_score_edit_limit_event_and_redacted_summary() -> None:
    sample = agent_sample(limit={"type": "message", "limit": 10})
    sample["messages"][2]["content"][0]["summary"] = "Checked the folder."
    sample["events"] += [
        {"event": "sample_limit", "timestamp": ts(11), "type": "message", "message": "10 messages", "limit": 10},
        {"event": "score_edit", "timestamp": ts(12), "score_name": "model_graded", "edit": {"value": "I"}},
    ]
    s = _only(_json_log([sample]))
    (edit,) = _raws(s, "event/score_edit")
    assert edit["notice"] == "Score model_graded edited: I"
    (event,) = _raws(s, "event/sample_limit")
    assert event["notice"] == "message limit reached: 10 messages"
    (limit,) = _raws(s, "sample/limit")
    assert limit["duplicateOf"] == "/samples/0/events/10" and "notice" not in limit
    reasoning = of_type(s.result, "assistant/message")[0]["data"]["message"]["content"][0]
    assert reasoning == {"type": "reasoning", "text": f"{REDACTED}\n\nChecked the folder.", "redacted": True}


def test_started_json_log_status() -> None:
    (s,) = _json_log([agent_sample()], status="started")
    assert s.result.header["status"] == "started"
    assert _raws(s, "header")[0]["notice"] == "Eval status: started"


@pytest.mark.parametrize("name", ["log_formats.eval", "log_formats.json", "log_images.json"])
def test_format_table_detects_and_names_these_readers(name: str) -> None:
    from assembler.formats import detect, reader_of

    data = _fixture(name)
    fmt = detect(data, complete=True)
    assert fmt.name == ("inspect-eval" if name.endswith(".eval") else "inspect-json")  # type: ignore[union-attr]
    reader = reader_of(fmt)  # type: ignore[arg-type]
    assert reader is (read_eval if name.endswith(".eval") else read_json)
    assert [s.key for s in reader(data, name)] == ["1_epoch_1"]


class _Stream(io.RawIOBase):
    """A write-only stream that cannot seek: zipfile then writes each member's sizes after its data."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.data += b
        return len(b)


def test_cut_zip_written_as_a_stream_is_walked_through_its_data_descriptors() -> None:
    stream = _Stream()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        for n in (1, 2):
            z.writestr(f"samples/{n}_epoch_1.json", json.dumps(agent_sample(n, 1)))
    data = bytes(stream.data)
    assert zipfile.ZipFile(io.BytesIO(data)).infolist()[1].flag_bits & 0x8  # sizes after the data
    second = data.index(b"samples/2_epoch_1.json") - 30
    sessions = read_eval(data[:second + 200], "stream.eval")
    assert [s.key for s in sessions] == ["1_epoch_1", "2_epoch_1"]
    check_log(sessions[0].result)
    assert len(of_type(sessions[0].result, "assistant/message")) == 2
    assert sessions[1].result.error is not None and sessions[1].result.error.member == "samples/2_epoch_1.json"
