"""Tool rows (``tool``, target chat): a ``tool/call`` paired with its append-origin ``tool/result``.

Rules: the call starts the Context (id = ``callId``); the result updates it. A result whose call is outside the
window still yields a node (built from the stored Matches). Status is ``error`` for an ``isError`` result or a
result with ``error``, ``done`` for any other result, ``interrupted`` when the step/turn closed without one, else
``running``. Both payload generations are read (PROTOCOL, "Payload generations"). A code-mode program's nested calls
(``tool/code-dispatch-start``/``tool/code-dispatch``, by ``rootCallId``) update its row as ``subcalls``. An
``approval/asked`` naming the call (``callId``) updates its row as ``approval`` (the call waited for a person), so the
row says so where the call is; an approval alone never makes a row.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from assembler.definition import Context, Definition, Match, Reader, Role, node_location
from assembler.views import ToolApproval, ToolData, ToolResultView, ToolSubcall, ViewNode

from ._blocks import content_views
from ._common import closed_boundary, data_of, is_append, message_of

__all__ = ["Tool", "result_call_id"]


def _result_block(data: dict[str, Any]) -> dict[str, Any]:
    """The ``tool-result`` block of a current payload, or the flat older payload itself."""
    message = message_of(data)
    if message is not None:
        content = message.get("content")
        if type(content) is list:
            for block in content:
                if type(block) is dict and block.get("type") == "tool-result":
                    return block
        return {}
    return {"toolCallId": data.get("callId"), "content": data.get("content"), "isError": data.get("isError")}


_DISPATCH = ("tool/code-dispatch-start", "tool/code-dispatch")


def _subcalls(context: Context) -> list[ToolSubcall]:
    calls: dict[str, ToolSubcall] = {}
    for m in context.matches:
        if m.event.type not in _DISPATCH:
            continue
        d = data_of(m.event)
        sid = d["subCallId"]
        if m.event.type == "tool/code-dispatch-start":
            calls.setdefault(sid, ToolSubcall(id=sid, name=d.get("name"), arguments=d.get("arguments"),
                                              status="running"))
        else:
            calls[sid] = ToolSubcall(id=sid, name=d.get("name"), arguments=d.get("arguments"),
                                     status="error" if d.get("isError") is True else "done",
                                     blocks=content_views(d.get("content")))
    return list(calls.values())


def result_call_id(data: dict[str, Any]) -> Any:
    return _result_block(data).get("toolCallId")


class Tool(Definition):
    """``tool``: one row per call id."""

    kind = "tool"
    target = "chat"
    event_types = frozenset({"tool/call", "tool/result", "approval/asked", *_DISPATCH})

    def match(self, event: Any) -> tuple[str, Role] | None:
        data = data_of(event)
        if event.type == "approval/asked":
            call_id = data.get("callId")
            return (call_id, "update") if type(call_id) is str else None
        if event.type in _DISPATCH:
            root = data.get("rootCallId")
            return (root, "update") if type(root) is str and type(data.get("subCallId")) is str else None
        if event.type == "tool/call":
            call_id = data.get("callId")
            return (call_id, "start") if type(call_id) is str else None
        if not is_append(event):
            return None
        call_id = result_call_id(data)
        return (call_id, "update") if type(call_id) is str else None

    def start(self, context: Context, match: Match, reader: Reader) -> Match:
        return match

    def build_view_node(self, context: Context) -> ViewNode | None:
        call = context.start
        result = next((m for m in reversed(context.matches) if m.event.type == "tool/result"), None)
        subcalls = _subcalls(context)
        if call is None and result is None:
            return None
        cdata = data_of(call.event) if call is not None else {}
        rview: ToolResultView | UnsetType = UNSET
        if result is not None:
            rdata = data_of(result.event)
            block = _result_block(rdata)
            is_error = block.get("isError") is True or rdata.get("error") is not None
            meta = rdata.get("meta")
            view = meta.get("view") if type(meta) is dict else None
            child = meta.get("subagent") if type(meta) is dict else None
            rview = ToolResultView(seq=result.seq, time=result.event.time, isError=is_error,
                                   blocks=content_views(block.get("content")), error=rdata.get("error", UNSET),
                                   view=view if type(view) is dict else UNSET,
                                   child=child if type(child) is dict else UNSET)
            status = "error" if is_error else "done"
        elif call is not None and data_of(call.event).get("hosted") is True:
            # Run by the provider inside the model call (a hosted web search): it has no result to wait for.
            status = "done" if closed_boundary(context) is not None else "running"
        else:
            status = "interrupted" if closed_boundary(context) is not None else "running"
        first = call if call is not None else result
        assert first is not None
        fdata = data_of(first.event)
        asked = next((m for m in context.matches if m.event.type == "approval/asked"), None)
        approval: ToolApproval | UnsetType = UNSET
        if asked is not None:
            reason = data_of(asked.event).get("reason")
            approval = ToolApproval(seq=asked.seq, reason=reason if type(reason) is str and reason else UNSET)
        out = ToolData(kind="tool", callId=context.id, name=cdata.get("name"), arguments=cdata.get("arguments"),
                       turn=fdata.get("turn"), step=fdata.get("step"), status=status,
                       callSeq=call.seq if call is not None else None, result=rview,
                       subcalls=subcalls or UNSET, approval=approval)
        return ViewNode(key=context.key, kind=self.kind, id=context.id, target="chat", anchorSeq=first.seq,
                        location=node_location(first.location), data=out)
