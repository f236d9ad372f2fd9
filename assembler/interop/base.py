"""What every reader of another harness's log shares (FORMATS.md §1-2), in one place to import from: the kept
source records and their errors (``_source``), the ``LogBuilder`` that writes our event model (``_builder``) and the
``LineReader``/``LineLoader`` of JSONL formats (``_lines``).

Rules: readers are sans-I/O (bytes in, our events out) and run unchanged on CPython and in Pyodide. Every source
record is kept: after the events made from it comes one ``interop/source`` event holding its original text and the
seqs it became, and a record that became nothing is an ``interop/raw`` event holding the decoded record (FORMATS
§2.2), so "Show records" shows the original and nothing is dropped.
"""

from __future__ import annotations

from ._builder import LogBuilder
from ._lines import LineLoader, LineReader, read_lines
from ._source import (
    RAW,
    SOURCE,
    SessionLog,
    SourceError,
    iso_ms,
    json_args,
    json_type,
    line_origin,
    member_origin,
    pointer,
    text_blocks,
    unix_ms,
)

__all__ = [
    "SOURCE",
    "RAW",
    "SourceError",
    "line_origin",
    "member_origin",
    "pointer",
    "iso_ms",
    "unix_ms",
    "json_args",
    "LogBuilder",
    "LineReader",
    "LineLoader",
    "SessionLog",
    "json_type",
    "read_lines",
    "text_blocks",
]
