"""The conversation of one Claude Code session (FORMATS §4.3-4.6): API responses as steps, tool results, user
records by kind, turns, compaction, rewound branches. ``Mapper`` writes a checked record's events into the open
group of its ``LogBuilder``; the reader (``claude.py``) decodes, de-duplicates and routes records first.

Rules:
* One step per API response: ``assistant`` records are merged by ``message.id``, never by adjacency. A response is
  closed (usage, finish, ``assistant/message``) by the next record of its chain that is not part of it: a user
  record, an assistant record of another id, a compaction boundary, a turn duration, or ``close_tail``. Tool
  results close the message but not the step (``step/end`` comes when the next step, turn end or tail does); hook
  lines, progress and bookkeeping records close nothing. Each block-end carries its own record's time; usage is
  the last record's, counted once. A record of a message id that was already closed (a tool result or an idle
  tail came between) opens a continuation step whose usage is what the last record adds to what was counted, so
  a session's totals still equal the source's.
* Turns run from a typed prompt (or a typed ``/command`` or ``!shell`` line) to the next, closing ``completed``;
  an interruption marker ends one ``aborted{user}``; ``system/turn_duration`` ends one ``completed`` with its
  ``durationMs``; an API error record ends one ``error``. A turn with no recorded end stays open.
* A rewind (a typed prompt whose parent already had a typed prompt) keeps both branches in file order: an
  ``interop/branch`` notice names the abandoned seqs, and an empty ``user/message`` (plugin ``claude-code``, form
  ``rewind``) replaces the abandoned branch on the surface, so the model-context view shows the current branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import LogBuilder, json_args, text_blocks
from .claude_records import (
    PLACEHOLDER,
    PROVIDER,
    ImageBlock,
    Item,
    Record,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolUseBlock,
    finish_of,
    image_attachment,
    usage_of,
)
from .claude_tools import AGENT_TOOLS, TODO_TOOLS, agent_id_of, result_meta, todos_of
from .claude_users import classify, command_parts, text_form

__all__ = ["Mapper", "PLUGIN", "BRANCH"]

PLUGIN = "claude-code"
BRANCH = "interop/branch"
"""A rewind's notice: ``{format, parentUuid, abandoned:{start, end}, notice}`` (ignorable)."""

_SYNTHETIC = "<synthetic>"


class _Response:
    """The open API response: its message id, the last record's usage and stop reason, its model and time."""

    __slots__ = ("mid", "recorded_id", "model", "usage", "stop", "time", "baseline")

    def __init__(self, mid: str, recorded_id: str | None, baseline: dict[str, int] | None) -> None:
        self.mid = mid
        self.recorded_id = recorded_id
        self.model: str | None = None
        self.usage: Any = None
        self.stop: str | None = None
        self.time = 0
        self.baseline = baseline  # usage already counted for this message id (a continuation step)


def _plugin(form: str) -> dict[str, Any]:
    return {"kind": "plugin", "plugin": PLUGIN, "form": form}


def _text_of(items: Sequence[Item]) -> str:
    return "\n".join(b.text for b in items if type(b) is TextBlock)


