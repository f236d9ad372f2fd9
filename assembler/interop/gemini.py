"""Gemini CLI chat recordings read into our event model (FORMATS.md §7): the JSON generation (one document,
``read_json``) and the JSONL generation (``GeminiReader``, a ``LineReader``), both replayed by ``Replay``.

Rules: a message's events are written by ``gemini_messages.Messages``. The JSONL generation writes a message again
under the same ``id`` whenever it changes (tool calls and their results, tokens), ``$rewindTo`` drops a message
and all after it, and ``$set`` merges metadata. Our log is append-only, so the reader holds records back and
settles them at ``close_tail`` (a followed file is idle) and ``finish`` (or ``salvage`` when a bad line stops the
input): each message id is written once, with its newest copy, at the place its first copy took in the
conversation (the CLI's own order); the earlier copies are raw records marked ``duplicateOf`` the copy written.
Messages a ``$rewindTo`` drops before they were written are raw records marked ``discardedBy`` (the branch stays
in the raw view, chat shows the state after the rewind, with the rewind as a notice). A copy of a message written
at an earlier settle adds what is new (calls, results) and is otherwise raw, with a warning when it changed in a way
an append-only log cannot say; a rewind to a message written earlier shadows its surface nodes and every later one
(the message before it is written again as the replacement copy). ``$set.messages`` replaces the model-visible
history: a compaction whose replacement copies are those messages (one copy per shadowed range; the surface
replaces a range by one node). ``summary`` (top level or ``$set``) is ``session/title``; a ``kind:"subagent"``
file names its parent in the header (``parentSession``: the edge's ``context`` or the ``chats/<parent>/`` folder)
and writes a ``subagent/descriptor``. A JSON document that is not valid JSON is an error with its line and column;
the complete ``messages[]`` elements before the damage are salvaged, with a warning saying so.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..jsontext import convert
from .base import (
    LineReader,
    LogBuilder,
    SessionLog,
    SourceError,
    iso_ms,
    json_args,
    json_type,
    line_origin,
    member_origin,
)
from .documents import compact, decode_document, session_logs, stem
from .gemini_messages import Message, Messages, parts_of, result_of

__all__ = ["read_json", "GeminiReader", "Replay"]

FORMAT_JSON = "gemini-json"
FORMAT_JSONL = "gemini-jsonl"
_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


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
        if seq is not None and marks:
            out.events[seq]["data"].update(marks)

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
            if start > 0:
                keep = out.events[out.surface[start - 1]]
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


# -- the JSON generation ------------------------------------------------------------------------------------------

def salvage(data: bytes) -> tuple[dict[str, Any], list[Any]]:
    """The top-level fields and the complete ``messages[]`` elements before the damage of a document that is not
    valid JSON (stdlib ``raw_decode``, one value at a time)."""
    raw = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        text = raw[:bad.start].decode("utf-8")
    decoder = json.JSONDecoder()
    fields: dict[str, Any] = {}
    messages: list[Any] = []

    def skip(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    try:
        i = skip(0)
        if text[i:i + 1] != "{":
            return fields, messages
        i += 1
        while True:
            i = skip(i)
            key, i = decoder.raw_decode(text, i)
            i = skip(i)
            if text[i:i + 1] != ":" or type(key) is not str:
                break
            i = skip(i + 1)
            if key == "messages" and text[i:i + 1] == "[":
                i = skip(i + 1)
                while text[i:i + 1] != "]":
                    value, i = decoder.raw_decode(text, i)
                    messages.append(value)
                    i = skip(i)
                    if text[i:i + 1] == ",":
                        i = skip(i + 1)
                    elif text[i:i + 1] != "]":
                        return fields, messages
                i += 1
            else:
                fields[key], i = decoder.raw_decode(text, i)
            i = skip(i)
            if text[i:i + 1] != ",":
                break
            i += 1
    except (ValueError, RecursionError, IndexError):
        pass
    return fields, messages


def read_json(data: bytes, file: str) -> list[SessionLog]:
    """One Gemini CLI JSON chat (the 2025 generation) as one session; never raises: invalid JSON is the log's
    ``error`` (``FILE:LINE:COL``) after the messages salvaged from before the damage."""
    out = LogBuilder(FORMAT_JSON, stem(file, ".json"))
    error: SourceError | None = None
    try:
        doc = decode_document(data)
    except SourceError as exc:
        error = exc
        fields, messages = salvage(data) if "nesting" not in exc.message else ({}, [])
        if not messages and not fields:
            return session_logs(out, exc)
        doc = dict(fields, messages=messages)
        out.warnings.append(f"line {exc.line}, column {exc.column}: the document is damaged; the "
                            f"{len(messages)} complete message(s) before the damage were read")
    if doc is None:
        return session_logs(out)
    if type(doc) is not dict:
        return session_logs(out, SourceError(f"expected a JSON object, got {json_type(doc)}", line=1, column=1))
    listed = doc.get("messages")
    if type(listed) is not list:
        return session_logs(out, SourceError(f"messages: expected an array, got {json_type(listed)}",
                                             pointer="/messages"))
    replay = Replay(out, {}, file)
    meta = {k: v for k, v in doc.items() if k not in ("messages", "summary")}
    replay.metadata(Rec(member_origin(None, ""), "/", compact(meta), meta), meta)
    replay.settle([Rec(member_origin(None, f"/messages/{k}"), f"/messages/{k}", compact(v), v)
                   for k, v in enumerate(listed)])
    if "summary" in doc:
        summary = doc["summary"]
        replay.metadata(Rec(member_origin(None, "/summary"), "/summary", compact(summary), {"summary": summary}),
                        {"summary": summary, "lastUpdated": doc.get("lastUpdated")})
    return session_logs(out, error)


# -- the JSONL generation -----------------------------------------------------------------------------------------

class GeminiReader(LineReader):
    """The JSONL generation (2026): line 1 the session's metadata, then messages, ``$set`` and ``$rewindTo``
    records, held back and settled at ``close_tail``/``finish`` (see the module rules)."""

    format = FORMAT_JSONL

    def __init__(self, file: str, context: dict[str, Any] | None = None) -> None:
        super().__init__(file, context)
        self.replay = Replay(self.out, self.context, file)
        self.held: list[Rec] = []

    def record(self, line: int, raw: bytes) -> None:
        value = self.decode(raw, _decoder)
        if type(value) is not dict:
            raise SourceError(f"expected a JSON object, got {json_type(value)}", line=line)
        origin, where = line_origin(line), f"line {line}"
        messages = value.get("messages")
        if "sessionId" in value and "projectHash" in value and type(messages) is list:
            # a whole legacy record on one line (the CLI's loader reads its messages too)
            meta = {k: v for k, v in value.items() if k != "messages"}
            self.held.append(Rec(origin, where, compact(meta), meta))
            self.held += [Rec(origin, f"{where} (messages[{k}])", compact(m), m) for k, m in enumerate(messages)]
            return
        self.held.append(Rec(origin, where, raw.decode("utf-8", "replace"), value))

    def close_tail(self) -> None:
        held, self.held = self.held, []
        self.replay.settle(held)

    def salvage(self) -> None:
        try:
            self.close_tail()
        except SourceError:
            pass
