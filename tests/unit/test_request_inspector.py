"""The request inspector, the context meter and the trajectory's failed requests (issue 22), on the real logs:
one request per attempt, its prompt's changes since the previous request (a compaction's replacement with what it
shadowed), timing only from recorded times (otherwise unavailable, with the reason), usage as recorded, and the
overflowed request as its own failed trajectory row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assembler.browser import Viewer
from assembler.browser.inspector import MAX_BARS, NO_TIMES
from assembler.records import encode
from tests.corpus import FIXTURES, require_corpus
from tests.interop_support import interop_file

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
ERROR_FINISH = "examples/acp-agent/tests/snapshots/error-finish/session.jsonl"
TOOLCHAIN = "examples/headless-agent/tests/snapshots/advanced-toolchain/session.jsonl"
SDK = "scripts/snapshots/python-sdk-single-exe/advanced/session.jsonl"
CLAUDE = ("claude-code/handgemacht-ai+claude-code-log@1316195/test/test_data/real_projects/"
          "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl")
T0 = 1_767_225_600_000  # a recorded wall-clock time


def opened(path: Path) -> Viewer:
    data = path.read_bytes()
    viewer = Viewer()
    viewer.file_begin(path.name, len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish(True))
    assert update.get("error") is None, update["error"]
    return viewer


def fixture(relative: str) -> Viewer:
    require_corpus()
    return opened(FIXTURES / relative)


def of_events(events: list[dict[str, Any]]) -> Viewer:
    header = {"type": "session", "version": 0, "id": "inspect", "createdAt": 1}
    lines = [header] + [{"seq": i, **e} for i, e in enumerate(events)]
    data = b"".join(encode(v) + b"\n" for v in lines)
    viewer = Viewer()
    viewer.file_begin("inspect.jsonl", len(data))
    viewer.file_feed(data)
    assert json.loads(viewer.file_finish(True)).get("error") is None
    return viewer


def rows(viewer: Viewer) -> list[dict[str, Any]]:
    return json.loads(viewer.trajectory_view())["rows"]


def inspect(viewer: Viewer, seq: int) -> dict[str, Any]:
    return json.loads(viewer.request_inspector(seq))


def inspect_row(viewer: Viewer, row: dict[str, Any]) -> dict[str, Any]:
    """What the row's "Request" button opens: the row's own request, else its step's last one."""
    if "request" in row:
        return inspect(viewer, row["request"])
    return json.loads(viewer.request_inspector(row["seq"], True))


def test_the_request_that_overflowed_is_a_failed_trajectory_row_before_its_step() -> None:
    steps = [r for r in rows(fixture(COMPACTION)) if r["kind"] == "step"]
    assert [(r["step"], r["status"], r.get("failedRequest", False)) for r in steps] == [
        (1, "complete", False), (2, "error", True), (2, "complete", False)]
    failed, final = steps[1], steps[2]
    assert "CONTEXT_WINDOW_EXCEEDED" in failed["error"] and "exceeded the model context window" in failed["error"]
    assert "after a compaction" in failed["summary"]
    assert failed["seq"] == final["seq"] and failed["key"] != final["key"]  # the step's anchor, its own key
    assert failed["request"] != final["request"]


def test_the_resent_request_shows_the_compaction_as_a_replacement_in_its_prompt_diff() -> None:
    viewer = fixture(COMPACTION)
    final = [r for r in rows(viewer) if r["kind"] == "step"][-1]
    value = inspect(viewer, final["request"])
    assert (value["number"], value["count"], value["cause"], value["status"]) == (3, 3, "resent", "complete")
    prompt = value["prompt"]
    assert prompt["first"] is False and (prompt["before"], prompt["messages"]) == (3, 3)
    (change,) = prompt["changes"]
    assert change["role"] == "user" and change["preview"].startswith("This is an automatically generated checkpoint")
    assert [r["preview"][:40] for r in change["replaced"]] == ["Establish a durable compaction premise b"]
    assert (prompt["added"], prompt["removed"]) == (0, 1)
    assert [(a["number"], a["status"]) for a in value["attempts"]] == [(2, "error"), (3, "complete")]
    overflowed = inspect(viewer, value["attempts"][0]["seq"])
    assert overflowed["failure"] == {"message": "snapshot request exceeded the model context window",
                                     "code": "CONTEXT_WINDOW_EXCEEDED"}
    assert [c["role"] for c in overflowed["prompt"]["changes"]] == ["assistant", "user"]  # the step-1 reply, its result