class Mapper:
    """Writes one session's conversation events (see the module rules). ``session_id`` is this log's id (the
    parent id of its subagents); ``links`` maps a Task call id to the child session it started, when the reader
    knows it (inline sidechains)."""

    def __init__(self, out: LogBuilder, session_id: str) -> None:
        self.out = out
        self.session_id = session_id
        self.links: dict[str, str] = {}
        self.task_prompts: dict[str, tuple[str, str | None]] = {}  # a Task prompt -> (call id, description)
        self.model: str | None = None  # the model of the last request/context written
        self._response: _Response | None = None
        self._closed: tuple[str, dict[str, int] | None] | None = None  # the last closed response: id, usage
        self._names: dict[str, str] = {}  # call id -> tool name
        self._waiting: set[str] = set()  # the open step's call ids that have no result yet
        self._prompts: dict[str, int] = {}  # parentUuid -> seq of the typed prompt written under it
        self._command: str | None = None  # the id of a command/run still waiting for its output
        self._compaction: str | None = None  # an open compaction (a boundary waiting for its summary)
        self._pre_tokens: int | None = None

    # -- responses ---------------------------------------------------------------------------------------------

    def assistant(self, rec: Record, items: list[Item], line: int, time: int) -> str | None:
        """An assistant record; returns a notice text when it becomes a raw record instead."""
        msg = rec.message
        assert msg is not None
        if rec.isApiErrorMessage or msg.model == _SYNTHETIC:
            return self.api_error(rec, _text_of(items), time)
        self.close_command()
        mid = msg.id if msg.id is not None else f"record:{rec.uuid or line}"
        r = self._response
        if r is not None and r.mid != mid:
            self.close_response()
            r = None
        if r is None:
            closed = self._closed
            baseline = closed[1] if closed is not None and closed[0] == mid else None
            r = self._response = _Response(mid, msg.id, baseline)
            self.out.start_step(time)
            self._waiting.clear()
            if msg.model is not None and msg.model != self.model:
                self.model = msg.model
                self.out.emit("request/context", {"provider": PROVIDER, "model": msg.model}, time=time)
        for item in items:
            self._block(item, line, time)
        if msg.usage is not None:
            r.usage = msg.usage
        r.stop = msg.stop_reason
        r.model = msg.model or r.model
        r.time = time
        return None

    def _block(self, item: Item, line: int, time: int) -> None:
        out = self.out
        kind = type(item)
        if kind is TextBlock:
            if item.text != PLACEHOLDER:  # type: ignore[union-attr]
                out.block({"type": "text", "text": item.text}, time)  # type: ignore[union-attr]
        elif kind is ThinkingBlock:
            out.block({"type": "reasoning", "text": item.thinking}, time)  # type: ignore[union-attr]
        elif kind is RedactedThinkingBlock:
            out.block({"type": "redacted-reasoning"}, time)
        elif kind is ToolUseBlock:
            call: ToolUseBlock = item  # type: ignore[assignment]
            args = json_args(call.input)
            out.block({"type": "tool-call", "id": call.id, "name": call.name, "arguments": args}, time)
            if out.has_call(call.id) or out.has_result(call.id):
                return  # a call id seen before (a copied or reordered record): one tool row per id
            out.tool_call(call.id, call.name, args, time)
            self._waiting.add(call.id)
            self._names[call.id] = call.name
            if call.name in TODO_TOOLS and type(call.input) is dict:
                todos = todos_of(call.input.get("todos"))
                if todos is not None:
                    out.emit("todo/write", {"todos": todos}, time=time)
            elif call.name in AGENT_TOOLS and type(call.input) is dict and type(call.input.get("prompt")) is str:
                desc = call.input.get("description")
                self.task_prompts[call.input["prompt"]] = (call.id, desc if type(desc) is str else None)
        elif kind is ImageBlock:
            out.block({"type": "image", "attachment": image_attachment(item.source, f"line{line}")}, time)  # type: ignore[union-attr]
        elif kind is dict:
            out.block(item, time)  # type: ignore[arg-type]  # unknown block types pass through
        else:  # a tool_result inside an assistant message: kept as recorded
            result: ToolResult = item  # type: ignore[assignment]
            out.block({"type": "tool_result", "tool_use_id": result.tool_use_id}, time)

    def close_response(self) -> None:
        """Write the open response's usage, finish and ``assistant/message`` (its step stays open)."""
        r, self._response = self._response, None
        if r is None:
            return
        out = self.out
        counted = usage = usage_of(r.usage)
        if usage is not None and r.baseline is not None:
            usage = {k: max(0, v - r.baseline.get(k, 0)) for k, v in usage.items()}
        if usage is not None:
            out.usage(usage, r.time)
        finish = finish_of(r.stop)
        if finish is not None:
            out.finish(finish, r.time)
        out.message(time=r.time, provider=PROVIDER, model=r.model, message_id=r.recorded_id, usage=usage)
        self._closed = (r.mid, counted)

    def close_tail(self, time: int = 0) -> None:
        """The input's current end: the open response is written, and its step ended unless one of its tool calls
        still waits for its result (the tool is running, or its result was never written: the step stays open, as
        a turn with no recorded end does, rather than showing the call as interrupted)."""
        self.close_response()
        if self.out.step_open and not self._waiting:
            self.out.end_step(self._closed_time(time))

    def _closed_time(self, time: int) -> int:
        events = self.out.events
        return events[-1]["time"] if events and not time else time

    def api_error(self, rec: Record, text: str, time: int) -> str | None:
        """An error the CLI wrote as a synthetic assistant message: it ends the turn with the error (no model
        output, no usage); outside a turn it is a raw notice."""
        self.close_response()
        message = text or "API error"
        if not self.out.turn_open:
            return message
        error: dict[str, Any] = {"message": message, "code": "api_error"}
        if rec.requestId is not None:
            error["requestId"] = rec.requestId
        self.out.end_turn({"kind": "error", "error": error}, time)
        return None

    # -- user records ------------------------------------------------------------------------------------------

    def user(self, rec: Record, items: list[Item], line: int, time: int) -> None:
        kind = classify(rec, items)
        out = self.out
        if kind.kind == "results":
            self.close_response()
            single = sum(1 for b in items if type(b) is ToolResult) == 1
            interrupted = False
            for i, item in enumerate(items):
                if type(item) is ToolResult:
                    self._result(rec, item, line, i, time, rec.toolUseResult if single else None)
                else:
                    form = text_form(item.text) if type(item) is TextBlock else "context"
                    interrupted = interrupted or form == "interrupt"
                    out.user_message(self._content([item], line, (i,)), time=time, source=_plugin(form))
            if interrupted:
                out.end_turn({"kind": "aborted", "reason": {"kind": "user"}}, time)
            return
        content = self._content(items, line, ())
        if kind.kind == "compact":
            self.compaction_summary(rec, content, time)
            return
        self.close_response()
        if kind.kind == "prompt":
            self.close_command()
            self._prompt(rec, content, time)
            return
        form = kind.form or "context"
        text = _text_of(items)
        if kind.tag in ("command-name", "command-message", "command-args", "bash-input"):
            self.close_command()
            out.start_turn(time)
        seq = out.user_message(content, time=time, message_id=rec.uuid, source=_plugin(form))
        if kind.tag in ("command-name", "command-message", "command-args"):
            parts = command_parts(text, "command-name", "command-args")
            name = parts.get("command-name", "").strip().lstrip("/")
            command: dict[str, Any] = {"commandId": rec.uuid or f"line{line}", "name": name, "source": {"kind": "user"}}
            args = parts.get("command-args", "").strip()
            if args:
                command["args"] = args
            out.emit("command/run", command, time=time)
            self._command = command["commandId"]
        elif form == "command-output" and self._command is not None:
            parts = command_parts(text, "local-command-stdout", "local-command-stderr")
            failed = "local-command-stderr" in parts and "local-command-stdout" not in parts
            done = {"commandId": self._command, "kind": "error" if failed else "success",
                    "text": parts.get("local-command-stderr" if failed else "local-command-stdout", text),
                    "sourceEventSeq": seq}
            out.emit("command/done", done, time=time)
            self._command = None
        elif kind.kind == "interrupt":
            out.end_turn({"kind": "aborted", "reason": {"kind": "user"}}, time)

    def close_command(self) -> None:
        """A command whose output never came (a custom command that expands to a prompt): ended ``done``."""
        if self._command is not None:
            self.out.emit("command/done", {"commandId": self._command, "kind": "done"},
                          time=self._closed_time(0))
            self._command = None

    def _prompt(self, rec: Record, content: list[dict[str, Any]], time: int) -> None:
        out = self.out
        parent = rec.parentUuid
        earlier = self._prompts.get(parent) if parent is not None else None
        if earlier is not None:
            out.end_turn({"kind": "completed"}, time)
            self._rewind(earlier, parent, time)  # type: ignore[arg-type]
        out.start_turn(time)
        seq = out.user_message(content, time=time, message_id=rec.uuid)
        if parent is not None:
            self._prompts[parent] = seq

    def _rewind(self, earlier: int, parent: str, time: int) -> None:
        out = self.out
        last = out.next_seq - 1
        try:
            at = out.surface.index(earlier)
        except ValueError:
            at = -1  # shadowed already (a compaction came between): nothing left to take off the surface
        if at >= 0 and out.replace_surface(at):
            out.user_message([], time=time, source=_plugin("rewind"))
        out.emit(BRANCH, {"format": out.format, "parentUuid": parent, "abandoned": {"start": earlier, "end": last},
                          "notice": "Rewound: the conversation went on from an earlier point; the branch above is"
                                    " not the current one"}, time=time, ignorable=True)

    def _content(self, items: Sequence[Item], line: int, path: tuple[int, ...]) -> list[dict[str, Any]]:
        """User-side blocks in our shape: text, image (an attachment), unknown types as recorded."""
        out: list[dict[str, Any]] = []
        for i, item in enumerate(items):
            kind = type(item)
            if kind is TextBlock:
                out.append({"type": "text", "text": item.text})  # type: ignore[union-attr]
            elif kind is ImageBlock:
                where = "/".join(str(p) for p in (*path, i))
                out.append({"type": "image", "attachment": image_attachment(item.source, f"line{line}/{where}")})  # type: ignore[union-attr]
            elif kind is dict:
                out.append(item)  # type: ignore[arg-type]
            elif kind is ThinkingBlock:
                out.append({"type": "reasoning", "text": item.thinking})  # type: ignore[union-attr]
            elif kind is ToolUseBlock:
                out.append({"type": "tool_use", "id": item.id, "name": item.name})  # type: ignore[union-attr]
            else:
                out.append({"type": "redacted-reasoning"})
        return out

    def _result(self, rec: Record, item: ToolResult, line: int, index: int, time: int, tur: Any) -> None:
        call_id = item.tool_use_id
        name = self._names.get(call_id)
        self._waiting.discard(call_id)
        content = self._content(item.content, line, (index,))
        subagent = None
        if name in AGENT_TOOLS:
            child = self.links.get(call_id)
            if child is None:
                agent = agent_id_of(tur, _text_of(item.content))
                child = f"agent-{agent}" if agent is not None else None
            if child is not None:
                subagent = {"kind": "subagent", "parentSessionId": self.session_id, "childSessionId": child,
                            "mode": "one-shot"}
        self.out.tool_result(call_id, content, is_error=item.is_error, time=time,
                             meta=result_meta(name, tur, subagent), message_id=rec.uuid)

    # -- compaction, system, attachments ------------------------------------------------------------------------

    def compaction_start(self, rec: Record, line: int, time: int) -> None:
        self.close_response()
        self.out.end_step(time)
        self.close_command()
        cid = f"compact:{rec.uuid or line}"
        self._compaction = cid
        meta = rec.compactMetadata or {}
        pre = meta.get("preTokens")
        self._pre_tokens = pre if type(pre) is int else None
        self.out.emit("compaction/start", {"compactionId": cid, "turn": self.out.turn if self.out.turn_open else None},
                      time=time)

    def compaction_summary(self, rec: Record, content: list[dict[str, Any]], time: int) -> None:
        """The summary record: ``compaction/summary``, the summary replacing the surface, ``compaction/end``."""
        out = self.out
        self.close_response()
        cid = self._compaction
        if cid is None:  # a summary with no boundary record before it (older CLIs)
            cid = f"compact:{rec.uuid or out.next_seq}"
            out.emit("compaction/start", {"compactionId": cid, "turn": out.turn if out.turn_open else None},
                     time=time)
        self._compaction = None
        shadowed = out.replace_surface()
        summary: dict[str, Any] = {"compactionId": cid, "summary": content, "shadowedSeqs": shadowed,
                                   "provider": PROVIDER}
        if shadowed:
            summary["shadowedRange"] = {"start": shadowed[0], "end": shadowed[-1]}
        if self._pre_tokens is not None:
            summary["shadowedTokenCount"] = self._pre_tokens
        if self.model is not None:
            summary["model"] = self.model
        out.emit("compaction/summary", summary, time=time)
        out.user_message(content, time=time, message_id=rec.uuid, source={"kind": "plugin", "plugin": "compact"})
        out.emit("compaction/end", {"compactionId": cid, "turn": out.turn if out.turn_open else None}, time=time)
        self._pre_tokens = None

    def turn_duration(self, rec: Record, time: int) -> bool:
        """``system/turn_duration`` ends the open turn ``completed`` with its recorded ``durationMs``; False when no
        turn is open (the record stays raw)."""
        self.close_response()
        if not self.out.turn_open:
            return False
        self.close_command()
        extra = {"durationMs": rec.durationMs} if rec.durationMs is not None else None
        self.out.end_turn({"kind": "completed"}, time, extra)
        return True

    def hook_context(self, text: str, time: int) -> None:
        """A hook's additional context (an ``attachment`` record): injected context the model sees."""
        self.out.user_message(text_blocks(text), time=time, source=_plugin("hook-context"))

    def finish(self) -> None:
        self.close_tail()
        self.close_command()

