"""OpenHands trajectory exports (one JSON array of events) read into our event model (FORMATS.md §10).

Rules: a user ``message`` opens a turn (its text and ``image_urls``); ``system`` is the ``request/header``. The
actions sharing one ``model_response.id`` are one step (parallel calls): the step is written whole at the first of
them from the recorded response (its text, ``reasoning_content``, a block per recorded tool call, usage once per
response id, its finish reason), and each action then adds its ``tool/call`` with the model's raw argument string
(else the JSON of ``args`` without ``thought``). An action with no recorded response is a step of its own whose text
is ``args.thought``. ``think`` is a reasoning block, never a call (its acknowledgement stays raw). ``finish`` is the
last call (a block of its step's message, never a ``tool/call``: OpenHands does not run it, so it has no result),
its ``final_thought``/``thought`` the step's text, and it completes the turn. An observation is the
``tool/result`` of the action whose ``id`` is its ``cause`` (else of the pending call its ``tool_call_id`` names);
``error`` sets ``isError``; ``extras`` (and ``success``) go to ``meta``; an observation answering no call is plugin
context the model saw (or raw when empty). ``condensation`` is a compaction (``LogBuilder.replace_surface``) over
the surface nodes of the forgotten events, its ``summary`` the replacement. ``delegate`` opens a subagent section
(``tool-workflow/agent-start`` linked to the delegate call) until its delegate observation (``agent-end``); the
child's events (its ``TASK:`` message is plugin context, its ``finish`` ends no turn) carry
``delegate:{callId, agent}`` in their data. ``agent_state_changed``, ``change_agent_state`` are raw notices,
``null``, ``recall`` and the rest raw. Times: each event's ``timestamp`` (no zone: read as UTC, differences hold).
Ids are the events' ids (``oh-<id>``) and the recorded call and response ids; ``llm_metrics`` (cumulative) is never
added to usage.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Struct

from ..formats import session_stem
from .base import LogBuilder, SessionLog, SourceError, iso_ms, json_args, json_type
from .documents import (
    Elements,
    decode_document,
    distinct_ids,
    litellm_finish,
    litellm_usage,
    position,
    session_logs,
)

__all__ = ["read_trajectory"]

FORMAT = "openhands"
_PLUGIN = "openhands"
_SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})
_RAW_ACTIONS = frozenset({"change_agent_state", "recall", "condensation_request", "null"})


class _Metadata(Struct, kw_only=True):
    function_name: str | None = None
    tool_call_id: str | None = None
    model_response: dict[str, Any] | None = None
    total_calls_in_response: int | None = None


class _Event(Struct, kw_only=True):
    id: int
    timestamp: str | None = None
    source: str | None = None
    action: str | None = None
    observation: str | None = None
    args: dict[str, Any] | None = None
    content: Any = None
    extras: dict[str, Any] | None = None
    cause: int | None = None
    tool_call_metadata: _Metadata | None = None
    success: bool | None = None


def _str(value: Any) -> str:
    return value if type(value) is str else ""


def _choice(response: dict[str, Any] | None) -> dict[str, Any]:
    """The first choice's ``message`` of a recorded response (empty when not recorded)."""
    choices = response.get("choices") if response is not None else None
    if type(choices) is list and choices and type(choices[0]) is dict and type(choices[0].get("message")) is dict:
        return choices[0]["message"]  # type: ignore[no-any-return]
    return {}


