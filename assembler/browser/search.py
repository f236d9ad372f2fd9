"""Search over the window's chat rows and the raw records a row was folded from.

Rules: search reads each row's text blocks (``render.node_text_blocks``: assistant text and reasoning, tool arguments
and results, input messages, compaction summaries, command output) as whole joined strings, rendered or not, so a
match that spans the fragments of one packed row is found without expanding it and no object is made per delta.
Matching is case-insensitive (``str.lower`` on both sides) and counts non-overlapping occurrences (``str.count``).
Lowered texts are cached per row revision. Raw records: the history records a row's Contexts matched, as stored (a
local file's own storage records; otherwise the wire record in storage form), a packed row summarised by its member
count, seq range and time span and expanded only when asked (``row_members``). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from .. import render
from ..chunk_rows import expand_row
from ..conversation import ConversationAssembler
from ..history import MessageIndex
from ..jsontext import encode_with, reader_text
from ..records import StorageRecord, StorageRow, encode_hook
from ..views import ViewNode, hidden_by_default

__all__ = ["SearchIndex", "node_records", "row_members", "row_texts"]

_encoder = msgspec.json.Encoder(enc_hook=encode_hook).encode


def _encode(value: Any) -> bytes:
    """A record's JSON as stored (lone surrogates escaped, not refused)."""
    return encode_with(_encoder, value)


def row_texts(node: ViewNode) -> list[str]:
    """A chat row's searchable texts as the page shows them (``render.node_text_blocks``, reader text): the one
    extraction both the in-page search and the server's cross-session index (``server.search_index``) read."""
    return [reader_text(text) for _, text in render.node_text_blocks(node)]


class SearchIndex:
    """Lowered text blocks per chat row, cached by revision."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, list[str], frozenset[int]]] = {}

    def _texts(self, node: ViewNode, rev: int) -> list[str]:
        return self._entry(node, rev)[1]

    def _entry(self, node: ViewNode, rev: int) -> tuple[int, list[str], frozenset[int]]:
        hit = self._cache.get(node.key)
        if hit is not None and hit[0] == rev:
            return hit
        blocks = render.node_text_blocks(node)
        texts = [reader_text(text).lower() for _, text in blocks]  # as the page shows it (row_texts)
        entry = (rev, texts, frozenset(i for i, (kind, _) in enumerate(blocks) if kind == "think"))
        self._cache[node.key] = entry
        return entry

    def search(self, nodes: Sequence[ViewNode], revs: Mapping[str, int], query: str,
               include_hidden: bool = False, skip_think: bool = False) -> dict[str, Any]:
        """``{query, total, hits: [[key, count, [block, ...]], ...]}`` in display order (``nodes``' order);
        ``skip_think`` leaves out reasoning blocks (the page's filter hides them)."""
        q = query.lower()
        hits: list[list[Any]] = []
        total = 0
        live = set()
        for node in nodes:
            live.add(node.key)
            if not q or (hidden_by_default(node) and not include_hidden):
                continue
            count = 0
            blocks = []
            _, texts, think = self._entry(node, revs.get(node.key, 0))
            for i, text in enumerate(texts):
                if skip_think and i in think:
                    continue
                n = text.count(q)
                if n:
                    count += n
                    blocks.append(i)
            if count:
                hits.append([node.key, count, blocks])
                total += count
        for key in [k for k in self._cache if k not in live]:
            del self._cache[key]
        return {"query": query, "total": total, "hits": hits}


def _matched(assembler: ConversationAssembler, key: str) -> list[tuple[int, int, Any]]:
    """``(first seq, last seq, event)`` of every entry the Contexts behind chat row ``key`` matched, by seq."""
    seen: dict[int, tuple[int, int, Any]] = {}
    for ctx in assembler.contexts.values():
        if ctx.key != key and key not in ctx.current:
            continue
        for m in ctx.matches:
            event = m.event
            last = event.last_seq if m.packed else event.seq
            seen.setdefault(event.seq, (event.seq, last, event))
    return [seen[s] for s in sorted(seen)]


def _stored(index: MessageIndex | None, matched: Iterable[tuple[int, int, Any]]) -> list[StorageRecord]:
    out: list[StorageRecord] = []
    firsts: set[int] = set()
    for first, last, event in matched:
        records: list[StorageRecord]
        if index is not None and last < index.event_count:
            records = index.storage_slice(first, last + 1)
        elif hasattr(event, "to_storage"):
            records = [event.to_storage()]
        else:
            records = [msgspec.to_builtins(event)]
        for record in records:
            s = record["seq"] if isinstance(record, dict) else record.seq
            if s not in firsts:
                firsts.add(s)
                out.append(record)
    return out


def _row_value(i: int, record: StorageRecord) -> dict[str, Any]:
    if isinstance(record, dict):
        return {"index": i, "packed": False, "seq": record.get("seq"), "type": record.get("type"),
                "json": _encode(record).decode()}
    return {"index": i, "packed": True, "type": record.type, "members": record.members, "seq": record.seq,
            "lastSeq": record.last_seq, "time": record.time, "lastTime": record.last_time,
            "bytes": len(_encode(record))}


def _sources(assembler: ConversationAssembler, matched: list[tuple[int, int, Any]]) -> list[dict[str, Any]]:
    """The originals of another harness's records that the matched events were made from (each ``interop/source``
    event lists the seqs it became), following an event's ``sourceEventSeqs`` one step (a message is made from its
    chunks' records), in file order."""
    made: dict[int, Any] = {}
    for ctx in assembler.contexts.values():
        if ctx.kind != "source-record" or ctx.start is None:
            continue
        event = ctx.start.event
        data = event.data if type(event.data) is dict else {}
        for seq in data.get("events", ()) if type(data.get("events")) is list else ():
            if type(seq) is int:
                made.setdefault(seq, event)
    if not made:
        return []
    wanted: list[int] = []
    for first, _last, event in matched:
        wanted.append(first)
        cited = getattr(event, "sourceEventSeqs", None)
        if type(cited) is list:
            wanted.extend(s for s in cited if type(s) is int)
    found: dict[int, Any] = {}
    for seq in wanted:
        source = made.get(seq)
        if source is not None:
            found.setdefault(source.seq, source)
    out = []
    for seq in sorted(found):
        data = found[seq].data
        out.append({"seq": seq, "format": data.get("format"), "recordType": data.get("recordType"),
                    "origin": data.get("origin"), "text": data.get("text"), "events": data.get("events")})
    return out


def node_records(assembler: ConversationAssembler, index: MessageIndex | None, key: str) -> dict[str, Any]:
    """The stored records chat row ``key`` was folded from: ``{key, records: [...], sources: [...]}``; packed rows
    are summarised; ``sources`` are the original records of another harness's log they were made from."""
    matched = _matched(assembler, key)
    stored = _stored(index, matched)
    return {"key": key, "records": [_row_value(i, r) for i, r in enumerate(stored)],
            "sources": _sources(assembler, matched)}


def row_members(assembler: ConversationAssembler, index: MessageIndex | None, key: str, i: int) -> dict[str, Any]:
    """Record ``i`` of row ``key`` in full: ``{json, members: [json line, ...]}`` (a packed row expanded here)."""
    stored = _stored(index, _matched(assembler, key))
    if not 0 <= i < len(stored):
        return {"json": "", "members": []}
    record = stored[i]
    if isinstance(record, dict):
        return {"json": _encode(record).decode(), "members": []}
    row: StorageRow = record
    return {"json": _encode(row).decode(), "members": [_encode(e).decode() for e in expand_row(row)]}
