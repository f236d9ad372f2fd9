"""Which kind of row ("facet") each chat row is, for the page's show/hide filters and their counts
(``web/filters.mjs``; sent as ``NodeMeta.facet``/``think``).

Rules: a row has exactly one facet: ``user`` (an input message), ``assistant`` (a step with text), ``thinking`` (a
step holding only reasoning), ``tool:NAME`` (a tool call, by its tool's name), ``notice`` (everything else: notices,
activity, compaction, commands, turn tails, events). A step with text and reasoning is ``assistant`` and carries
``think``: hiding ``thinking`` hides its Think sections too. Pure.
"""

from __future__ import annotations

from ..views import AssistantStepData, ReasoningBlockView, TextBlockView, ToolData, ViewNode

__all__ = ["THINKING", "has_thinking", "row_facet"]

THINKING = "thinking"


def _step_blocks(node: ViewNode) -> tuple[bool, bool]:
    """(has text, has reasoning) of an assistant step."""
    data = node.data
    if node.kind != "assistant-step" or type(data) is not AssistantStepData:
        return False, False
    text = think = False
    for block in data.blocks:
        t = type(block)
        if t is TextBlockView:
            text = True
        elif t is ReasoningBlockView:
            think = True
    return text, think


def row_facet(node: ViewNode) -> str:
    """The facet of chat row ``node`` (see the module's rules)."""
    kind = node.kind
    if kind == "input-message":
        return "user"
    if kind == "assistant-step":
        text, think = _step_blocks(node)
        return THINKING if think and not text else "assistant"
    if kind == "tool":
        data = node.data
        name = data.name if type(data) is ToolData else None
        return f"tool:{name}" if type(name) is str and name else "tool:tool"
    return "notice"


def has_thinking(node: ViewNode) -> bool:
    """True when the row holds reasoning (a Think section)."""
    return _step_blocks(node)[1]
