"""One Inspect AI sample (one id and epoch) as one session of ours (FORMATS.md §6.2-6.3).

Rules: ``messages`` is the chat source. system -> ``request/header``; user -> ``turn/start`` (unless it joins a
turn with no step yet) + ``user/message`` (``source:"input"`` and ``"operator"`` are the user's, anything else
plugin ``form:'solver'``; a user message carrying a tool call's payload joins the step); assistant -> a step
(block-end chunks, usage and finish from its model call, ``assistant/message``, a ``tool/call`` per tool call, and
``step/end`` after the last of its tool results); tool -> ``tool/result`` by ``tool_call_id``. ``events`` is the
trajectory: model calls are matched in order to the assistant messages (by message id when both have one, else by
equal content, else the next call whose output has no id) for usage, finish and times; tool events to tool messages
(by message id, else call id); ``sample_init`` gives the input messages their time. Message and event groups are
written merged: before an event, every message up to the last one matched to it. Events keep their own groups (a
matched one lists the events it fed as ``usedBy``); scores, errors and limits are raw records shown as notices; the
sample's other parts (input, output, metadata, store, attachments, the rest) are raw records, copies marked as
such. The sample's end is the last turn's end: ``error`` gives ``{kind:'error'}``, otherwise ``completed`` (Inspect
writes a sample only once it has finished). No message is shown twice, nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, NamedTuple

import msgspec

from ..jsontext import encode_with
from .base import LogBuilder, SessionLog, SourceError, iso_ms, json_type, member_origin, pointer
from .inspect_attachments import Attachments
from .inspect_content import (
    content_blocks,
    finish_reason,
    provider_model,
    score_text,
    token_usage,
    tool_call_block,
    value_text,
)
from .inspect_records import (
    ErrorEventRec,
    EvalErrorRec,
    LimitRec,
    MessageRec,
    ModelEventRec,
    OutputMessageRec,
    Refusal,
    SampleLimitEventRec,
    ScoreEditEventRec,
    ScoreEventRec,
    ScoreRec,
    ToolErrorRec,
    ToolEventRec,
    convert_at,
)

__all__ = ["Part", "LogInfo", "SampleReader", "MATCH_WINDOW", "error_session"]

MATCH_WINDOW: Final = 256
"""How many model calls past the last matched one a message without an id match is looked for in."""

_ROLES: Final = frozenset({"system", "user", "assistant", "tool"})
_TYPED: Final[dict[str, type[Any]]] = {
    "model": ModelEventRec, "tool": ToolEventRec, "score": ScoreEventRec, "score_edit": ScoreEditEventRec,
    "error": ErrorEventRec, "sample_limit": SampleLimitEventRec,
}
_OWN_PARTS: Final = frozenset({"messages", "events", "transcript", "input", "target", "scores", "score", "output",
                               "limit", "metadata", "store", "attachments", "events_data", "error", "error_retries"})
_encode: Final = msgspec.json.encode


class Part(NamedTuple):
    """A record of the log (not of a sample) kept in a session as a raw event."""

    origin: dict[str, Any]
    record_type: str
    record: Any
    notice: str | None = None
    duplicate_of: Any = None


class LogInfo:
    """What every session of one log shares: the format, the file's stem, the eval's fields."""

    def __init__(self, fmt: str, stem: str) -> None:
        self.fmt = fmt
        self.stem = stem
        self.task: str | None = None
        self.model: str | None = None
        self.status: str | None = None
        self.run_id: str | None = None
        self.eval_id: str | None = None
        self.created = 0
        self.scorer_names: list[str] = []  # results.scores[].name (a legacy single ``score`` takes the first)

    def header(self, sample_id: Any, epoch: Any) -> dict[str, Any]:
        return {"task": self.task, "model": self.model, "status": self.status, "sampleId": sample_id,
                "epoch": epoch, "runId": self.run_id, "evalId": self.eval_id,
                "createdAt": self.created or None}

    def label(self, sample_id: Any, epoch: Any) -> str:
        parts = [self.task] if self.task else []
        return " · ".join([*parts, str(sample_id), f"epoch {epoch}"])


def _text(value: Any) -> str:
    return encode_with(_encode, value).decode("utf-8")


class SampleReader:
    """Maps one decoded sample (``sample``, a dict whose ``id`` and ``epoch`` were checked) into a session.

    ``member`` is the ``.eval`` member holding it (None in a ``.json`` log), ``base`` its JSON pointer there;
    ``head`` and ``tail`` are log records kept at the session's start and before its end."""

    def __init__(self, info: LogInfo, key: str, sample: dict[str, Any], member: str | None, base: str,
                 head: Iterable[Part] = (), tail: Iterable[Part] = ()) -> None:
        self.info = info
        self.key = key
        self.sample = sample
        self.member = member
        self.base = base
        self.head = head
        self.tail = tail
        self.warnings: list[str] = []
        self.id = sample["id"]
        self.epoch = sample["epoch"]
        self.out = LogBuilder(info.fmt, f"{info.stem}:{key}", **info.header(self.id, self.epoch))
        started = iso_ms(sample.get("started_at"))
        if started:
            self.out.header["createdAt"] = started
        provider, model = provider_model(info.model)
        self.provider, self.model_name = provider, model
        self.system_count = 0
        self.pending: set[str] = set()  # tool call ids of the open step still waiting for a result
        self.shown_scores: list[tuple[ScoreEventRec, str]] = []
        self.shown_limits: dict[str, str] = {}
        self.target_shown = False
        self.made_seqs: dict[int, list[int]] = {}  # message index -> the seqs made from it

    # -- helpers ------------------------------------------------------------------------------------------------

    def located(self, ptr: str) -> str:
        return f"{self.member}:{ptr or '/'}" if self.member is not None else (ptr or "/")

    def warn(self, ptr: str, message: str) -> None:
        self.warnings.append(f"{self.located(ptr)}: {message}")

    def local(self, ptr: str) -> str:
        """An id for a record that has none: its pointer inside the sample, after the session key (the same in a
        ``.eval`` member and in the ``.json`` log it converts to)."""
        return self.key + ptr[len(self.base):]

    def origin(self, ptr: str) -> dict[str, Any]:
        return member_origin(self.member, ptr)

    def raw(self, ptr: str, record_type: str, record: Any, *, notice: str | None = None,
            duplicate_of: Any = None, time: int = 0, used_by: list[int] | None = None) -> None:
        self.out.begin(self.origin(ptr), record_type, None, record)
        self.out.end(notice=notice, duplicate_of=duplicate_of, time=time, used_by=used_by)

    def part(self, p: Part) -> None:
        self.out.begin(p.origin, p.record_type, None, p.record)
        self.out.end(notice=p.notice, duplicate_of=p.duplicate_of)

    # -- the sample ---------------------------------------------------------------------------------------------

    def read(self) -> tuple[SessionLog, LogBuilder]:
        s = self.sample
        base = self.base
        for p in self.head:
            self.part(p)
        self.att = Attachments(self._attachments(), self.located)
        legacy = s.get("transcript")
        events_key, events_value = "events", s.get("events")
        if "events" not in s and type(legacy) is dict:  # before 0.3.4x: transcript{events, content}
            events_key, events_value = "transcript/events", legacy.get("events")
        messages = self._list(s.get("messages"), base + "/messages")
        events = self._list(events_value, base + "/" + events_key)
        self.msg_ptr = base + "/messages"
        self.ev_ptr = base + "/" + events_key
        self.msgs = [self._message(m, f"{self.msg_ptr}/{i}") for i, m in enumerate(messages)]
        self.raw_msgs = messages
        self.events = events
        self.typed = [self._event(e, f"{self.ev_ptr}/{j}") for j, e in enumerate(events)]
        self._match()
        if "input" in s:
            first_input = next((i for i, m in enumerate(self.msgs) if m is not None and m.source == "input"), None)
            dup = None if first_input is None else f"{self.msg_ptr}/{first_input}"
            self.raw(base + "/input", "sample/input", self.att.resolve(s["input"], base + "/input"),
                     duplicate_of=dup)
        self._merge()
        self._tail()
        self.warnings.extend(self.att.warnings())
        result = self.out.result()
        result.warnings.extend(self.warnings)
        return SessionLog(self.key, self.info.label(self.id, self.epoch), result), self.out

    def _attachments(self) -> dict[str, str]:
        s = self.sample
        ptr = self.base + "/attachments"
        table = s.get("attachments")
        if table is None and type(s.get("transcript")) is dict:
            table = s["transcript"].get("content")
            ptr = self.base + "/transcript/content"
        if table is None:
            return {}
        if type(table) is not dict:
            self.warn(ptr, f"attachments are {json_type(table)}, not an object; references stay unresolved")
            return {}
        bad = [k for k, v in table.items() if type(v) is not str]
        if bad:
            self.warn(ptr + pointer(bad[0]), f"{len(bad)} attachment(s) not a string; not used")
            return {k: v for k, v in table.items() if type(v) is str}
        return table

    def _list(self, value: Any, ptr: str) -> list[Any]:
        if value is None:
            return []
        if type(value) is not list:
            self.warn(ptr, f"expected an array, got {json_type(value)}; kept as a raw record")
            self.raw(ptr, "sample/" + ptr.rsplit("/", 1)[-1], value)
            return []
        return value

    def _message(self, value: Any, ptr: str) -> MessageRec | None:
        if type(value) is not dict:
            self.warn(ptr, f"message is {json_type(value)}, not an object; kept as a raw record")
            return None
        rec = convert_at(value, MessageRec, ptr)
        if isinstance(rec, Refusal):
            self.warn(rec.pointer, f"message not understood ({rec.reason}); kept as a raw record")
            return None
        if rec.role not in _ROLES:
            self.warn(ptr + "/role", f"unknown message role {rec.role!r}; kept as a raw record")
            return None
        return rec

    def _event(self, value: Any, ptr: str) -> Any:
        if type(value) is not dict or type(value.get("event")) is not str:
            self.warn(ptr, "event without a string `event` tag; kept as a raw record")
            return None
        kind = _TYPED.get(value["event"])
        if kind is None:
            return None
        rec = convert_at(value, kind, ptr)
        if isinstance(rec, Refusal):
            self.warn(rec.pointer, f"{value['event']} event not understood ({rec.reason}); kept as a raw record")
            return None
        return rec

    # -- matching messages to events ----------------------------------------------------------------------------

    def _match(self) -> None:
        """Which event gives each message its time (and usage): ``self.source[i] = j``."""
        self.source: dict[int, int] = {}
        init = next((j for j, e in enumerate(self.events) if type(e) is dict and e.get("event") == "sample_init"),
                    None)
        models = [j for j, rec in enumerate(self.typed) if type(rec) is ModelEventRec]
        outputs = [_output_message(self.typed[j]) for j in models]
        by_id: dict[str, list[int]] = {}
        for k, om in enumerate(outputs):
            if om is not None and om.id is not None:
                by_id.setdefault(om.id, []).append(k)
        tools_by_msg: dict[str, int] = {}
        tools_by_call: dict[str, list[int]] = {}
        for j, rec in enumerate(self.typed):
            if type(rec) is ToolEventRec:
                if rec.message_id is not None:
                    tools_by_msg.setdefault(rec.message_id, j)
                if rec.id is not None:
                    tools_by_call.setdefault(rec.id, []).append(j)
        used_tools: set[int] = set()
        cursor = 0
        for i, m in enumerate(self.msgs):
            if m is None:
                continue
            if m.source == "input":
                if init is not None:
                    self.source[i] = init
            elif m.role == "assistant":
                pick = self._pick_model(m, outputs, by_id, cursor)
                if pick is not None:
                    self.source[i] = models[pick]
                    cursor = pick + 1
            elif m.role == "tool":
                t = tools_by_msg.get(m.id) if m.id is not None else None
                if t is None or t in used_tools:
                    t = next((c for c in tools_by_call.get(_call_id(m) or "", []) if c not in used_tools), None)
                if t is not None:
                    used_tools.add(t)
                    self.source[i] = t
        self.anchor: dict[int, int] = {}  # event index -> the last message matched to it
        self.fed: dict[int, list[int]] = {}  # event index -> the messages matched to it
        for i, j in self.source.items():
            self.anchor[j] = max(self.anchor.get(j, -1), i)
            self.fed.setdefault(j, []).append(i)

    @staticmethod
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
            return next((k for k in range(cursor, end) if outputs[k] is not None and outputs[k].id is None),  # type: ignore[union-attr]
                        None)
        return None

    # -- writing ------------------------------------------------------------------------------------------------

    def _merge(self) -> None:
        done = 0
        for j in range(len(self.events)):
            last = self.anchor.get(j)
            if last is not None:
                while done <= last:
                    self._write_message(done)
                    done += 1
            self._write_event(j)
        while done < len(self.msgs):
            self._write_message(done)
            done += 1

    def _times(self, i: int) -> tuple[int, int]:
        j = self.source.get(i)
        if j is None:
            return 0, 0
        rec = self.typed[j]
        start = iso_ms(self.events[j].get("timestamp"))
        if type(rec) in (ModelEventRec, ToolEventRec):
            end = iso_ms(rec.completed) or start
            return (start, end) if type(rec) is ModelEventRec else (end, end)
        return start, start

    def _write_message(self, i: int) -> None:
        out = self.out
        ptr = f"{self.msg_ptr}/{i}"
        raw = self.raw_msgs[i]
        m = self.msgs[i]
        if m is None:
            self.raw(ptr, "message", raw)
            return
        start, end = self._times(i)
        out.begin(self.origin(ptr), f"message/{m.role}", _text(raw))
        first = out.next_seq
        if m.role == "system":
            self._system(m, ptr, end)
        elif m.role == "user":
            self._user(m, ptr, end)
        elif m.role == "assistant":
            self._assistant(m, i, ptr, start, end)
        else:
            self._tool(m, ptr, end)
        self.made_seqs[i] = list(range(first, out.next_seq))
        out.end(time=end)

    def _system(self, m: MessageRec, ptr: str, time: int) -> None:
        blocks = content_blocks(m.content, ptr + "/content", self.att, self.warn, keep_empty=True)
        system = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text")
        config = {k: v for k, v in (("provider", self.provider), ("model", self.model_name)) if v is not None}
        self.out.emit("request/header", {"header": {"config": config, "system": system},
                                         "reason": "initial" if self.system_count == 0 else "change"}, time=time)
        self.system_count += 1

    def _user(self, m: MessageRec, ptr: str, time: int) -> None:
        out = self.out
        blocks = content_blocks(m.content, ptr + "/content", self.att, self.warn, keep_empty=True)
        if type(m.tool_call_id) is list:  # a tool result's payload (images) sent as a user message: same step
            source = {"kind": "plugin", "plugin": "inspect", "form": "tool-payload"}
        else:
            if m.source in ("input", "operator"):
                source = {"kind": "user"}
            else:
                source = {"kind": "plugin", "plugin": "inspect", "form": "solver"}
            if not (out.turn_open and out.step == 0):
                out.start_turn(time)
        out.user_message(blocks, time=time, message_id=m.id or self.local(ptr), source=source)

    def _assistant(self, m: MessageRec, i: int, ptr: str, start: int, end: int) -> None:
        out = self.out
        j = self.source.get(i)
        call = self.typed[j] if j is not None else None
        out.start_step(start)
        for block in content_blocks(m.content, ptr + "/content", self.att, self.warn, keep_empty=False):
            out.block(block, end)
        calls = m.tool_calls or []
        blocks = [tool_call_block(c, f"{ptr}/tool_calls/{k}", self.att) for k, c in enumerate(calls)]
        for block in blocks:
            out.block(block, end)
        usage = None
        model_name = m.model
        provider = self.provider
        if type(call) is ModelEventRec:
            ev_ptr = f"{self.ev_ptr}/{j}/output"
            output = call.output
            if output is not None and output.usage is not None:
                usage = token_usage(output.usage, ev_ptr + "/usage", self.warn)
                if usage is not None:
                    out.usage(usage, end)
            choice = output.choices[0] if output is not None and output.choices else None
            reason = finish_reason(choice.stop_reason if choice else None, call.error)
            if reason is not None:
                out.finish(reason, end)
            call_provider, call_model = provider_model(call.model)
            provider = call_provider or provider
            model_name = model_name or (output.model if output is not None else None) or call_model
        out.message(time=end, provider=provider, model=model_name or self.model_name,
                    message_id=m.id or self.local(ptr), usage=usage)
        for block in blocks:
            out.tool_call(block["id"], block["name"], block["arguments"], end)
        self.pending = {c.id for c in calls}
        if not calls:
            out.end_step(end)

    def _tool(self, m: MessageRec, ptr: str, time: int) -> None:
        out = self.out
        call_id = _call_id(m)
        if call_id is None:
            self.warn(ptr + "/tool_call_id", "tool message without a call id; its location names the call")
            call_id = self.local(ptr)
        blocks = content_blocks(m.content, ptr + "/content", self.att, self.warn, keep_empty=False)
        error = m.error or (ToolErrorRec(message=m.tool_error) if m.tool_error else None)
        meta = None
        if error is not None:
            meta = {"error": {"type": error.type, "message": error.message}}
            if not any(b.get("type") != "text" or b.get("text") for b in blocks):
                blocks = [{"type": "text", "text": error.message}]
        out.tool_result(call_id, blocks, is_error=error is not None, time=time, meta=meta,
                        message_id=m.id or self.local(ptr))
        if out.step_open and call_id in self.pending:
            self.pending.discard(call_id)
            if not self.pending:
                out.end_step(time)

    def _write_event(self, j: int) -> None:
        e = self.events[j]
        ptr = f"{self.ev_ptr}/{j}"
        if type(e) is not dict or type(e.get("event")) is not str:
            self.raw(ptr, "event", e)
            return
        etype = e["event"]
        rec = self.typed[j]
        time = iso_ms(e.get("timestamp"))
        notice = None
        if type(rec) is ScoreEventRec:
            if not self.target_shown:
                self._target()
            self.shown_scores.append((rec, ptr))
            label = f"Score {rec.scorer}" if rec.scorer else "Score"
            notice = score_text(label + (" (intermediate)" if rec.intermediate else ""), rec.score.value,
                                rec.score.answer, self.att.resolve(rec.score.explanation, ptr + "/score/explanation"))
        elif type(rec) is ScoreEditEventRec:
            notice = f"Score {rec.score_name} edited"
            if type(rec.edit) is dict and "value" in rec.edit and rec.edit["value"] != "UNCHANGED":
                notice += f": {value_text(rec.edit['value'])}"
        elif type(rec) is ErrorEventRec:
            notice = f"Error: {rec.error.message}"
        elif type(rec) is SampleLimitEventRec:
            notice = f"{rec.type} limit reached" + (f": {rec.message}" if rec.message else "")
            self.shown_limits.setdefault(rec.type, ptr)
        elif type(rec) is ModelEventRec and rec.error and j not in self.anchor:
            notice = f"Model error: {rec.error}"
        used_by = [seq for i in self.fed.get(j, ()) for seq in self.made_seqs.get(i, ())]
        self.raw(ptr, f"event/{etype}", self._resolved(e, ptr, etype), notice=notice, time=time, used_by=used_by)

    def _resolved(self, e: dict[str, Any], ptr: str, etype: str) -> Any:
        """The event with its references resolved, but a model call's input and provider request keep theirs
        (they repeat the conversation at every call: their text is in the attachments record once)."""
        if etype != "model":
            return self.att.resolve(e, ptr)
        out = dict(e)
        for k, v in e.items():
            if k in ("input", "call"):
                self.att.scan(v, ptr + pointer(k))
            else:
                out[k] = self.att.resolve(v, ptr + pointer(k))
        return out

    # -- the sample's own parts ---------------------------------------------------------------------------------

    def _target(self) -> None:
        self.target_shown = True
        s = self.sample
        if "target" in s:
            ptr = self.base + "/target"
            target = self.att.resolve(s["target"], ptr)
            self.raw(ptr, "sample/target", target, notice=f"Target: {value_text(target)}")

    def _tail(self) -> None:
        s = self.sample
        base = self.base
        if not self.target_shown:
            self._target()
        self._scores()
        if "output" in s:
            self.raw(base + "/output", "sample/output", self.att.resolve(s["output"], base + "/output"))
        if s.get("limit") is not None:
            self._limit(s["limit"], base + "/limit")
        for name in ("metadata", "store", "error_retries"):
            if name in s:
                self.raw(base + "/" + name, f"sample/{name}", self.att.resolve(s[name], f"{base}/{name}"))
        if "attachments" in s:
            self.raw(base + "/attachments", "sample/attachments", s["attachments"])
        if "events_data" in s:
            self.att.scan(s["events_data"], base + "/events_data")
            self.raw(base + "/events_data", "sample/events_data", s["events_data"])
        if type(s.get("transcript")) is dict:
            rest = {k: v for k, v in s["transcript"].items() if k != "events"}
            self.raw(base + "/transcript", "sample/transcript", rest)
        for p in self.tail:
            self.part(p)
        end = iso_ms(s.get("completed_at"))
        if s.get("error") is not None:
            self._error(s["error"], base + "/error", end)
        rest = {k: v for k, v in s.items() if k not in _OWN_PARTS}
        self.out.begin(self.origin(base), "sample", None, rest)
        if s.get("error") is None and self.out.turn_open:
            self.out.end_turn({"kind": "completed"}, end)
        self.out.end(time=end)

    def _scores(self) -> None:
        s = self.sample
        base = self.base
        scores = s.get("scores")
        if scores is None and s.get("score") is not None:  # before ``scores``: one score of the first scorer
            scores = {self.info.scorer_names[0] if self.info.scorer_names else "score": s["score"]}
            base_ptr = base + "/score"
            single = True
        else:
            base_ptr = base + "/scores"
            single = False
        if scores is None:
            return
        if type(scores) is not dict:
            self.warn(base_ptr, f"scores are {json_type(scores)}, not an object; kept as a raw record")
            self.raw(base_ptr, "sample/scores", scores)
            return
        for name, value in scores.items():
            ptr = base_ptr if single else base_ptr + pointer(name)
            score = convert_at(value, ScoreRec, ptr)
            if isinstance(score, Refusal):
                self.warn(score.pointer, f"score not understood ({score.reason}); kept as a raw record")
                self.raw(ptr, "sample/score", value)
                continue
            explanation = self.att.resolve(score.explanation, ptr + "/explanation")
            dup = next((p for ev, p in self.shown_scores if not ev.intermediate and ev.scorer in (None, name)
                        and ev.score.value == score.value and ev.score.answer == score.answer
                        and self.att.resolve(ev.score.explanation, p) == explanation), None)
            notice = None if dup else score_text(f"Score {name}", score.value, score.answer, explanation)
            self.raw(ptr, "sample/score", self.att.resolve(value, ptr), notice=notice, duplicate_of=dup)

    def _limit(self, value: Any, ptr: str) -> None:
        limit = convert_at(value, LimitRec, ptr)
        if isinstance(limit, Refusal):
            self.warn(limit.pointer, f"limit not understood ({limit.reason}); kept as a raw record")
            self.raw(ptr, "sample/limit", value)
            return
        dup = self.shown_limits.get(limit.type)
        amount = f" ({limit.limit:g})" if limit.limit is not None else ""
        self.raw(ptr, "sample/limit", value, notice=None if dup else f"{limit.type} limit{amount} reached",
                 duplicate_of=dup)

    def _error(self, value: Any, ptr: str, time: int) -> None:
        error = convert_at(value, EvalErrorRec, ptr)
        if isinstance(error, Refusal):
            self.warn(error.pointer, f"sample error not understood ({error.reason}); kept as a raw record")
            self.raw(ptr, "sample/error", value)
            return
        out = self.out
        out.begin(self.origin(ptr), "sample/error", _text(value))
        if not out.turn_open:
            out.start_turn(time)
        out.end_turn({"kind": "error", "error": {"message": error.message, "code": "sample-error"}}, time)
        out.end(time=time)


def _output_message(rec: ModelEventRec) -> OutputMessageRec | None:
    output = rec.output
    if output is None or not output.choices:
        return None
    return output.choices[0].message


def _call_id(m: MessageRec) -> str | None:
    return m.tool_call_id if type(m.tool_call_id) is str else None


def _call_ids(calls: Any) -> list[Any]:
    if type(calls) is not list:
        return []
    return [c.get("id") if type(c) is dict else None for c in calls]


def error_session(info: LogInfo, key: str, sample_id: Any, epoch: Any, error: SourceError,
                  head: Iterable[Part] = ()) -> SessionLog:
    """The session of a sample that could not be read: the log's records and the error."""
    out = LogBuilder(info.fmt, f"{info.stem}:{key}", **info.header(sample_id, epoch))
    for p in head:
        out.begin(p.origin, p.record_type, None, p.record)
        out.end(notice=p.notice, duplicate_of=p.duplicate_of)
    result = out.result()
    result.error = error
    return SessionLog(key, info.label(sample_id, epoch), result)
