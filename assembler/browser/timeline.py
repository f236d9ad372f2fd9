"""The trajectory overview: the run's steps and tool calls as spans on one axis, for the page's timeline
(``web/timeline.mjs``), made from the Trajectory view's rows (``panels.trajectory_rows``).

Rules: every span has a slot (its place in the run, for the equal-widths axis); a span has actual times only when
both ends were recorded (``views.is_recorded_time``, already applied by ``panels``): a step from its request's start
to its completion, a tool call from the end of the step that asked for it to its result. Nothing is ever inferred
from a rebuilt time; when no span has recorded times the value says why actual durations are unavailable. Idle
time between spans (a user away for an hour) longer than ``IDLE_CAP_MS`` is shortened to it on the actual axis and
listed as a gap, so the work stays visible. ``run_timeline`` makes the same value for a whole session (the
server's ``GET .../timeline``, a published site's ``timeline.json``, a local file's pager): its every record folded
in an assembler of its own, so the overview covers the run when the page has loaded only its newest pages. Each span
carries its row's ``seq``, which a page that has not loaded it yet goes to as a deep link does. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..views import is_recorded_time

__all__ = ["IDLE_CAP_MS", "LABEL_CHARS", "NO_TIMES", "NO_TIMES_RUN", "run_timeline", "timeline_of"]

IDLE_CAP_MS = 60_000
"""An idle stretch longer than this is drawn this long on the actual-durations axis (and marked as a gap)."""

LABEL_CHARS = 80
"""A span's label keeps this much of its step's summary (the trajectory row shows the whole line)."""

_NO_TIMES = ("Actual durations are unavailable: no step or tool call in {where} has recorded start and end "
             "times (this log's times were rebuilt from the order of its events).")
NO_TIMES = _NO_TIMES.format(where="the loaded history")
NO_TIMES_RUN = _NO_TIMES.format(where="the run")


def _recorded(value: Any) -> int | float | None:
    return value if is_recorded_time(value) else None


def _where(row: Mapping[str, Any]) -> str:
    return f"Turn {row.get('turn') if row.get('turn') is not None else '?'} · step {row.get('step') or '?'}"


def _label(row: Mapping[str, Any]) -> str:
    where = _where(row)
    summary = row.get("summary") or ""
    if len(summary) > LABEL_CHARS:
        summary = summary[:LABEL_CHARS - 1].rstrip() + "…"
    return f"{where}: {summary}" if summary else where


def _turn(value: Any) -> Any:
    """A row's turn as the timeline groups by it: an int or a string, else None (a log's wrong type)."""
    return value if type(value) in (int, str) else None


def timeline_of(rows: Iterable[Mapping[str, Any]], *, scope: str = "loaded",
                last: int | None = None) -> dict[str, Any]:
    """``{spans, turns, slots, timed, total, reason, start, end, gaps, scope, last}`` for the trajectory ``rows``;
    ``scope`` says what they cover (``"loaded"``: the page's window, ``"run"``: the whole session through seq
    ``last``).

    ``spans``: ``{lane: "step"|"tool", slot, row (the trajectory row's key), seq (its anchor seq), chat (the chat
    row's key or None), turn, label, status, t0, t1}`` in run order, ``t0``/``t1`` on the actual axis (ms from the
    first recorded start, idle gaps shortened) or None; ``turns``: ``{turn, slot, t}`` where each turn's first span
    starts; ``timed``: how many spans have actual times; ``reason``: why actual durations are unavailable (empty
    when some are available); ``gaps``: ``{t, ms}`` the shortened idle stretches (at ``t`` on the axis,
    ``ms`` really)."""
    raw: list[dict[str, Any]] = []
    for row in rows:
        if row.get("kind") != "step":
            continue
        started, ended = _recorded(row.get("startedAt")), _recorded(row.get("endedAt"))
        seq = row.get("seq")
        where = _where(row)
        raw.append({"lane": "step", "row": row.get("key"), "seq": seq, "chat": row.get("chatKey"),
                    "turn": _turn(row.get("turn")),
                    "label": _label(row), "status": row.get("status") or "",
                    "a": started if started is not None and ended is not None and ended >= started else None,
                    "b": ended if started is not None and ended is not None and ended >= started else None})
        for tool in row.get("tools") or ():
            done = _recorded(tool.get("endedAt"))
            ok = ended is not None and done is not None and done >= ended
            raw.append({"lane": "tool", "row": row.get("key"), "seq": seq,
                        "chat": tool.get("key") or row.get("chatKey"),
                        "turn": _turn(row.get("turn")), "label": f"{tool.get('name') or 'tool'} ({where})",
                        "status": tool.get("status") or "", "a": ended if ok else None, "b": done if ok else None})
    turns: list[dict[str, Any]] = []
    for slot, span in enumerate(raw):
        span["slot"] = slot
        if not turns or turns[-1]["turn"] != span["turn"]:
            turns.append({"turn": span["turn"], "slot": slot, "t": None})
    timed = [s for s in raw if s["a"] is not None]
    gaps: list[dict[str, Any]] = []
    shift: dict[int, float] = {}
    if timed:
        origin = min(s["a"] for s in timed)
        removed: float = 0  # an int while the times are: the JSON says 1062, not 1062.0
        covered: float | None = None
        for span in sorted(timed, key=lambda s: (s["a"], s["b"])):
            if covered is not None and span["a"] - covered > IDLE_CAP_MS:
                idle = span["a"] - covered
                removed += idle - IDLE_CAP_MS
                gaps.append({"t": covered - origin - (removed - (idle - IDLE_CAP_MS)), "ms": idle})
            shift[id(span)] = origin + removed
            covered = span["b"] if covered is None else max(covered, span["b"])
    spans: list[dict[str, Any]] = []
    for span in raw:
        base = shift.get(id(span))
        a, b = span.pop("a"), span.pop("b")
        span["t0"] = None if base is None else a - base
        span["t1"] = None if base is None else b - base
        spans.append(span)
    by_turn: dict[Any, float] = {}
    for span in spans:
        if span["t0"] is not None and span["turn"] not in by_turn:
            by_turn[span["turn"]] = span["t0"]
    for turn in turns:
        turn["t"] = by_turn.get(turn["turn"])
    end = max((s["t1"] for s in spans if s["t1"] is not None), default=0)
    return {"spans": spans, "turns": turns, "slots": len(spans), "timed": len(timed), "total": len(spans),
            "reason": (NO_TIMES_RUN if scope == "run" else NO_TIMES) if spans and not timed else "",
            "start": 0, "end": end, "gaps": gaps, "scope": scope, "last": last}


def run_timeline(records: Sequence[Any], has_more: bool = False, last: int | None = None) -> dict[str, Any]:
    """``timeline_of`` the whole session: ``records`` (a ``SessionPage``'s, every message) folded in an assembler of
    their own into the Trajectory view's rows, exactly as the page's worker folds its window (``view_api``), with
    ``scope`` ``"run"`` (``"loaded"`` when ``has_more``: older history was not given) and ``last`` the session's
    last seq as the caller read it. A span's ``row`` and ``chat`` are None: keys are the fold's own, so the page
    finds the loaded row of a span by its ``seq``.

    Raises:
        AssemblerError: the records break the assembler contract (as ``exporting.fold_page``).
    """
    from definitions import default_definitions

    from ..conversation import ConversationAssembler
    from ..transcript import transcript
    from .inspector import trajectory_requests
    from .panels import trajectory_rows

    assembler = ConversationAssembler(default_definitions())
    assembler.replace_window(records, has_more)
    result = assembler.flush()
    assert result is not None  # replace_window always leaves a flush pending
    shown = transcript(result)
    rows = trajectory_requests(trajectory_rows(shown.trajectory, shown.chat, assembler.index.turns), assembler)
    value = timeline_of(rows, scope="loaded" if has_more else "run", last=last)
    for span in value["spans"]:  # keys of this fold name no row of the page's: the page finds a row by its seq
        span["row"] = span["chat"] = None
    return value
