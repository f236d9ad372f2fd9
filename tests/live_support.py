"""Test support for live following: a scripted server that drives ``Viewer``s with snapshots, live event frames,
duplicates, gaps (answered with repair pages), reconnects and "Load older" pages, and the checks that compare a
repacking viewer with one that keeps every delta."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from assembler.browser import Viewer
from assembler.errors import AssemblerError
from assembler.history import page_value, snapshot_value
from assembler.records import ChunksRecord, encode, record_range
from assembler.transcript import assemble, by_anchor, digest
from definitions import default_definitions

HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 0}


class LiveServer:
    """Serves one logical log to viewers that all get the same frames, pages and answers."""

    def __init__(self, events: Sequence[dict[str, Any]], viewers: Sequence[Viewer], max_messages: int = 50) -> None:
        self.events = events  # shared: a test may append to the log while following it
        self.viewers = list(viewers)
        self.max_messages = max_messages
        self.pos = 0  # the next seq to send live
        self.updates: list[list[dict[str, Any]]] = []

    def _all(self, call: str, *args: Any) -> list[dict[str, Any]]:
        updates = [self._call(v, call, *args) for v in self.viewers]
        self.updates.append(updates)
        return updates

    @staticmethod
    def _call(viewer: Viewer, call: str, *args: Any) -> dict[str, Any]:
        """The viewer's update; an exception (a Definition breaking its contract) as ``{"exception": text}``."""
        try:
            return json.loads(getattr(viewer, call)(*args))  # type: ignore[no-any-return]
        except AssemblerError as exc:
            return {"exception": f"{type(exc).__name__}: {exc}"}

    def _answer(self, updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answer every page request (repairs and older pages) until none is left."""
        while updates[0].get("requests") and "exception" not in updates[0]:
            (request,) = updates[0]["requests"]
            page = page_value(self.events, request["through"], request["before"],
                              request["maxMessages"] or self.max_messages)
            updates = self._all("answer_page", request["id"], encode(page))
        return updates

    def snapshot(self, cut: int) -> list[dict[str, Any]]:
        """A (re)connection whose snapshot ends at ``cut - 1``; live events continue from ``cut`` (the snapshot frame
        itself reopens the journal, as in the page)."""
        self.pos = cut
        return self._all("apply_frames", [encode(snapshot_value(HEADER, self.events[:cut], self.max_messages))])

    def send(self, seqs: Sequence[int]) -> list[dict[str, Any]]:
        """Live frames for ``seqs`` in one batch (a seq past ``pos`` leaves a gap the viewers repair)."""
        frames = [encode({"type": "event", "event": self.events[s]}) for s in seqs]
        self.pos = max([self.pos, *(s + 1 for s in seqs)])
        return self._answer(self._all("apply_frames", frames))

    def load_older(self) -> list[dict[str, Any]]:
        return self._answer(self._all("request_older", self.max_messages))


def nodes_json(viewer: Viewer) -> bytes:
    return msgspec.json.encode(by_anchor(viewer.window.chat.values()))


def window_digest(viewer: Viewer) -> str:
    """The digest of the viewer's window folded afresh (what a page holding these entries shows)."""
    asm = viewer.window.assembler
    return digest(assemble(list(asm.window), asm.has_more, default_definitions()))


def window_ranges(viewer: Viewer) -> list[tuple[int, int]]:
    return [record_range(e) for e in viewer.window.assembler.window]


def row_count(viewer: Viewer) -> int:
    return sum(1 for e in viewer.window.assembler.window if type(e) is ChunksRecord)


def assert_continuous(viewer: Viewer) -> None:
    """The window's entries follow each other exactly and span the journal's cursors."""
    ranges = window_ranges(viewer)
    for (_, last), (first, _) in zip(ranges, ranges[1:], strict=False):
        assert first == last + 1, ranges
    journal = viewer.window.journal
    if ranges:
        assert ranges[0][0] == journal.first_cursor and ranges[-1][1] == journal.last_cursor
    assert viewer.window.assembler.entry_count == len(ranges)


def same_view(packed: Viewer, plain: Viewer) -> None:
    """What the repacking viewer shows equals what the plain one shows, live and folded afresh."""
    assert nodes_json(packed) == nodes_json(plain)
    assert packed.window.revs == plain.window.revs and packed.window.trajectory_nodes == plain.window.trajectory_nodes
    assert window_digest(packed) == window_digest(plain)
    keys = list(plain.window.chat)
    assert packed.render(keys) == plain.render(keys)
