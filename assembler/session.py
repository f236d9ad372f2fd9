"""The session: an append-only log of logical events with its surface (seeds/001, 000; PROTOCOL 1.1-1.2).

Rules: a seed (the events of a file, a fork or a resume) is validated on construction (seqs contiguous from 0,
integer times, JSON-serialisable events, ``surfaceOp`` on every surface-eligible event, a surface that replays).
``append`` assigns ``seq`` and ``time`` (the clock is injected: the core reads no clock) and refuses a
surface-eligible event without a surface intent whatever the caller's static types were. A non-empty seed is
closed by a ``session/end-seed`` event; ``first_live_seq`` is the index of the first event this lifecycle produced.
Nothing invalid is ever committed. Sans-I/O; events are plain dicts in the reference key order.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, overload

from .chunk_rows import expand_records, pack_chunk_runs
from .errors import AssemblerError
from .invariants import provenance_problems
from .records import MAX_SAFE_INTEGER
from .surface import SURFACE_TYPES, SurfaceError, SurfaceManager, derive_messages, replace_op, surface_op_problem

__all__ = [
    "END_SEED",
    "Clock",
    "SeedError",
    "AppendError",
    "Session",
    "json_problem",
]

END_SEED: Final = "session/end-seed"
"""The event type that marks where a constructor seed ends (PROTOCOL 1.2)."""

Clock = Callable[[], int]
"""Returns the current time as integer Unix epoch milliseconds."""

_MAX_DEPTH = 10_000


class SeedError(AssemblerError):
    """A seed event is invalid: ``seq`` is its position in the seed, ``reason`` what was wrong."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(seq, reason)
        self.seq = seq
        self.reason = reason

    def __str__(self) -> str:
        return f"seed seq {self.seq}: {self.reason}"


class AppendError(AssemblerError):
    """An ``append`` was refused for a reason other than its surface intent; ``seq`` is the seq it would get."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(seq, reason)
        self.seq = seq
        self.reason = reason

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.reason}"


def _safe_int(value: object) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def json_problem(value: object) -> str | None:
    """Where and why ``value`` is not plain JSON (dict with str keys, list, str, finite number, bool, None)."""
    # Iterative walk: (value, parent entry, key, depth); the path is rebuilt only on failure.
    stack: list[tuple[object, Any, object, int]] = [(value, None, "$", 0)]
    while stack:
        entry = stack.pop()
        v, _, _, depth = entry
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            continue
        if t is float:
            if math.isfinite(v):  # type: ignore[arg-type]
                continue
            return f"{_path(entry)}: non-finite number {v!r}"
        if depth > _MAX_DEPTH:
            return f"{_path(entry)}: nested too deeply (a cycle?)"
        if t is dict:
            for k, x in v.items():  # type: ignore[attr-defined]
                if type(k) is not str:
                    return f"{_path(entry)}: non-string key {k!r}"
                stack.append((x, entry, k, depth + 1))
            continue
        if t is list:
            for i, x in enumerate(v):  # type: ignore[arg-type]
                stack.append((x, entry, i, depth + 1))
            continue
        return f"{_path(entry)}: a {t.__name__} is not JSON"
    return None


def _path(entry: tuple[object, Any, object, int]) -> str:
    parts: list[str] = []
    node: Any = entry
    while node is not None:
        key = node[2]
        parts.append(f"[{key}]" if type(key) is int else ("$" if node[1] is None else f".{key}"))
        node = node[1]
    return "".join(reversed(parts))


class _LogView(Sequence[Mapping[str, Any]]):
    """A read-only view of the session's event list (no copy)."""

    __slots__ = ("_log",)

    def __init__(self, log: list[dict[str, Any]]) -> None:
        self._log = log

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return self._log[index]

    def __len__(self) -> int:
        return len(self._log)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self._log)


_type_of = builtins.type  # ``append`` names its first parameter ``type``, as the reference does


