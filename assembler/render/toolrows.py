"""The ``tool`` row: a status dot, a kind icon and the one-line summary when collapsed; the body by tool kind
(``tools.tool_kind_body``) when opened, else the generic body (arguments pretty-printed, the result as text, both in
bounded slices). Also the tool call still streaming inside an assistant step. Pure.
"""

from __future__ import annotations

import json
from typing import Any

from msgspec import UNSET

from ..jsontext import loads_text
from ..tooltext import exit_code_of
from ..views import ImageBlockView, ToolData, ViewNode
from .images import image_html
from .markdown import code_html, escape
from .slices import SLICE_CHARS, sliced
from .texts import blocks_text, tool_texts
from .toolbodies import tool_kind_body
from .tools import TOOL_ICONS, TRAILING_EXIT, result_view, subagent_label, tool_kind, tool_summary

__all__ = ["approval_html", "approval_text", "shell_exit", "tool_error", "tool_row_html", "tool_section_html",
           "streamed_call_html"]

_DONE = frozenset({"done", "complete", "completed", "settled"})


def tool_error(data: ToolData) -> bool:
    """The call failed: an error status or result, or a terminal that reports a non-zero exit or an
    interruption (a reader's ``meta.view``)."""
    result = data.result
    if data.status in ("error", "failed") or (result is not UNSET and (result.isError or result.error)):
        return True
    view = result_view(data)
    if view.get("kind") == "shell" and view.get("interrupted") is True:
        return True
    code = shell_exit(data)
    return code is not None and code != 0


def shell_exit(data: ToolData) -> int | None:
    """The exit status a shell call's result records: a reader's ``meta.view`` (``exitCode``), else, for a shell
    tool, the ``[exit code: N]`` marker its result text ends with (our harness reports non-zero exits so) or a
    Codex output envelope's ``Process exited with code N``; None when nothing says."""
    view = result_view(data)
    if view.get("kind") == "shell":
        code = view.get("exitCode")
        return code if type(code) is int else None
    result = data.result
    if result is UNSET or tool_kind(data.name) != "shell":
        return None
    text = blocks_text(result.blocks)
    marked = TRAILING_EXIT.search(text[-200:])
    return int(marked.group(1)) if marked is not None else exit_code_of(text)


def child_session(data: ToolData) -> str | None:
    """The child session a subagent call's result names (``meta.subagent.childSessionId``), if any."""
    result = data.result
    child = result.child if result is not UNSET else UNSET
    value = child.get("childSessionId") if type(child) is dict else None
    return value if type(value) is str and value else None


def _status(data: ToolData, error: bool) -> str:
    if error:
        return "error"
    status = str(data.status or "")
    return "done" if status in _DONE else status if status in ("running", "interrupted") else "done"


def _title(name: Any, arguments: Any, *, error: bool, status: str) -> str:
    kind = tool_kind(name)
    marks = '<span class="badge badge-error">Failed</span> ' if error else ""
    if status in ("running", "interrupted"):
        marks += f'<span class="badge">{escape(status)}</span> '
    dot = f'<span class="dot dot-{status}" aria-label="{status}"></span>'
    icon = f'<span class="tool-icon" aria-hidden="true">{escape(TOOL_ICONS[kind])}</span>'
    label = escape(name) if type(name) is str and name else "tool"
    summary = tool_summary(name, arguments)
    rest = summary[len(label) + 2:] if summary.startswith(f"{name}: ") else ""
    tail = f' <span class="tool-args-summary">{escape(rest)}</span>' if rest else ""
    return (f'{dot}{icon}{marks}<span class="row-label tool-name" data-tool-kind="{kind}">{label}</span>'
            f'{":" if rest else ""}{tail}')


