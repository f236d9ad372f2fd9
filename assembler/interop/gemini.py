"""Gemini CLI chat recordings read into our event model (FORMATS.md §7): the JSON generation (one document,
``read_json``) and the JSONL generation (``GeminiReader``, a ``LineReader``), both replayed by
``gemini_replay.Replay``; a message's events are written by ``gemini_messages.Messages``.

Rules: the JSONL generation writes a message again under the same ``id`` whenever it changes (tool calls and their
results, tokens), ``$rewindTo`` drops a message and all after it, ``$set`` merges metadata; our log is append-only,
so the reader holds records back and settles them at ``close_tail`` (a followed file is idle), ``finish``, or
``flush`` when a bad line stops the input (every record before it is kept). What settling writes is in
``gemini_replay``. A JSON document that is not valid JSON is an error with its line and column; the complete
``messages[]`` elements before the damage are salvaged, with a warning saying so. Pure and sans-I/O.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..formats import session_stem
from .base import LineReader, LogBuilder, SessionLog, SourceError, json_type, line_origin, member_origin
from .documents import compact, decode_document, session_logs
from .gemini_replay import Rec, Replay

__all__ = ["read_json", "GeminiReader"]

FORMAT_JSON = "gemini-json"
FORMAT_JSONL = "gemini-jsonl"
_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


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
    out = LogBuilder(FORMAT_JSON, session_stem(file))
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

    def flush(self) -> None:
        try:
            self.close_tail()
        except SourceError:
            pass
