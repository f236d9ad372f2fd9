"""The Codex rollout reader's handlers (FORMATS.md §5.3-5.5): one per record kind, dispatched by ``HANDLERS``
(``(envelope type, payload type)`` -> handler); a bare line before 0.4x uses its item's ``response_item`` handler.

Rules: a handler maps one decoded record onto the reader's builder and state (``CodexReader``, the only state it
writes) and returns the seq its record duplicates when the record is a hidden copy (it is then kept raw with
``duplicateOf``), else None. A record that made no event is kept raw by the reader. Pure and sans-I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import json_args
from .codex_compaction import write_compaction
from .codex_content import blocks_of, context_form, image_block, side_meta, tool_output, usage_of
from .codex_copies import Held
from .codex_records import (
    AgentText,
    Compacted,
    CustomToolCall,
    FunctionCall,
    LocalShellCall,
    Message,
    Notice,
    Reasoning,
    SessionMeta,
    TaskComplete,
    TaskStarted,
    ThreadName,
    TokenCount,
    ToolEnd,
    ToolOutput,
    TurnContext,
    UserMessage,
    WebSearchCall,
)
from .codex_session import meta_header, request_header, subagent_descriptor

if TYPE_CHECKING:
    from .codex import CodexReader

__all__ = ["HANDLERS"]

_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
_ENDS = frozenset({"exec_command_end", "patch_apply_end", "web_search_end"})


def _session_meta(r: CodexReader, h: Held) -> int | None:
    meta: SessionMeta = h.record
    if r.meta:
        return None  # a resumed or forked rollout's later session_meta: kept raw
    r.meta = True
    r.out.header.update(meta_header(meta, h.time))
    r.provider = meta.model_provider
    r.model = meta.model or r.model
    header = request_header(meta, r.provider, r.model)
    if header is not None:
        r.out.emit("request/header", header, time=h.time)
    descriptor = subagent_descriptor(meta)
    if descriptor is not None:
        r.out.emit("subagent/descriptor", descriptor, time=h.time, ignorable=True)
    return None


def _turn_context(r: CodexReader, h: Held) -> int | None:
    ctx: TurnContext = h.record
    if ctx.model is not None:
        r.model = ctx.model
    if ctx.cwd is not None and "cwd" not in r.out.header:
        r.out.header["cwd"] = ctx.cwd
    r.announce(h.time)
    return None


def _message(r: CodexReader, h: Held) -> int | None:
    m: Message = h.record
    if m.role == "assistant":
        return r.copies.assistant_text(h, m)
    blocks = blocks_of(m.content, h.payload.get("content"))
    form = context_form(m.role, m.content)
    if form is None:
        if h.kind[0] == "bare":  # before 0.4x no user_message events exist: an unmarked user item is the prompt
            r.prompt(blocks, h.time, m.id or r.location_id(h.line))
            return None
        dup = r.copies.prompt_copy()
        if dup is not None:
            return dup
        form = "context"
    r.inject(blocks, form, h.time, m.id)
    return None


def _user_message(r: CodexReader, h: Held) -> int | None:
    u: UserMessage = h.record
    content = [{"type": "text", "text": u.message}] if u.message or not (u.images or u.local_images) else []
    content += [image_block(ref) for ref in u.images or ()]
    content += [image_block(ref, local=True) for ref in u.local_images or ()]
    seq = r.prompt(content, h.time, r.location_id(h.line))
    r.copies.shown_prompt(seq)
    return None


def _reasoning(r: CodexReader, h: Held) -> int | None:
    rec: Reasoning = h.record
    return r.copies.reasoning(h, rec)


def _agent_text(r: CodexReader, h: Held) -> int | None:
    rec: AgentText = h.record
    return r.copies.ui_copy(h, rec)


def _call(r: CodexReader, h: Held) -> int | None:
    rec = h.record
    ptype = h.kind[1]
    if isinstance(rec, FunctionCall):
        call_id, args = rec.call_id, rec.arguments
        name = rec.name if not rec.namespace or rec.name.startswith(rec.namespace) else (
            rec.namespace + rec.name if rec.namespace.endswith("_") else f"{rec.namespace}.{rec.name}")
    elif isinstance(rec, CustomToolCall):
        call_id, name, args = rec.call_id, rec.name, rec.input
    elif isinstance(rec, LocalShellCall):
        call_id, name, args = rec.call_id or rec.id or r.location_id(h.line), "local_shell", json_args(rec.action)
    else:
        assert isinstance(rec, WebSearchCall)
        call_id = rec.call_id or rec.id or r.location_id(h.line)
        name, args = "web_search", json_args(rec.action if rec.action is not None else {})
    if call_id in r.calls:
        return r.calls[call_id]  # the same call written twice
    r.open_output(h.time, getattr(rec, "id", None))
    r.copies.model_output()
    r.out.block({"type": "tool-call", "id": call_id, "name": name, "arguments": args}, h.time)
    if call_id in r.results:
        return None  # its output came first: that result is the call's row (a call after it would start one)
    r.calls[call_id] = r.out.tool_call(call_id, name, args, h.time, hosted=ptype == "web_search_call")
    if ptype != "web_search_call":  # a hosted search has no output item
        r.waiting.add(call_id)
    return None


def _output(r: CodexReader, h: Held) -> int | None:
    rec: ToolOutput = h.record
    call_id = rec.call_id
    if call_id in r.results:
        return r.results[call_id]  # the same output written twice
    r.finalize(h.time)
    content, error, meta = tool_output(rec.output)
    meta.update(r.side.pop(call_id, {}))
    r.results[call_id] = r.out.tool_result(call_id, content, is_error=error, time=h.time, meta=meta or None)
    r.waiting.discard(call_id)
    r.settle(h.time)
    return None


def _tool_end(r: CodexReader, h: Held) -> int | None:
    rec: ToolEnd = h.record
    if rec.call_id in r.results:
        return r.results[rec.call_id]  # details of a result already written: a structured duplicate
    if h.kind[1] == "web_search_end" and rec.call_id in r.calls:
        return r.calls[rec.call_id]  # a hosted search has no result: the details repeat its call
    r.side.setdefault(rec.call_id, {}).update(side_meta(h.kind[1], h.payload))
    return None


def _token_count(r: CodexReader, h: Held) -> int | None:
    info = (h.record).info if isinstance(h.record, TokenCount) else None
    if info is None:
        return None  # no usage yet (a turn's first token_count): kept raw
    if info.model_context_window is not None and info.model_context_window != r.window:
        r.window = info.model_context_window
        r.announce(h.time)
    if info.total_token_usage == r.total:
        return r.usage_seq  # the same count written again
    r.total = info.total_token_usage
    usage = usage_of(info.last_token_usage) if info.last_token_usage is not None else None
    out = r.out
    if r.open:
        r.usage_seq = r.finalize(h.time, usage)
        r.settle(h.time)
    elif usage is not None and out.turn_open:
        out.start_step(h.time)  # a model call whose items were all closed already: its usage as a step
        r.open, r.waiting, r.encrypted, r.step_id = True, set(), [], None
        r.usage_seq = r.finalize(h.time, usage)
        out.end_step(h.time)
    return None


def _task_started(r: CodexReader, h: Held) -> int | None:
    rec: TaskStarted = h.record
    out = r.out
    if out.turn_open and not r.task and r.prompted and out.step == 0:
        r.task = True  # the prompt came first: this task is the turn it opened
    else:
        r.begin_turn(h.time, task=True)
    if rec.model_context_window is not None and rec.model_context_window != r.window:
        r.window = rec.model_context_window
        r.announce(h.time)
    return None


def _task_complete(r: CodexReader, h: Held) -> int | None:
    rec: TaskComplete = h.record
    extra: dict[str, Any] = {}
    if rec.duration_ms is not None:
        extra["durationMs"] = rec.duration_ms
    if rec.time_to_first_token_ms is not None:
        extra["ttftMs"] = rec.time_to_first_token_ms
    r.end_turn({"kind": "completed"}, h.time, extra)
    return None


def _turn_aborted(r: CodexReader, h: Held) -> int | None:
    r.end_turn({"kind": "aborted", "reason": {"kind": "user"}}, h.time, {})
    return None


def _compacted(r: CodexReader, h: Held) -> int | None:
    rec: Compacted = h.record
    r.finalize(h.time)
    r.out.end_step(h.time)
    r.waiting = set()
    r.compaction = write_compaction(r.out, rec, r.location_id(h.line), time=h.time, provider=r.provider,
                                     model=r.model)
    return None


def _context_compacted(r: CodexReader, h: Held) -> int | None:
    return r.compaction  # the UI notice of the compaction just written (raw when none was)


def _thread_name(r: CodexReader, h: Held) -> int | None:
    rec: ThreadName = h.record
    if rec.thread_name:
        r.out.title(rec.thread_name, h.time)
    return None


def _notice(r: CodexReader, h: Held) -> int | None:
    rec: Notice = h.record
    r.notice = rec.message or h.kind[1].replace("_", " ")  # kept raw, shown as a notice
    return None


Handler = Callable[["CodexReader", Held], "int | None"]
HANDLERS: dict[tuple[str, str], Handler] = {
    ("session_meta", ""): _session_meta,
    ("bare", "session_meta"): _session_meta,
    ("turn_context", ""): _turn_context,
    ("compacted", ""): _compacted,
    ("response_item", "message"): _message,
    ("response_item", "reasoning"): _reasoning,
    **{("response_item", t): _call for t in _CALLS},
    **{("response_item", t): _output for t in _OUTPUTS},
    ("event_msg", "user_message"): _user_message,
    ("event_msg", "agent_message"): _agent_text,
    ("event_msg", "agent_reasoning"): _agent_text,
    ("event_msg", "agent_reasoning_raw_content"): _agent_text,
    **{("event_msg", t): _tool_end for t in _ENDS},
    ("event_msg", "token_count"): _token_count,
    ("event_msg", "task_started"): _task_started,
    ("event_msg", "task_complete"): _task_complete,
    ("event_msg", "turn_aborted"): _turn_aborted,
    ("event_msg", "context_compacted"): _context_compacted,
    ("event_msg", "thread_name_updated"): _thread_name,
    **{("event_msg", t): _notice for t in ("error", "warning", "stream_error")},
}
