"""The SQLite store's mapping between a storage record and an ``events`` table row (``store.sqlite`` has the
schema and the rules of the lossless layout).

Rules: ``record_row`` stores any record losslessly (what the columns cannot hold goes to ``extra``);
``row_record`` rebuilds it and ``checked_record`` applies the JSONL reader's rules (a row becomes its Struct of
``records``, validated by the same schema as a JSONL line), both raising ``BadRow`` or ``ChunkRowError`` with the
column or field at fault, so a crafted or damaged database is an error naming its row, never a KeyError.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..chunk_rows import is_storage_row, storage_row
from ..jsontext import NestingError, decode_json, has_surrogate
from ..records import ROW_TYPES, StorageRecord, encode, is_safe_integer

__all__ = ["BadRow", "record_row", "row_record", "checked_record"]

_EVENT_ORDER = ("type", "seq", "time", "data", "ignorable", "sourceEventSeqs", "surfaceOp")
_ROW_ORDER = ("type", "seq0", "time0", "data")
_decode = msgspec.json.Decoder().decode


def _text(value: Any) -> str:
    return encode(value).decode("utf-8")


def record_row(record: Any) -> tuple[Any, ...]:
    """A storage record as an ``events`` row (raises ValueError when it has no int-valued seq or string type)."""
    if is_storage_row(record):
        record = msgspec.to_builtins(record)  # the row's JSON value, keys in storage order
    if type(record) is not dict:
        raise ValueError(f"a storage record must be an object, got {type(record).__name__}")
    row = record.get("type") in ROW_TYPES
    order, seq_key, time_key = (_ROW_ORDER, "seq0", "time0") if row else (_EVENT_ORDER, "seq", "time")
    rtype = record.get("type")
    if type(rtype) is not str:
        raise ValueError(f"record type must be a string, got {rtype!r}")
    if has_surrogate(rtype):
        raise ValueError(f"record type {rtype!r} holds a lone UTF-16 surrogate (a TEXT column cannot hold it)")
    fields: dict[str, Any] = {}
    seq = record.get(seq_key)
    if type(seq) is int:
        seq0 = seq
    elif type(seq) is float and seq.is_integer():
        seq0 = int(seq)
        fields[seq_key] = seq
    else:
        raise ValueError(f"record {seq_key} must be an integer, got {seq!r}")
    time: Any = None
    if time_key in record:
        value = record[time_key]
        if type(value) is int:
            time = value
        else:
            fields[time_key] = value
    data = _text(record["data"]) if "data" in record else None
    ses = sop = ign = None
    if not row:
        if "sourceEventSeqs" in record:
            ses = _text(record["sourceEventSeqs"])
        if "surfaceOp" in record:
            sop = _text(record["surfaceOp"])
        if "ignorable" in record:
            value = record["ignorable"]
            if type(value) is bool:
                ign = int(value)
            else:
                fields["ignorable"] = value
    for key in record:
        if key not in order:
            fields[key] = record[key]
    keys = list(record)
    extra = None
    if fields or keys != [k for k in order if k in record]:
        extra = _text({"keys": keys, "fields": fields})
    members = len(record["data"]["args" if "args" in record["data"] else "texts"]) if row else 1
    return (seq0, "row" if row else "event", rtype, time, data, ses, sop, ign, members, extra)


class BadRow(Exception):
    """A table row the columns cannot rebuild into a storage record (a crafted or damaged database)."""


def _json_column(name: str, text: Any) -> Any:
    if type(text) is not str:
        raise BadRow(f"column {name} must be JSON text or NULL, got {_sql_type(text)}")
    try:
        return decode_json(text.encode("utf-8", "surrogatepass"), _decode)
    except msgspec.DecodeError as exc:
        raise BadRow(f"column {name} is not valid JSON ({exc})") from None
    except NestingError as exc:
        raise BadRow(f"column {name}: {exc}") from None


def _sql_type(value: Any) -> str:
    return {type(None): "NULL", int: "an integer", float: "a real", str: "text", bytes: "a blob"}.get(
        type(value), type(value).__name__)


def row_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """Rebuild a storage record from its table row; raises ``BadRow`` saying which column is wrong."""
    seq0, kind, rtype, time, data, ses, sop, ign, members, extra = row
    if type(seq0) is not int:
        raise BadRow(f"column seq0 must be an integer, got {_sql_type(seq0)}")
    if kind not in ("event", "row"):
        raise BadRow(f"column kind must be 'event' or 'row', got {kind!r}")
    if type(rtype) is not str:
        raise BadRow(f"column type must be text, got {_sql_type(rtype)}")
    is_row = kind == "row"
    if is_row != (rtype in ROW_TYPES):
        what = "is not a chunk-row tag" if is_row else "is a chunk-row tag"
        raise BadRow(f"kind {kind!r} and type {rtype!r} disagree (the type {what})")
    if time is not None and type(time) is not int:
        raise BadRow(f"column time must be an integer or NULL, got {_sql_type(time)}")
    if ign is not None and ign not in (0, 1):
        raise BadRow(f"column ignorable must be 0, 1 or NULL, got {ign!r}")
    if type(members) is not int or members < 1 or (not is_row and members != 1):
        raise BadRow(f"column members must be {'>= 1' if is_row else '1 for an event'}, got {members!r}")
    seq_key, time_key = ("seq0", "time0") if is_row else ("seq", "time")
    columns: dict[str, Any] = {"type": rtype, seq_key: seq0}
    if time is not None:
        columns[time_key] = time
    if data is not None:
        columns["data"] = _json_column("data", data)
    if ign is not None:
        columns["ignorable"] = bool(ign)
    if ses is not None:
        columns["sourceEventSeqs"] = _json_column("source_event_seqs", ses)
    if sop is not None:
        columns["surfaceOp"] = _json_column("surface_op", sop)
    if extra is None:
        return columns  # inserted in canonical order
    layout = _json_column("extra", extra)
    keys = layout.get("keys") if type(layout) is dict else None
    fields = layout.get("fields") if type(layout) is dict else None
    if type(keys) is not list or type(fields) is not dict or any(type(k) is not str for k in keys):
        raise BadRow('column extra must be {"keys": [names], "fields": {name: value}}')
    record: dict[str, Any] = {}
    for key in keys:
        if key in fields:
            record[key] = fields[key]
        elif key in columns:
            record[key] = columns[key]
        else:
            raise BadRow(f"column extra names the key {key!r}, which neither the columns nor its fields hold")
    return record


def checked_record(record: dict[str, Any], members: int) -> StorageRecord:
    """The rules the JSONL reader applies to a record (PROTOCOL 2.3), for a rebuilt one: a row comes back as its
    Struct (``ChunkRowError`` names the field), an event as it is."""
    if record.get("type") in ROW_TYPES:
        row = storage_row(record)
        if row.members != members:
            raise BadRow(f"column members says {members} but the row holds {row.members} deltas")
        return row
    for key in ("seq", "time"):  # as for a row's seq0/time0: a JS safe integer (an integral float is one)
        value = record.get(key)
        if not is_safe_integer(value):
            raise BadRow(f"{key} must be a safe integer, got {value!r}")
    return record
