"""mini-swe-agent trajectories (``.traj.json``: the oldest bare list, 1.x and 2.x) read into our event model
(FORMATS.md §9).

Rules: the file is one turn, opened by the first ``user`` message (the task statement); ``system`` is the
``request/header``. Each ``assistant`` message is one step: with ``tool_calls`` those calls as recorded (arguments
kept as the recorded string); without, one ``bash`` call per command, from ``extra.actions`` else the fenced
``mswea_bash_command`` block else the ```` ```bash ```` block of older configurations, with the fenced block cut
from the step's text. A ``tool`` message answers the call it names (``tool_call_id``); a later ``user`` message
answers the oldest unanswered call (shown as recorded: a non-zero return code is not an error), else it is plugin
context (a format error, a timeout notice). The run ends at the ``exit`` message (2.x), else at ``info``'s
``exit_status``/``submission`` (1.x, where the last ``user`` message repeating the submission is the exit text,
not an observation): ``swe_shared.exit_reason`` ends the turn and the submission is a notice. Usage per step from
``extra.response.usage`` (LiteLLM shape, ``documents.litellm_usage``), once per response ``id``; the finish reason
from its ``choices[0].finish_reason``. Times from ``extra.timestamp`` (1.x: the message's ``timestamp``), Unix
seconds; 0 where none is recorded. Ids are locations (``/messages/3``). ``info.config`` and costs stay raw.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct

from ..formats import session_stem
from .base import RAW, LogBuilder, SessionLog, SourceError, json_args, json_type, member_origin, pointer, unix_ms
from .documents import (
    Elements,
    decode_document,
    distinct_ids,
    litellm_finish,
    litellm_usage,
    openai_blocks,
    position,
    session_logs,
)
from .swe_shared import exit_reason, model_name, submission_notice

__all__ = ["read_mini"]

FORMAT = "mini-swe-agent"
_PLUGIN = "mini-swe-agent"
_FENCES = (re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.S), re.compile(r"```bash\s*\n(.*?)\n```", re.S))


class _Function(Struct, kw_only=True):
    name: str
    arguments: str | dict[str, Any] | None = None


class _ToolCall(Struct, kw_only=True):
    function: _Function
    id: str | None = None


class _Message(Struct, kw_only=True):
    role: str
    content: str | list[Any] | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_call_id: str | None = None
    timestamp: float | None = None
    extra: dict[str, Any] | None = None


class _Info(Struct, kw_only=True):
    exit_status: str | None = None
    submission: str | None = None


def _text(content: Any) -> str:
    return "".join(b["text"] for b in openai_blocks(content) if b.get("type") == "text")


def read_mini(data: bytes, file: str) -> list[SessionLog]:
    """One mini-swe-agent trajectory (a whole JSON document) as one session; never raises: an unusable document
    is the returned log's ``error``."""
    out = LogBuilder(FORMAT, session_stem(file))
    try:
        doc = decode_document(data)
    except SourceError as exc:
        return session_logs(out, exc)
    if doc is None:
        return session_logs(out)
    messages: Any = doc
    info: Any = None
    base = ""
    if type(doc) is dict:
        messages, info, base = doc.get("messages"), doc.get("info"), "/messages"
        if type(messages) is not list:
            return session_logs(out, SourceError(f"messages: expected an array, got {json_type(messages)}",
                                                 pointer="/messages"))
    elif type(doc) is not list:
        body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        line, column = position(body, len(body) - len(body.lstrip()))
        return session_logs(out, SourceError(f"expected a JSON object or array, got {json_type(doc)}",
                                             line=line, column=column))
    _Run(out, doc if type(doc) is dict else {}, info, base).run(messages)
    return session_logs(out)


