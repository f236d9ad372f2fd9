"""Replay measurement: one ``SessionPage`` folded in a scratch window, stage by stage. The one function behind the
viewer's "Replay benchmark" panel (the open window replayed scalar and packed) and ``perf.bench_browser``.

Rules: the measured window is a scratch ``Viewer`` (the open one is never touched), driven through its wire API only:
``load_page`` times ``decode`` (msgspec over the page bytes), ``journal`` (opening the journal on the page) and
``fold`` (``replace_window`` + ``flush`` through the default Definitions), each around exactly one step; ``render``
is timed here around the scratch's ``render`` of the first screen's rows (``FIRST_SCREEN`` visible nodes, in the
worker). The digest (the scratch's ``digest``) is computed after the timed stages. Pages of the open window are
built untimed from its entries: ``packed`` repacks them with the codec (rows are never expanded), ``scalar`` expands
every row into one ``event`` record per member.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from ..chunk_rows import expand_row, repack_records
from ..conversation import ConversationAssembler
from ..history import history_records
from ..records import ChunksRecord, encode
from .updates import as_bytes, elapsed_ms

__all__ = ["FIRST_SCREEN", "MODES", "ReplayWindow", "replay_page", "window_page"]

FIRST_SCREEN = 40
"""Rows rendered for the ``render`` stage: about a first screen."""
MODES = ("scalar", "packed")


class ReplayWindow(Protocol):
    """The wire API a replay drives: a scratch viewer (``viewer.Viewer``), used through its entry points only."""

    def load_page(self, data: Any, paged: bool = False) -> bytes: ...

    def render(self, keys: Sequence[str]) -> bytes: ...

    def digest(self) -> bytes: ...


def replay_page(data: Any, scratch: ReplayWindow) -> dict[str, Any]:
    """Fold the JSON bytes of one ``SessionPage`` in the fresh window ``scratch``; returns ``{ms: {decode, journal,
    fold, render}, pageBytes, records, inputs, chatNodes, trajectoryNodes, rendered, digest}`` or ``{error}``."""
    raw = as_bytes(data)
    update = msgspec.json.decode(scratch.load_page(raw))
    if "error" in update:
        return {"error": {**update["error"], "where": "replay"}}
    ms = update["ms"]
    keys = [n["key"] for n in update["nodes"] if not n.get("hidden")][:FIRST_SCREEN]
    t0 = time.perf_counter()
    scratch.render(keys)
    ms_render = elapsed_ms(t0)
    stats = update["stats"]
    return {
        "ms": {"decode": ms["decode"], "journal": ms["journal"], "fold": ms["fold"], "render": ms_render},
        "pageBytes": len(memoryview(raw)), "records": stats["records"], "inputs": stats["inputs"],
        "chatNodes": stats["chatNodes"], "trajectoryNodes": stats["trajectoryNodes"], "rendered": len(keys),
        "digest": msgspec.json.decode(scratch.digest())["digest"],
    }


_to_builtins = msgspec.to_builtins


def window_page(assembler: ConversationAssembler, mode: str) -> bytes:
    """The JSON bytes of a ``SessionPage`` holding the open window's entries, ``packed`` or ``scalar``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    storage: list[Any] = []
    for entry in assembler.window:
        if type(entry) is ChunksRecord:
            row = entry.event.to_storage()
            storage.extend(expand_row(row) if mode == "scalar" else (row,))
        else:
            storage.append(_to_builtins(entry.event))
    if mode == "packed":
        storage = list(repack_records(storage))
    return encode({"records": history_records(storage), "hasMore": assembler.has_more})
