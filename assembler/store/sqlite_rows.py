"""The SQLite store's mapping between a storage record and an ``events`` table row (``store.sqlite`` has the
schema and the rules of the lossless layout), and the reading of table rows into a ``LoadResult``.

Rules: ``record_row`` stores any record losslessly (what the columns cannot hold goes to ``extra``);
``row_record`` rebuilds it, raising ``BadRow`` with the column at fault; ``load_rows`` then applies exactly the
JSONL reader's rules to the rebuilt record (``logfile.check_record``: a row becomes its Struct of ``records``, an
event's envelope is checked, as for a line), so a database and the JSONL file holding the same records get the same
verdict, and a crafted or damaged database is ``row N: ...`` naming its row, never a traceback.
Text columns arrive as ``SqlText`` (bytes: SQLite does not check UTF-8, so invalid UTF-8 is this row's error, not a
``sqlite3`` one for the whole read) and blobs as ``bytes``. A column longer than the line cap is refused unread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from ..chunk_rows import is_storage_row
from ..errors import RecordDecodeError, SessionFileError
from ..jsontext import NestingError, decode_json, has_surrogate
from ..logfile import LoadResult, check_record
from ..records import ROW_TYPES, encode

__all__ = ["BadRow", "SqlText", "record_row", "row_record", "load_rows", "session_header"]

_EVENT_ORDER = ("type", "seq", "time", "data", "ignorable", "sourceEventSeqs", "surfaceOp")
_ROW_ORDER = ("type", "seq0", "time0", "data")
_decode = msgspec.json.Decoder().decode
_COLUMN_NAMES = ("seq0", "kind", "type", "time", "data", "source_event_seqs", "surface_op", "ignorable", "members",
                 "extra")


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


class SqlText(bytes):
    """A TEXT value as SQLite stores it (the connection's ``text_factory`` while rows are read): its UTF-8 bytes,
    told apart from a BLOB's ``bytes``."""


def _sql_type(value: Any) -> str:
    return {type(None): "NULL", int: "an integer", float: "a real", SqlText: "text", bytes: "a blob"}.get(
        type(value), type(value).__name__)


def _shown(value: Any) -> str:
    if type(value) is SqlText:
        value = value.decode("utf-8", "replace")
    elif type(value) is bytes:
        value = bytes(value)
    return repr(value)[:80]


def _json_column(name: str, text: Any) -> Any:
    if type(text) is not SqlText:
        raise BadRow(f"column {name} must be JSON text or NULL, got {_sql_type(text)}")
    try:
        return decode_json(bytes(text), _decode)
    except msgspec.DecodeError as exc:
        reason = "invalid UTF-8" if "UTF-8" in str(exc) else f"not valid JSON ({exc})"
        raise BadRow(f"column {name} is {reason}") from None
    except NestingError as exc:
        raise BadRow(f"column {name}: {exc}") from None


def _text_column(name: str, value: Any) -> str:
    if type(value) is not SqlText:
        raise BadRow(f"column {name} must be text, got {_sql_type(value)}")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRow(f"column {name} is invalid UTF-8 ({_shown(value)})") from None


def row_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """Rebuild a storage record from its table row; raises ``BadRow`` saying which column is wrong."""
    seq0, kind, rtype, time, data, ses, sop, ign, members, extra = row[:10]
    if type(seq0) is not int:
        raise BadRow(f"column seq0 must be an integer, got {_sql_type(seq0)} {_shown(seq0)}")
    if type(kind) is not SqlText or kind not in (b"event", b"row"):
        raise BadRow(f"column kind must be 'event' or 'row', got {_sql_type(kind)} {_shown(kind)}")
    rtype = _text_column("type", rtype)
    is_row = kind == b"row"
    if is_row != (rtype in ROW_TYPES):
        what = "is not a chunk-row tag" if is_row else "is a chunk-row tag"
        raise BadRow(f"kind {kind.decode()!r} and type {rtype!r} disagree (the type {what})")
    if time is not None and type(time) is not int:
        raise BadRow(f"column time must be an integer or NULL, got {_sql_type(time)}")
    if ign is not None and (type(ign) is not int or ign not in (0, 1)):
        raise BadRow(f"column ignorable must be 0, 1 or NULL, got {_sql_type(ign)} {_shown(ign)}")
    if type(members) is not int or members < 1 or (not is_row and members != 1):
        raise BadRow(f"column members must be {'>= 1' if is_row else '1 for an event'}, got {_sql_type(members)} "
                     f"{_shown(members)}")
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


def session_header(text: Any, error: Callable[[str, str], Exception], path: str) -> dict[str, Any]:
    """The ``session.header`` column (read as ``SqlText``) as the JSONL reader takes a header line: a JSON object of
    type ``session``.

    Raises:
        ``error(path, reason)`` (the store's ``StoreError``): anything else (NULL, not text, not JSON, too deep,
            another object).
    """
    if type(text) is not SqlText:
        kind = "NULL" if text is None else "a blob" if type(text) is bytes else type(text).__name__
        raise error(path, f"session header must be JSON text, got {kind}")
    try:
        header = decode_json(bytes(text), _decode)
    except NestingError as exc:
        raise error(path, f"session header: {exc}") from None
    except msgspec.DecodeError as exc:
        reason = "invalid UTF-8" if "UTF-8" in str(exc) else f"bad header JSON: {exc}"
        raise error(path, f"session header: {reason}") from None
    if type(header) is not dict:
        raise error(path, "session header is not a JSON object")
    if header.get("type") != "session":
        raise error(path, f"session header: not a session header (type {header.get('type')!r}, expected "
                               "'session')"[:300])
    return header


def load_rows(rows: Iterable[tuple[Any, ...]], header: dict[str, Any], *, stray: tuple[float, Any] | None = None,
              max_line_bytes: int | None = None) -> LoadResult:
    """The table's ``rows`` in seq order (``SqliteSessionStore.iter_rows``) as a ``LoadResult``, as the JSONL reader
    gives for the same records: each rebuilt (``row_record``), then checked by the JSONL reader's own rules
    (``logfile.check_record``), then required to continue the log. The first fault stops it with ``row N: ...``
    (N counts rows in seq order), every record before it kept. ``stray``: ``(where, value)`` of the first row whose
    ``seq0`` is text or a blob (SQLite sorts those after every number), ``where`` its place in seq order (SQLite's
    number for it); it is the fault there. A row whose 11th column names a column is refused as longer than
    ``max_line_bytes`` (``iter_rows`` leaves such a column unread), and so is a text longer than that.
    """
    result = LoadResult(header=header)
    expected, n = 0, 0
    for n, row in enumerate(rows, 1):
        seq0 = row[0]
        if stray is not None and (type(seq0) is not int or seq0 > stray[0]):
            break
        where = f"row {n} (seq0 {seq0})" if type(seq0) is int else f"row {n}"
        try:
            if max_line_bytes is not None:
                long = bytes(row[10]).decode() if len(row) > 10 and row[10] is not None else None
                if long is None:  # SQLite counted characters: the bytes decide
                    long = next((name for name, v in zip(_COLUMN_NAMES, row, strict=False)
                                 if type(v) is SqlText and len(v) > max_line_bytes), None)
                if long is not None:
                    raise BadRow(f"column {long} is longer than {max_line_bytes} bytes")
            record = check_record(row_record(row), expected)  # a row becomes its Struct here
            count = 1 if type(record) is dict else record.members  # type: ignore[union-attr]
            if count != row[8]:
                raise BadRow(f"column members says {row[8]} but the row holds {count} deltas")
        except BadRow as exc:
            result.error = SessionFileError(f"{where}: {exc}")
            break
        except RecordDecodeError as exc:
            result.error = type(exc)(f"{where}: {exc.message}")  # starts with the row: the message names its seq0
            break
        seq = record["seq"] if type(record) is dict else record.seq  # type: ignore[union-attr]
        if seq != expected:
            what = "seq" if type(record) is dict else "row seq0"  # the words of the line reader (logfile)
            result.error = SessionFileError(
                f"{where}: {what} {seq} does not continue the log (expected seq {expected})", seq=seq)
            break
        if type(record) is not dict:
            result.row_count += 1
            result.row_members += count
        result.records.append(record)
        result.event_count += count
        expected = seq + count
    else:
        n += 1
    if stray is not None and result.error is None:
        value = stray[1]
        result.error = SessionFileError(f"row {n}: column seq0 must be an integer, got {_sql_type(value)} "
                                        f"{_shown(value)}")
    result.lines = len(result.records) + 1
    return result