class _Run:
    def __init__(self, out: LogBuilder, doc: dict[str, Any], info: Any, base: str) -> None:
        self.out = out
        self.els = Elements(out)
        self.doc = doc
        self.info_value = info
        self.base = base
        self.info: _Info | None = None
        if type(info) is dict:
            self.info = self.els.shape(info, _Info, "/info", "info")
        self.model = model_name(info, "config", "model", "model_name")
        self.pending: list[str] = []
        self.responses: set[str] = set()  # response ids whose usage was counted
        self.task_seen = False
        self.exited = False
        self.headers = 0

    def ptr(self, index: int) -> str:
        return f"{self.base}/{index}"

    def run(self, messages: list[Any]) -> None:
        last = len(messages) - 1
        for index, value in enumerate(messages):
            ptr = self.ptr(index)
            rtype = value.get("role") if type(value) is dict else None
            rtype = rtype if type(rtype) is str else "message"
            msg = self.els.shape(value, _Message, ptr, rtype)
            if msg is None:
                continue
            self.els.open(ptr, rtype, value)
            time = self.time_of(msg)
            if msg.role == "system":
                config: dict[str, Any] = {"model": self.model} if self.model else {}
                self.out.emit("request/header", {"header": {"config": config, "system": _text(msg.content)},
                                                 "reason": "change" if self.headers else "initial"}, time=time)
                self.headers += 1
            elif msg.role == "assistant":
                self.assistant(msg, ptr, time)
            elif msg.role == "tool" or (msg.role == "user" and self.task_seen):
                if msg.role == "user" and index == last and self.is_exit_text(msg):
                    self.exit(self.info.exit_status if self.info else None, _text(msg.content), time,
                              f"{ptr}/content")
                else:
                    self.observation(msg, ptr, time)
            elif msg.role == "user":
                self.task_seen = True
                self.out.start_turn(time)
                self.out.user_message(openai_blocks(msg.content), message_id=ptr, time=time)
            elif msg.role == "exit":
                extra = msg.extra or {}
                status = extra.get("exit_status")
                submission = extra.get("submission")
                self.exit(status if type(status) is str else None,
                          submission if type(submission) is str else _text(msg.content), time,
                          f"{ptr}/extra/submission" if type(submission) is str else f"{ptr}/content")
            self.out.end(time=time)
        self.tail()

    def is_exit_text(self, msg: _Message) -> bool:
        """1.x writes the exit as a last ``user`` message repeating ``info.submission`` (an ``exit_status`` set)."""
        info = self.info
        return (info is not None and bool(info.exit_status) and info.submission is not None
                and type(msg.content) is str and msg.content == info.submission and not self.exited)

    @staticmethod
    def time_of(msg: _Message) -> int:
        extra = msg.extra or {}
        return unix_ms(extra.get("timestamp")) or unix_ms(msg.timestamp)

    def assistant(self, msg: _Message, ptr: str, time: int) -> None:
        out = self.out
        extra = msg.extra or {}
        recorded = extra.get("response")
        response: dict[str, Any] = recorded if type(recorded) is dict else {}
        out.start_step(time)
        text = _text(msg.content)
        calls: list[tuple[str, str, str]] = []
        for k, call in enumerate(msg.tool_calls or ()):
            args = call.function.arguments
            calls.append((call.id or f"{ptr}#{k}", call.function.name,
                          args if type(args) is str else json_args({} if args is None else args)))
        if not calls:
            actions = extra.get("actions")
            commands = [a["command"] for a in actions if type(a) is dict and type(a.get("command")) is str] \
                if type(actions) is list else []
            for fence in _FENCES:
                found = fence.findall(text)
                if found:
                    text = fence.sub("", text).strip()
                    if not commands:
                        commands = [c.strip() for c in found]
                    break
            ids = [a.get("tool_call_id") if type(a) is dict else None for a in actions] \
                if type(actions) is list else []
            for k, command in enumerate(commands):
                own = ids[k] if k < len(ids) else None
                call_id = own if type(own) is str else (ptr if k == 0 else f"{ptr}#{k}")
                calls.append((call_id, "bash", json_args({"command": command})))
        calls = [(i, n, a) for i, (_, n, a) in zip(distinct_ids(out, [c[0] for c in calls]), calls, strict=True)]
        if text:
            out.block({"type": "text", "text": text}, time)
        for call_id, name, arguments in calls:
            out.block({"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}, time)
        usage = None
        rid = response.get("id")
        if type(rid) is not str or rid not in self.responses:
            usage = litellm_usage(response.get("usage"))
            if type(rid) is str:
                self.responses.add(rid)
        if usage is not None:
            out.usage(usage, time)
        choices = response.get("choices")
        if type(choices) is list and choices and type(choices[0]) is dict:
            finish = litellm_finish(choices[0].get("finish_reason"))
            if finish is not None:
                out.finish(finish, time)
        model = response.get("model") if type(response.get("model")) is str else self.model
        out.message(time=time, model=model, message_id=ptr, usage=usage)
        for call_id, name, arguments in calls:
            out.tool_call(call_id, name, arguments, time)
            self.pending.append(call_id)

    def observation(self, msg: _Message, ptr: str, time: int) -> None:
        out = self.out
        call_id = msg.tool_call_id if msg.role == "tool" and msg.tool_call_id else \
            (self.pending[0] if self.pending else None)
        extra = msg.extra or {}
        if call_id is None:
            kind = extra.get("interrupt_type")
            out.user_message(openai_blocks(msg.content), message_id=ptr, time=time,
                             source={"kind": "plugin", "plugin": _PLUGIN,
                                     "form": kind if type(kind) is str else "message"})
            return
        meta = {k: extra[k] for k in ("returncode", "exception_info") if extra.get(k) is not None}
        out.tool_result(call_id, openai_blocks(msg.content), time=time, meta=meta or None, message_id=ptr)
        if call_id in self.pending:
            self.pending.remove(call_id)

    def exit(self, status: str | None, submission: str, time: int, where: str) -> None:
        """The end of the run: the submission notice (a raw record of its own, see ``swe_shared``), then the turn
        ends by the status."""
        if self.exited:
            return
        self.exited = True
        out = self.out
        if submission.strip():
            out.emit(RAW, {"format": FORMAT, "recordType": "submission", "origin": member_origin(None, where),
                                     "notice": submission_notice(submission, status), "record": submission},
                     time=time, ignorable=True)
        if status:
            out.end_turn(exit_reason(status), time)

    def tail(self) -> None:
        """``info`` (1.x and 2.x): the exit when no ``exit`` message recorded it, else raw; other keys raw."""
        els = self.els
        value = self.info_value
        if type(value) is dict and self.info is not None:
            els.open("/info", "info", value)
            if not self.exited and (self.info.exit_status or self.info.submission):
                self.exit(self.info.exit_status, self.info.submission or "", 0, "/info/submission")
            self.out.end()
        elif "info" in self.doc and type(value) is not dict:
            els.raw("/info", "info", value)
        for key, item in self.doc.items():
            if key not in ("info", "messages"):
                els.raw(pointer(key), key, item)