def test_request_settings_and_tools_as_the_header_records_them() -> None:
    viewer = fixture(COMPACTION)
    value = inspect_row(viewer, rows(viewer)[0])
    assert (value["provider"], value["model"]) == ("deepseek-official", "deepseek-v4-flash")
    assert ["Context window", "128000 tokens"] in value["config"]
    assert value["system"]["text"].startswith("You are an AI agent") and value["system"]["chars"] > 1000
    names = [t["name"] for t in value["tools"]["items"]]
    assert "bash" in names and all("description" in t for t in value["tools"]["items"])
    assert value["usage"] == {"inputTokens": 24, "outputTokens": 6} and value["input"] == 24
    assert value["prompt"]["first"] is True and value["prompt"]["messages"] == 1

    sdk = fixture(SDK)
    value = inspect_row(sdk, rows(sdk)[0])
    assert ["maxTokens", "256000"] in value["config"] and ["reasoningEffort", "high"] in value["config"]
    assert value["tools"]["note"].startswith("Names only") and value["tools"]["items"][0] == {"name": "cordis_define"}


def test_the_projected_logs_have_no_times_and_every_timing_figure_says_so() -> None:
    for relative in (COMPACTION, TOOLCHAIN):
        viewer = fixture(relative)
        for row in rows(viewer):
            if row["kind"] != "step":
                continue
            timing = inspect_row(viewer, row)["timing"]
            for name in ("started", "total", "ttft", "generation"):
                assert timing[name]["value"] is None, (relative, name)
                assert timing[name]["why"] in (NO_TIMES, "the log records no start for this request (it was sent "
                                               "again for the same step with no step or retry event)")
            assert timing["tokensPerSecond"]["value"] is None and timing["tokensPerSecond"]["why"]


def test_a_failed_first_request_reads_failed_with_its_code_and_no_extra_row() -> None:
    viewer = fixture(ERROR_FINISH)
    steps = [r for r in rows(viewer) if r["kind"] == "step"]
    assert len(steps) == 1 and "failedRequest" not in steps[0]
    value = inspect_row(viewer, steps[0])
    assert value["status"] == "error" and value["failure"]["code"] == "AUTH"
    assert value["timing"]["ttft"]["value"] is None


