"""The error root of the assembler and its specific subclasses.

Rules: every error the package raises on bad input is an ``AssemblerError``; the message names the offending
line or seq and what was wrong; errors pickle (their constructor arguments are kept in ``args``).
"""

from __future__ import annotations

__all__ = [
    "AssemblerError",
    "RecordDecodeError",
    "ChunkRowError",
    "SessionFileError",
    "DiscontinuityError",
    "ConversationError",
    "MatchOrderError",
    "DefinitionError",
    "PackedStartError",
    "InputFault",
    "EntryFault",
    "FOLD_FAULTS",
]


class AssemblerError(Exception):
    """Root of every error raised by ``assembler`` and ``definitions``."""


class RecordDecodeError(AssemblerError):
    """A wire or storage record failed validation.

    ``line`` (1-based file line) and ``seq`` are set when known; the message already names them.
    """

    def __init__(self, message: str, line: int | None = None, seq: int | None = None) -> None:
        super().__init__(message, line, seq)
        self.message = message
        self.line = line
        self.seq = seq

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.seq is not None:
            where.append(f"seq {self.seq}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class ChunkRowError(RecordDecodeError):
    """A packed chunk row (storage ``*-chunks`` or wire ``chunkrow/*``) is malformed (PROTOCOL 2.3)."""


class SessionFileError(RecordDecodeError):
    """A session log file is unusable at a line: missing header, invalid JSON or UTF-8, a seq out of order."""


class DiscontinuityError(AssemblerError):
    """Records do not continue each other: ``expected`` was the next seq, ``got`` arrived."""

    def __init__(self, expected: int, got: int, context: str = "") -> None:
        super().__init__(expected, got, context)
        self.expected = expected
        self.got = got
        self.context = context

    def __str__(self) -> str:
        prefix = f"{self.context}: " if self.context else ""
        return f"{prefix}expected seq {self.expected}, got seq {self.got}"


class ConversationError(AssemblerError):
    """A Definition or an entry broke the assembler contract (ASSEMBLY 5.1-5.2); the message names the seq."""


class MatchOrderError(ConversationError):
    """Matches of one Context arrived out of order, a second start, or a start after an update."""

    def __init__(self, seq: int, key: str, reason: str) -> None:
        super().__init__(seq, key, reason)
        self.seq = seq
        self.key = key
        self.reason = reason

    def __str__(self) -> str:
        return f"seq {self.seq}: context {self.key} {self.reason}"


class DefinitionError(ConversationError):
    """A Definition returned something the contract forbids (no state, a wrong node key or target, ...)."""


class PackedStartError(ConversationError):
    """A packed chunk row tried to start a Context (ASSEMBLY 5.1: only scalar events start)."""

    def __init__(self, seq: int, kind: str = "") -> None:
        super().__init__(seq, kind)
        self.seq = seq
        self.kind = kind

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.kind or 'a definition'} received a packed start Match"


class InputFault:
    """Not an exception: an event a Definition could not fold (a field of an unexpected type), recorded by the
    assembler, which shows that event through the fallback Definition instead."""

    __slots__ = ("seq", "type", "message")

    def __init__(self, seq: int, type: str, message: str) -> None:
        self.seq = seq
        self.type = type
        self.message = message

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.message}"

    def __repr__(self) -> str:
        return f"InputFault({self.seq}, {self.type!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputFault) and (self.seq, self.type, self.message) == (
            other.seq, other.type, other.message)

    __hash__ = None  # type: ignore[assignment]


class EntryFault(Exception):
    """A Definition failed on the entries ``seqs`` (of type or kind ``etype``). Internal to the assembler, which
    catches it at its entry points, quarantines those entries and records an ``InputFault`` for each."""

    def __init__(self, seqs: tuple[int, ...], etype: str, cause: BaseException) -> None:
        super().__init__(seqs, etype)
        self.seqs = seqs
        self.etype = etype
        self.cause = cause


FOLD_FAULTS = (TypeError, ValueError, AttributeError, KeyError, IndexError)
"""What a Definition raises on an event whose fields have unexpected types."""
