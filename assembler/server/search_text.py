"""What the cross-session search index holds of one session file: every session in it, folded whole through the
default Definitions the way the viewer folds a page (``commands.exporting.fold_page``), and for each chat row the
reader sees its key, its anchor seq and its text.

Rules: a row's text is ``browser.search.row_texts`` joined by newlines — the same extraction the page's in-window
search reads, so both searches look at the same words (user prompts, assistant text and reasoning, tool names,
arguments and results, compaction summaries, command output, notices). Rows the page hides unless "show all events"
is on are left out, as is a row with no text. The two private-use characters the index uses as snippet markers
(``MARK_OPEN``, ``MARK_CLOSE``) are replaced in the text, so a marker in a snippet is always ours. A log that stops
parsing keeps every row before its fault (the fault is the caller's to report); a file that is not a session log (a
sidecar) holds no session. A row's seq is its ``anchorSeq`` rounded up: the page's ``#seq=N`` opens the row with
the greatest anchor <= N (``Viewer.find_seq``). Blocking (reads the file); no state.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..browser.search import row_texts
from ..commands.exporting import fold_page, session_title
from ..history import MessageIndex
from ..logfile import LoadResult
from ..store.open import load_any, load_sessions, sniff
from ..views import hidden_by_default

__all__ = ["IndexedRow", "IndexedSession", "MARK_OPEN", "MARK_CLOSE", "file_sessions", "page_rows", "session_rows"]

MARK_OPEN = "\ue000"
"""Opens a match in a snippet (a private-use character: never left in indexed text)."""
MARK_CLOSE = "\ue001"
"""Closes a match in a snippet."""

_SCRUB = str.maketrans({MARK_OPEN: "\ufffd", MARK_CLOSE: "\ufffd"})


class IndexedRow(NamedTuple):
    """One chat row: its node key, anchor seq and text."""

    key: str
    seq: int
    text: str


class IndexedSession(NamedTuple):
    """One session of a file: ``key`` names it in a file holding several (``""`` otherwise), with its title, its
    rows and the fault that stopped its parse (None when it read whole)."""

    key: str
    title: str | None
    rows: list[IndexedRow]
    fault: str | None


def session_rows(records: list[Any]) -> list[IndexedRow]:
    """The shown chat rows of a session's storage records, folded whole (no window).

    Raises:
        AssemblerError: the records break the assembler contract.
    """
    return page_rows(MessageIndex(records).session_page(None, None, None).records)


def page_rows(records: Sequence[Any]) -> list[IndexedRow]:
    """The shown chat rows of a whole-session page's records (``SessionPage.records``: what ``serve`` answers for
    the whole session, and ``publish`` writes as ``all.json``), folded as the viewer folds a page.

    Raises:
        AssemblerError: the records break the assembler contract.
    """
    nodes, _ = fold_page(records, False)
    rows: list[IndexedRow] = []
    for node in nodes:
        if hidden_by_default(node):
            continue
        text = "\n".join(t for t in row_texts(node) if t).translate(_SCRUB)
        anchor = node.anchorSeq
        if not text.strip() or not math.isfinite(anchor):
            continue
        rows.append(IndexedRow(node.key, math.ceil(anchor), text))
    return rows


def _session(key: str, label: str | None, result: LoadResult, name: str) -> IndexedSession:
    fault = None if result.error is None else str(result.error)
    title = session_title(result.records) or label or name
    return IndexedSession(key, title, session_rows(result.records) if result.header is not None else [], fault)


def file_sessions(path: str | os.PathLike[str], *, context: dict[str, Any] | None = None,
                  max_line_bytes: int | None = None) -> list[IndexedSession]:
    """Every session ``path`` holds (one per Inspect sample and epoch), with its rows. ``context`` is the reader
    context the server gives a file (a Claude Code file's layout and its project's older uuids).

    Raises:
        OSError: the file cannot be read.
        AssemblerError: a store error (a corrupt SQLite file), or records that break the assembler contract.
    """
    name = Path(path).name
    fmt = sniff(path)
    if fmt is not None and not fmt.session:
        return []
    if fmt is not None and fmt.sessions == "many":
        _, logs = load_sessions(path, max_line_bytes=max_line_bytes)
        return [_session(log.key, log.label, log.result, name) for log in logs]
    result = load_any(path, context=context, max_line_bytes=max_line_bytes, pack_deltas=True)
    return [_session("", None, result, name)]
