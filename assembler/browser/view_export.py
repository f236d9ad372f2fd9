"""The Trajectory and Model-context views as documents (the Export menu's "current view"): GitHub-flavoured Markdown,
or static HTML made from that Markdown by the page's own safe renderer.

Rules: the rows are those the page shows (``panels.trajectory_rows`` / ``panels.context_rows``), with the same honest
figures (a duration only where the times were recorded). Transcript text is untrusted: outside fences it goes through
``render.markdown_export.md_text`` (nothing can open an HTML tag), message text sits in fences longer than any
backtick run inside it, and the HTML comes from ``render.markdown_html`` (raw HTML off, safe links) inside the static
export's document (CSS inline, a CSP with no script). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import render
from ..render.markdown_export import fenced, md_text
from ..render.texts import duration_text, token_count_text

__all__ = ["trajectory_markdown", "context_markdown", "view_document"]


def _step_line(row: dict[str, Any]) -> str:
    bits = [row["status"]]
    if row.get("model"):
        bits.append(str(row["model"]))
    if row.get("ttftMs") is not None:
        bits.append(f"TTFT {duration_text(row['ttftMs'])}")
    if row.get("durationMs") is not None:
        bits.append(duration_text(row["durationMs"]))
    tokens = row.get("tokens") or {}
    counts = [f"{token_count_text(tokens[k])} {label}" for k, label in
              (("inputTokens", "in"), ("outputTokens", "out"), ("reasoningTokens", "reasoning")) if k in tokens]
    if counts:
        bits.append(" / ".join(counts))
    return " · ".join(md_text(str(b)) for b in bits)


def trajectory_markdown(rows: Sequence[dict[str, Any]], title: str) -> str:
    """One list item per step (status, model, TTFT, duration, tokens, output summary, tool calls) and turn end."""
    out = [f"# {md_text(title)}: trajectory", ""]
    for row in rows:
        if row["kind"] == "turn-end":
            line = f"- **Turn {row.get('turn')} ended** · {row['status']}"
            if row.get("durationMs") is not None:
                line += f" · turn ran {duration_text(row['durationMs'])}"
            if row.get("error"):
                line += f" · {md_text(str(row['error']))}"
            out.append(line)
            continue
        out.append(f"- **Turn {row.get('turn')} · step {row.get('step')}** · {_step_line(row)}")
        if row.get("error"):
            out.append(f"  - error: {md_text(str(row['error']))}")
        if row.get("summary"):
            out.append(f"  - {md_text(str(row['summary']))}")
        for tool in row.get("tools") or ():
            out.append(f"  - tool `{str(tool['name']).replace('`', '')}`: {md_text(str(tool['status']))}")
    return "\n".join(out) + "\n"


def _message(message: dict[str, Any], depth: int) -> list[str]:
    head = "#" * min(6, 2 + depth)
    label = f"{message['role']} · seq {message['seq']} · {message['type']}"
    if message["shadowed"]:
        n = len(message["shadowed"])
        label += f" · compaction summary of {n} message{'' if n == 1 else 's'}"
    out = [f"{head} {md_text(label)}", "", fenced(message["text"] or "(no text)")]
    if message["chars"] > len(message["text"]):
        out.append(f"_({message['chars'] - len(message['text']):,} more characters not shown)_")
    out.append("")
    for shadowed in message["shadowed"]:
        out.extend(_message(shadowed, depth + 1))
    return out


def context_markdown(value: dict[str, Any], title: str) -> str:
    """The model context: each message under a heading with its role and seq, its text fenced, the messages a
    compaction replaced one level below it."""
    out = [f"# {md_text(title)}: model context", ""]
    for problem in value["problems"]:
        out.append(f"> seq {problem['seq']}: {md_text(str(problem['reason']))}")
    for message in value["messages"]:
        out.extend(_message(message, 0))
    return "\n".join(out) + "\n"


def view_document(markdown: str, title: str, fmt: str) -> str:
    """``markdown`` as is, or as a static HTML document (the export's shell, the safe Markdown renderer)."""
    if fmt == "md":
        return markdown
    shell = render.render_document([], title=title)
    marker = '<main class="transcript">\n'
    return shell.replace(marker, f'{marker}<div class="md">{render.markdown_html(markdown)}</div>\n', 1)