def _generic_body(key: str, args_pretty: str, is_json: bool, result: str | None, *, error: bool,
                  limit: int | None) -> str:
    parts = []
    if args_pretty:
        parts.append('<div class="tool-section"><div class="section-label">Arguments</div>')
        if is_json and (limit is None or len(args_pretty) <= limit):
            parts.append(code_html(args_pretty, "json"))
        else:
            parts.append(f'<div class="mono">{sliced(args_pretty, markdown=False, key=key, block=0, limit=limit)}'
                         "</div>")
        parts.append("</div>")
    if result is not None:
        pretty = _json_pretty(result) if limit is None or len(result) <= limit else None
        shown = code_html(pretty, "json") if pretty is not None else (
            f'<div class="mono">{sliced(result, markdown=False, key=key, block=1, limit=limit)}</div>')
        parts.append(f'<div class="tool-section tool-result{" is-error" if error else ""}">'
                     f'<div class="section-label">{"Error" if error else "Result"}</div>{shown}</div>')
    return "".join(parts)


def _json_pretty(text: str) -> str | None:
    """A JSON object or array result, pretty-printed; None for any other text."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.dumps(loads_text(stripped), ensure_ascii=False, indent=2)
    except ValueError:
        return None


def tool_section_html(node: ViewNode, data: ToolData, limit: int | None) -> str:
    """The opened body: by tool kind when the arguments allow and everything fits one slice, else generic; the
    images the result holds (a screenshot, a file read) after it (``images.image_html``)."""
    pretty, is_json, result = tool_texts(data)
    error = tool_error(data)
    images = ""
    if data.result is not UNSET:
        images = "".join(image_html(b.attachment) for b in data.result.blocks if type(b) is ImageBlockView)
    fits = limit is None or ((result is None or len(result) <= limit) and len(pretty) <= limit * 2)
    if fits:
        body = tool_kind_body(data, result, error=error)
        if body is not None:
            return body + images
    return _generic_body(node.key, pretty, is_json, result, error=error, limit=limit) + images


def tool_row_html(node: ViewNode, data: ToolData, limit: int | None, lazy: bool) -> str:
    error = tool_error(data)
    status = _status(data, error)
    title = _title(data.name, data.arguments, error=error, status=status)
    if lazy:
        body = '<div class="tool-body" data-think-block="0" data-pending="1"></div>'
    else:
        body = f'<div class="tool-body">{tool_section_html(node, data, limit)}</div>'
    label = subagent_label(data.name, data.arguments)
    child = child_session(data)
    if child is not None or label is not None:  # the page links the child session here when the server serves it
        attrs = f' data-child-session="{escape(child)}"' if child is not None else ""
        attrs += f' data-subagent-label="{escape(label)}"' if label is not None else ""
        title += f' <span class="child-link"{attrs}></span>'
    if data.approval is not UNSET:  # the call waited for a person: said on the row, why in the body
        title += ' <span class="badge approval-badge">needed approval</span>'
        body = approval_html(data) + body
    css = "tool tool-error" if error else "tool"
    return (f'<details class="{css}" data-block="0" data-tool-kind="{tool_kind(data.name)}"><summary>{title}'
            f'</summary>{body}</details>')


def approval_html(data: ToolData) -> str:
    """The line that says a call waited for approval, and why (the decision is the approval row's)."""
    approval = data.approval
    if approval is UNSET:
        return ""
    reason = f": {escape(approval.reason)}" if approval.reason is not UNSET else ""
    return f'<p class="tool-approval">Asked for approval (seq {approval.seq}){reason}</p>'


def approval_text(data: ToolData) -> str | None:
    """``approval_html`` as plain text, for the Markdown export."""
    approval = data.approval
    if approval is UNSET:
        return None
    reason = f": {approval.reason}" if approval.reason is not UNSET else ""
    return f"Asked for approval (seq {approval.seq}){reason}"


def streamed_call_html(name: Any, args: Any) -> str:
    """A tool call still streaming inside an assistant step (its own tool row has not appeared yet)."""
    raw = args if type(args) is str else ""
    shown = raw if len(raw) <= SLICE_CHARS else raw[:SLICE_CHARS] + "…"
    return (f'<div class="tool tool-streaming"><div>{_title(name, "", error=False, status="running")}</div>'
            f'<div class="mono"><div class="plain">{escape(shown)}</div></div></div>')
