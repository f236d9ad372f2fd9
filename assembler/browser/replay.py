"""Replay measurement: one ``SessionPage`` folded in a scratch window, stage by stage. The one function behind the
viewer's "Replay benchmark" panel (the open window replayed scalar and packed) and ``perf.bench_browser``.

Rules: the measured window is a scratch ``Viewer`` (the open one is never touched); stages are timed with
``time.perf_counter`` around exactly one step each: ``decode`` (msgspec over the page bytes), ``journal`` (opening
the journal on the page), ``fold`` (``replace_window`` + ``flush`` through the default Definitions) and ``render``
(the HTML of the first screen's rows, ``FIRST_SCREEN`` visible nodes, in the worker). The digest is computed after
the timed stages. Pages of the open window are built untimed from its entries: ``packed`` repacks them with the
codec (rows are never expanded), ``scalar`` expands every row into one ``event`` record per member.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import msgspec

from ..chunk_rows import expand_row, repack_records
from ..conversation import ConversationAssembler
from ..errors import AssemblerError
from ..history import history_records
from ..lazy_rows import decode_lazy_page
from ..records import ChunksRecord, encode, record_range
from ..transcript import by_anchor, digest, transcript
from ..views import hidden_by_default
from .updates import as_bytes, elapsed_ms, encode_json, error_value

if TYPE_CHECKING:
    from .viewer import Viewer

__all__ = ["FIRST_SCREEN", "MODES", "ReplayMixin", "page_tail", "replay_page", "window_page"]

FIRST_SCREEN = 40
"""Rows rendered for the ``render`` stage: about a first screen."""
MODES = ("scalar", "packed")


def replay_page(data: Any) -> dict[str, Any]:
    """Fold the JSON bytes of one ``SessionPage`` in a scratch window; returns ``{ms: {decode, journal, fold,
    render}, pageBytes, records, inputs, chatNodes, trajectoryNodes, rendered, digest}``.

    Raises:
        AssemblerError: the page is not a valid ``SessionPage`` or does not fold.
    """
    from .viewer import Viewer

    scratch = Viewer(repack_live=False)
    raw = as_bytes(data)
    t0 = time.perf_counter()
    page = decode_lazy_page(raw)  # the decode ``Viewer.load_page`` uses
    ms_decode = elapsed_ms(t0)
    records = page.records
    cursor = page_tail(records)
    t0 = time.perf_counter()
    outputs = scratch.journal.opened(cursor, records, page.hasMore)
    ms_journal = elapsed_ms(t0)
    t0 = time.perf_counter()
    scratch._apply(outputs)
    result = scratch.assembler.flush()
    ms_fold = elapsed_ms(t0)
    scratch._take(result)
    t0 = time.perf_counter()
    keys = [n.key for n in by_anchor(scratch.chat.values()) if not hidden_by_default(n)][:FIRST_SCREEN]
    scratch.render(keys)
    ms_render = elapsed_ms(t0)
    return {
        "ms": {"decode": ms_decode, "journal": ms_journal, "fold": ms_fold, "render": ms_render},
        "pageBytes": len(memoryview(raw)), "records": len(records), "inputs": scratch.assembler.entry_count,
        "chatNodes": len(scratch.chat), "trajectoryNodes": len(scratch.trajectory_nodes), "rendered": len(keys),
        "digest": None if result is None else digest(transcript(result)),
    }


def page_tail(records: Any) -> int:
    """The last logical seq of a page (-1 when empty): a page opens the journal at its own tail."""
    return record_range(records[-1])[1] if records else -1


_to_builtins = msgspec.to_builtins


def window_page(viewer: Viewer | ReplayMixin, mode: str) -> bytes:
    """The JSON bytes of a ``SessionPage`` holding the open window's entries, ``packed`` or ``scalar``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    storage: list[Any] = []
    for entry in viewer.assembler.window:
        if type(entry) is ChunksRecord:
            row = entry.event.to_storage()
            storage.extend(expand_row(row) if mode == "scalar" else (row,))
        else:
            storage.append(_to_builtins(entry.event))
    if mode == "packed":
        storage = list(repack_records(storage))
    return encode({"records": history_records(storage), "hasMore": viewer.assembler.has_more})


class ReplayMixin:
    """Entry points of ``Viewer`` for the "Replay benchmark" panel and ``perf.bench_browser``."""

    assembler: ConversationAssembler

    def replay_page(self, data: Any) -> bytes:
        """Fold one ``SessionPage`` (its JSON bytes) in a scratch window, stage by stage (``replay_page``); the open
        window is untouched. ``perf.bench_browser`` calls this."""
        try:
            return encode_json(replay_page(data))
        except AssemblerError as exc:
            return encode_json({"error": error_value(exc, "replay")})

    def replay_window(self, mode: str) -> bytes:
        """Replay the open window as a ``scalar`` or ``packed`` page (the viewer's "Replay benchmark" panel)."""
        return self.replay_page(window_page(self, str(mode)))
