"""SWE-agent trajectories (``.traj``, 0.x and 1.x) read into our event model (FORMATS.md §8); ``read_mini`` (the
mini-swe-agent reader, ``minisweagent``) is named here too, as the format table does.

Rules: the file is one turn, opened by the first non-demonstration user message (the task statement). The main
agent's system message is the ``request/header``; demonstrations (``is_demo``) are plugin context; each assistant
message is one step whose text is its ``thought`` (else its ``content``), with a ``tool/call`` per recorded
``tool_calls`` entry (arguments kept as the recorded string) or, with none (0.x, text-based 1.x), one call named by
the action's first word with arguments ``{"command": action}``. A ``tool`` message answers the calls it names
(``tool_call_ids``); a later ``user`` message answers the oldest unanswered call, else it is plugin context. A
message of an agent other than the main one is labelled with its ``agent`` (in its events' data) inside a section
opened and closed by ``tool-workflow/agent-start``/``agent-end``. ``trajectory[]`` entries are raw model-context
records, each placed after the result of the step it records, and give that result its ``execution_time`` (in
``meta``); entries with no step in ``history`` (the final ``submit``) stay raw at the end. ``info.exit_status``
ends the turn (``swe_shared.exit_reason``), ``info.submission`` is a notice, ``info.model_stats`` is session usage
only: steps carry none, the header's ``usage`` holds the recorded totals (``tokens_sent`` as input,
``tokens_received`` as output) so session totals can use them. No times are recorded: every event's time is 0.
Ids are locations (``/history/3``). Everything else (``environment``, ``replay_config``, ``edited_files*``) is raw.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Struct

from ..formats import session_stem
from .base import LogBuilder, SessionLog, SourceError, json_args, json_type, pointer
from .documents import Elements, decode_document, distinct_ids, openai_blocks, position, session_logs
from .minisweagent import read_mini
from .swe_shared import command_call, exit_reason, model_name, submission_notice

__all__ = ["read_traj", "read_mini"]

FORMAT = "swe-agent"
_PLUGIN = "swe-agent"


class _Function(Struct, kw_only=True):
    name: str
    arguments: str | dict[str, Any] | None = None


class _ToolCall(Struct, kw_only=True):
    function: _Function
    id: str | None = None


class _Message(Struct, kw_only=True):
    role: str
    content: str | list[Any] | None = None
    agent: str | None = None
    message_type: str | None = None
    thought: str | None = None
    action: str | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_call_ids: list[str] | None = None
    is_demo: bool | None = None


class _Step(Struct, kw_only=True):
    action: str | None = None
    execution_time: float | None = None


class _Info(Struct, kw_only=True):
    exit_status: str | None = None
    submission: str | None = None
    model_stats: dict[str, Any] | None = None


def _text(content: Any) -> str:
    """The text of a message ``content`` (a string, or the ``text`` of its parts joined)."""
    return "".join(b["text"] for b in openai_blocks(content) if b.get("type") == "text")


def root_error(data: bytes, message: str) -> SourceError:
    """An error about the document as a whole, placed at its first character."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    line, column = position(body, len(body) - len(body.lstrip()))
    return SourceError(message, line=line, column=column)


def read_traj(data: bytes, file: str) -> list[SessionLog]:
    """One SWE-agent trajectory (a whole JSON document) as one session; never raises: an unusable document is the
    returned log's ``error`` (``FILE:LINE:COL`` for invalid JSON, a JSON pointer for a wrong shape)."""
    out = LogBuilder(FORMAT, session_stem(file))
    try:
        doc = decode_document(data)
    except SourceError as exc:
        return session_logs(out, exc)
    if doc is None:
        return session_logs(out)
    if type(doc) is not dict:
        return session_logs(out, root_error(data, f"expected a JSON object, got {json_type(doc)}"))
    if type(doc.get("history")) is not list:
        return session_logs(out, SourceError(f"history: expected an array, got {json_type(doc.get('history'))}",
                                             pointer="/history"))
    _Trajectory(out, doc).run()
    return session_logs(out)


