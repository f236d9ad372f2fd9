"""What a chat node shows that depends on its neighbours, decided by the assembler at each flush: the turn heading it
opens, the tool calls of an assistant step that have their own row, whether its turn's interruption is said by a
notice of its own, the turn's start time (for "Ran for").

Rules: a ``NodeDisplay`` is published beside every node a flush upserts and beside every node whose display changed
because of another one (that node is published again, so the page re-renders it and nothing guesses which rows went
stale); the display is outside the canonical transcript (digests do not see it). The first shown row of a turn
opens its heading: the lowest anchor among the turn's nodes not hidden by default. The work per flush is the upserted
nodes plus the nodes they affect (the old first row of their turn, the interrupted steps of a turn that gains an
interruption notice), never the whole window but on a full flush. Pure and sans-I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import UNSET

from .views import AssistantStepData, NodeDisplay, NoticeData, ToolCallBlockView, ViewNode, hidden_by_default

__all__ = ["DisplayTracker", "NO_DISPLAY"]

NO_DISPLAY = NodeDisplay()
"""The display of a node that opens no heading and depends on no other row."""


def _interruption(node: ViewNode) -> bool:
    return node.kind == "turn-notice" and type(node.data) is NoticeData and node.data.kind == "interrupted"


class DisplayTracker:
    """The chat nodes shown now and the neighbour facts their displays depend on, kept across flushes."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.nodes: dict[str, ViewNode] = {}
        self.display: dict[str, NodeDisplay] = {}
        self._shown: dict[Any, dict[str, int | float]] = {}  # turn -> shown node key -> anchor
        self._first: dict[Any, str] = {}  # turn -> key of its first shown node
        self._tools: set[str] = set()  # call ids that have their own tool row
        self._interrupted: set[Any] = set()  # turns with an interruption notice
        self._steps: dict[Any, set[str]] = {}  # turn -> assistant-step keys
        self._step_calls: dict[str, set[str]] = {}  # call id -> assistant steps holding it

    def publish(self, upserted: list[ViewNode], full: bool,
                turn_starts: Mapping[Any, int]) -> tuple[list[ViewNode], dict[str, NodeDisplay]]:
        """Take a flush's chat nodes (every node when ``full``): returns them plus the nodes whose display changed
        because of them, and the display of each returned node."""
        if full:
            self.reset()
        touched: set[str] = set()
        turns: set[Any] = set()
        for node in upserted:
            self._take(node, touched, turns)
        for turn in turns:
            shown = self._shown.get(turn)
            old = self._first.get(turn)
            new = min(shown, key=lambda k: (shown[k], k)) if shown else None
            if new != old:
                if new is None:
                    self._first.pop(turn, None)
                else:
                    self._first[turn] = new
                touched.update(k for k in (old, new) if k is not None)
        out = list(upserted)
        seen = {n.key for n in upserted}
        display: dict[str, NodeDisplay] = {}
        for key in seen | touched:
            found = self.nodes.get(key)
            if found is None:
                continue
            value = self._display_of(found, turn_starts)
            if key in seen or value != self.display.get(key, NO_DISPLAY):
                display[key] = value
                if key not in seen:
                    out.append(found)
                    seen.add(key)
            self.display[key] = value
        return out, display

    def _take(self, node: ViewNode, touched: set[str], turns: set[Any]) -> None:
        key = node.key
        old = self.nodes.get(key)
        self.nodes[key] = node
        if old is not None and old.location.turn != node.location.turn:
            self._shown.get(old.location.turn, {}).pop(key, None)
            turns.add(old.location.turn)
        turn = node.location.turn
        if type(turn) is int:
            shown = self._shown.setdefault(turn, {})
            if hidden_by_default(node):
                shown.pop(key, None)
            else:
                shown[key] = node.anchorSeq
            turns.add(turn)
        if node.kind == "tool" and type(node.id) is str and node.id not in self._tools:
            self._tools.add(node.id)
            touched.update(self._step_calls.get(node.id, ()))
        elif _interruption(node) and turn not in self._interrupted:
            self._interrupted.add(turn)
            touched.update(self._steps.get(turn, ()))
        elif node.kind == "assistant-step" and type(node.data) is AssistantStepData:
            self._steps.setdefault(turn, set()).add(key)
            for block in node.data.blocks:
                if type(block) is ToolCallBlockView and type(block.callId) is str:
                    self._step_calls.setdefault(block.callId, set()).add(key)

    def _display_of(self, node: ViewNode, turn_starts: Mapping[Any, int]) -> NodeDisplay:
        turn = node.location.turn
        heading = turn if type(turn) is int and self._first.get(turn) == node.key else UNSET
        hidden: list[str] | Any = UNSET
        quiet: bool | Any = UNSET
        start: int | Any = UNSET
        if node.kind == "assistant-step" and type(node.data) is AssistantStepData:
            calls = [b.callId for b in node.data.blocks
                     if type(b) is ToolCallBlockView and type(b.callId) is str and b.callId in self._tools]
            hidden = calls or UNSET
            if turn in self._interrupted:
                quiet = True
        elif node.kind == "turn-tail":
            tail_turn = getattr(node.data, "turn", turn)  # as the log wrote it: any JSON value
            value = turn_starts.get(tail_turn) if type(tail_turn) is int else None
            start = value if type(value) is int else UNSET
        if heading is UNSET and hidden is UNSET and quiet is UNSET and start is UNSET:
            return NO_DISPLAY
        return NodeDisplay(turnHeading=heading, hiddenCalls=hidden, quietInterruption=quiet, turnStart=start)


def turn_starts(turns: Mapping[Any, Any]) -> dict[Any, int]:
    """Each turn's start time from its ``turn/start`` (``locations.TurnLocation``)."""
    return {turn: tl.start.time for turn, tl in turns.items() if tl.start is not None}


def displays_of(nodes: Iterable[ViewNode], turns: Mapping[Any, Any]) -> dict[str, NodeDisplay]:
    """The display of every node of a whole window at once (an export, a scratch fold)."""
    listed = list(nodes)
    return DisplayTracker().publish(listed, True, turn_starts(turns))[1]