def _calls(response: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """``(id, name, raw arguments)`` of each tool call a recorded response made."""
    out = []
    calls = _choice(response).get("tool_calls")
    for call in calls if type(calls) is list else ():
        fn = call.get("function") if type(call) is dict else None
        if type(fn) is dict and type(call.get("id")) is str and type(fn.get("name")) is str:
            args = fn.get("arguments")
            out.append((call["id"], fn["name"], args if type(args) is str else json_args(args)))
    return out


def _thought_of(arguments: str) -> str:
    """The ``thought`` argument of a recorded ``think`` call (the raw string when it is not that JSON)."""
    try:
        value = msgspec.json.decode(arguments)
    except msgspec.DecodeError:
        return arguments
    return value["thought"] if type(value) is dict and type(value.get("thought")) is str else arguments


def read_trajectory(data: bytes, file: str) -> list[SessionLog]:
    """One OpenHands trajectory export as one session; never raises: an unusable document is the returned log's
    ``error``."""
    out = LogBuilder(FORMAT, session_stem(file))
    try:
        doc = decode_document(data)
    except SourceError as exc:
        return session_logs(out, exc)
    if doc is None:
        return session_logs(out)
    if type(doc) is not list:
        body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        line, column = position(body, len(body) - len(body.lstrip()))
        return session_logs(out, SourceError(f"expected a JSON array of events, got {json_type(doc)}",
                                             line=line, column=column))
    _Trajectory(out).run(doc)
    return session_logs(out)


class _Trajectory:
    def __init__(self, out: LogBuilder) -> None:
        self.out = out
        self.els = Elements(out)
        self.seen: dict[int, str] = {}  # event id -> the pointer of its first copy
        self.call_of: dict[int, str] = {}  # action id -> its call id
        self.think: set[int] = set()  # think actions (their observation is an acknowledgement)
        self.pending: set[str] = set()  # call ids without a result
        self.step_response: str | None = None  # the response id of the open step
        self.responses: set[str] = set()  # response ids already written as a step (usage counted once)
        self.surface_of: dict[int, list[int]] = {}  # event id -> the surface seqs made from it
        self.delegates: list[tuple[str, str]] = []  # open delegate sections: (call id, agent name)
        self.model: str | None = None

    def run(self, events: list[Any]) -> None:
        for index, value in enumerate(events):
            ptr = f"/{index}"
            kind = value.get("action") or value.get("observation") if type(value) is dict else None
            rtype = kind if type(kind) is str else "event"
            ev = self.els.shape(value, _Event, ptr, rtype)
            if ev is None:
                continue
            if ev.id in self.seen:
                self.els.raw(ptr, rtype, value, duplicate_of={"pointer": self.seen[ev.id]})
                continue
            self.seen[ev.id] = ptr
            self.els.open(ptr, rtype, value)
            out = self.out
            first = out.next_seq
            label = self.delegates[-1] if self.delegates else None
            time = iso_ms(ev.timestamp)
            notice: str | None = None
            if ev.action is not None:
                notice = self.action(ev, time)
            elif ev.observation is not None:
                notice = self.observation(ev, time)
                if ev.observation == "delegate":
                    label = self.delegates[-1] if self.delegates else None
            if label is not None:
                for event in out.events[first:]:
                    event["data"]["delegate"] = {"callId": label[0], "agent": label[1]}
            made = [s for s in range(first, out.next_seq) if out.events[s]["type"] in _SURFACE]
            if made:
                self.surface_of[ev.id] = made
            out.end(notice=notice, time=time)

    # -- actions -------------------------------------------------------------------------------------------------

    def action(self, ev: _Event, time: int) -> str | None:
        out = self.out
        args = ev.args or {}
        action = ev.action or ""
        if action == "message" and ev.source == "user":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": _str(args.get("content"))}]
            urls = args.get("image_urls")
            for url in urls if type(urls) is list else ():
                if type(url) is str:
                    blocks.append({"type": "image", "attachment": {"url": url}})
            if self.delegates:  # the task the parent handed its delegate (OpenHands posts it as a user message)
                out.user_message(blocks, time=time, message_id=f"oh-{ev.id}",
                                 source={"kind": "plugin", "plugin": _PLUGIN, "form": "delegate-task"})
            else:
                out.start_turn(time)
                out.user_message(blocks, time=time, message_id=f"oh-{ev.id}")
            return None
        if action == "system":
            header: dict[str, Any] = {"config": {k: args[k] for k in ("agent_class", "openhands_version")
                                                 if k in args}, "system": _str(args.get("content"))}
            if "tools" in args:
                header["tools"] = args["tools"]
            out.emit("request/header", {"header": header, "reason": "initial"}, time=time)
            return None
        if action == "condensation":
            self.condensation(ev, time)
            return None
        if action in _RAW_ACTIONS or (ev.source != "agent" and ev.tool_call_metadata is None):
            if action == "change_agent_state":
                return f"Agent state changed to {_str(args.get('agent_state'))}"
            return None
        self.agent_action(ev, time)
        return None

    def agent_action(self, ev: _Event, time: int) -> None:
        out = self.out
        args = ev.args or {}
        action = ev.action or ""
        meta = ev.tool_call_metadata
        response = meta.model_response if meta is not None else None
        rid = response.get("id") if response is not None else None
        rid = rid if type(rid) is str else None
        call_id = meta.tool_call_id if meta is not None and meta.tool_call_id else f"oh-{ev.id}"
        name = meta.function_name if meta is not None and meta.function_name else action
        if action == "think":
            self.think.add(ev.id)
        if rid is None or rid not in self.responses:
            self.step(ev, time, response, rid, call_id, name)
        if action == "finish":
            # The call stays a block of the step's message, not a tool/call: OpenHands never runs it, and a call
            # with no result in a closed turn reads as interrupted.
            if not self.delegates:
                out.end_turn({"kind": "completed"}, time)
            return
        if action in ("think", "message"):
            return
        arguments = next((a for i, _, a in _calls(response) if i == call_id), None)
        if arguments is None:
            arguments = json_args({k: v for k, v in args.items() if k != "thought"})
        call_id = distinct_ids(out, [call_id])[0]
        out.tool_call(call_id, name, arguments, time)
        self.call_of[ev.id] = call_id
        self.pending.add(call_id)
        if action == "delegate":
            agent = _str(args.get("agent")) or "delegate"
            self.delegates.append((call_id, agent))
            inputs = args.get("inputs")
            task = inputs.get("task") if type(inputs) is dict else None
            data: dict[str, Any] = {"runId": call_id, "seq": 1, "label": agent, "turn": out.turn}
            if type(task) is str:
                data["task"] = task
            out.emit("tool-workflow/agent-start", data, time=time)

    def step(self, ev: _Event, time: int, response: dict[str, Any] | None, rid: str | None, call_id: str,
             name: str) -> None:
        """One model step, written at the first action of its response (or of this action alone)."""
        out = self.out
        args = ev.args or {}
        out.start_step(time)
        self.step_response = rid
        choice = _choice(response)
        if ev.action == "finish":
            own = _str(args.get("final_thought")) or _str(args.get("thought"))
        elif ev.action == "message":
            own = _str(args.get("content"))
        else:
            own = _str(args.get("thought"))
        reasoning = choice.get("reasoning_content")
        if type(reasoning) is str and reasoning:
            out.block({"type": "reasoning", "text": reasoning}, time)
        calls = _calls(response)
        text = _str(choice.get("content")) or ("" if ev.action == "think" else own)
        if text:
            out.block({"type": "text", "text": text}, time)
        if ev.action == "think" and not any(c[1] == "think" for c in calls):
            out.block({"type": "reasoning", "text": own}, time)
        for cid, cname, arguments in calls:
            if cname == "think":
                out.block({"type": "reasoning", "text": _thought_of(arguments)}, time)
            else:
                out.block({"type": "tool-call", "id": cid, "name": cname, "arguments": arguments}, time)
        if response is None and ev.action not in ("think", "message"):
            arguments = json_args({k: v for k, v in args.items() if k != "thought"})
            out.block({"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}, time)
        usage = None
        if rid is not None:
            self.responses.add(rid)
            usage = litellm_usage(response.get("usage") if response is not None else None)
        if usage is not None:
            out.usage(usage, time)
        choices = response.get("choices") if response is not None else None
        if type(choices) is list and choices and type(choices[0]) is dict:
            finish = litellm_finish(choices[0].get("finish_reason"))
            if finish is not None:
                out.finish(finish, time)
        model = response.get("model") if response is not None else None
        if type(model) is str:
            self.model = model
        out.message(time=time, model=self.model, message_id=rid or f"oh-{ev.id}", usage=usage)

    def condensation(self, ev: _Event, time: int) -> None:
        """The forgotten events' surface nodes are shadowed; the summary (when recorded) replaces the first run of
        them, an empty compact message each further run (the surface replaces a contiguous range by one node)."""
        out = self.out
        args = ev.args or {}
        ids = args.get("forgotten_event_ids")
        start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
        if type(ids) is list:
            forgotten = {i for i in ids if type(i) is int}
        elif type(start) is int and type(end) is int and end >= start:
            forgotten = {i for i in self.surface_of if start <= i <= end}
        else:
            forgotten = set()
        seqs = {s for i in forgotten for s in self.surface_of.get(i, ())}
        positions = [p for p, s in enumerate(out.surface) if s in seqs]
        runs: list[list[int]] = []
        for p in positions:
            if runs and runs[-1][-1] == p - 1:
                runs[-1].append(p)
            else:
                runs.append([p])
        cid = f"oh-{ev.id}"
        summary = args.get("summary")
        blocks = [{"type": "text", "text": summary}] if type(summary) is str and summary else []
        out.emit("compaction/start", {"compactionId": cid, "turn": out.turn if out.turn_open else None}, time=time)
        shadowed_all = [out.surface[p] for p in positions]
        source = {"kind": "plugin", "plugin": "compact"}
        for k in range(len(runs) - 1, -1, -1):  # last run first: earlier positions stay valid
            run = runs[k]
            shadowed = out.replace_surface(run[0], run[-1] + 1)
            if k == 0:
                out.emit("compaction/summary", {"compactionId": cid, "summary": blocks,
                                                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                                                "shadowedSeqs": shadowed_all}, time=time)
            out.user_message(blocks if k == 0 else [], time=time, message_id=f"{cid}#{k}", source=source)
        if not runs:
            out.emit("compaction/summary", {"compactionId": cid, "summary": blocks, "shadowedSeqs": []}, time=time)
            if blocks:
                out.user_message(blocks, time=time, message_id=cid, source=source)
        out.emit("compaction/end", {"compactionId": cid, "turn": out.turn if out.turn_open else None}, time=time)

    # -- observations --------------------------------------------------------------------------------------------

    def observation(self, ev: _Event, time: int) -> str | None:
        out = self.out
        kind = ev.observation or ""
        if ev.cause is not None and ev.cause in self.think:
            return None  # "Your thought has been logged.": the think was a reasoning block, not a call
        call_id = self.call_of.get(ev.cause) if ev.cause is not None else None
        meta_call = ev.tool_call_metadata.tool_call_id if ev.tool_call_metadata is not None else None
        if call_id is None and meta_call in self.pending:
            call_id = meta_call
        if call_id is None and kind == "delegate" and self.delegates:
            call_id = self.delegates[-1][0]
        if call_id is not None and call_id in self.pending:
            self.pending.discard(call_id)
            content = ev.content if type(ev.content) is str else "" if ev.content is None else json_args(ev.content)
            meta: dict[str, Any] = dict(ev.extras or {})
            if kind and kind != "error":
                meta["observation"] = kind
            if ev.success is not None:
                meta["success"] = ev.success
            out.tool_result(call_id, [{"type": "text", "text": content}] if content else [],
                            is_error=kind == "error", time=time, meta=meta or None, message_id=f"oh-{ev.id}")
            if kind == "delegate" and self.delegates and self.delegates[-1][0] == call_id:
                self.delegates.pop()
                out.emit("tool-workflow/agent-end", {"runId": call_id, "seq": 1, "outcome": "returned",
                                                     "turn": out.turn}, time=time)
            return None
        if kind == "agent_state_changed":
            state = (ev.extras or {}).get("agent_state")
            return f"Agent state: {state}" if type(state) is str else None
        if kind in ("null", "condense", "recall") or not (type(ev.content) is str and ev.content):
            return ev.content if kind == "condense" and type(ev.content) is str and ev.content else None
        out.user_message([{"type": "text", "text": ev.content}], time=time, message_id=f"oh-{ev.id}",
                         source={"kind": "plugin", "plugin": _PLUGIN, "form": kind})
        return None