class _Trajectory:
    def __init__(self, out: LogBuilder, doc: dict[str, Any]) -> None:
        self.out = out
        self.els = Elements(out)
        self.doc = doc
        config = doc.get("replay_config")
        if type(config) is str:
            try:
                config = msgspec.json.decode(config)
            except msgspec.DecodeError:
                config = None
        self.model = model_name(config, "agent", "model", "name")
        steps = doc.get("trajectory")
        self.steps: list[Any] = steps if type(steps) is list else []
        self.step_shown = [False] * len(self.steps)
        self.next_step = 0  # the trajectory entry the next main-agent action is matched against
        self.call_step: dict[str, int] = {}  # call id -> its trajectory entry
        self.pending: list[str] = []  # call ids without a result, oldest first
        self.main: str | None = None
        self.task_seen = False
        self.headers = 0
        self.section: str | None = None  # the other agent whose section is open
        self.sections = 0

    def run(self) -> None:
        doc = self.doc
        for key in ("environment", "replay_config"):
            if key in doc:
                self.els.raw(pointer(key), key, doc[key])
        history = doc["history"]
        for index, value in enumerate(history):
            self.history(index, value)
        self.close_section()
        for index, shown in enumerate(self.step_shown):
            if not shown:
                self.els.raw(pointer("trajectory", index), "trajectory", self.steps[index])
        if "trajectory" in doc and type(doc["trajectory"]) is not list:
            self.els.raw("/trajectory", "trajectory", doc["trajectory"])
        if "info" in doc:
            self.info(doc["info"])
        for key, value in doc.items():
            if key not in ("environment", "replay_config", "history", "trajectory", "info"):
                self.els.raw(pointer(key), key, value)

    # -- history -------------------------------------------------------------------------------------------------

    def history(self, index: int, value: Any) -> None:
        ptr = pointer("history", index)
        rtype = value.get("message_type") or value.get("role") if type(value) is dict else None
        rtype = rtype if type(rtype) is str else "message"
        msg = self.els.shape(value, _Message, ptr, rtype)
        if msg is None:
            return
        out = self.out
        if self.main is None and msg.agent:
            self.main = msg.agent
        other = msg.agent if msg.agent and self.main is not None and msg.agent != self.main else None
        if other != self.section:
            self.close_section()
        self.els.open(ptr, rtype, value)
        first = out.next_seq
        if other is not None and self.section is None:
            self.open_section(other)
        answered: list[str] = []
        if msg.is_demo:
            out.user_message(openai_blocks(msg.content), message_id=ptr,
                             source={"kind": "plugin", "plugin": _PLUGIN, "form": "demonstration"})
        elif msg.role == "system":
            self.request_header(_text(msg.content), other)
        elif msg.role == "assistant":
            self.assistant(msg, ptr, other)
        elif msg.role == "tool":
            answered = self.tool(msg, ptr)
        elif msg.role == "user":
            answered = self.user(msg, ptr, other)
        if other is not None:
            for event in out.events[first:]:
                event["data"]["agent"] = other
        out.end()
        for call in answered:
            self.show_step(call)

    def open_section(self, agent: str) -> None:
        self.sections += 1
        self.section = agent
        self.out.emit("tool-workflow/agent-start", {"runId": f"agent:{agent}", "seq": self.sections,
                                                    "label": agent, "turn": self.out.turn})

    def close_section(self) -> None:
        if self.section is None:
            return
        # A section ends where the next message is the main agent's again: control returned to it (no outcome of
        # the sub-agent is recorded, so none is claimed).
        self.out.emit("tool-workflow/agent-end", {"runId": f"agent:{self.section}", "seq": self.sections,
                                                  "outcome": "returned", "turn": self.out.turn})
        self.section = None

    def request_header(self, system: str, agent: str | None) -> None:
        if agent is not None:  # a sub-agent's own system prompt: context of its section, not the session's header
            self.out.user_message(openai_blocks(system), source={"kind": "plugin", "plugin": _PLUGIN,
                                                                 "form": "system"})
            return
        config: dict[str, Any] = {"model": self.model} if self.model else {}
        self.out.emit("request/header", {"header": {"config": config, "system": system},
                                         "reason": "initial" if self.headers == 0 else "change"})
        self.headers += 1

    def assistant(self, msg: _Message, ptr: str, agent: str | None) -> None:
        out = self.out
        out.start_step()
        text = msg.thought if msg.thought is not None else _text(msg.content)
        if text:
            out.block({"type": "text", "text": text})
        calls: list[tuple[str, str, str]] = []
        for k, call in enumerate(msg.tool_calls or ()):
            args = call.function.arguments
            arguments = args if type(args) is str else json_args({} if args is None else args)
            calls.append((call.id or f"{ptr}#{k}", call.function.name, arguments))
        if not calls and msg.action and msg.action.strip():
            name, arguments = command_call(msg.action)
            calls.append((ptr, name, arguments))
        calls = [(i, n, a) for i, (_, n, a) in zip(distinct_ids(out, [c[0] for c in calls]), calls, strict=True)]
        for call_id, name, arguments in calls:
            out.block({"type": "tool-call", "id": call_id, "name": name, "arguments": arguments})
        out.message(model=self.model, message_id=ptr)
        for call_id, name, arguments in calls:
            out.tool_call(call_id, name, arguments)
            self.pending.append(call_id)
        if agent is None and calls:
            self.match_step(msg.action, [c[0] for c in calls])

    def match_step(self, action: str | None, call_ids: list[str]) -> None:
        """Pair this main-agent action with the next ``trajectory[]`` entry recording the same action."""
        j = self.next_step
        if j >= len(self.steps):
            return
        step = self.steps[j]
        recorded = step.get("action") if type(step) is dict else None
        if type(recorded) is str and type(action) is str and recorded.strip() == action.strip():
            self.next_step = j + 1
            for call_id in call_ids:
                self.call_step[call_id] = j

    def meta_of(self, call_id: str) -> dict[str, Any] | None:
        j = self.call_step.get(call_id)
        if j is None:
            return None
        try:
            step = msgspec.convert(self.steps[j], _Step)
        except msgspec.ValidationError:
            return None
        return None if step.execution_time is None else {"execution_time": step.execution_time}

    def show_step(self, call_id: str) -> None:
        j = self.call_step.get(call_id)
        if j is not None and not self.step_shown[j]:
            self.step_shown[j] = True
            self.els.raw(pointer("trajectory", j), "trajectory", self.steps[j])

    def result(self, call_id: str, msg: _Message, ptr: str) -> None:
        self.out.tool_result(call_id, openai_blocks(msg.content), meta=self.meta_of(call_id),
                             message_id=ptr if len(msg.tool_call_ids or ()) < 2 else f"{ptr}#{call_id}")
        if call_id in self.pending:
            self.pending.remove(call_id)

    def tool(self, msg: _Message, ptr: str) -> list[str]:
        ids = list(msg.tool_call_ids or ())
        if not ids and self.pending:
            ids = [self.pending[0]]
        for call_id in ids:
            self.result(call_id, msg, ptr)
        if not ids:
            self.context(msg, "observation")
        return ids

    def user(self, msg: _Message, ptr: str, agent: str | None) -> list[str]:
        if not self.task_seen and agent is None:
            self.task_seen = True
            self.out.start_turn()
            self.out.user_message(openai_blocks(msg.content), message_id=ptr)
            return []
        if self.pending:
            call_id = self.pending[0]
            self.result(call_id, msg, ptr)
            return [call_id]
        self.context(msg, msg.message_type or "message")
        return []

    def context(self, msg: _Message, form: str) -> None:
        self.out.user_message(openai_blocks(msg.content),
                              source={"kind": "plugin", "plugin": _PLUGIN, "form": form})

    # -- info ----------------------------------------------------------------------------------------------------

    def info(self, value: Any) -> None:
        els, out = self.els, self.out
        info = els.shape(value, _Info, "/info", "info") if type(value) is dict else None
        if info is None:
            if type(value) is not dict:
                els.raw("/info", "info", value)
            return
        stats = info.model_stats
        if stats is not None:
            sent, received = stats.get("tokens_sent"), stats.get("tokens_received")
            if type(sent) is int and type(received) is int:
                out.header["usage"] = {"inputTokens": sent, "outputTokens": received}
            els.raw("/info/model_stats", "info/model_stats", stats)
        status = info.exit_status
        if info.submission is not None:
            els.raw("/info/submission", "info/submission", info.submission,
                    notice=submission_notice(info.submission, status) if info.submission.strip() else None)
        rest = {k: v for k, v in value.items() if k not in ("model_stats", "submission", "exit_status")}
        if rest:
            els.raw("/info", "info", rest)
        if "exit_status" in value:
            els.open("/info/exit_status", "info/exit_status", value["exit_status"])
            if status:
                out.end_turn(exit_reason(status))
            out.end()
