"""Transcript Assembler core: session event logs with packed chunk rows → readable transcripts.

The core is sans-I/O and runs unchanged on CPython 3.11+ and in Pyodide: it imports no ``js``, ``pyodide``,
``asyncio``, sockets, files or clocks. Edges (``store``, ``server``, ``cli``, ``browser``, ``render``) import it,
never the reverse.
"""

from .chunk_rows import (
    MIN_RUN,
    decode_storage_record,
    expand_records,
    pack_chunk_runs,
    repack_records,
    slice_storage_row,
    storage_record_range,
    storage_row_to_wire,
    wire_row_to_storage,
)
from .errors import (
    AssemblerError,
    ChunkRowError,
    DiscontinuityError,
    PackedStartError,
    RecordDecodeError,
    SessionFileError,
)
from .logfile import LoadResult, SessionLogParser, parse_session_bytes
from .records import (
    ChunksRecord,
    EventFrame,
    EventRecord,
    SessionEvent,
    SessionPage,
    SnapshotFrame,
    decode_follow_frame,
    decode_page,
    record_range,
)

__version__ = "0.1.0"

__all__ = [
    "MIN_RUN",
    "AssemblerError",
    "ChunkRowError",
    "ChunksRecord",
    "DiscontinuityError",
    "EventFrame",
    "EventRecord",
    "LoadResult",
    "PackedStartError",
    "RecordDecodeError",
    "SessionEvent",
    "SessionFileError",
    "SessionLogParser",
    "SessionPage",
    "SnapshotFrame",
    "decode_follow_frame",
    "decode_page",
    "decode_storage_record",
    "expand_records",
    "pack_chunk_runs",
    "parse_session_bytes",
    "record_range",
    "repack_records",
    "slice_storage_row",
    "storage_record_range",
    "storage_row_to_wire",
    "wire_row_to_storage",
]
