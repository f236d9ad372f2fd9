"""Which event of an Inspect sample gives each message its time and usage (FORMATS.md §6.3): messages record no
time, events do.

Rules: the input messages (``source:"input"``) take the ``sample_init`` event. Assistant messages take the model
calls in order: a call whose output message has the message's id (both ids recorded), else the first following
call whose output has the same content and tool call ids, else (a message without an id) the next call whose
output has none; a call is never matched twice and matching never goes back, so a grader's or a sub-agent's call
after the last message stays unmatched. Only ``MATCH_WINDOW`` calls past the last matched one are searched without
an id, so a log of thousands of calls stays linear. Tool messages take the tool event with their message id, else
the first unmatched one with their call id. Pure: the records in, the matching out.
"""

from __future__ import annotations

from typing import Any, Final

from .inspect_records import MessageRec, ModelEventRec, OutputMessageRec, ToolEventRec

__all__ = ["MATCH_WINDOW", "Matching", "call_id"]

MATCH_WINDOW: Final = 256
"""How many model calls past the last matched one a message without an id match is looked for in."""


def call_id(m: MessageRec) -> str | None:
    """A tool message's call id (a user message's list of them is not one)."""
    return m.tool_call_id if type(m.tool_call_id) is str else None


class Matching:
    """``source[i]``: the event index that gives message ``i`` its time; ``anchor[j]``: the last message matched
    to event ``j`` (written before it); ``fed[j]``: every message matched to event ``j``."""

    def __init__(self, msgs: list[MessageRec | None], events: list[Any], typed: list[Any]) -> None:
        self.source: dict[int, int] = {}
        init = next((j for j, e in enumerate(events) if type(e) is dict and e.get("event") == "sample_init"), None)
        models = [j for j, rec in enumerate(typed) if type(rec) is ModelEventRec]
        outputs = [_output_message(typed[j]) for j in models]
        by_id: dict[str, list[int]] = {}
        for k, om in enumerate(outputs):
            if om is not None and om.id is not None:
                by_id.setdefault(om.id, []).append(k)
        tools_by_msg: dict[str, int] = {}
        tools_by_call: dict[str, list[int]] = {}
        for j, rec in enumerate(typed):
            if type(rec) is ToolEventRec:
                if rec.message_id is not None:
                    tools_by_msg.setdefault(rec.message_id, j)
                if rec.id is not None:
                    tools_by_call.setdefault(rec.id, []).append(j)
        used_tools: set[int] = set()
        cursor = 0
        for i, m in enumerate(msgs):
            if m is None:
                continue
            if m.source == "input":
                if init is not None:
                    self.source[i] = init
            elif m.role == "assistant":
                pick = _pick_model(m, outputs, by_id, cursor)
                if pick is not None:
                    self.source[i] = models[pick]
                    cursor = pick + 1
            elif m.role == "tool":
                t = tools_by_msg.get(m.id) if m.id is not None else None
                if t is None or t in used_tools:
                    t = next((c for c in tools_by_call.get(call_id(m) or "", []) if c not in used_tools), None)
                if t is not None:
                    used_tools.add(t)
                    self.source[i] = t
        self.anchor: dict[int, int] = {}
        self.fed: dict[int, list[int]] = {}
        for i, j in self.source.items():
            self.anchor[j] = max(self.anchor.get(j, -1), i)
            self.fed.setdefault(j, []).append(i)


def _pick_model(m: MessageRec, outputs: list[OutputMessageRec | None], by_id: dict[str, list[int]],
                cursor: int) -> int | None:
    if m.id is not None:
        found = next((k for k in by_id.get(m.id, []) if k >= cursor), None)
        if found is not None:
            return found
    end = min(len(outputs), cursor + MATCH_WINDOW)
    calls = [c.id for c in m.tool_calls or []]
    for k in range(cursor, end):
        om = outputs[k]
        if om is not None and (om.id is None or om.id == m.id) and om.content == m.content \
                and _call_ids(om.tool_calls) == calls:
            return k
    if m.id is None:
        for k in range(cursor, end):
            om = outputs[k]
            if om is not None and om.id is None:
                return k
    return None


def _output_message(rec: ModelEventRec) -> OutputMessageRec | None:
    output = rec.output
    if output is None or not output.choices:
        return None
    return output.choices[0].message


def _call_ids(calls: Any) -> list[Any]:
    if type(calls) is not list:
        return []
    return [c.get("id") if type(c) is dict else None for c in calls]
