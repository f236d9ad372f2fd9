"""Transcript Assembler core: session event logs with packed chunk rows → readable transcripts.

The core is sans-I/O and runs unchanged on CPython 3.11+ and in Pyodide: it imports no ``js``, ``pyodide``,
``asyncio``, sockets, files or clocks. Edges (``store``, ``server``, ``cli``, ``browser``, ``render``) import it,
never the reverse. Names are imported from their module on first use (PEP 562), so a command pays only for the
modules it needs.
"""

from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from .chunk_rows import (
        MIN_RUN,
        decode_storage_record,
        expand_records,
        expand_row,
        pack_chunk_runs,
        repack_records,
        slice_storage_row,
        storage_record_range,
        storage_row,
    )
    from .conversation import (
        ConversationAssembler,
    )
    from .definition import (
        Context,
        Definition,
        Match,
        Reader,
        Role,
        context_key,
        node_location,
    )
    from .errors import (
        AssemblerError,
        ChunkRowError,
        ConversationError,
        DefinitionError,
        DiscontinuityError,
        MatchOrderError,
        PackedStartError,
        RecordDecodeError,
        SessionFileError,
    )
    from .history import (
        DEFAULT_MAX_MESSAGES,
        MessageIndex,
        PageRequestError,
        check_page_request,
        page_value,
        paginate,
        scalar_records,
        snapshot_value,
        wire_records,
    )
    from .invariants import (
        Violation,
        check_events,
    )
    from .journal import (
        Append,
        Journal,
        JournalError,
        PageRequest,
        Prepend,
        ProtocolViolation,
        Replace,
        session_journal,
    )
    from .locations import (
        Location,
        LocationIndex,
        StepLocation,
        TurnLocation,
    )
    from .logfile import (
        LoadResult,
        LogLoader,
        LogParser,
        parse_session_bytes,
    )
    from .records import (
        ChunksRecord,
        EventFrame,
        EventRecord,
        SessionEvent,
        SessionPage,
        SnapshotFrame,
        StorageRow,
        decode_follow_frame,
        decode_page,
        record_range,
    )
    from .repair import (
        interrupted_turn_closers,
        repair_events,
    )
    from .session import (
        AppendError,
        SeedError,
        Session,
    )
    from .surface import (
        SURFACE_TYPES,
        SurfaceError,
        SurfaceManager,
        derive_messages,
        replace_op,
    )
    from .text import (
        JS_WHITESPACE,
        is_blank,
        js_trim,
    )
    from .transcript import (
        Transcript,
        assemble,
        canonical_json,
        digest,
    )
    from .views import (
        HIDDEN_KINDS,
        FlushResult,
        LocationData,
        TimelineTurn,
        ViewNode,
        ViewUpdate,
        hidden_by_default,
    )

__version__ = "0.1.0"

_MODULES: dict[str, tuple[str, ...]] = {
    "chunk_rows": (
        "decode_storage_record", "expand_records", "expand_row", "MIN_RUN", "pack_chunk_runs", "repack_records",
        "slice_storage_row", "storage_record_range", "storage_row",
    ),
    "conversation": ("ConversationAssembler",),
    "definition": ("Context", "context_key", "Definition", "Match", "node_location", "Reader", "Role",),
    "errors": (
        "AssemblerError", "ChunkRowError", "ConversationError", "DefinitionError", "DiscontinuityError",
        "MatchOrderError", "PackedStartError", "RecordDecodeError", "SessionFileError",
    ),
    "history": (
        "check_page_request", "DEFAULT_MAX_MESSAGES", "MessageIndex", "page_value", "PageRequestError", "paginate",
        "scalar_records", "snapshot_value", "wire_records",
    ),
    "invariants": ("check_events", "Violation",),
    "journal": (
        "Append", "Journal", "JournalError", "PageRequest", "Prepend", "ProtocolViolation", "Replace",
        "session_journal",
    ),
    "locations": ("Location", "LocationIndex", "StepLocation", "TurnLocation",),
    "logfile": ("LoadResult", "LogLoader", "LogParser", "parse_session_bytes",),
    "records": (
        "ChunksRecord", "decode_follow_frame", "decode_page", "EventFrame", "EventRecord", "record_range",
        "SessionEvent", "SessionPage", "SnapshotFrame", "StorageRow",
    ),
    "repair": ("interrupted_turn_closers", "repair_events",),
    "session": ("AppendError", "SeedError", "Session",),
    "surface": ("derive_messages", "replace_op", "SURFACE_TYPES", "SurfaceError", "SurfaceManager",),
    "text": ("is_blank", "js_trim", "JS_WHITESPACE",),
    "transcript": ("assemble", "canonical_json", "digest", "Transcript",),
    "views": (
        "FlushResult", "hidden_by_default", "HIDDEN_KINDS", "LocationData", "TimelineTurn", "ViewNode", "ViewUpdate",
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "Append",
    "AppendError",
    "AssemblerError",
    "ChunkRowError",
    "ChunksRecord",
    "Context",
    "ConversationAssembler",
    "ConversationError",
    "DEFAULT_MAX_MESSAGES",
    "Definition",
    "DefinitionError",
    "DiscontinuityError",
    "EventFrame",
    "EventRecord",
    "FlushResult",
    "HIDDEN_KINDS",
    "JS_WHITESPACE",
    "Journal",
    "JournalError",
    "LoadResult",
    "Location",
    "LocationData",
    "LocationIndex",
    "LogLoader",
    "LogParser",
    "MIN_RUN",
    "Match",
    "MatchOrderError",
    "MessageIndex",
    "PackedStartError",
    "PageRequest",
    "PageRequestError",
    "Prepend",
    "ProtocolViolation",
    "Reader",
    "RecordDecodeError",
    "Replace",
    "Role",
    "SURFACE_TYPES",
    "SeedError",
    "Session",
    "SessionEvent",
    "SessionFileError",
    "SessionPage",
    "SnapshotFrame",
    "StepLocation",
    "StorageRow",
    "SurfaceError",
    "SurfaceManager",
    "TimelineTurn",
    "Transcript",
    "TurnLocation",
    "ViewNode",
    "ViewUpdate",
    "Violation",
    "assemble",
    "canonical_json",
    "check_events",
    "check_page_request",
    "context_key",
    "decode_follow_frame",
    "decode_page",
    "decode_storage_record",
    "derive_messages",
    "digest",
    "expand_records",
    "expand_row",
    "hidden_by_default",
    "interrupted_turn_closers",
    "is_blank",
    "js_trim",
    "node_location",
    "pack_chunk_runs",
    "page_value",
    "paginate",
    "parse_session_bytes",
    "record_range",
    "repack_records",
    "repair_events",
    "replace_op",
    "scalar_records",
    "session_journal",
    "slice_storage_row",
    "snapshot_value",
    "storage_record_range",
    "storage_row",
    "wire_records",
]


def __getattr__(name: str) -> _Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
