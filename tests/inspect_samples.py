"""Hand-built Inspect AI samples and logs for the reader's tests: what the real logs in the fixtures do not hold
(tool calls and their events, reasoning, ids, a grader's model call, attachments used in messages and events)."""

from __future__ import annotations

from typing import Any

T0 = "2025-01-01T10:00:00.000000+00:00"


def ts(second: float) -> str:
    return f"2025-01-01T10:00:{second:09.6f}+00:00"


def usage(inp: int, out: int, **more: int) -> dict[str, int]:
    total = more.pop("total", None)
    usage = {"input_tokens": inp, "output_tokens": out, **more}
    usage["total_tokens"] = total if total is not None else inp + out + more.get(
        "input_tokens_cache_read", 0) + more.get("input_tokens_cache_write", 0)
    return usage


def model_event(at: float, done: float, message: dict[str, Any], usage: dict[str, int],
                 stop: str = "stop") -> dict[str, Any]:
    return {"event": "model", "timestamp": ts(at), "completed": ts(done), "model": "openai/gpt-x",
            "input": [{"role": "user", "content": "attachment://long"}],
            "output": {"model": "gpt-x-1", "choices": [{"message": message, "stop_reason": stop}], "usage": usage}}


def agent_sample(sample_id: Any = 7, epoch: int = 1, **over: Any) -> dict[str, Any]:
    """A tool-using conversation: prompt, a call with two tools (one fails), reasoning and an answer."""
    a1 = {"id": "a1", "role": "assistant", "source": "generate", "content": [
        {"type": "reasoning", "reasoning": "opaque", "redacted": True},
        {"type": "text", "text": "Looking."}],
        "tool_calls": [{"id": "c1", "function": "bash", "arguments": {"cmd": "ls -l", "path": "attachment://long"}},
                       {"id": "c2", "function": "read", "arguments": {"file": "x"}}]}
    a2 = {"id": "a2", "role": "assistant", "source": "generate", "model": "gpt-x-2",
          "content": [{"type": "reasoning", "reasoning": "Think.", "redacted": False},
                      {"type": "text", "text": "Done."}]}
    messages = [
        {"id": "s1", "role": "system", "content": "Be brief."},
        {"id": "u1", "role": "user", "source": "input",
         "content": [{"type": "text", "text": "List files"}, {"type": "image", "image": "attachment://img"}]},
        a1,
        {"id": "t1", "role": "tool", "tool_call_id": "c1", "function": "bash", "content": "a.txt"},
        {"id": "t2", "role": "tool", "tool_call_id": "c2", "function": "read", "content": "",
         "error": {"type": "timeout", "message": "read timed out"}},
        {"id": "u2", "role": "user", "content": "Please continue."},
        a2,
    ]
    events = [
        {"event": "sample_init", "timestamp": ts(1), "sample": {"input": "attachment://long"}, "state": {}},
        {"event": "span_begin", "timestamp": ts(1.5), "id": "sp1", "name": "solver"},
        model_event(2, 3, {"id": "a1", "role": "assistant", "content": a1["content"],
                            "tool_calls": a1["tool_calls"]},
                     usage(100, 20, input_tokens_cache_read=50, reasoning_tokens=5), stop="tool_calls"),
        {"event": "tool", "timestamp": ts(4), "completed": ts(5), "id": "c1", "function": "bash",
         "arguments": {}, "result": "a.txt", "message_id": "t1"},
        {"event": "tool", "timestamp": ts(4), "completed": ts(6), "id": "c2", "function": "read",
         "arguments": {}, "result": "", "error": {"type": "timeout", "message": "read timed out"}},
        {"event": "sandbox", "timestamp": ts(6.5), "action": "exec", "cmd": "ls"},
        model_event(7, 8, {"id": "a2", "role": "assistant", "content": a2["content"]}, usage(200, 30)),
        {"event": "model", "timestamp": ts(9), "model": "openai/grader", "input": [],
         "output": {"choices": [{"message": {"id": "g1", "role": "assistant", "content": "GRADE: C"},
                                 "stop_reason": "stop"}], "usage": usage(10, 2)}},
        {"event": "score", "timestamp": ts(10), "score": {"value": "C", "answer": "Done.",
                                                          "explanation": "attachment://long"},
         "target": "files", "intermediate": False, "scorer": "model_graded"},
        {"event": "span_end", "timestamp": ts(11), "id": "sp1"},
    ]
    sample: dict[str, Any] = {
        "id": sample_id, "epoch": epoch, "input": "List files", "target": "files",
        "messages": messages, "events": events,
        "scores": {"model_graded": {"value": "C", "answer": "Done.", "explanation": "attachment://long"}},
        "metadata": {"m": 1}, "store": {"k": "v"}, "output": {"model": "gpt-x-1", "choices": []},
        "model_usage": {"openai/gpt-x": usage(300, 50)}, "total_time": 11.0,
        "started_at": T0, "completed_at": ts(12),
        "attachments": {"long": "the long text", "img": "data:image/png;base64,AAAA"},
    }
    sample.update(over)
    return sample


def log_doc(samples: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    log: dict[str, Any] = {
        "version": 2, "status": "success",
        "eval": {"run_id": "run1", "eval_id": "ev1", "created": T0, "task": "agent", "model": "openai/gpt-x"},
        "plan": {"name": "plan", "steps": []},
        "results": {"scores": [{"name": "model_graded", "scorer": "model_graded"}]},
        "stats": {"model_usage": {}}, "samples": samples,
    }
    log.update(over)
    return log
