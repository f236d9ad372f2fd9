"""The replay of Gemini CLI chat records (FORMATS.md §7.3) that both generations go through (``gemini``): records
held back are settled into our append-only event log.

Rules: each message id is written once, with its newest copy, at the place its first copy took in the
conversation (the CLI's own order, a ``Map`` keyed by id); the earlier copies are raw records marked
``duplicateOf`` the copy written. Messages a ``$rewindTo`` drops before they were written are raw records marked
``discardedBy`` the rewind (the branch stays in the raw view; chat shows the state after the rewind, the rewind a
notice). A copy of a message written at an earlier settle adds what is new (calls, results) and is otherwise raw,
with a warning when it changed in a way an append-only log cannot say; a rewind to a message written earlier
shadows its surface nodes and every later one (the node before them is written again as the replacement copy; an
id the file never had clears everything, as the CLI's loader does). ``$set.messages`` replaces the model-visible
history: a compaction whose replacement copies are those messages (one copy per shadowed range: the surface
replaces a range by one node; more copies than ranges put the rest in the last copy). ``$set`` and the metadata
line give the header (``sessionId``, ``startTime``), ``summary`` a ``session/title``, ``kind:"subagent"`` the
``parentSession`` (the edge's ``context``, else the ``chats/<parent>/`` folder) and a ``subagent/descriptor``. Pure.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..jsontext import convert
from .base import LogBuilder, iso_ms, json_args
from .documents import compact
from .gemini_messages import Message, Messages, parts_of, result_of

__all__ = ["Rec", "Replay"]


class Rec:
    """One source record held back: where it is (``origin``, and ``where`` for warnings), its text and value."""

    __slots__ = ("origin", "where", "text", "value", "kind", "mid")

    def __init__(self, origin: dict[str, Any], where: str, text: str, value: Any) -> None:
        self.origin = origin
        self.where = where
        self.text = text
        self.value = value
        kind = "other"
        mid: str | None = None
        if type(value) is dict:
            if type(value.get("$rewindTo")) is str:
                kind = "rewind"
            elif type(value.get("$set")) is dict:
                kind = "set"
            elif type(value.get("id")) is str:
                kind, mid = "message", value["id"]
            elif "sessionId" in value and "projectHash" in value:
                kind = "meta"
        self.kind = kind
        self.mid = mid


class _Entry:
    __slots__ = ("copies", "discarded")

    def __init__(self, index: int) -> None:
        self.copies = [index]
        self.discarded: Rec | None = None


class Replay:
    """Settles held-back records into ``out`` (see the module rules)."""

    def __init__(self, out: LogBuilder, context: dict[str, Any], file: str) -> None:
        self.out = out
        self.messages = Messages(out)
        self.context = context
        self.file = file

    # -- groups --------------------------------------------------------------------------------------------------

    def raw(self, rec: Rec, *, notice: str | None = None, duplicate_of: Any = None, **marks: Any) -> None:
        out = self.out
        out.begin(rec.origin, self.rtype(rec), rec.text, rec.value)
        seq = out.end(notice=notice, duplicate_of=duplicate_of)
        event = out.event(seq) if seq is not None else None
        if event is not None and marks:
            event["data"].update(marks)

    @staticmethod
    def rtype(rec: Rec) -> str:
        value = rec.value
        if rec.kind == "message":
            t = value.get("type")
            return t if type(t) is str else "message"
        return {"rewind": "$rewindTo", "set": "$set", "meta": "session"}.get(rec.kind, "record")

    def shape(self, rec: Rec, value: Any) -> Message | None:
        try:
            return convert(value, Message)  # type: ignore[no-any-return]
        except msgspec.ValidationError as exc:
            self.out.warnings.append(f"{rec.where}: message not understood ({exc}); kept as a raw record")
            return None

    # -- settling ------------------------------------------------------------------------------------------------

    def settle(self, recs: list[Rec]) -> None:
        segment: list[Rec] = []
        for rec in recs:
            if rec.kind == "set" and type(rec.value["$set"].get("messages")) is list:
                self.segment(segment)
                segment = []
                self.checkpoint(rec)
            else:
                segment.append(rec)
        self.segment(segment)

    def segment(self, recs: list[Rec]) -> None:
        """Records with no history checkpoint among them: pass 1 finds each message's copies and what rewinds drop,
        pass 2 writes them in record order."""
        emitted = self.messages.emitted
        live: dict[str, _Entry] = {}
        entry_of: dict[int, _Entry] = {}
        late: set[int] = set()
        rewinds: dict[int, int | None] = {}  # rewind index -> messages it dropped here (None: it reaches back)
        for i, rec in enumerate(recs):
            if rec.kind == "message":
                mid = rec.mid
                assert mid is not None
                if mid in live:
                    live[mid].copies.append(i)
                    entry_of[i] = live[mid]
                elif mid in emitted:
                    late.add(i)
                else:
                    live[mid] = entry_of[i] = _Entry(i)
            elif rec.kind == "rewind":
                target = rec.value["$rewindTo"]
                ids = list(live)
                drop = ids[ids.index(target):] if target in live else ids
                for mid in drop:
                    live.pop(mid).discarded = rec
                rewinds[i] = len(drop) if target in ids else None
        for i, rec in enumerate(recs):
            if rec.kind == "message":
                if i in late:
                    self.late(rec)
                    continue
                entry = entry_of[i]
                final = recs[entry.copies[-1]]
                if entry.discarded is not None:
                    self.raw(rec, discardedBy=entry.discarded.origin)
                elif i == entry.copies[0]:
                    if final is not rec:
                        self.raw(rec, duplicate_of=final.origin)
                    self.write(final)
                elif final is not rec:
                    self.raw(rec, duplicate_of=final.origin)
            elif rec.kind == "rewind":
                self.rewind(rec, rewinds[i])
            elif rec.kind == "set":
                self.metadata(rec, rec.value["$set"])
            elif rec.kind == "meta":
                self.metadata(rec, rec.value)
            else:
                self.raw(rec)

    def write(self, rec: Rec) -> None:
        msg = self.shape(rec, rec.value)
        out = self.out
        out.begin(rec.origin, self.rtype(rec), rec.text, rec.value)
        notice = self.messages.write(msg, rec.origin) if msg is not None else None
        out.end(notice=notice, time=iso_ms(msg.timestamp) if msg is not None else 0)

    def late(self, rec: Rec) -> None:
        msg = self.shape(rec, rec.value)
        out = self.out
        out.begin(rec.origin, self.rtype(rec), rec.text, rec.value)
        if msg is None:
            out.end()
            return
        entry = self.messages.emitted[msg.id]
        wrote, changed = self.messages.update(msg)
        if changed:
            out.warnings.append(f"{rec.where}: message {msg.id} changed after it was written; the change is kept in "
                                "its raw record only")
        out.end(duplicate_of=None if wrote else entry.origin)

    def rewind(self, rec: Rec, dropped: int | None) -> None:
        target = rec.value["$rewindTo"]
        emitted = self.messages.emitted
        out = self.out
        if dropped is not None:
            self.raw(rec, notice=f"Rewound to message {target}: {dropped} message(s) dropped from the conversation")
            return
        ids = list(emitted)
        gone = ids[ids.index(target):] if target in emitted else ids  # the CLI clears all for an unknown id
        nodes = {s for mid in gone for s in emitted[mid].surface}
        positions = [p for p, s in enumerate(out.surface) if s in nodes]
        out.begin(rec.origin, "$rewindTo", rec.text, rec.value)
        if positions:
            start = positions[0]
            keep = out.event(out.surface[start - 1]) if start > 0 else None
            if start > 0 and keep is None:
                # Only a reader that counts and drops its events (a session list) gets here: what it kept is gone.
                out.replace_surface(start - 1)
            elif keep is not None:
                out.replace_surface(start - 1)
                out.emit(keep["type"], json.loads(compact(keep["data"])), time=keep["time"])
            else:
                out.replace_surface(0)
                out.user_message([], source={"kind": "plugin", "plugin": "gemini-cli", "form": "rewind"})
        for mid in gone:
            del emitted[mid]
        out.emit("interop/raw", {"format": out.format, "recordType": "$rewindTo", "origin": rec.origin,
                                 "notice": f"Rewound to message {target}: {len(gone)} message(s) dropped from the "
                                           "conversation", "record": rec.value}, ignorable=True)
        out.end()

    def metadata(self, rec: Rec, fields: dict[str, Any]) -> None:
        out = self.out
        out.begin(rec.origin, self.rtype(rec), rec.text, rec.value)
        header = out.header
        if type(fields.get("sessionId")) is str and fields["sessionId"]:
            header["id"] = fields["sessionId"]
        if iso_ms(fields.get("startTime")) and "createdAt" not in header:
            header["createdAt"] = iso_ms(fields.get("startTime"))
        if fields.get("kind") == "subagent" and "parentSession" not in header:
            parent = self.parent()
            descriptor: dict[str, Any] = {"mode": "one-shot", "provider": "gemini-cli", "childSessionId": header["id"]}
            if parent:
                header["parentSession"] = parent
                descriptor["parentSessionId"] = parent
            out.emit("subagent/descriptor", descriptor)
        summary = fields.get("summary")
        if type(summary) is str and summary.strip():
            out.title(summary, iso_ms(fields.get("lastUpdated")))
        out.end()

    def parent(self) -> str | None:
        """The parent session of a subagent file: what the edge knows, else the folder it lies in
        (``chats/<parentSessionId>/<sessionId>.jsonl``)."""
        known = self.context.get("parentSession")
        if type(known) is str and known:
            return known
        parts = self.file.split("/")
        return parts[-2] if len(parts) >= 2 and parts[-2] not in ("", ".", "chats") else None

    def checkpoint(self, rec: Rec) -> None:
        """``$set.messages``: the model-visible history replaced by those messages (§2.7), as replacement copies."""
        out = self.out
        copies: list[tuple[str, dict[str, Any]]] = []
        for k, value in enumerate(rec.value["$set"]["messages"]):
            msg = self.shape(Rec(rec.origin, f"{rec.where} ($set.messages[{k}])", "", value), value)
            if msg is not None:
                copies.extend(_copies(msg))
        fields = {k: v for k, v in rec.value["$set"].items() if k != "messages"}
        if not out.surface:  # nothing to replace: the history is the conversation itself
            self.segment([Rec(rec.origin, f"{rec.where} ($set.messages[{k}])", compact(v), v)
                          for k, v in enumerate(rec.value["$set"]["messages"])])
            if fields:
                self.metadata(Rec(rec.origin, rec.where, rec.text, {"$set": fields}), fields)
            return
        out.begin(rec.origin, "$set", rec.text, rec.value)
        cid = f"gemini-set:{rec.where}"
        turn = out.turn if out.turn_open else None
        out.emit("compaction/start", {"compactionId": cid, "turn": turn})
        shadowed = list(out.surface)
        out.emit("compaction/summary", {"compactionId": cid, "summary": [],
                                        "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                                        "shadowedSeqs": shadowed})
        if not copies:
            copies = [("user/message", {"content": [], "source": {"kind": "plugin", "plugin": "compact"},
                                        "role": "user"})]
        room = len(shadowed)
        if len(copies) > room:  # more copies than ranges: the last range gets the rest as one context message
            rest = [b for _, data in copies[room - 1:] for b in _blocks(data)]
            copies = copies[:room - 1] + [("user/message", {"content": rest, "role": "user",
                                                            "source": {"kind": "plugin", "plugin": "compact"}})]
        for k, (etype, data) in enumerate(copies):
            out.replace_surface(k, k + 1 if k < len(copies) - 1 else None)
            out.emit(etype, data)
        out.emit("compaction/end", {"compactionId": cid, "turn": turn})
        if type(fields.get("summary")) is str and fields["summary"].strip():
            out.title(fields["summary"], iso_ms(fields.get("lastUpdated")))
        out.end()


def _blocks(data: dict[str, Any]) -> list[Any]:
    message = data.get("message", data)
    content = message.get("content") if type(message) is dict else None
    return list(content) if type(content) is list else []


def _copies(msg: Message) -> list[tuple[str, dict[str, Any]]]:
    """The replacement copies of one message of a ``$set.messages`` history (what the model sees of it)."""
    if msg.type == "user":
        blocks = [{"type": "text", "text": p["text"]} for p in parts_of(msg.content)
                  if type(p) is dict and type(p.get("text")) is str]
        return [("user/message", {"content": blocks, "source": {"kind": "user"}, "role": "user", "id": msg.id})]
    if msg.type != "gemini":
        return []
    blocks = [{"type": "text", "text": p["text"]} for p in parts_of(msg.content)
              if type(p) is dict and type(p.get("text")) is str and p["text"] and p.get("thought") is not True]
    calls = msg.toolCalls or []
    blocks += [{"type": "tool-call", "id": c.id, "name": c.name, "arguments": json_args(c.args or {})} for c in calls]
    source: dict[str, Any] = {"kind": "model"}
    if msg.model:
        source["model"] = msg.model
    out: list[tuple[str, dict[str, Any]]] = [
        ("assistant/message", {"message": {"role": "assistant", "content": blocks, "source": source, "id": msg.id}})]
    for call in calls:
        found = result_of(call.result)
        if found is not None:
            out.append(("tool/result", {"message": {
                "source": {"kind": "tool", "callId": call.id},
                "content": [{"type": "tool-result", "toolCallId": call.id, "content": found[0], "isError": found[1]}],
                "role": "user"}}))
    return out
