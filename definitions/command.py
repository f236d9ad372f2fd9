"""Slash commands (``command``, target chat): a ``command/run`` paired with its ``command/done`` (PROTOCOL 1.3).

Rules: ``command/run`` starts the Context (id = ``commandId``); a ``command/done`` with the same id updates it, and
the last one wins. The node shows the command as typed (``input``: ``/name`` plus its ``args``), its ``status``
(``running`` until a done arrives, then ``success`` or ``error``; ``done`` for an outcome kind the protocol does not
name) and the done text. A done whose run lies outside the window still yields a node (name and input unknown), so
nothing is dropped. Anchor: the run's seq, else the done's. An event whose ``commandId`` is neither a string nor a
number is not claimed here, so the fallback shows it. Commands that carry a manual compaction (the reference folds
``sourceCommandId`` compaction events into the command node) stay with the ``compaction`` Definition.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.text import js_number_str, safe_index
from assembler.views import CommandData, CommandOutcome, ViewNode

from ._common import data_of

__all__ = ["Command", "command_input"]

_encode = msgspec.json.Encoder().encode


def _as_text(value: Any) -> str:
    return value if type(value) is str else _encode(value).decode()


def command_input(name: Any, args: Any) -> str:
    """The command line as the user typed it: ``/name`` then ``args``. The reference stores the rest of the line,
    leading space included (``" read-only"``); args without one are set off by a space. Non-strings show as JSON."""
    line = "/" + ("" if name is None else _as_text(name))
    if args is None or args == "":
        return line
    rest = _as_text(args)
    return line + rest if rest[:1].isspace() else f"{line} {rest}"


def _command_id(event: Any) -> str | None:
    cid = data_of(event).get("commandId")
    if type(cid) is str:
        return cid
    if type(cid) in (int, float):
        return js_number_str(cid)
    return None


def _outcome(done: Match) -> tuple[CommandOutcome, str]:
    data = data_of(done.event)
    kind = data.get("kind")
    text = data.get("text")
    source_seq = safe_index(data.get("sourceEventSeq")) if kind == "success" else None
    outcome = CommandOutcome(kind=kind, seq=done.seq, time=done.event.time,
                             text=UNSET if text is None else _as_text(text),
                             sourceEventSeq=UNSET if source_seq is None else source_seq)
    status = kind if kind in ("success", "error") else "done"
    return outcome, status


class Command(Definition):
    """``command``: one row per command id."""

    kind = "command"
    target = "chat"
    event_types = frozenset({"command/run", "command/done"})

    def match(self, event: Any) -> tuple[str, Role] | None:
        cid = _command_id(event)
        if cid is None:
            return None
        return cid, "start" if event.type == "command/run" else "update"

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        run = context.start
        done = next((m for m in reversed(context.matches) if m.event.type == "command/done"), None)
        first = run if run is not None else done
        if first is None:
            return None
        outcome: CommandOutcome | UnsetType = UNSET
        status = "running"
        if done is not None:
            outcome, status = _outcome(done)
        if run is not None:
            rdata = data_of(run.event)
            name, args = rdata.get("name"), rdata.get("args")
            line: str | None = command_input(name, args)
            source = rdata.get("source", UNSET)
        else:
            name = args = line = None
            source = UNSET
        out = CommandData(kind="command", commandId=context.id, name=name, args=args, input=line, status=status,
                          seq=first.seq, time=first.event.time, runSeq=run.seq if run is not None else None,
                          source=source, outcome=outcome)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat", anchorSeq=first.seq,
                        location=node_location(first.location), data=out)
