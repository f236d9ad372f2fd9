"""The Claude Code session reader (FORMATS §4): ``~/.claude/projects/<project>/<session>.jsonl`` and its subagent
files, one JSONL record per line, mapped onto our event model by ``claude_map.Mapper``.

Rules:
* Records are de-duplicated by ``uuid`` first: a second copy is an ``interop/raw`` event with ``duplicateOf``
  ``{uuid, line}``. Across the files of one project (FORMATS §4.8) the edge reads the files in order (oldest
  first) and passes the uuids read so far as ``context={"seenUuids": ...}`` (a set, or a mapping uuid -> file
  name); a record whose uuid is in it is kept raw with ``duplicateOf {uuid, file?}``. ``uuids`` lists the uuids
  this reader read itself (first copies, file order), for the edge to add to its set.
* Subagents. A file is a child session when its stem is ``agent-<id>`` (2.0.x beside the session, 2.1.x under
  ``<session>/subagents/``), when the context says so (``agentMeta``: the parsed ``.meta.json``;
  ``parentSessionId``), or when its first message record is a sidechain record with an ``agentId``. A child's
  header has ``parentSession`` (the context's, else its records' ``sessionId``, which is the parent's),
  ``origin:'subagent'``, ``agentId``, ``subagentLabel`` (the ``.meta.json`` description, the parent Task's
  description, else the first prompt), and ``warmup: true`` when its only prompt is ``Warmup`` (listings may hide
  it); its first group writes ``subagent/descriptor {version, mode:'one-shot', provider, label?, agentType?}``.
  In a main file, 1.0.x inline sidechain records (``isSidechain`` true) are routed to child readers keyed
  ``sidechain:<root uuid>`` (or ``agent-<agentId>`` when they carry one); the main log keeps one raw stub per such
  line (``record: {type, uuid, childSession}``) and never shows them as its own conversation. ``children`` gives
  the child logs as ``SessionLog``s; ``split_sidechains`` reads a whole file into the main log and its children.
  The parent's Task/Agent ``tool/result`` links the child in ``meta.subagent``.
* Titles: ``custom-title`` and ``ai-title`` records title this session (a custom title is not overridden by a
  later AI title). A ``summary`` titles the session holding its ``leafUuid``: a ``session/title`` here when that
  record is in this file (in the leaf's group when the leaf comes later), else a raw record; ``titles`` lists every
  (leafUuid, title) pair for a folder view, and a file of summaries only has ``summaryOnly: true`` in its header.
* The header: ``id`` (the file stem, or the child key), ``format``, ``sessionId`` (the source's), ``cwd``,
  ``version``, ``gitBranch`` and ``createdAt`` (the first recorded time), filled in from the first records that
  carry them (the header object is the result's, updated in place).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from ..jsontext import decode_json
from ..logfile import LoadResult
from .base import LineReader, SessionLog, iso_ms, line_origin, read_lines
from .claude_map import Mapper
from .claude_records import DECODER, Item, Record, TextBlock, blocks
from .claude_users import classify

__all__ = ["ClaudeCodeReader", "split_sidechains", "WARMUP"]

WARMUP: Final = "Warmup"
_generic = msgspec.json.Decoder().decode
_MESSAGE_TYPES: Final = frozenset({"user", "assistant"})
_LABEL_CHARS: Final = 80


def _queue_notice(rec: Record) -> str:
    content = rec.content
    if type(content) is list:
        content = " ".join(b.get("text", "") for b in content if type(b) is dict and type(b.get("text")) is str)
    text = content if type(content) is str else ""
    op = rec.operation or "queue"
    return f"Queue {op}" + (f": {text}" if text else "")


class ClaudeCodeReader(LineReader):
    """A Claude Code session file (see the module rules). ``context`` keys: ``seenUuids`` (project view),
    ``agentMeta`` (a subagent's parsed ``.meta.json``), ``parentSessionId``; ``child``, ``label`` and
    ``parentCallId`` are set by a parent reader for the inline sidechains it routes."""

    format = "claude-code"

    def __init__(self, file: str, context: dict[str, Any] | None = None) -> None:
        super().__init__(file, context)
        ctx = self.context
        header = self.out.header
        key = ctx.get("child")
        if type(key) is str:
            header["id"] = key
        self.session_id: str = header["id"]
        meta = ctx.get("agentMeta")
        self._agent_meta: dict[str, Any] = meta if type(meta) is dict else {}
        parent = ctx.get("parentSessionId")
        named_child = type(key) is str or self.session_id.startswith("agent-") or bool(self._agent_meta) \
            or type(parent) is str
        self._role: str | None = "child" if named_child else None
        label = ctx.get("label")
        if type(label) is not str:
            label = self._agent_meta.get("description")
        self.label: str | None = label if type(label) is str and label else None
        self.map = Mapper(self.out, self.session_id)
        self.uuids: list[str] = []
        self.titles: list[tuple[str, str]] = []
        self._seen: dict[str, int] = {}
        prior = ctx.get("seenUuids")
        self._prior: Any = prior if prior is not None and hasattr(prior, "__contains__") else None
        self._leaf_titles: dict[str, list[str]] = {}  # a summary's leaf not read yet -> its titles
        self._custom_title = False
        self._messages = 0
        self._described = False
        self._prompted = 0
        self._children: dict[str, ClaudeCodeReader] = {}
        self._chain: dict[str, str] = {}  # sidechain record uuid -> its child's key
        self._last_child: str | None = None
        if type(parent) is str:
            header["parentSession"] = parent

    # -- the line interface ----------------------------------------------------------------------------------

    def record(self, line: int, raw: bytes) -> None:
        rec: Record = self.decode(raw, DECODER)
        items = blocks(rec.message.content) if rec.message is not None else []
        self.handle(line, raw, rec, items)

    def handle(self, line: int, raw: bytes, rec: Record, items: list[Item]) -> None:
        """One checked record (``record`` after decoding; a parent reader routing a sidechain record here)."""
        out = self.out
        text = raw.decode("utf-8", "replace")
        time = iso_ms(rec.timestamp)
        uuid = rec.uuid
        if uuid is not None:
            first = self._seen.get(uuid)
            prior = self._prior is not None and first is None and uuid in self._prior
            if first is not None or prior:
                dup: dict[str, Any] = {"uuid": uuid}
                if first is not None:
                    dup["line"] = first
                elif isinstance(self._prior, Mapping) and type(self._prior.get(uuid)) is str:
                    dup["file"] = self._prior[uuid]
                out.begin(line_origin(line), rec.type, text, decode_json(raw, _generic))
                out.end(duplicate_of=dup, time=time)
                return
            self._seen[uuid] = line
            self.uuids.append(uuid)
        if rec.type in _MESSAGE_TYPES:
            if self._role is None:
                self._role = "child" if rec.isSidechain and rec.agentId is not None else "main"
        if rec.isSidechain and self._role == "main":
            self._route(line, raw, rec, items, text, time)
            return
        self._note_header(rec, time)
        out.begin(line_origin(line), rec.type, text)
        if self._role == "child" and not self._described and rec.type in _MESSAGE_TYPES:
            self._describe(rec, items)
        notice = self._map(rec, items, line, time)
        if uuid is not None and self._leaf_titles:
            for title in self._leaf_titles.pop(uuid, ()):
                out.title(title)
        if out.group_made == 0:
            out.keep_record(decode_json(raw, _generic))
        out.end(notice=notice, time=time)

    def close_tail(self) -> None:
        self.map.close_tail()
        for child in self._children.values():
            child.close_tail()

    def finish(self) -> None:
        self.map.finish()
        for child in self._children.values():
            child.finish()

    # -- mapping by record type ------------------------------------------------------------------------------

    def _map(self, rec: Record, items: list[Item], line: int, time: int) -> str | None:
        """Write the events of one record; returns a notice text for a record that stays raw."""
        rtype = rec.type
        m = self.map
        if rtype in _MESSAGE_TYPES:
            self._messages += 1
            self.out.header.pop("summaryOnly", None)
            if rec.message is None:
                return None
            if rtype == "assistant":
                return m.assistant(rec, items, line, time)
            self._note_prompt(rec, items)
            m.user(rec, items, line, time)
            return None
        if rtype == "system":
            self._messages += 1
            self.out.header.pop("summaryOnly", None)
            if rec.subtype == "compact_boundary":
                m.compaction_start(rec, line, time)
                return None
            if rec.subtype == "turn_duration" and m.turn_duration(rec, time):
                return None
            content = rec.content
            return content if type(content) is str and content else rec.subtype or "system"
        if rtype == "summary":
            return self._summary(rec)
        if rtype == "custom-title" and rec.customTitle:
            self._custom_title = True
            self.out.title(rec.customTitle, time)
            return None
        if rtype == "ai-title" and rec.aiTitle and not self._custom_title:
            self.out.title(rec.aiTitle, time)
            return None
        if rtype == "queue-operation":
            return _queue_notice(rec)
        if rtype == "attachment" and rec.attachment is not None:
            att = rec.attachment
            if att.get("type") == "hook_additional_context":
                content = att.get("content")
                if type(content) is list:
                    content = "\n".join(c for c in content if type(c) is str)
                if type(content) is str and content:
                    m.hook_context(content, time)
                    return None
            return str(att.get("type") or "attachment") if att.get("type") != "hook_success" else None
        return None

    def _summary(self, rec: Record) -> str | None:
        title, leaf = rec.summary, rec.leafUuid
        if self._messages == 0:
            self.out.header["summaryOnly"] = True
        if not title or leaf is None:
            return None
        self.titles.append((leaf, title))
        if leaf in self._seen:
            self.out.title(title)
        else:
            self._leaf_titles.setdefault(leaf, []).append(title)
        return None

    # -- header, subagents -----------------------------------------------------------------------------------

    def _note_header(self, rec: Record, time: int) -> None:
        header = self.out.header
        for key, value in (("sessionId", rec.sessionId), ("cwd", rec.cwd), ("sourceVersion", rec.version),
                           ("gitBranch", rec.gitBranch)):
            if value is not None and key not in header:
                header[key] = value
        if time and "createdAt" not in header:
            header["createdAt"] = time
        if self._role == "child":
            if "parentSession" not in header and rec.sessionId is not None:
                header["parentSession"] = rec.sessionId
            if rec.agentId is not None and "agentId" not in header:
                header["agentId"] = rec.agentId
            header["origin"] = "subagent"

    def _describe(self, rec: Record, items: list[Item]) -> None:
        """The child's ``subagent/descriptor``, in its first message record's group."""
        self._described = True
        if self.label is None and rec.type == "user":
            first = next((b.text for b in items if type(b) is TextBlock), "").strip().split("\n", 1)[0]
            if first:
                self.label = first[:_LABEL_CHARS]
        data: dict[str, Any] = {"version": 2, "mode": "one-shot", "provider": "claude-code"}
        if self.label is not None:
            data["label"] = self.label
            self.out.header["subagentLabel"] = self.label
        agent_type = self._agent_meta.get("agentType")
        if type(agent_type) is str:
            data["agentType"] = agent_type
        call = self.context.get("parentCallId")
        if type(call) is str:
            data["parentCallId"] = call
            self.out.header["parentCallId"] = call
        self.out.emit("subagent/descriptor", data, time=iso_ms(rec.timestamp))

    def _note_prompt(self, rec: Record, items: list[Item]) -> None:
        """A child whose only typed prompt is ``Warmup`` is a pre-warmed agent (FORMATS §4.1)."""
        if self._role != "child" or classify(rec, items).kind != "prompt":
            return
        self._prompted += 1
        text = "".join(b.text for b in items if type(b) is TextBlock).strip()
        header = self.out.header
        if self._prompted == 1 and text == WARMUP:
            header["warmup"] = True
        elif self._prompted > 1:
            header.pop("warmup", None)

    def _route(self, line: int, raw: bytes, rec: Record, items: list[Item], text: str, time: int) -> None:
        """An inline sidechain record of a main file: handled by its child reader; a stub stays here."""
        key = self._child_key(rec, items)
        child = self._children[key]
        if rec.uuid is not None:
            self._chain[rec.uuid] = key
        self._last_child = key
        child.handle(line, raw, rec, items)
        out = self.out
        out.begin(line_origin(line), rec.type, None, {"type": rec.type, "uuid": rec.uuid, "childSession": key})
        out.end(time=time)

    def _child_key(self, rec: Record, items: list[Item]) -> str:
        if rec.agentId is not None:
            key = f"agent-{rec.agentId}"
        elif rec.parentUuid is not None and rec.parentUuid in self._chain:
            key = self._chain[rec.parentUuid]
        elif rec.parentUuid is not None and self._last_child is not None:
            key = self._last_child  # its parent is not in this file: the sidechain that was running
        else:
            key = f"sidechain:{rec.uuid or len(self._children)}"
        if key not in self._children:
            context: dict[str, Any] = {"child": key, "parentSessionId": self.session_id}
            prompt = "".join(b.text for b in items if type(b) is TextBlock) if rec.type == "user" else ""
            link = self.map.task_prompts.get(prompt)
            if link is not None:
                call_id, description = link
                self.map.links[call_id] = key
                context["parentCallId"] = call_id
                if description:
                    context["label"] = description
            self._children[key] = ClaudeCodeReader(self.file, context)
        return key

    @property
    def children(self) -> list[SessionLog]:
        """The child sessions routed out of this file (inline sidechains), in the order they began."""
        logs = []
        for key, child in self._children.items():
            result: LoadResult = child.out.result()
            logs.append(SessionLog(key, child.label, result))
        return logs


def split_sidechains(data: bytes, file: str, context: dict[str, Any] | None = None) -> list[SessionLog]:
    """A whole session file read into its main log (key ``""``) and the child logs of its inline sidechains."""
    reader = ClaudeCodeReader(file, context)
    result = read_lines(reader, data)
    return [SessionLog("", None, result), *reader.children]
