"""From an assembler flush to the canonical transcript: the one way the CLI (``assemble``), the browser worker and the
benchmarks get ``{"chat", "trajectory", "turns"}``, its canonical JSON and its digest.

Rules: a transcript is built from a full (``replace``) flush: each view's nodes ordered by ``anchorSeq`` (stable over
Context creation order) and the turn timeline. ``canonical_json`` is the msgspec encoding of the ``Transcript``
Struct (fixed field order, compact, UTF-8) and ``digest`` its sha256 hex. Pure; the Definitions are passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec
from msgspec import UNSET, Struct, UnsetType

from .conversation import ConversationAssembler, Entry
from .definition import Definition
from .errors import InputFault
from .jsontext import encode_with
from .views import FlushResult, RecordedUsage, TimelineTurn, TurnTailData, ViewNode, is_recorded_time

__all__ = ["Transcript", "SessionSummary", "summarize", "transcript", "current_transcript", "assemble",
           "assemble_checked", "canonical_json", "digest", "by_anchor"]

_encoder = msgspec.json.Encoder()


class Transcript(Struct, frozen=True):
    """``{"chat": [...], "trajectory": [...], "turns": [...]}``: view nodes per target and the turn timeline."""

    chat: list[ViewNode]
    trajectory: list[ViewNode]
    turns: list[TimelineTurn]


class SessionSummary(Struct, frozen=True, omit_defaults=True):
    """What the header shows of a window: turn, ended-turn, step and tool-call counts, token usage summed over the
    turn tails that recorded any (a field only when every one of them has it), the models in order of first use,
    and whether the times are recorded (``is_recorded_time``) so durations may be shown at all."""

    turns: int
    endedTurns: int
    steps: int
    toolCalls: int
    models: list[str]
    recordedTimes: bool
    usage: RecordedUsage | UnsetType = UNSET


_USAGE_FIELDS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


def summarize(chat: Iterable[ViewNode]) -> SessionSummary:
    """The ``SessionSummary`` of a window's chat nodes (any order). Linear; no I/O."""
    turns: set[object] = set()
    tails = 0
    steps = tools = messages = 0
    with_usage = 0
    sums = dict.fromkeys(_USAGE_FIELDS, 0)
    counts = dict.fromkeys(_USAGE_FIELDS, 0)
    models: list[str] = []
    recorded = False
    for node in chat:
        turn = node.location.turn
        if turn is not UNSET:
            turns.add(turn)
        if node.kind == "tool":
            tools += 1
        data = node.data
        if not recorded and is_recorded_time(getattr(data, "time", None)):
            recorded = True
        if node.kind != "turn-tail" or type(data) is not TurnTailData:
            continue
        tails += 1
        if type(data.steps) is int:
            steps += data.steps
        for m in data.models or ():
            if m not in models:
                models.append(m)
        usage = data.usage
        if usage is UNSET:
            continue
        with_usage += 1
        messages += usage.messages
        for f in _USAGE_FIELDS:
            v = getattr(usage, f)
            if type(v) is int:
                sums[f] += v
                counts[f] += 1
    kept = {f: sums[f] for f in _USAGE_FIELDS if with_usage and counts[f] == with_usage}
    return SessionSummary(turns=len(turns), endedTurns=tails, steps=steps, toolCalls=tools, models=models,
                          recordedTimes=recorded,
                          usage=RecordedUsage(messages=messages, **kept) if kept else UNSET)


def by_anchor(nodes: Iterable[ViewNode]) -> list[ViewNode]:
    """Nodes in display order: by ``anchorSeq``, ties in the order given (Context creation order)."""
    return sorted(nodes, key=lambda n: n.anchorSeq)


def transcript(result: FlushResult) -> Transcript:
    """The transcript of a full flush (``replace_window`` or ``prepend``, then ``flush``)."""
    views = result.views
    chat = views["chat"].nodes if "chat" in views else []
    trajectory = views["trajectory"].nodes if "trajectory" in views else []
    return Transcript(by_anchor(chat), by_anchor(trajectory), result.timeline)


def current_transcript(assembler: ConversationAssembler) -> Transcript:
    """The transcript of what ``assembler`` shows now (after its last flush): every Context's current node per view,
    in creation order as a full flush builds them, without folding again."""
    ordered = sorted(assembler.contexts.values(), key=lambda c: c.order)
    chat = [c.current["chat"] for c in ordered if "chat" in c.current]
    trajectory = [c.current["trajectory"] for c in ordered if "trajectory" in c.current]
    return Transcript(by_anchor(chat), by_anchor(trajectory), assembler.index.timeline())


def assemble(records: Sequence[Entry], has_more: bool, definitions: Sequence[Definition]) -> Transcript:
    """Fold decoded history records (``EventRecord | ChunksRecord``) through ``definitions`` into a transcript.

    Raises:
        AssemblerError: a Definition or entry broke the assembler contract (e.g. ``PackedStartError``).
    """
    return assemble_checked(records, has_more, definitions)[0]


def assemble_checked(records: Sequence[Entry], has_more: bool,
                     definitions: Sequence[Definition]) -> tuple[Transcript, list[InputFault]]:
    """``assemble``, and the entries no Definition could fold (shown through the fallback Definition instead; the
    edges print them as warnings naming the seq).

    Raises:
        AssemblerError: as ``assemble``.
    """
    assembler = ConversationAssembler(definitions)
    assembler.replace_window(records, has_more)
    result = assembler.flush()
    assert result is not None  # replace_window always leaves a flush pending
    return transcript(result), list(assembler.faults)


def canonical_json(value: Transcript) -> bytes:
    """The canonical JSON bytes: compact, fixed field order, UTF-8."""
    return encode_with(_encoder.encode, value)


def digest(value: Transcript | bytes) -> str:
    """sha256 hex of exactly ``canonical_json(value)`` (or of the bytes given)."""
    import hashlib  # only the commands that print a digest pay for OpenSSL's start-up

    data = value if isinstance(value, bytes) else canonical_json(value)
    return hashlib.sha256(data).hexdigest()
