"""The viewer's "Compare two runs" (the page side): two sessions' whole history pages folded, compared turn by turn
(``assembler.compare``) and rendered by ``render.compare``, the renderer the CLI's ``compare`` uses.

Rules: arguments are plain values or bytes, results plain values the wire API (``viewer``) encodes. Each side is
folded in an assembler of its own (``commands.exporting.fold_page``, as the CLI's ``compare`` and ``export`` do), so
the chat window is left untouched; the comparison and both sides' nodes are kept until the next ``open`` or
``close`` (the page asks for a turn's rows when it scrolls near it, and the export needs them). Every HTML string
comes from ``render`` (escaped; the page inserts it as it inserts chat rows). A side whose page is not a valid
``SessionPage`` or breaks the assembler contract is ``{"error": {side, text, ...}}``, naming the side. Pure apart from
the timer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from ..commands.exporting import fold_page, session_title
from ..compare import compare
from ..comparison import Comparison
from ..errors import AssemblerError
from ..history import MessageIndex
from ..records import EventRecord, decode_page
from ..render.compare import (
    MATCH_LABELS,
    aspect_labels,
    nodes_by_turn,
    render_comparison_html,
    render_comparison_markdown,
    session_summary_html,
    turn_columns_html,
    turn_header_html,
    turn_title,
)
from ..render.nodes import render_block_slice, render_section
from ..render.toolrows import tool_error
from ..views import NodeDisplay, ViewNode
from .local import FileLoad
from .updates import as_bytes, elapsed_ms, error_value

__all__ = ["CompareView"]


class _Side(msgspec.Struct, frozen=True):
    id: str
    title: str
    nodes: list[ViewNode]
    displays: Mapping[str, NodeDisplay]
    groups: dict[tuple[str, str], list[ViewNode]]
    records: int
    by_key: dict[str, ViewNode]

    @property
    def label(self) -> str:
        return f"{self.id}: {self.title}" if self.title and self.title != self.id else self.id


class _Compared(msgspec.Struct, frozen=True):
    a: _Side
    b: _Side
    comparison: Comparison
    title: str


def _side(ident: str, page: Any) -> _Side:
    session = decode_page(as_bytes(page))
    nodes, displays = fold_page(session.records, session.hasMore)
    title = session_title(r.event for r in session.records if isinstance(r, EventRecord)) or ""
    return _Side(ident, title, nodes, displays, nodes_by_turn(nodes), len(session.records), {n.key: n for n in nodes})


class CompareView:
    """The open comparison of two sessions, and the local files being read for its sides. ``folder_context`` gives a
    file of the open folder its reader context (``folder.OpenFolder.context``)."""

    def __init__(self, folder_context: Callable[[str], dict[str, Any] | None]) -> None:
        self.folder_context = folder_context
        self.compared: _Compared | None = None
        # A local file's side (a file of the open folder, or the file opened last) is read here in slices, as a file
        # the page opens is, into a load of its own (the chat window is left as it was); its whole-history page
        # waits in ``staged`` for ``open``.
        self.side_loads: dict[str, FileLoad] = {}
        self.staged: dict[str, bytes] = {}

    def file_begin(self, side: str, name: str, size: int = 0, key: str | None = None,
                   local: str | None = None) -> None:
        """Starts reading side ``a``/``b`` from a local file (``key``: which session of a file holding several;
        ``local``: its path in the open folder, whose context its reader gets)."""
        context = self.folder_context(local) if local is not None else None
        self.side_loads[_side_name(side)] = FileLoad(name, size, key, context)
        self.staged.pop(_side_name(side), None)

    def file_feed(self, side: str, data: bytes | bytearray | memoryview) -> dict[str, bool]:
        """The next slice of side ``side``'s file: ``{go}`` (false once its parse has failed: read no more)."""
        load = self.side_loads.get(_side_name(side))
        if load is None:
            return {"go": False}
        load.feed(data)
        return {"go": load.progress().get("error") is None}

    def file_finish(self, side: str) -> dict[str, Any]:
        """Ends side ``side``'s read: ``{records, bytes, error}`` (``error``: why nothing can be compared, e.g. a file
        of no known format; a fault after some records is ``warning`` and what was read is kept). The whole-history
        page is kept for ``open`` (given ``None`` for that side)."""
        name = _side_name(side)
        load = self.side_loads.pop(name, None)
        if load is None:
            return {"records": 0, "bytes": 0, "error": "no file is being read for this side"}
        result = load.finish()
        outcome = load.outcome(result)
        error = outcome.get("error")
        text = None
        if error is not None:  # FILE:LINE: message, as the CLI says it
            line = error.get("line")
            text = f"{load.name}{f':{line}' if line else ''}: {error.get('message') or error}"
        if not result.records:
            return {"records": 0, "bytes": load.bytes_read, "error": text or "the file holds no session events"}
        try:
            page = msgspec.json.encode(MessageIndex(result.records).session_page(None, None, None))
        except AssemblerError as exc:
            return {"records": 0, "bytes": load.bytes_read, "error": str(exc)}
        self.staged[name] = page
        return {"records": len(result.records), "bytes": len(page), "error": None, "warning": text}

    def open(self, page_a: Any, page_b: Any, id_a: str, id_b: str) -> dict[str, Any]:
        """Folds and compares two ``SessionPage`` bytes (A the reference; ``None``: the page a local file's read
        left for that side, ``file_finish``): ``{title, labels: {a, b}, summary: HTML, counts, differences,
        turns: [{index, match, matchLabel, title, differences}], records: {a, b}, ms}``, or ``{error: {side: "a"|"b",
        id, text, ...}}``. The turns' headers and rows come from ``turns``."""
        t0 = time.perf_counter()
        self.compared = None
        staged, self.staged = self.staged, {}
        sides: list[_Side] = []
        for name, ident, page in (("a", id_a, page_a), ("b", id_b, page_b)):
            if page is None:
                page = staged.get(name)
            try:
                if page is None:
                    raise ValueError("its local file was not read")
                sides.append(_side(ident, page))
            except (AssemblerError, ValueError, TypeError) as exc:
                return {"error": {**error_value(exc, "compare"), "side": name, "id": ident}}
        a, b = sides
        folded = elapsed_ms(t0)
        comparison = compare(a.nodes, b.nodes, failed=tool_error)
        named_a, named_b = a.title or a.id, b.title or b.id
        # Two runs of one task often share their title (their first prompt): then the ids tell them apart.
        title = f"{named_a} vs {named_b}" if named_a != named_b else f"{a.id} vs {b.id}: {named_a}"
        self.compared = _Compared(a, b, comparison, title)
        summary = session_summary_html(comparison, label_a=a.label, label_b=b.label)
        turns = [{"index": t.index, "match": t.match, "matchLabel": MATCH_LABELS[t.match], "title": turn_title(t),
                  "differences": t.differences} for t in comparison.turns]
        return {"title": title, "labels": {"a": a.label, "b": b.label}, "summary": summary,
                "counts": msgspec.to_builtins(comparison.session.turns),
                "differences": comparison.session.differences,
                "differenceLabels": aspect_labels(comparison.session.differences), "turns": turns,
                "records": {"a": a.records, "b": b.records}, "ms": {"fold": folded, "total": elapsed_ms(t0)}}

    def turns(self, indices: Sequence[int]) -> dict[str, Any]:
        """``{turns: {INDEX: {header, columns}}}``: the HTML of the aligned turns asked for (header: how it was
        matched and what differs; columns: each side's rows as the chat export renders them)."""
        c = self.compared
        if c is None:
            return _NOT_OPEN
        out: dict[str, dict[str, str]] = {}
        for index in indices:
            if 0 <= index < len(c.comparison.turns):
                t = c.comparison.turns[index]
                out[str(index)] = {"header": turn_header_html(t),
                                   "columns": turn_columns_html(t, c.a.groups, c.b.groups, c.a.displays,
                                                                c.b.displays, lazy=True)}
        return {"turns": out}

    def section(self, side: str, key: str, block: int) -> dict[str, str]:
        """``{html}``: the body of a collapsed row of side ``a`` or ``b`` when it is opened (as ``render_section``;
        empty for an unknown row)."""
        node = self._node(side, key)
        return {"html": "" if node is None else render_section(node, block)}

    def more(self, side: str, key: str, block: int, offset: int) -> dict[str, str]:
        """``{html}``: the next slice of a long text of a row of side ``a`` or ``b`` (after its "Show more")."""
        node = self._node(side, key)
        return {"html": "" if node is None else render_block_slice(node, block, offset)}

    def _node(self, side: str, key: str) -> ViewNode | None:
        c = self.compared
        if c is None:
            return None
        return (c.b if side == "b" else c.a).by_key.get(key)

    def export(self, fmt: str = "html") -> dict[str, Any]:
        """``{text, name, ms}``: the open comparison as the CLI's ``compare`` writes it (``html`` or ``md``)."""
        t0 = time.perf_counter()
        c = self.compared
        if c is None:
            return _NOT_OPEN
        fmt = "md" if fmt == "md" else "html"
        if fmt == "md":
            text = render_comparison_markdown(c.comparison, title=c.title, label_a=c.a.label, label_b=c.b.label)
        else:
            text = render_comparison_html(c.comparison, title=c.title, label_a=c.a.label, label_b=c.b.label,
                                          nodes_a=c.a.nodes, nodes_b=c.b.nodes, displays_a=c.a.displays,
                                          displays_b=c.b.displays)
        return {"text": text, "name": f"compare-{_stem(c.a.id)}-{_stem(c.b.id)}.{fmt}", "ms": elapsed_ms(t0)}

    def close(self) -> None:
        """Forgets the open comparison (both sides' nodes)."""
        self.compared = None


_NOT_OPEN: dict[str, Any] = {"error": {"where": "compare", "text": "no comparison is open", "message": ""}}


def _side_name(side: str) -> str:
    return "b" if str(side) == "b" else "a"


def _stem(name: str) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name).strip("-.")
    return stem[:40] or "session"
