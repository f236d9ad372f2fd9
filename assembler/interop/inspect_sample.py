"""One Inspect AI sample (one id and epoch) as one session of ours (FORMATS.md §6.2-6.3): its conversation.

Rules: ``messages`` is the chat source. system -> ``request/header``; user -> ``turn/start`` (unless it joins a
turn with no step yet) + ``user/message`` (``source:"input"`` and ``"operator"`` are the user's, anything else
plugin ``form:'solver'``; a user message carrying a tool call's payload joins the step); assistant -> a step
(block-end chunks, usage and finish from its model call, ``assistant/message``, a ``tool/call`` per tool call, and
``step/end`` after the last of its tool results); tool -> ``tool/result`` by ``tool_call_id`` (``error``: an error
result showing ``error.message`` when the content is empty). Times come from the matched events
(``inspect_match``): a step starts at its model call's ``timestamp``, its blocks, usage, finish and message are at
its ``completed`` (else the same time), a tool result at its tool event's ``completed`` (else ``timestamp``), input
messages at ``sample_init``; a message matched to no event has time 0 (not recorded). ``events`` is the
trajectory: each event is one raw record (a matched one lists the events it fed as ``usedBy``; scores, score
edits, errors, limits and failed unmatched model calls carry a notice), written merged with the messages: before
an event, every message up to the last one matched to it. The sample's other parts: ``inspect_parts``. No message
is shown twice (the sample ``input`` is a copy of the input messages; model calls' ``input`` is never read as
messages), nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .base import LogBuilder, SessionLog, iso_ms, json_type, pointer
from .inspect_content import (
    content_blocks,
    finish_reason,
    provider_model,
    score_text,
    token_usage,
    tool_call_block,
    value_text,
)
from .inspect_log import LogInfo, Part, keep
from .inspect_match import Matching, call_id
from .inspect_parts import SampleParts, record_text
from .inspect_records import (
    ErrorEventRec,
    MessageRec,
    ModelEventRec,
    Refusal,
    SampleLimitEventRec,
    ScoreEditEventRec,
    ScoreEventRec,
    ToolErrorRec,
    ToolEventRec,
    convert_at,
)

__all__ = ["SampleReader"]

_ROLES: Final = frozenset({"system", "user", "assistant", "tool"})
_TYPED: Final[dict[str, type[Any]]] = {
    "model": ModelEventRec, "tool": ToolEventRec, "score": ScoreEventRec, "score_edit": ScoreEditEventRec,
    "error": ErrorEventRec, "sample_limit": SampleLimitEventRec,
}


class SampleReader(SampleParts):
    """Maps one decoded sample (``sample``, a dict whose ``id`` and ``epoch`` were checked) into a session.

    ``member`` is the ``.eval`` member holding it (None in a ``.json`` log), ``base`` its JSON pointer there;
    ``head`` and ``tail`` are log records kept at the session's start and before its end."""

    def __init__(self, info: LogInfo, key: str, sample: dict[str, Any], member: str | None, base: str,
                 head: Iterable[Part] = (), tail: Iterable[Part] = ()) -> None:
        super().__init__(info, key, sample, member, base, tail)
        self.head = head
        provider, model = provider_model(info.model)
        self.provider, self.model_name = provider, model
        self.system_count = 0
        self.pending: set[str] = set()  # tool call ids of the open step still waiting for a result
        self.made_seqs: dict[int, list[int]] = {}  # message index -> the seqs made from it

    # -- the sample ---------------------------------------------------------------------------------------------

    def read(self) -> tuple[SessionLog, LogBuilder]:
        s = self.sample
        base = self.base
        for p in self.head:
            keep(self.out, p)
        legacy = s.get("transcript")
        events_key, events_value = "events", s.get("events")
        if "events" not in s and type(legacy) is dict:  # before 0.3.4x: transcript{events, content}
            events_key, events_value = "transcript/events", legacy.get("events")
        self.events_key = events_key
        messages = self._list(s.get("messages"), base + "/messages")
        events = self._list(events_value, base + "/" + events_key)
        self.msg_ptr = base + "/messages"
        self.ev_ptr = base + "/" + events_key
        self.msgs = [self._message(m, f"{self.msg_ptr}/{i}") for i, m in enumerate(messages)]
        self.raw_msgs = messages
        self.events = events
        self.typed = [self._event(e, f"{self.ev_ptr}/{j}") for j, e in enumerate(events)]
        matching = Matching(self.msgs, events, self.typed)
        self.source, self.anchor, self.fed = matching.source, matching.anchor, matching.fed
        if "input" in s:
            first_input = next((i for i, m in enumerate(self.msgs) if m is not None and m.source == "input"), None)
            dup = None if first_input is None else f"{self.msg_ptr}/{first_input}"
            self.raw(base + "/input", "sample/input", self.att.resolve(s["input"], base + "/input"),
                     duplicate_of=dup)
        self._merge()
        self.write_tail()
        self.warnings.extend(self.att.warnings())
        result = self.out.result()
        result.warnings.extend(self.warnings)
        return SessionLog(self.key, self.info.label(self.id, self.epoch), result), self.out

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
        out.begin(self.origin(ptr), f"message/{m.role}", record_text(raw))
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
        cid = call_id(m)
        if cid is None:
            self.warn(ptr + "/tool_call_id", "tool message without a call id; its location names the call")
            cid = self.local(ptr)
        blocks = content_blocks(m.content, ptr + "/content", self.att, self.warn, keep_empty=False)
        error = m.error or (ToolErrorRec(message=m.tool_error) if m.tool_error else None)
        meta = None
        if error is not None:
            meta = {"error": {"type": error.type, "message": error.message}}
            if not any(b.get("type") != "text" or b.get("text") for b in blocks):
                blocks = [{"type": "text", "text": error.message}]
        out.tool_result(cid, blocks, is_error=error is not None, time=time, meta=meta,
                        message_id=m.id or self.local(ptr))
        if out.step_open and cid in self.pending:
            self.pending.discard(cid)
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
                self.target()
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
            if k not in ("input", "call"):
                out[k] = self.att.resolve(v, ptr + pointer(k))
        return out
