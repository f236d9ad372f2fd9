"""The one export of a transcript, for the command line (``export``) and the page's Export menu: history records
folded through the default Definitions, the chat nodes rendered with the displays the assembler decided, as a static
HTML document (no script) or GitHub-flavoured Markdown.

Rules: rows of a hidden kind are left out; nodes a Definition hid are written hidden (no script can show them). A
page that does not reach the session's start says so in the banner. The title is the session's own title record,
else its first prompt, else what the caller names. Pure apart from the fold: no I/O here (the callers read and
write). Edge code: it wires in ``definitions`` and ``render``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..conversation import ConversationAssembler
from ..display import displays_of
from ..transcript import transcript
from ..views import HIDDEN_KINDS, NodeDisplay, ViewNode

__all__ = ["fold_page", "render_nodes", "export_page", "export_sessions", "session_title"]


def fold_page(records: Sequence[Any], has_more: bool,
              faults: list[Any] | None = None) -> tuple[list[ViewNode], Mapping[str, NodeDisplay]]:
    """A page of history records (``SessionPage.records``) folded in an assembler of its own: its shown chat nodes
    and their displays. Events no Definition could fold (shown raw) are added to ``faults`` when given.

    Raises:
        AssemblerError: the records break the assembler contract.
    """
    from definitions import default_definitions

    assembler = ConversationAssembler(default_definitions())
    assembler.replace_window(records, has_more)
    result = assembler.flush()
    assert result is not None  # replace_window always leaves a flush pending
    if faults is not None:
        faults.extend(assembler.faults)
    nodes = [n for n in transcript(result).chat if n.kind not in HIDDEN_KINDS]
    chat = result.views.get("chat")
    return nodes, (chat.display if chat is not None else {})


def render_nodes(nodes: Iterable[ViewNode], displays: Mapping[str, NodeDisplay] | None, *, title: str, fmt: str,
                 banner: str = "", turns: Mapping[Any, Any] | None = None) -> str:
    """One document of chat nodes: ``html`` or ``md``. Without ``displays`` they are decided here from the nodes
    (and the window's ``turns``, for turn start times)."""
    from .. import render

    shown = [n for n in nodes if n.kind not in HIDDEN_KINDS]
    if displays is None:
        displays = displays_of(shown, turns or {})
    if fmt == "md":
        return render.render_markdown(shown, title=title, displays=displays, banner=banner)
    return render.render_document(shown, title=title, displays=displays, banner=banner)


def export_page(records: Sequence[Any], has_more: bool, *, title: str, fmt: str = "html", banner: str = "",
                faults: list[Any] | None = None, max_messages: int | None = None) -> str:
    """The export document of a page of history records (a whole session when ``has_more`` is false).

    Raises:
        AssemblerError: as ``fold_page``.
    """
    nodes, displays = fold_page(records, has_more, faults)
    if has_more:
        note = (f"Showing the newest {max_messages} messages; older history is not included." if max_messages
                else "Older history was not available to this export.")
        banner = f"{banner} {note}".strip()
    return render_nodes(nodes, displays, title=title, fmt=fmt, banner=banner)


def export_sessions(sessions: Sequence[tuple[str, Sequence[Any], bool, str]], *, title: str, fmt: str = "html",
                    faults: list[Any] | None = None) -> str:
    """One document of several sessions (``(label, page records, has_more, banner)`` each: an Inspect log's
    samples), a section each.

    Raises:
        as ``export_page``.
    """
    from .. import render
    from ..render.markdown_export import md_text

    folded = []
    for label, records, has_more, banner in sessions:
        nodes, displays = fold_page(records, has_more, faults)
        if has_more:
            banner = f"{banner} Older history is not included.".strip()
        folded.append((label, nodes, displays, banner))
    if fmt == "md":
        parts = [f"# {md_text(title)}"]
        for label, nodes, displays, banner in folded:
            parts.append(_demoted(render.render_markdown(nodes, title=label, displays=displays, banner=banner)))
        return "\n\n".join(parts) + "\n"
    return render.render_sections(folded, title=title)


def _demoted(markdown: str) -> str:
    """Every heading one level down (outside fenced code): a session's document as a section of a larger one."""
    out = []
    fence: str | None = None
    for line in markdown.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        if fence is None and line.startswith("#"):
            line = "#" + line
        out.append(line)
    return "\n".join(out).rstrip("\n")


def session_title(events: Iterable[Any]) -> str | None:
    """The session's last ``session/title`` record, else the first line of its first typed prompt (storage dicts
    or wire events)."""
    title = prompt = None
    for event in events:
        etype = event.get("type") if type(event) is dict else getattr(event, "type", None)
        data = event.get("data") if type(event) is dict else getattr(event, "data", None)
        if type(data) is not dict:
            continue
        if etype == "session/title" and type(data.get("title")) is str and data["title"].strip():
            title = data["title"]
        elif etype == "user/message" and prompt is None:
            source = data.get("source")
            if type(source) is dict and source.get("kind") not in (None, "user"):
                continue
            content = data.get("content")
            texts: list[str] = [b["text"] for b in content if type(b) is dict and type(b.get("text")) is str] \
                if type(content) is list else [content] if type(content) is str else []
            text = next((t for t in texts if t.strip()), None)
            if text is not None:
                line = text.strip().split("\n", 1)[0].strip()
                prompt = line if len(line) <= 120 else line[:119] + "…"
    return title or prompt
