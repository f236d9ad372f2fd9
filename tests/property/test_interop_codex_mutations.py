"""A damaged Codex rollout never crashes the reader (FORMATS.md §1.4, DESIGN rule 10).

Hypothesis takes a window of real rollout lines (the fixtures under ``../shared/fixtures/interop/codex``, and
hand-written lines for the record kinds they lack: compaction, subagents, the older generation, completion events)
and damages it: a field set to a value of another JSON type or removed, a line cut short, duplicated, dropped or
swapped with the next. Whatever it does, reading gives a result, never an exception: a line error naming its line
(every line before it kept), or raw records with warnings; and ``check_log(result, allow_error=True)`` holds.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.interop.base import RAW, SOURCE, read_lines
from assembler.interop.codex import CodexReader
from tests.interop_support import check_log, interop_files

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.sampled_from([1.5, -0.0, 1e300]),
                    st.sampled_from(["", "x", "message", "user", "assistant", "function_call", "call_1", "{}",
                                     "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["type", "text", "call_id", "role", "info", "subagent"]), inner, max_size=2)),
    max_leaves=4)


def _e(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-01-01T10:00:00.000Z", "type": kind, "payload": payload})


HAND = (
    _e("session_meta", {"id": "t", "cwd": "/p", "cli_version": "0.1", "model_provider": "openai",
                        "source": {"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}},
                        "base_instructions": {"text": "sys"}}),
    _e("event_msg", {"type": "task_started", "turn_id": "t1", "model_context_window": 1000}),
    _e("turn_context", {"turn_id": "t1", "model": "gpt-5", "cwd": "/p"}),
    _e("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
    _e("event_msg", {"type": "user_message", "message": "hi", "images": ["data:image/png;base64,AA"]}),
    _e("event_msg", {"type": "agent_reasoning", "text": "r"}),
    _e("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "r"}],
                         "encrypted_content": "E"}),
    _e("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1",
                         "input": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}),
    _e("response_item", {"type": "web_search_call", "id": "ws", "action": {"type": "search", "query": "q"}}),
    _e("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 10, "output_tokens": 2},
                                                    "last_token_usage": {"input_tokens": 10, "output_tokens": 2}}}),
    _e("event_msg", {"type": "patch_apply_end", "call_id": "c1", "success": True, "changes": {}}),
    _e("response_item", {"type": "custom_tool_call_output", "call_id": "c1",
                         "output": "{\"output\":\"Success.\",\"metadata\":{\"exit_code\":0}}"}),
    _e("event_msg", {"type": "web_search_end", "call_id": "ws", "query": "q"}),
    _e("compacted", {"message": "sum", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "compaction", "encrypted_content": "X"}]}),
    _e("event_msg", {"type": "context_compacted"}),
    _e("event_msg", {"type": "user_message", "message": "more"}),
    _e("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
    _e("event_msg", {"type": "thread_name_updated", "thread_name": "T"}),
    json.dumps({"id": "old", "timestamp": "2025-01-01T00:00:00Z", "instructions": "i"}),
    json.dumps({"record_type": "state"}),
    json.dumps({"type": "local_shell_call", "call_id": "c2", "action": {"type": "exec", "command": ["ls"]}}),
    json.dumps({"type": "local_shell_call_output", "call_id": "c2", "output": "x"}),
)


@cache
def rollouts() -> tuple[tuple[str, ...], ...]:
    """The fixtures' lines (long strings cut to keep examples small) and the hand-written lines."""
    out = [HAND]
    for path in interop_files("codex", ".jsonl"):
        lines = []
        for raw in path.read_text(encoding="utf-8").split("\n"):
            if raw.strip():
                lines.append(json.dumps(_cut(json.loads(raw))))
        out.append(tuple(lines))
    return tuple(out)


def _cut(value: Any) -> Any:
    if type(value) is str:
        return value[:300]
    if type(value) is dict:
        return {k: _cut(v) for k, v in value.items()}
    if type(value) is list:
        return [_cut(v) for v in value[:6]]
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if type(value) is dict:
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif type(value) is list:
        for i, v in enumerate(value[:4]):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def damaged(draw: st.DrawFn) -> list[str]:
    lines = draw(st.sampled_from(rollouts()))
    start = draw(st.integers(0, max(0, len(lines) - 1)))
    window = list(lines[start:start + draw(st.integers(1, 30))])
    if start > 0 and draw(st.booleans()):
        window.insert(0, lines[0])  # keep the session_meta in front most of the time
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(window) - 1))
        how = draw(st.sampled_from(["set", "set", "set", "drop-field", "cut", "twice", "drop", "swap"]))
        if how in ("set", "drop-field"):
            try:
                value = json.loads(window[i])
            except ValueError:
                continue  # a line an earlier damage cut
            paths = _paths(value)
            if not paths:
                continue
            path = draw(st.sampled_from(paths))
            target = value
            for key in path[:-1]:
                target = target[key]
            if how == "set":
                target[path[-1]] = draw(VALUES)
            elif type(target) is dict:
                del target[path[-1]]
            window[i] = json.dumps(value)
        elif how == "cut":
            window[i] = window[i][:draw(st.integers(0, max(0, len(window[i]) - 1)))]
        elif how == "twice":
            window.insert(i, window[i])
        elif how == "drop" and len(window) > 1:
            del window[i]
        elif how == "swap" and i + 1 < len(window):
            window[i], window[i + 1] = window[i + 1], window[i]
    return window


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_a_damaged_rollout_gives_a_line_error_or_raw_records_never_an_exception(window: list[str]) -> None:
    data = ("\n".join(window) + "\n").encode()
    result = read_lines(CodexReader("rollout-damaged.jsonl"), data)
    check_log(result, allow_error=True)
    numbered = [n for n, line in enumerate(window, 1) if line.strip()]
    stop = result.error.line if result.error is not None else None
    if stop is not None:
        assert type(stop) is int and stop in numbered, result.error
        assert result.error.message  # says what is wrong
    kept = sorted(e["data"]["origin"]["line"] for e in result.records if e["type"] in (SOURCE, RAW))
    assert kept == [n for n in numbered if stop is None or n < stop]  # every line before the error, once
