"""Activity rows (approvals, goals, hook blocks, subagents) and the context-overflow notice → HTML and Markdown.

Rules: read-only, one line with a label, the title, a status badge and the detail; every string escaped. A
subagent row naming its child session carries ``data-child-session`` (the child's header id) and its label in
``data-subagent-label``: the page turns that into a link when the server serves the child. Pure.
"""

from __future__ import annotations

from ..views import ActivityData, NoticeData
from .markdown import escape

__all__ = ["activity_html", "overflow_html", "activity_markdown"]

_LABELS = {"approval": "Approval", "goal": "Goal", "hook-block": "Hook", "subagent": "Subagent"}
_BAD = frozenset({"rejected", "denied", "block", "deny", "failed", "error", "cancelled"})


def activity_html(data: ActivityData) -> str:
    kind = data.kind
    label = _LABELS.get(kind, kind)
    status = data.status if type(data.status) is str else ""
    css = f"event-card event-{escape(kind)}" + (" is-denied" if status in _BAD else "") + (
        " is-blocked" if kind == "hook-block" else "")
    badge = f' <span class="badge activity-status">{escape(status)}</span>' if status else ""
    detail = f'<div class="activity-detail">{escape(data.detail)}</div>' if type(data.detail) is str else ""
    link = ""
    if kind == "subagent" and (type(data.childSession) is str or type(data.label) is str):
        attrs = ""
        if type(data.childSession) is str:
            attrs += f' data-child-session="{escape(data.childSession)}"'
        if type(data.label) is str:
            attrs += f' data-subagent-label="{escape(data.label)}"'
        if status == "child":
            attrs += ' data-parent-link="1"'
        link = f' <span class="child-link"{attrs}></span>'
    return (f'<div class="{css}" role="group" aria-label="{escape(label)}"><span class="row-label">'
            f'{escape(label)}</span> <span class="activity-title">{escape(data.title)}</span>{badge}{link}'
            f'{detail}</div>')


def overflow_html(data: NoticeData) -> str:
    code = f" ({escape(data.code)})" if type(data.code) is str and data.code else ""
    message = data.message if type(data.message) is str and data.message else "The request exceeded the context."
    return (f'<div class="notice notice-error notice-overflow"><span class="row-label">Context overflow{code}'
            f'</span> <span class="notice-text">{escape(message)} — the history is compacted next.</span></div>')


def activity_markdown(data: ActivityData) -> str:
    label = _LABELS.get(data.kind, data.kind)
    status = f" ({data.status})" if type(data.status) is str and data.status else ""
    detail = f" — {data.detail}" if type(data.detail) is str else ""
    return f"**{label}** {data.title}{status}{detail}"
