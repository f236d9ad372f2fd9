"""The OpenAI Codex rollout reader (FORMATS.md §5): ``CodexReader``, both generations (0.4x and later envelopes;
before 0.4x a bare SessionMeta, bare ResponseItems and ``{"record_type":"state"}`` lines).

Rules:
1. Each message once (§5.7). Prompts come from ``event_msg user_message``; assistant text and reasoning from the
   ``response_item``, the ``agent_message``/``agent_reasoning`` copy shown only where that item is absent. Codex
   writes a copy right next to its item (either side), so a copy that may pair with the next line is held until
   that line arrives (``codex_copies``); the hidden copy is an ``interop/raw`` event whose ``duplicateOf`` is the
   seq of the event that shows it (a block-end chunk, a ``user/message``). Injected context (developer messages,
   Codex's context markers, a user item that is no prompt's copy) is a plugin-sourced ``user/message``.
2. Turns from ``task_started``/``task_complete``/``turn_aborted`` (``durationMs``, ``ttftMs`` kept on the
   ``turn/end``); without them a typed prompt opens a turn that ends at the next. A later prompt inside an open task
   is steering: the prompt is announced by an ``agent/inbox/spliced`` (``next-step``) so chat labels it.
3. Steps (§5.4): a model-output item opens a step unless the current step's response is still open; the response
   closes (its ``assistant/message``) at a counted ``token_count`` (with its usage), at a tool output or injected
   input (so the surface keeps the model's order), at a turn end, or at ``close_tail``. The step itself ends when
   its response is closed and every call of it has an output, or when the next step opens.
4. Usage (§2.8): a ``token_count`` counts only when ``total_token_usage`` changed; its ``last_token_usage`` is the
   step's usage. A counted one with no open response (inside a turn) opens a step of its own (usage only), so the
   session's usage sums to the last total. A repeated one is raw, ``duplicateOf`` the usage chunk it repeats.
5. Tools: every ``*_call`` is a ``tool-call`` block and a ``tool/call``; every ``*_output`` a ``tool/result`` by
   ``call_id`` wherever it falls; completion events (``exec_command_end``...) go to the result's ``meta`` (or stay
   raw, ``duplicateOf`` the result, when they come after it). Pure and sans-I/O.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from .base import LineReader, SourceError, iso_ms, line_origin
from .codex_copies import Copies, Held
from .codex_handlers import HANDLERS
from .codex_records import classify, is_tui_recording

__all__ = ["CodexReader"]

_ANY = msgspec.json.Decoder()


class CodexReader(LineReader):
    """A Codex rollout, one line at a time (``LineReader``)."""

    format: ClassVar[str] = "codex"

    def __init__(self, file: str, context: dict[str, Any] | None = None) -> None:
        super().__init__(file, context)
        self.lines = 0
        self.meta = False  # a session_meta was read
        self.provider: str | None = None
        self.model: str | None = None
        self.window: int | None = None
        self.announced: tuple[Any, ...] | None = None  # the last request/context written
        self.task = False  # the open turn was opened by task_started
        self.prompted = False  # the open turn has its first prompt
        self.open = False  # the current step's response is open (blocks written, no assistant/message yet)
        self.waiting: set[str] = set()  # calls of the current step without an output
        self.encrypted: list[dict[str, Any]] = []  # encrypted reasoning of the open response (its replayState)
        self.step_id: str | None = None
        self.total: Any = None  # the last counted total_token_usage
        self.usage_seq: int | None = None  # its usage chunk
        self.calls: dict[str, int] = {}  # call id -> tool/call seq
        self.results: dict[str, int] = {}  # call id -> tool/result seq
        self.side: dict[str, dict[str, Any]] = {}  # call id -> meta from a completion event before its output
        self.compaction: int | None = None  # the last compaction/start seq
        self.time = 0  # the last recorded time
        self.notice: str | None = None  # set by a handler: its raw record is a notice with this text
        self.copies = Copies(self)

    # -- input ---------------------------------------------------------------------------------------------------

    def record(self, line: int, raw: bytes) -> None:
        try:
            value = self.decode(raw, _ANY)
            if type(value) is not dict:
                raise SourceError(f"expected a JSON object, got {type(value).__name__}", line=line)
            if self.lines == 0 and is_tui_recording(value):
                raise SourceError("this is a Codex TUI session recording (key presses, redraws, codex_event "
                                  "records), not a rollout: open the rollout-*.jsonl under sessions/", line=line)
            kind, rec, payload = classify(value)
        except Exception:
            self.copies.flush()  # the held copies come before this line: keep them before the error
            raise
        self.lines += 1
        time = iso_ms(value.get("timestamp"))
        if time:
            self.time = time
        text = raw.decode("utf-8", "replace")
        rtype = kind[0] if not kind[1] else kind[1] if kind[0] == "bare" else f"{kind[0]}/{kind[1]}"
        held = Held(line, kind, rtype, text, value, rec, payload, time)
        if self.copies.hold(held):
            return
        paired = self.copies.settle(held)
        out = self.out
        out.begin(line_origin(line), rtype, text, value)
        handler = HANDLERS.get(kind) if rec is not None else None
        if handler is None and kind[0] == "bare" and rec is not None:
            handler = HANDLERS.get(("response_item", kind[1]))
        dup = handler(self, held) if handler is not None else None
        notice, self.notice = self.notice, None
        out.end(duplicate_of=dup, notice=notice, time=time)
        self.copies.patch(paired)

    def flush(self) -> None:
        self.copies.flush()

    def close_tail(self) -> None:
        """At an idle end: close the open response (and its step when no call of it waits). A held copy waits for
        its pair instead (Codex writes the two together), so nothing is closed while one is held."""
        if self.copies.pending:
            return
        self.finalize(self.time)
        self.settle(self.time)

    def finish(self) -> None:
        self.copies.flush()
        self.close_tail()

    # -- steps ---------------------------------------------------------------------------------------------------

    def open_output(self, time: int, item_id: str | None = None) -> None:
        """A model-output item: opens the next step unless the current response is open."""
        if self.open:
            return
        self.out.start_step(time)
        self.open = True
        self.waiting = set()
        self.encrypted = []
        self.step_id = item_id
        self.copies.new_step()

    def finalize(self, time: int, usage: dict[str, Any] | None = None) -> int | None:
        """Close the open response: its usage chunk (returned) and ``assistant/message``."""
        if not self.open:
            return None
        out = self.out
        self.open = False
        chunk = out.usage(usage, time) if usage is not None else None
        seq = out.message(time=time, provider=self.provider, model=self.model, usage=usage,
                          message_id=self.step_id)
        event = out.event(seq)
        if self.encrypted and event is not None:
            event["data"]["message"]["source"]["replayState"] = {"reasoning": self.encrypted}
        return chunk

    def settle(self, time: int) -> None:
        """End the step once its response is closed and none of its calls waits for an output."""
        if self.out.step_open and not self.open and not self.waiting:
            self.out.end_step(time)

    def replay(self, state: dict[str, Any]) -> None:
        self.encrypted.append(state)

    def begin_turn(self, time: int, *, task: bool) -> None:
        self.finalize(time)
        self.out.start_turn(time)
        self.task = task
        self.prompted = False
        self.copies.new_turn()

    def end_turn(self, reason: dict[str, Any], time: int, extra: dict[str, Any]) -> None:
        if not self.out.turn_open:
            return
        self.finalize(time)
        self.out.end_turn(reason, time)
        self.out.events[-1]["data"].update(extra)  # the turn/end just written: its recorded durations
        self.task = False
        self.waiting = set()

    def announce(self, time: int) -> None:
        """``request/context`` when the provider, model or context window changed (model known)."""
        key = (self.provider, self.model, self.window)
        if self.model is None or key == self.announced:
            return
        data: dict[str, Any] = {"model": self.model}
        if self.provider is not None:
            data["provider"] = self.provider
        if self.window is not None:
            data["contextWindow"] = self.window
        self.out.emit("request/context", data, time=time)
        self.announced = key

    # -- messages ------------------------------------------------------------------------------------------------

    def prompt(self, content: list[dict[str, Any]], time: int, message_id: str) -> int:
        """A typed prompt: opens a turn (or is steering inside an open task)."""
        out = self.out
        self.finalize(time)
        steering = out.turn_open and self.task and self.prompted
        if not (out.turn_open and self.task):
            self.begin_turn(time, task=False)
        self.prompted = True
        if steering:
            message = {"content": content, "source": {"kind": "user"}, "role": "user", "id": message_id}
            out.emit("agent/inbox/spliced", {"target": "next-step", "start": 0, "inserted": [message]}, time=time)
        return out.user_message(content, time=time, message_id=message_id)

    def inject(self, content: list[dict[str, Any]], form: str, time: int, message_id: str | None) -> int:
        """Injected context: model input, not a prompt; the open response closes first (surface order)."""
        self.finalize(time)
        return self.out.user_message(content, time=time, message_id=message_id,
                                     source={"kind": "plugin", "plugin": "codex", "form": form})

    def location_id(self, line: int) -> str:
        return f"{self.file}:{line}"
