"""``LogBuilder``: writes one session log in our event model (PROTOCOL §1) from another harness's records, with
dense seqs from 0, keeping every source record (FORMATS §2.1-2.7).

Rules: a reader opens a group per source record (``begin``), emits the events made from it and closes it (``end``):
an ``interop/source`` event then keeps the record's original text and the seqs it became, and a record that became
nothing is an ``interop/raw`` event with the decoded record. Turn and step numbers, a step's chunks, tool calls by
id and the surface are tracked here, so a surface ``replace`` is always valid and a reader only maps fields. Pure.
"""

from __future__ import annotations

from typing import Any

from ..logfile import LoadResult
from ._source import RAW, SOURCE

__all__ = ["LogBuilder"]

_SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})


class LogBuilder:
    """Writes one session log in our event model (PROTOCOL §1), with dense seqs from 0.

    A reader opens a group per source record (``begin``), emits the events made from it, and closes it (``end``),
    which writes the ``interop/source`` (or ``interop/raw``) event. Turn and step numbers, the seqs of a step's
    chunks, tool calls by id and the surface are tracked here, so each reader only maps fields. ``events`` is the
    list the loader hands out (appended to, never rebuilt).
    """

    def __init__(self, fmt: str, session_id: str, **header: Any) -> None:
        self.format = fmt
        self.header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "format": fmt}
        self.header.update({k: v for k, v in header.items() if v is not None})
        self.events: list[dict[str, Any]] = []
        self.warnings: list[str] = []  # what the reader noticed; ``result()`` shares the list with its LoadResult
        self._dropped = 0  # events handed out and forgotten (``drop``)
        self.turn = 0  # the last turn number used
        self.turn_open = False
        self.step = 0  # the last step number used in the current turn
        self.step_open = False
        self._step_chunks: list[int] = []  # seqs of the open step's chunks (the assistant/message cites them)
        self._step_blocks: list[dict[str, Any]] = []  # the open step's blocks, in index order
        self._calls: dict[str, int] = {}  # tool call id -> the seq of its tool/call
        self._results: set[str] = set()  # call ids that have a result
        self.surface: list[int] = []  # seqs of the surface nodes, in surface order
        self._group: tuple[dict[str, Any], str, str | None, Any, int] | None = None
        self._replace: dict[str, Any] | None = None

    @property
    def next_seq(self) -> int:
        return self._dropped + len(self.events)

    def event(self, seq: int) -> dict[str, Any] | None:
        """The event of ``seq`` while it is held (``events`` is indexed from the first event not dropped); None once
        ``drop`` forgot it. A reader amending an event it wrote looks it up here, never by ``events[seq]``."""
        at = seq - self._dropped
        return self.events[at] if 0 <= at < len(self.events) else None

    def drop(self) -> None:
        """Forget the events handed out so far (a reader that only counts them, as the session list does); seqs go
        on from where they were."""
        self._dropped += len(self.events)
        self.events.clear()

    # -- groups ----------------------------------------------------------------------------------------------

    def begin(self, origin: dict[str, Any], record_type: str, text: str | None, record: Any = None) -> None:
        """Open the group of one source record: ``text`` is its original text (a JSONL line, or the compact JSON of
        a document's element), ``record`` the decoded value (kept when the record becomes nothing)."""
        if self._group is not None:
            self.end()
        self._group = (origin, record_type, text, record, self.next_seq)

    def end(self, *, duplicate_of: Any = None, notice: str | None = None, time: int = 0) -> int | None:
        """Close the open group: an ``interop/source`` event citing the events made since ``begin``, or, when there
        were none (or ``duplicate_of`` is given: a copy the mapping hides), an ``interop/raw`` event with the
        decoded record. ``notice`` asks the chat to show a raw record as a notice with that text. Returns its seq."""
        group, self._group = self._group, None
        if group is None:
            return None
        origin, record_type, text, record, first = group
        made = list(range(first, self.next_seq))
        if made and duplicate_of is None:
            data: dict[str, Any] = {"format": self.format, "recordType": record_type, "origin": origin,
                                    "events": made}
            if text is not None:
                data["text"] = text
            return self._append(SOURCE, data, time, ignorable=True)
        data = {"format": self.format, "recordType": record_type, "origin": origin}
        if duplicate_of is not None:
            data["duplicateOf"] = duplicate_of
        if notice is not None:
            data["notice"] = notice
        data["record"] = record if record is not None or text is None else text
        if made:
            data["events"] = made
        return self._append(RAW, data, time, ignorable=True)

    @property
    def group_made(self) -> int:
        """How many events the open group has made so far (0 when no group is open)."""
        return 0 if self._group is None else self.next_seq - self._group[4]

    def keep_record(self, record: Any) -> None:
        """Set the decoded record the open group keeps if it becomes an ``interop/raw`` event (for a reader that
        decodes the generic form only when a record made nothing)."""
        if self._group is not None:
            origin, record_type, text, _, first = self._group
            self._group = (origin, record_type, text, record, first)

    # -- events ----------------------------------------------------------------------------------------------

    def _append(self, etype: str, data: Any, time: int, *, ignorable: bool = False,
                sources: list[int] | None = None, surface: Any = None) -> int:
        seq = self._dropped + len(self.events)
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": time if type(time) is int else 0, "data": data}
        if ignorable:
            event["ignorable"] = True
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if surface is not None:
            event["surfaceOp"] = surface
        self.events.append(event)
        return seq

    def emit(self, etype: str, data: Any, *, time: int = 0, ignorable: bool = False,
             sources: list[int] | None = None) -> int:
        """Any event; a surface type is appended to the surface (or replaces it after ``replace_surface``)."""
        if etype in _SURFACE:
            return self._surface_event(etype, data, time, sources)
        return self._append(etype, data, time, ignorable=ignorable, sources=sources)

    def _surface_event(self, etype: str, data: Any, time: int, sources: list[int] | None) -> int:
        replace, self._replace = self._replace, None
        if replace is None:
            seq = self._append(etype, data, time, sources=sources, surface="append")
            self.surface.append(seq)
            return seq
        shadowed: list[int] = replace["shadowed"]
        cited = list(sources or [])
        cited += [s for s in shadowed if s not in set(cited)]
        seq = self._append(etype, data, time, sources=cited,
                           surface={"op": "replace", "start": shadowed[0], "end": shadowed[-1]})
        at = replace["at"]
        self.surface[at:at + len(shadowed)] = [seq]
        return seq

    def replace_surface(self, start: int = 0, end: int | None = None) -> list[int]:
        """Make the next surface event replace the surface nodes ``surface[start:end]`` (default: all of them);
        returns the shadowed seqs. With nothing to shadow the next surface event is appended."""
        nodes = self.surface[start:end]
        self._replace = {"shadowed": nodes, "at": start} if nodes else None
        return nodes

    # turns and steps

    def start_turn(self, time: int = 0) -> int:
        """Close an open turn as completed (a new prompt ends the last one) and open the next."""
        if self.turn_open:
            self.end_turn({"kind": "completed"}, time)
        self.turn += 1
        self.step = 0
        self.turn_open = True
        self._append("turn/start", {"turn": self.turn}, time)
        return self.turn

    def end_turn(self, reason: dict[str, Any], time: int = 0, extra: dict[str, Any] | None = None) -> None:
        """Close the open turn (and its open step); ``extra`` adds fields to the ``turn/end`` data (a recorded
        ``durationMs``)."""
        if not self.turn_open:
            return
        if self.step_open:
            self.end_step(time)
        self.turn_open = False
        data: dict[str, Any] = {"turn": self.turn, "reason": reason}
        if extra:
            data.update(extra)
        self._append("turn/end", data, time)

    def start_step(self, time: int = 0) -> int:
        """Open the next model step (closing an open one); opens a turn first when none is open."""
        if not self.turn_open:
            self.start_turn(time)
        if self.step_open:
            self.end_step(time)
        self.step += 1
        self.step_open = True
        self._step_chunks = []
        self._step_blocks = []
        self._append("step/start", {"turn": self.turn, "step": self.step}, time)
        return self.step

    def end_step(self, time: int = 0) -> None:
        if not self.step_open:
            return
        self.step_open = False
        self._append("step/end", {"turn": self.turn, "step": self.step}, time)

    def _chunk(self, chunk: dict[str, Any], time: int) -> int:
        seq = self._append("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk}, time)
        self._step_chunks.append(seq)
        return seq

    def block(self, block: dict[str, Any], time: int = 0) -> int:
        """One complete content block of the open step's response (``block-end``, FORMATS §2.4)."""
        if not self.step_open:
            self.start_step(time)
        index = len(self._step_blocks)
        self._step_blocks.append(block)
        return self._chunk({"type": "block-end", "index": index, "block": block}, time)

    def usage(self, usage: dict[str, Any], time: int = 0) -> int:
        return self._chunk({"type": "usage", "usage": usage}, time)

    def finish(self, reason: dict[str, Any], time: int = 0) -> int:
        return self._chunk({"type": "finish", "reason": reason}, time)

    def message(self, *, time: int = 0, provider: str | None = None, model: str | None = None,
                message_id: str | None = None, usage: dict[str, Any] | None = None,
                interrupted: bool = False) -> int:
        """The open step's ``assistant/message``: its blocks, citing every chunk of the step."""
        source: dict[str, Any] = {"kind": "model"}
        if provider is not None:
            source["provider"] = provider
        if model is not None:
            source["model"] = model
        message: dict[str, Any] = {"role": "assistant", "content": list(self._step_blocks), "source": source}
        if message_id is not None:
            message["id"] = message_id
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if usage is not None:
            data["usage"] = usage
        if interrupted:
            data["interrupted"] = True
        return self._surface_event("assistant/message", data, time, list(self._step_chunks))

    @property
    def step_blocks(self) -> list[dict[str, Any]]:
        return self._step_blocks

    # messages and tools

    def user_message(self, content: list[dict[str, Any]], *, time: int = 0, message_id: str | None = None,
                     source: dict[str, Any] | None = None) -> int:
        """A ``user/message`` (a typed prompt by default; ``source`` ``{kind:'plugin', plugin, form}`` for text the
        harness injected, FORMATS §2.6)."""
        data: dict[str, Any] = {"content": content, "source": source or {"kind": "user"}, "role": "user"}
        if message_id is not None:
            data["id"] = message_id
        return self._surface_event("user/message", data, time, None)

    def tool_call(self, call_id: str, name: str, arguments: str, time: int = 0, *, hosted: bool = False) -> int:
        """A ``tool/call``; ``hosted``: the provider ran it inside the model call (Codex's web search), so no result
        ever comes and a closed step does not make it interrupted."""
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "callId": call_id, "name": name,
                                "arguments": arguments}
        if hosted:
            data["hosted"] = True
        seq = self._append("tool/call", data, time)
        self._calls[call_id] = seq
        return seq

    def has_call(self, call_id: str) -> bool:
        return call_id in self._calls

    def has_result(self, call_id: str) -> bool:
        return call_id in self._results

    def tool_result(self, call_id: str, content: list[dict[str, Any]], *, is_error: bool = False, time: int = 0,
                    meta: Any = None, message_id: str | None = None) -> int:
        """A ``tool/result`` holding one ``tool-result`` block; it cites its ``tool/call`` when that was seen."""
        message: dict[str, Any] = {
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": content, "isError": is_error}],
            "role": "user",
        }
        if message_id is not None:
            message["id"] = message_id
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": message}
        if meta is not None:
            data["meta"] = meta
        call = self._calls.get(call_id)
        self._results.add(call_id)
        return self._surface_event("tool/result", data, time, None if call is None else [call])

    def title(self, title: str, time: int = 0) -> int:
        return self._append("session/title", {"title": title, "source": {"kind": "recorded"}}, time)

    def result(self) -> LoadResult:
        """A ``LoadResult`` over this builder's header and events (the same objects, not copies)."""
        result = LoadResult(self.header, self.events)  # type: ignore[arg-type]  # events are storage records
        result.warnings = self.warnings
        result.event_count = self.next_seq
        return result
