"""The request inspector, the context meter and the trajectory's failed requests, as plain JSON values for the page
(which lays them out with ``textContent``; no HTML here).

Rules: everything comes from ``requests.collect_attempts`` over the window the chat shows. A timing figure is given
only when every time it uses passes ``views.is_recorded_time``; otherwise it is ``None`` with the reason beside it
(``"why"``). Token figures are recorded usage; the split of a prompt into system prompt, tools and conversation is
an estimate (characters / 4) and says so (``basis``). A request that failed and was sent again for the same step
without a retry event (a context overflow answered by a compaction) is its own failed trajectory row: the step's row
describes its last request only. Pure.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from ..conversation import ConversationAssembler
from ..views import is_recorded_time
from .requests import CHARS_PER_TOKEN, Attempt, collect_attempts, estimate_tokens

__all__ = ["inspect_request", "context_meter", "request_value", "meter_value", "trajectory_requests",
           "with_failed_requests", "window_attempts", "MAX_BARS", "SYSTEM_CHARS"]

MAX_BARS = 120
"""The meter draws at most this many bars: beyond, each bar stands for the fullest of a run of requests (a bar is a
handful of SVG elements: the views' DOM bound leaves room for about this many)."""

SYSTEM_CHARS = 20_000
"""The system prompt is sent up to this many characters."""

NO_TIMES = "the log records no times (they were rebuilt from a counter)"


def _recorded(*times: Any) -> bool:
    return all(is_recorded_time(t) for t in times)


def _figure(value: Any, why: str | None) -> dict[str, Any]:
    return {"value": value, "why": None if value is not None else why}


def timing_value(a: Attempt) -> dict[str, Any]:
    """``{started, total, ttft, generation, tokensPerSecond}``, each ``{value, why}`` (``why`` when unavailable)."""
    times = [t for t in (a.started, a.first_token, a.ended) if t is not None]
    no_times = not any(is_recorded_time(t) for t in times)
    start_known = a.cause in ("step", "retry")
    start_why: str | None
    end_why: str | None
    first_why: str | None
    if no_times:
        start_why = end_why = first_why = NO_TIMES
    else:
        start_why = ("the log records no start for this request (it was sent again for the same step with no "
                     "step or retry event)" if not start_known else
                     NO_TIMES if not is_recorded_time(a.started) else None)
        end_why = ("the request has not ended in the loaded log" if a.ended is None else
                   NO_TIMES if not is_recorded_time(a.ended) else None)
        first_why = ("no output arrived" if a.status in ("error", "interrupted") else
                     "the request is still running" if a.open else
                     "the response was recorded whole, not streamed") if a.first_token is None else (
            NO_TIMES if not is_recorded_time(a.first_token) else None)
    started = a.started if start_known and _recorded(a.started) else None
    total = a.ended - a.started if started is not None and _recorded(a.ended) and a.ended >= a.started else None
    total_why = start_why or end_why
    if total == 0 and a.first_token is None and total_why is None:  # one instant: a reader's step around a record
        total, total_why = None, "the log records the request and its whole response at one instant"
    ttft = (a.first_token - a.started if started is not None and _recorded(a.first_token)
            and a.first_token >= a.started else None)
    generation = (a.ended - a.first_token if _recorded(a.first_token, a.ended) and a.ended >= a.first_token
                  else None)
    out_tokens = (a.usage or {}).get("outputTokens")
    rate = None
    rate_why = None
    if type(out_tokens) not in (int, float):
        rate_why = "the log records no output-token count for this request"
    elif generation is None:
        rate_why = "the generation time is unavailable"
    elif generation <= 0:
        rate_why = "the output arrived in one instant (no time to divide by)"
    else:
        rate = round(out_tokens / (generation / 1000), 1)
    return {
        "started": _figure(started, start_why),
        "total": _figure(total, total_why),
        "ttft": _figure(ttft, start_why or first_why),
        "generation": _figure(generation, first_why or end_why),
        "tokensPerSecond": _figure(rate, rate_why),
    }


def _text(value: Any) -> str:
    return value if type(value) is str else json.dumps(value, ensure_ascii=False)


def _tools(header: Mapping[str, Any] | None) -> dict[str, Any]:
    """The tools offered: ``{items: [{name, description?, schema?}], note}``."""
    if header is None:
        return {"items": [], "note": "The log records no request header for this request."}
    tools = header.get("tools")
    if tools is None:
        return {"items": [], "note": "The request header records no tools."}
    if type(tools) is not list:
        return {"items": [], "note": f"Recorded as {_text(tools)[:200]!r}, not as a list."}
    items = []
    for tool in tools:
        if type(tool) is str:
            items.append({"name": tool})
        elif type(tool) is dict:
            item: dict[str, Any] = {"name": _text(tool.get("name", "?"))}
            if type(tool.get("description")) is str:
                item["description"] = tool["description"]
            schema = next((tool[k] for k in ("inputSchema", "parameters", "input_schema", "schema") if k in tool),
                          None)
            if schema is not None:
                item["schema"] = json.dumps(schema, ensure_ascii=False, indent=2)
            items.append(item)
        else:
            items.append({"name": _text(tool)})
    note = "Names only: the log records no descriptions." if items and all(len(i) == 1 for i in items) else ""
    return {"items": items, "note": note}


def _config(a: Attempt) -> list[list[str]]:
    """The request's settings as ``[name, value]`` pairs: its header's config, then adapter defaults."""
    rows: list[list[str]] = []
    header = a.header[1] if a.header is not None else None
    for part, prefix in (("config", ""), ("adapterDefaults", "default ")):
        value = header.get(part) if header is not None else None
        if type(value) is dict:
            rows.extend([f"{prefix}{k}", _text(v)] for k, v in value.items())
    context = a.context[1] if a.context is not None else None
    if context is not None and type(context.get("contextWindow")) in (int, float):
        rows.append(["Context window", f"{context['contextWindow']} tokens"])
    return rows


def _pick(*values: Any) -> str | None:
    return next((v for v in values if type(v) is str and v), None)


def _sizes(a: Attempt, headers: dict[int, tuple[int, int]] | None = None) -> dict[str, int]:
    """The estimated sizes of the request's parts (``headers``: the header sizes already estimated, by seq)."""
    known = headers.get(a.header[0]) if headers is not None and a.header is not None else None
    if known is None:
        header = a.header[1] if a.header is not None else {}
        system, tools = header.get("system"), header.get("tools")
        known = (estimate_tokens(len(_text(system))) if system is not None else 0,
                 estimate_tokens(len(_text(tools))) if tools is not None else 0)
        if headers is not None and a.header is not None:
            headers[a.header[0]] = known
    return {"system": known[0], "tools": known[1], "conversation": a.conversation}


def request_value(attempts: Sequence[Attempt], i: int, windowed: bool) -> dict[str, Any]:
    """The inspector's value for request ``attempts[i]`` (``windowed``: older history is not loaded)."""
    a = attempts[i]
    prev = attempts[i - 1] if i > 0 else None
    header = a.header[1] if a.header is not None else None
    context = a.context[1] if a.context is not None else {}
    config: dict[str, Any] = {}
    if header is not None and type(header.get("config")) is dict:
        config = header["config"]
    system = header.get("system") if header is not None else None
    system_text = _text(system) if system is not None else None
    added = sum(1 for c in a.changes if not c.replaced)
    removed = sum(len(c.replaced) for c in a.changes)
    return {
        "seq": a.seq, "number": i + 1, "count": len(attempts), "windowed": windowed,
        "turn": a.turn, "step": a.step, "status": a.status, "cause": a.cause, "failure": a.failure,
        "retry": a.retry, "finish": a.finish,
        "provider": _pick(a.provider, context.get("provider"), config.get("provider")),
        "model": _pick(a.model, context.get("model"), config.get("model")),
        "config": _config(a), "headerSeq": a.header[0] if a.header is not None else None,
        "system": None if system_text is None else {"text": system_text[:SYSTEM_CHARS], "chars": len(system_text)},
        "tools": _tools(header),
        "prompt": {"first": prev is None, "messages": a.messages, "before": None if prev is None else prev.messages,
                   "added": added, "removed": removed,
                   "changes": [c.value() for c in a.changes]},
        "usage": a.usage, "input": a.input_tokens(), "sizes": _sizes(a), "charsPerToken": CHARS_PER_TOKEN,
        "timing": timing_value(a),
        "attempts": [{"seq": b.seq, "number": j + 1, "status": b.status, "cause": b.cause}
                     for j, b in enumerate(attempts) if b.anchor == a.anchor],
    }


def _split(sizes: Mapping[str, int], total: int, scaled: bool) -> dict[str, int]:
    """A recorded ``total`` in parts. With a request header, the estimates' proportions (their sum is only an
    estimate of ``total``). Without one the system prompt and tools are not in the log: the conversation's estimate
    (at most ``total``), and the rest of a recorded ``total`` is ``unknown``."""
    estimate = sum(sizes.values())
    if scaled:
        scale = total / estimate if estimate else 0
        return {**{k: round(v * scale) for k, v in sizes.items()}, "unknown": 0 if estimate else total}
    conversation = min(sizes["conversation"], total)
    return {"system": 0, "tools": 0, "conversation": conversation, "unknown": total - conversation}


def meter_value(attempts: Sequence[Attempt], windowed: bool) -> dict[str, Any]:
    """The context meter: one bar per request (``bars``; runs of requests share a bar past ``MAX_BARS``), each
    ``{seq, first, last, total, basis, parts: {system, tools, conversation, unknown}, compaction, failed, window}``.
    ``total`` is the recorded input (``basis: "recorded"``) or the estimate (``"estimate"``); ``parts`` split it
    (``_split``)."""
    bars: list[dict[str, Any]] = []
    run = max(1, -(-len(attempts) // MAX_BARS))
    recorded = 0
    windows: list[int] = []
    headers: dict[int, tuple[int, int]] = {}
    for start in range(0, len(attempts), run):
        group = list(enumerate(attempts[start:start + run], start))
        values = []
        for j, a in group:
            sizes = _sizes(a, headers)
            estimate = sum(sizes.values())
            measured = a.input_tokens()
            recorded += measured is not None
            total = measured if measured is not None else estimate
            parts = ({**sizes, "unknown": 0} if measured is None  # the estimate itself
                     else _split(sizes, total, a.header is not None))
            context = a.context[1] if a.context is not None else {}
            window = context.get("contextWindow") if type(context.get("contextWindow")) in (int, float) else None
            if window is not None:
                windows.append(int(window))
            values.append({"seq": a.seq, "number": j + 1, "turn": a.turn, "step": a.step, "total": total,
                           "basis": "recorded" if measured is not None else "estimate",
                           "parts": parts, "window": window,
                           "compaction": any(c.replaced for c in a.changes), "failed": a.status == "error"})
        bar = max(values, key=lambda v: v["total"])
        bar = {**bar, "first": values[0]["number"], "last": values[-1]["number"],
               "compaction": any(v["compaction"] for v in values), "failed": any(v["failed"] for v in values)}
        bars.append(bar)
    return {"bars": bars, "requests": len(attempts), "recorded": recorded, "perBar": run,
            "headers": sum(1 for a in attempts if a.header is not None),
            "contextWindow": max(windows) if windows else None, "windowed": windowed,
            "charsPerToken": CHARS_PER_TOKEN}


def trajectory_requests(rows: list[dict[str, Any]], assembler: ConversationAssembler) -> list[dict[str, Any]]:
    """``with_failed_requests`` over the window's requests, folded only when the window holds a failed ``finish``
    (otherwise no row is added, and a step row's request is its step's last one, which its ``seq`` finds)."""
    for entry in assembler.window_entries():
        event = entry.event
        if event.type == "assistant/chunk" and type(event.data) is dict:
            chunk = event.data.get("chunk")
            if type(chunk) is dict and chunk.get("type") == "finish" and type(chunk.get("reason")) is dict \
                    and chunk["reason"].get("kind") == "error":
                return with_failed_requests(rows, window_attempts(assembler))
    return rows


def with_failed_requests(rows: list[dict[str, Any]], attempts: Sequence[Attempt]) -> list[dict[str, Any]]:
    """The trajectory rows with each step row's last ``request`` (its seq, for the inspector) and a failed row
    before it for every request of that step that failed and was sent again with no retry event."""
    by_anchor: dict[int, list[Attempt]] = {}
    for a in attempts:
        by_anchor.setdefault(a.anchor, []).append(a)
    out: list[dict[str, Any]] = []
    for row in rows:
        group = by_anchor.get(row["seq"]) if row.get("kind") == "step" else None
        if not group:
            out.append(row)
            continue
        for a, nxt in zip(group, group[1:], strict=False):
            if a.status == "error" and nxt.cause == "resent":
                failure = a.failure or {}
                code = f" ({failure['code']})" if failure.get("code") else ""
                out.append({
                    "key": f"{row['key']}/request-{a.seq}", "kind": "step", "seq": a.seq, "turn": a.turn,
                    "step": a.step, "status": "error", "model": row.get("model"), "ttftMs": None,
                    "durationMs": timing_value(a)["total"]["value"], "tokens": a.usage,
                    "summary": "This request failed; the step's request was sent again"
                               + (" after a compaction" if any(c.replaced for c in nxt.changes) else ""),
                    "error": f"{failure.get('message') or 'failed'}{code}", "tools": [], "chatKey": None,
                    "bar": None, "request": a.seq, "failedRequest": True,
                })
        out.append({**row, "request": group[-1].seq})
    return out


_LAST: list[Any] = [None, None, -1, []]  # weak ref to the assembler, its last entry, its entry count, the attempts


def window_attempts(assembler: ConversationAssembler) -> list[Attempt]:
    """``collect_attempts`` of the assembler's window, kept until the window changes (the Trajectory view and the
    meter ask for the same window in turn). Only a weak reference to the assembler is kept."""
    entries = assembler.window_entries()
    last = entries[-1] if entries else None
    ref, cached_last, count, attempts = _LAST
    if ref is not None and ref() is assembler and cached_last is last and count == len(entries):
        return attempts  # type: ignore[no-any-return]
    attempts = collect_attempts(entries)
    _LAST[:] = [weakref.ref(assembler), last, len(entries), attempts]
    return attempts


def inspect_request(assembler: ConversationAssembler, seq: int, step: bool = False) -> dict[str, Any]:
    """The request whose first event is ``seq`` (a trajectory row's ``request``, a meter bar's ``seq``), or with
    ``step`` the last request of the step whose row's ``seq`` it is: ``request_value``, or ``{"missing": seq}``."""
    attempts = window_attempts(assembler)
    if step:
        index = next((i for i in range(len(attempts) - 1, -1, -1) if attempts[i].anchor == seq), None)
    else:
        index = next((i for i, a in enumerate(attempts) if a.seq == seq), None)
    if index is None:
        return {"missing": seq}
    return request_value(attempts, index, assembler.has_more)


def context_meter(assembler: ConversationAssembler) -> dict[str, Any]:
    """The context meter of the window (``meter_value``)."""
    return meter_value(window_attempts(assembler), assembler.has_more)