def test_recorded_times_give_ttft_generation_and_throughput_and_a_retry_its_number() -> None:
    step = {"turn": 1, "step": 1}
    failure = {"message": "rate limited", "code": "RATE_LIMIT"}
    viewer = of_events([
        {"type": "turn/start", "time": T0, "data": {"turn": 1}},
        {"type": "user/message", "time": T0, "surfaceOp": "append",
         "data": {"role": "user", "content": [{"type": "text", "text": "hello " * 40}], "source": {"kind": "user"}}},
        {"type": "step/start", "time": T0 + 10, "data": step},
        {"type": "llm/retry", "time": T0 + 200, "data": {**step, "retryId": "r", "provider": "p", "mode": "normal",
                                                         "policyKey": "k", "retry": 1, "maxRetries": 3,
                                                         "delayMs": 1500, "failure": failure}},
        {"type": "llm/retry-started", "time": T0 + 1700, "data": {**step, "retryId": "r", "retry": 1}},
        {"type": "assistant/chunk", "time": T0 + 2000,
         "data": {**step, "chunk": {"type": "text-delta", "index": 0, "text": "Hi"}}},
        {"type": "assistant/chunk", "time": T0 + 3000,
         "data": {**step, "chunk": {"type": "usage", "usage": {"inputTokens": 70, "outputTokens": 50,
                                                                 "cacheReadTokens": 30}}}},
        {"type": "assistant/message", "time": T0 + 3700, "surfaceOp": "append",
         "data": {**step, "message": {"role": "assistant", "content": [{"type": "text", "text": "Hi"}],
                                      "source": {"kind": "model", "provider": "p", "model": "m"}}}},
        {"type": "step/end", "time": T0 + 3800, "data": step},
        {"type": "turn/end", "time": T0 + 3900, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ])
    (row,) = [r for r in rows(viewer) if r["kind"] == "step"]
    assert "request" not in row  # no failed finish in the window: the row's step names its request
    value = inspect_row(viewer, row)
    assert (value["number"], value["cause"], value["model"]) == (2, "retry", "m")
    assert value["retry"] == {"retry": 1, "maxRetries": 3, "delayMs": 1500, "mode": "normal"}
    timing = {k: v["value"] for k, v in value["timing"].items()}
    assert timing == {"started": T0 + 1700, "total": 2000, "ttft": 300, "generation": 1700,
                      "tokensPerSecond": round(50 / 1.7, 1)}
    assert value["input"] == 100  # input + cache read: the counts do not overlap
    first = inspect(viewer, value["attempts"][0]["seq"])
    assert first["status"] == "error" and first["failure"]["code"] == "RATE_LIMIT"
    assert first["timing"]["total"]["value"] == 190 and first["timing"]["ttft"]["why"] == "no output arrived"
    assert value["prompt"]["changes"] == []  # the retry sent the same messages


def test_the_meter_marks_the_compaction_and_the_failed_request_and_says_which_heights_are_estimates() -> None:
    value = json.loads(fixture(COMPACTION).context_meter())
    assert (value["requests"], value["recorded"], value["perBar"], value["contextWindow"]) == (3, 2, 1, 128000)
    bars = value["bars"]
    assert [b["basis"] for b in bars] == ["recorded", "estimate", "recorded"]
    assert [b["compaction"] for b in bars] == [False, False, True]
    assert [b["failed"] for b in bars] == [False, True, False]
    assert [b["total"] for b in bars][::2] == [24, 20]
    for bar in bars:  # the split covers the height, within rounding
        assert abs(sum(bar["parts"].values()) - bar["total"]) <= 3
        assert bar["parts"]["system"] > 0 and bar["parts"]["tools"] > 0


def test_a_claude_code_log_meter_is_recorded_usage_with_the_unlogged_part_marked() -> None:
    viewer = opened(interop_file(CLAUDE))
    value = json.loads(viewer.context_meter())
    assert value["requests"] == value["recorded"] >= 2 and value["headers"] == 0
    for bar in value["bars"]:
        parts = bar["parts"]
        assert bar["basis"] == "recorded" and parts["system"] == parts["tools"] == 0
        assert parts["conversation"] + parts["unknown"] == bar["total"] and parts["unknown"] > 0
    request = inspect(viewer, value["bars"][-1]["seq"])
    assert request["model"].startswith("claude-") and request["provider"] == "anthropic"
    assert request["input"] == bar["total"] and request["tools"]["items"] == []
    timing = request["timing"]  # a reader's step wraps one record: one instant, never a "0 ms" request
    assert timing["started"]["value"] is not None and timing["total"]["value"] is None
    assert timing["total"]["why"] == "the log records the request and its whole response at one instant"
    assert timing["ttft"]["why"] == "the response was recorded whole, not streamed"


def test_a_long_run_shares_bars_and_each_bar_is_the_fullest_of_its_run() -> None:
    events: list[dict[str, Any]] = []
    n = MAX_BARS + 50
    for i in range(1, n + 1):
        step = {"turn": 1, "step": i}
        events += [
            {"type": "step/start", "time": 0, "data": step},
            {"type": "assistant/message", "time": 0, "surfaceOp": "append",
             "data": {**step, "message": {"role": "assistant", "content": [{"type": "text", "text": "x" * i}]},
                      "usage": {"inputTokens": i, "outputTokens": 1}}},
        ]
    value = json.loads(of_events([{"type": "turn/start", "time": 0, "data": {"turn": 1}}, *events]).context_meter())
    assert value["requests"] == n and value["perBar"] == 2 and len(value["bars"]) == (n + 1) // 2
    assert [(b["first"], b["last"], b["total"]) for b in value["bars"][:2]] == [(1, 2, 2), (3, 4, 4)]


def test_an_unknown_request_is_named_missing() -> None:
    assert json.loads(fixture(COMPACTION).request_inspector(999)) == {"missing": 999}
    assert json.loads(fixture(COMPACTION).request_inspector(999, True)) == {"missing": 999}
