"""The client journal (PROTOCOL 4): keeps a window of history records continuous across pages, live frames and
reconnects. Sans-I/O: frames and pages go in; publications and page requests come out; it never fetches.

Rules: every entry covers an inclusive logical range ``[first, last]`` (a packed row covers all its members). Inside
a page entries follow each other exactly. Live entries are appended when they follow the last applied seq, dropped
when they are complete duplicates, rejected when they partially overlap, and repaired when they leave a gap (the
journal returns a ``PageRequest``; the caller answers it with ``page``). A protocol violation raises a specific
``ProtocolViolation`` and leaves the last good window published; after a violation on the live stream the journal is
failed and refuses further input (a failed ``prepend`` join is reported but does not stop the stream).

Modules: ``errors`` (the error classes), ``publications`` (``PageRequest`` and what the journal publishes),
``journal`` (the ``Journal`` state machine and ``session_journal``). Import from this package.
"""

from .errors import (
    STREAM_NAME,
    CursorMismatch,
    DiscontinuousHistory,
    DiscontinuousPage,
    InvertedRange,
    JournalError,
    JournalFailed,
    JournalNotOpen,
    OpeningViolation,
    PackedLiveRecord,
    PageReadFailed,
    PartialOverlap,
    ProtocolViolation,
    StaleResume,
    StreamEnded,
)
from .journal import (
    EMPTY_CURSOR,
    Journal,
    session_journal,
)
from .publications import (
    Append,
    Output,
    PageRequest,
    Prepend,
    Publication,
    Replace,
)

__all__ = [
    "EMPTY_CURSOR",
    "STREAM_NAME",
    "JournalError",
    "JournalNotOpen",
    "JournalFailed",
    "PageReadFailed",
    "ProtocolViolation",
    "InvertedRange",
    "DiscontinuousPage",
    "OpeningViolation",
    "CursorMismatch",
    "StaleResume",
    "PartialOverlap",
    "DiscontinuousHistory",
    "StreamEnded",
    "PackedLiveRecord",
    "PageRequest",
    "Replace",
    "Prepend",
    "Append",
    "Publication",
    "Output",
    "Journal",
    "session_journal",
]
