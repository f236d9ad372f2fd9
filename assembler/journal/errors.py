"""The journal's errors (PROTOCOL 4): ``JournalError`` and one ``ProtocolViolation`` subclass per rule broken.

Rules: a violation's message is the stream name followed by the spec's phrase (and a detail in parentheses); the
constructor arguments are kept in ``args`` so every error pickles. Sans-I/O like the rest of the journal.
"""

from __future__ import annotations

from ..errors import AssemblerError, DiscontinuityError

__all__ = [
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
]

STREAM_NAME = "session event stream"


class JournalError(AssemblerError):
    """Root of the journal's errors."""


class JournalNotOpen(JournalError):
    """``prepend`` before the first opening (a usage error, not a protocol violation)."""


class JournalFailed(JournalError):
    """Input after a protocol violation stopped the journal; ``cause`` is that violation."""

    def __init__(self, cause: JournalError) -> None:
        super().__init__(cause)
        self.cause = cause

    def __str__(self) -> str:
        return f"journal is failed: {self.cause}"


class PageReadFailed(JournalError):
    """The caller could not read a requested page (reported with ``page_failed``)."""


class ProtocolViolation(JournalError):
    """The server broke a rule of PROTOCOL 4. The message is the stream name followed by the spec's phrase."""

    phrase = "violated the journal protocol"

    def __init__(self, detail: str = "", stream: str = STREAM_NAME) -> None:
        super().__init__(detail, stream)
        self.detail = detail
        self.stream = stream

    def __str__(self) -> str:
        return f"{self.stream} {self.phrase}" + (f" ({self.detail})" if self.detail else "")


class _PhrasedViolation(ProtocolViolation):
    """A violation class that covers several phrases of the spec; the phrase is given per instance."""

    def __init__(self, phrase: str, detail: str = "", stream: str = STREAM_NAME) -> None:
        AssemblerError.__init__(self, phrase, detail, stream)
        self.phrase = phrase
        self.detail = detail
        self.stream = stream


class InvertedRange(ProtocolViolation):
    """4.1: an entry whose first seq is after its last."""

    phrase = "emitted an inverted cursor range"


class DiscontinuousPage(ProtocolViolation, DiscontinuityError):
    """4.2: a page whose entries do not follow each other exactly (``expected`` / ``got`` seqs)."""

    phrase = "page contains discontinuous entries"

    def __init__(self, expected: int, got: int, stream: str = STREAM_NAME) -> None:
        AssemblerError.__init__(self, expected, got, stream)
        self.expected = expected
        self.got = got
        self.context = "page"
        self.detail = f"expected seq {expected}, got seq {got}"
        self.stream = stream

    def __str__(self) -> str:
        return ProtocolViolation.__str__(self)


class OpeningViolation(_PhrasedViolation):
    """4.3: an entry before the opening cursor, a second opening, or an end before any opening."""


class CursorMismatch(_PhrasedViolation):
    """4.3/4.5: a page that did not end at its requested cursor, or a repair that did not reach its target."""


class StaleResume(ProtocolViolation):
    """4.4: a reconnect whose cursor is behind the last applied entry."""

    phrase = "resumed at a cursor behind the last applied entry"


class PartialOverlap(_PhrasedViolation):
    """4.5: a live entry, or a queued entry in a repair merge, that partially overlaps the applied window."""


class DiscontinuousHistory(ProtocolViolation):
    """4.6: an older page that does not join the window's first cursor."""

    phrase = "history page is discontinuous"


class StreamEnded(_PhrasedViolation):
    """4.5: the stream ended while a replacement page was being read."""


class PackedLiveRecord(ProtocolViolation):
    """3.3: a live append whose entry is a packed ``chunks`` record."""

    phrase = "live stream emitted a packed history record"

    def __init__(self, detail: str = "", stream: str = "session") -> None:
        super().__init__(detail, stream)