class Session:
    """One session's logical event log, its surface and its header.

    Args:
        seed: logical events to start from (a loaded file, a fork, a resume), ``seq`` 0..n-1. Held, not copied:
            treat them as immutable.
        clock: returns integer epoch ms; required to append (and to write the end-seed marker).
        header: the session header (``{"type":"session","version":0,...}``), kept as given.
        end_seed: append ``session/end-seed`` after a non-empty seed (the reference's fork/resume behaviour).
            Pass False to open a log for reading only.

    Raises:
        SeedError: a seed event is not a dict, its seq breaks contiguity, its time is not a safe integer, it is
            not JSON-serialisable, a surface-eligible event has no ``surfaceOp``, or its surface marker does not
            replay (an endpoint not on the surface, a reversed range, missing provenance...).
    """

    def __init__(self, seed: Iterable[Mapping[str, Any]] = (), *, clock: Clock | None = None,
                 header: Mapping[str, Any] | None = None, end_seed: bool = True) -> None:
        events: list[dict[str, Any]] = list(seed)  # type: ignore[arg-type]
        _validate_seed(events)
        self._events = events
        self._clock = clock
        self.header: dict[str, Any] | None = dict(header) if header is not None else None
        self._surface = SurfaceManager(events)
        try:
            self._surface.sync()
        except SurfaceError as exc:
            raise SeedError(exc.seq, exc.reason) from exc
        self._first_live_seq = len(events)
        if events and end_seed:
            if clock is None:
                raise ValueError("end_seed needs a clock (pass end_seed=False to open a log read-only)")
            self.append(END_SEED, {})

    @classmethod
    def from_records(cls, records: Iterable[Any], *, clock: Clock | None = None,
                     header: Mapping[str, Any] | None = None, end_seed: bool = False) -> Session:
        """A session seeded from storage records (packed rows expanded by the explicit codec call).

        Defaults to ``end_seed=False``: opening a stored log to read it does not start a new lifecycle.

        Raises:
            SeedError: as for the constructor.
            ChunkRowError: a malformed packed row.
        """
        return cls(expand_records(records), clock=clock, header=header, end_seed=end_seed)

    # -- reads ------------------------------------------------------------------------------------------------

    @property
    def events(self) -> Sequence[Mapping[str, Any]]:
        """The logical events, ``events[i]["seq"] == i`` (a read-only view)."""
        return _LogView(self._events)

    @property
    def seq(self) -> int:
        """The seq the next appended event will get (the log length)."""
        return len(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def event_at(self, seq: int) -> Mapping[str, Any]:
        """The event with this seq. Raises ``IndexError`` when there is none."""
        if seq < 0:
            raise IndexError(seq)
        return self._events[seq]

    @property
    def first_live_seq(self) -> int:
        """Index of the first event this lifecycle produced (the seed length; PROTOCOL 1.2)."""
        return self._first_live_seq

    @property
    def seed_end_seq(self) -> int | None:
        """The seq of the last ``session/end-seed`` marker in the log, or None (its durable ``firstLiveSeq``)."""
        for event in reversed(self._events):
            if event.get("type") == END_SEED:
                return int(event["seq"])
        return None

    @property
    def surface(self) -> SurfaceManager:
        """The surface, advanced by the delta since the last access."""
        self._surface.sync()
        return self._surface

    def derive_messages(self) -> list[dict[str, Any]]:
        """What the model sees: one message per surface node, in surface order (the sole derivation path)."""
        return derive_messages(self.surface)

    def storage_records(self, from_seq: int = 0) -> list[Any]:
        """Events from ``from_seq`` packed into storage records (one batch; PROTOCOL 2.2)."""
        return pack_chunk_runs(self._events[from_seq:])

    # -- append -----------------------------------------------------------------------------------------------

    def append(self, type: str, data: Any, *, surface: str | Mapping[str, Any] | None = None,
               source_event_seqs: Iterable[int] | None = None, ignorable: bool = False) -> Mapping[str, Any]:
        """Append one event; returns it (key order ``type, seq, time, data, ignorable?, sourceEventSeqs?,
        surfaceOp?``).

        ``surface`` is the surface intent: ``'append'`` or ``{op:'replace', start, end}``; it is required for a
        surface-eligible type and refused for any other. Everything is checked before the clock is read and the
        event committed, so a refused append leaves the session unchanged. ``data`` is held, not copied: do not
        mutate it afterwards (log events are immutable).

        Raises:
            SurfaceError: a surface-eligible type without a surface intent (including a type string taken from
                raw events), an intent on another type, a malformed intent, a replace whose endpoints are not
                on the surface, reversed, or not covered by ``source_event_seqs``, or provenance that is empty,
                duplicated, or not earlier known seqs.
            AppendError: ``type`` is not a non-empty string, ``data`` is not JSON, or the clock did not return a
                safe integer.
        """
        seq = len(self._events)
        etype = type
        if _type_of(etype) is not str or not etype:
            raise AppendError(seq, f"event type must be a non-empty string, got {etype!r}")
        problem = json_problem(data)
        if problem is not None:
            raise AppendError(seq, f"{etype} data is not JSON-serialisable: {problem}")
        eligible = etype in SURFACE_TYPES
        op: str | dict[str, Any] | None = None
        if surface is None:
            if eligible:
                raise SurfaceError(seq, f"{etype} is surface-eligible and needs a surface intent "
                                        "(surface='append' or a replace)", "surface-missing")
        else:
            if not eligible:
                raise SurfaceError(seq, f"surface intent on {etype!r}, which is not a surface type",
                                   "surface-not-eligible")
            shape = surface_op_problem(dict(surface) if isinstance(surface, Mapping) else surface)
            if shape is not None:
                raise SurfaceError(seq, shape, "surface-malformed")
            if isinstance(surface, Mapping):
                op = replace_op(surface["start"], surface["end"])
            else:
                op = surface
        sources: list[int] | None = None
        if source_event_seqs is not None:
            sources = list(source_event_seqs)
            for rule, message in provenance_problems(seq, etype, sources):
                raise SurfaceError(seq, message, rule)
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": 0, "data": data}
        if ignorable:
            event["ignorable"] = True
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if op is not None:
            event["surfaceOp"] = op
            self._surface.check(event, seq)
        if self._clock is None:
            raise AppendError(seq, "this session has no clock; pass clock= to append events")
        time = self._clock()
        if not _safe_int(time):
            raise AppendError(seq, f"the clock returned {time!r}, not integer epoch ms")
        event["time"] = time
        self._events.append(event)
        return event


def _validate_seed(events: list[dict[str, Any]]) -> None:
    for i, event in enumerate(events):
        if _type_of(event) is not dict:
            raise SeedError(i, f"expected an event object, got {_type_of(event).__name__}")
        seq = event.get("seq")
        if _type_of(seq) is not int or seq != i:
            raise SeedError(i, f"seqs must be contiguous from 0: expected seq {i}, got {seq!r}")
        etype = event.get("type")
        if _type_of(etype) is not str or not etype:
            raise SeedError(i, f"event type must be a non-empty string, got {etype!r}")
        if not _safe_int(event.get("time")):
            raise SeedError(i, f"time must be integer epoch ms, got {event.get('time')!r}")
        problem = json_problem(event)
        if problem is not None:
            raise SeedError(i, f"not JSON-serialisable: {problem}")
        if etype in SURFACE_TYPES and "surfaceOp" not in event:
            raise SeedError(i, f"surface-eligible {etype} has no surfaceOp (surface-less logs are rejected)")
