"""A Codex ``compacted`` record as our compaction (FORMATS.md §2.7, §5.3): ``compaction/start``, ``compaction/summary``,
the replacement copies, ``compaction/end``.

Rules: Codex replaces the model's whole history, so the shadowed range is the whole surface as it stands. The new
history is ``replacement_history`` when recorded (else the summary ``message`` alone), each item written as one
replacement ``user/message`` with source ``{kind:'plugin', plugin:'compact', form}`` (``form`` names the item:
``replacement/<role>`` for a message, ``replacement/<type>`` for anything else, ``summary`` for the lone summary).
A surface replace puts ONE node in place of a range, so several items split the shadowed range in order: item
``i`` replaces shadowed node ``i`` and the last item replaces every node left, each citing what it shadows; the
surface after it is exactly the replacement history, and every copy is a replace (model-only, never shown as
conversation). With more items than shadowed nodes the extra items are appended after the last replacement
(still compact-sourced, so chat skips them too). ``compaction/summary`` names the whole range. Pure.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..jsontext import convert
from .base import LogBuilder
from .codex_content import blocks_of
from .codex_records import Compacted, Message

__all__ = ["write_compaction"]


def _copy(item: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """(content, form) of one replacement item."""
    itype = item.get("type")
    if itype == "message":
        try:
            message = convert(item, Message)
        except msgspec.ValidationError:
            return [item], "replacement/message"
        return blocks_of(message.content, item.get("content")), f"replacement/{message.role}"
    return [item], f"replacement/{itype if type(itype) is str else 'item'}"


def write_compaction(out: LogBuilder, record: Compacted, compaction_id: str, *, time: int,
                     provider: str | None, model: str | None) -> int:
    """Write one compaction into ``out`` (the open step, if any, is already closed); returns the seq of its
    ``compaction/start``."""
    turn = out.turn if out.turn_open else None
    start = out.emit("compaction/start", {"compactionId": compaction_id, "turn": turn}, time=time)
    shadowed = list(out.surface)
    summary: dict[str, Any] = {"compactionId": compaction_id,
                               "summary": [{"type": "text", "text": record.message}] if record.message else []}
    if shadowed:
        summary["shadowedRange"] = {"start": shadowed[0], "end": shadowed[-1]}
        summary["shadowedSeqs"] = shadowed
    if provider is not None:
        summary["provider"] = provider
    if model is not None:
        summary["model"] = model
    out.emit("compaction/summary", summary, time=time)
    history = record.replacement_history
    copies = [_copy(item) for item in history] if history else [
        ([{"type": "text", "text": record.message}], "summary")]
    k = len(shadowed)
    for i, (content, form) in enumerate(copies):
        if i < k:
            last = i == len(copies) - 1 or i == k - 1
            out.replace_surface(i, k if last else i + 1)
        out.user_message(content, time=time, source={"kind": "plugin", "plugin": "compact", "form": form})
    out.emit("compaction/end", {"compactionId": compaction_id, "turn": turn}, time=time)
    return start
