"""The session surface: the linked list of events a model sees, kept by ``surfaceOp`` markers (seeds/001, 000).

Rules: only surface-eligible types (``user/message``, ``assistant/message``, ``tool/result``) enter the surface;
the legacy ``context/message`` and ``steering/message`` are unknown types (PROTOCOL 1.3). ``'append'`` adds a node
at the tail; ``{op:'replace', start, end}`` (both inclusive) shadows the nodes from ``start`` through ``end`` and puts
the new node in their place. ``SurfaceManager`` advances by the delta since the last access, O(new events); a full
rebuild happens only when the log is replaced. ``derive_messages`` walks the surface: it is the sole derivation path.
Pure and sans-I/O; events are plain dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from .errors import AssemblerError

__all__ = [
    "SURFACE_TYPES",
    "APPEND",
    "SurfaceError",
    "SurfaceNode",
    "SurfaceManager",
    "is_append_surface_event",
    "replace_op",
    "surface_op_problem",
    "message_of",
    "derive_messages",
]

SURFACE_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/result"})
"""Surface-eligible event types: each must carry ``surfaceOp`` (seeds/000, "Invariants")."""

APPEND: Final = "append"
"""The tail-append ``surfaceOp``."""


class SurfaceError(AssemblerError):
    """A surface intent or its provenance is invalid for the event at ``seq`` (the event is not committed)."""

    def __init__(self, seq: int, reason: str, rule: str = "surface") -> None:
        super().__init__(seq, reason, rule)
        self.seq = seq
        self.reason = reason
        self.rule = rule

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.reason}"




def is_append_surface_event(event: Mapping[str, Any]) -> bool:
    """A surface type whose ``surfaceOp`` is ``'append'``: the human-transcript source (PROTOCOL 1.1)."""
    return event.get("type") in SURFACE_TYPES and event.get("surfaceOp") == APPEND


def replace_op(start: int, end: int) -> dict[str, Any]:
    """The replace ``surfaceOp`` value ``{op:'replace', start, end}`` (inclusive), in the reference key order."""
    return {"op": "replace", "start": start, "end": end}


def _is_seq(value: object) -> bool:
    return type(value) is int and value >= 0


def surface_op_problem(op: object) -> str | None:
    """Why ``op`` is not a well-formed ``surfaceOp`` value, or None when it is."""
    if op == APPEND and type(op) is str:
        return None
    if type(op) is not dict:
        return f"surfaceOp must be 'append' or {{op:'replace', start, end}}, got {op!r}"
    if op.keys() != {"op", "start", "end"} or op.get("op") != "replace":
        return f"surfaceOp object must be exactly {{op:'replace', start, end}}, got {op!r}"
    if not _is_seq(op["start"]) or not _is_seq(op["end"]):
        return f"replace start and end must be seqs (integers >= 0), got {op['start']!r}..{op['end']!r}"
    return None


class SurfaceNode:
    """One node of the surface: an event, its neighbours, and an order key increasing along the list."""

    __slots__ = ("seq", "event", "prev", "next", "key")

    def __init__(self, seq: int, event: Mapping[str, Any], key: int) -> None:
        self.seq = seq
        self.event = event
        self.prev: SurfaceNode | None = None
        self.next: SurfaceNode | None = None
        # Appends take a fresh, larger key; a replacement takes its range's first key, which still lies between
        # its neighbours' keys. So key order is list order and "reversed in surface position" is one comparison.
        self.key = key

    def __repr__(self) -> str:
        return f"SurfaceNode(seq={self.seq}, type={self.event.get('type')!r})"


InvalidHandler = Callable[[SurfaceError], None]


class SurfaceManager:
    """The cached surface of one append-only log, advanced by the delta since the last access.

    ``log`` is the event sequence itself (shared, not copied); nodes are keyed by each event's ``seq``. Every read first
    processes ``log[processed:]``; nothing is rescanned. ``reset`` rebuilds from scratch (a replaced seed).

    By default an invalid marker raises ``SurfaceError`` and stops processing at that event. With
    ``on_invalid`` the error is handed to the callback instead and the event stays off the surface (the
    invariant checker uses this to report every violation in one pass).
    """

    def __init__(self, log: Sequence[Mapping[str, Any]], *, on_invalid: InvalidHandler | None = None) -> None:
        self._on_invalid = on_invalid
        self.rebuilds = 0
        self.reset(log)

    # -- state ----------------------------------------------------------------------------------------------

    def reset(self, log: Sequence[Mapping[str, Any]] | None = None) -> None:
        """Drop the cache (and optionally switch to a new log); the next access rebuilds it in full."""
        if log is not None:
            self._log = log
        self.head: SurfaceNode | None = None
        self.tail: SurfaceNode | None = None
        self._nodes: dict[int, SurfaceNode] = {}
        self._next_key = 0
        self._processed = 0
        self.rebuilds += 1

    @property
    def last_processed_seq(self) -> int:
        """The seq of the last log event folded into the surface (-1 before any)."""
        return self._processed - 1

    def sync(self) -> int:
        """Process the events appended since the last access; returns how many were processed.

        Raises:
            SurfaceError: an event's marker is invalid (only without ``on_invalid``).
        """
        log = self._log
        n = len(log)
        if n < self._processed:  # the log was replaced by a shorter one: rebuild
            self.reset()
        start = self._processed
        for i in range(start, n):
            event = log[i]
            seq = event.get("seq", i)
            self._fold(event, seq if type(seq) is int else i)
            self._processed = i + 1
        return n - start

    # -- reads (each advances by the delta first) -------------------------------------------------------------

    def __len__(self) -> int:
        self.sync()
        return len(self._nodes)

    def __contains__(self, seq: object) -> bool:
        self.sync()
        return seq in self._nodes

    def __iter__(self) -> Iterator[SurfaceNode]:
        self.sync()
        node = self.head
        while node is not None:
            yield node
            node = node.next

    def node(self, seq: int) -> SurfaceNode | None:
        """The surface node for ``seq``, or None when that event is not on the surface."""
        self.sync()
        return self._nodes.get(seq)

    def seqs(self) -> list[int]:
        """Surface seqs in surface order."""
        return [node.seq for node in self]

    def events(self) -> list[Mapping[str, Any]]:
        """Surface events in surface order."""
        return [node.event for node in self]

    # -- validation and folding -------------------------------------------------------------------------------

    def check(self, event: Mapping[str, Any], seq: int | None = None) -> list[SurfaceNode]:
        """Validate ``event``'s marker against the current surface without changing it.

        Returns the nodes a replace would shadow (empty for an append or a non-surface event).

        Raises:
            SurfaceError: missing or malformed ``surfaceOp`` on a surface type, ``surfaceOp`` on another type,
                ``start > end``, an endpoint not on the surface, a range reversed in surface position, or
                ``sourceEventSeqs`` not covering every shadowed node.
        """
        self.sync()
        return self._check(event, event.get("seq", -1) if seq is None else seq)

    def _check(self, event: Mapping[str, Any], seq: int) -> list[SurfaceNode]:
        etype = event.get("type")
        has_op = "surfaceOp" in event
        if etype not in SURFACE_TYPES:
            if has_op:
                raise SurfaceError(seq, f"surfaceOp on {etype!r}, which is not a surface type",
                                   "surface-not-eligible")
            return []
        if not has_op:
            raise SurfaceError(seq, f"surface-eligible {etype} has no surfaceOp (it would vanish from the surface)",
                               "surface-missing")
        op = event["surfaceOp"]
        problem = surface_op_problem(op)
        if problem is not None:
            raise SurfaceError(seq, problem, "surface-malformed")
        if op == APPEND:
            return []
        start, end = op["start"], op["end"]
        if start > end:
            raise SurfaceError(seq, f"replace start {start} > end {end}", "replace-order")
        nodes = self._nodes
        first = nodes.get(start)
        if first is None:
            raise SurfaceError(seq, f"replace start {start} is not on the surface", "replace-endpoint")
        last = nodes.get(end)
        if last is None:
            raise SurfaceError(seq, f"replace end {end} is not on the surface", "replace-endpoint")
        if first.key > last.key:
            raise SurfaceError(seq, f"replace range {start}..{end} is reversed in surface position",
                               "replace-reversed")
        shadowed: list[SurfaceNode] = []
        node: SurfaceNode | None = first
        while node is not None:
            shadowed.append(node)
            if node is last:
                break
            node = node.next
        sources = event.get("sourceEventSeqs")
        cited = {s for s in sources if type(s) is int} if type(sources) is list else set()
        missing = [n.seq for n in shadowed if n.seq not in cited]
        if missing:
            raise SurfaceError(seq, f"replace {start}..{end}: sourceEventSeqs does not cite shadowed node(s) "
                                    f"{missing[:10]}{' ...' if len(missing) > 10 else ''}", "replace-provenance")
        return shadowed

    def _fold(self, event: Mapping[str, Any], seq: int) -> None:
        try:
            shadowed = self._check(event, seq)
        except SurfaceError as exc:
            if self._on_invalid is None:
                raise
            self._on_invalid(exc)
            return
        if event.get("type") not in SURFACE_TYPES:
            return
        if not shadowed:
            node = SurfaceNode(seq, event, self._next_key)
            self._next_key += 1
            node.prev = self.tail
            if self.tail is None:
                self.head = node
            else:
                self.tail.next = node
            self.tail = node
        else:
            first, last = shadowed[0], shadowed[-1]
            node = SurfaceNode(seq, event, first.key)
            node.prev, node.next = first.prev, last.next
            if node.prev is None:
                self.head = node
            else:
                node.prev.next = node
            if node.next is None:
                self.tail = node
            else:
                node.next.prev = node
            for gone in shadowed:
                del self._nodes[gone.seq]
                gone.prev = gone.next = None
        self._nodes[seq] = node


# ---------------------------------------------------------------------------------------------------------------
# Messages


def _flat_tool_result(data: Mapping[str, Any]) -> dict[str, Any]:
    call_id = data.get("callId")
    block: dict[str, Any] = {"type": "tool-result", "toolCallId": call_id, "content": data.get("content", [])}
    if "isError" in data:
        block["isError"] = data["isError"]
    return {"role": "user", "source": {"kind": "tool", "callId": call_id}, "content": [block]}


def message_of(event: Mapping[str, Any]) -> dict[str, Any]:
    """The model message one surface event stands for, in the current payload generation.

    Accepts both generations (PROTOCOL, "Payload generations"): ``assistant/message`` ``{message}`` or the flat
    ``{content, provenance}`` (mapped to ``{role, content, source:{kind:'model', ...provenance}}``), and
    ``tool/result`` ``{message}`` or the flat ``{callId, content, isError}`` (mapped to a ``tool-result`` block).
    A ``user/message``'s data is the message itself (``role`` added when an older producer left it out).
    Unknown content blocks pass through untouched.
    """
    etype = event.get("type")
    data = event.get("data")
    if type(data) is not dict:
        return {"role": "user" if etype != "assistant/message" else "assistant", "content": []}
    if etype == "user/message":
        return data if "role" in data else {"role": "user", **data}
    if etype == "assistant/message":
        message = data.get("message")
        if type(message) is dict:
            return message
        source = {"kind": "model", **data["provenance"]} if type(data.get("provenance")) is dict else None
        flat: dict[str, Any] = {"role": "assistant", "content": data.get("content", [])}
        if source is not None:
            flat["source"] = source
        return flat
    if etype == "tool/result":
        message = data.get("message")
        if type(message) is dict:
            return message
        return _flat_tool_result(data)
    raise ValueError(f"{etype!r} is not a surface type")


def derive_messages(surface: SurfaceManager | Iterable[SurfaceNode]) -> list[dict[str, Any]]:
    """The message list a model would receive: the surface walked head to tail, one message per node.

    The returned dicts are the events' own message objects (not copies); treat them as read-only.
    """
    return [message_of(node.event) for node in surface]
