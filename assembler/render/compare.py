"""A comparison of two sessions (``assembler.comparison``) as a static HTML page or as GitHub-flavoured Markdown.

Rules: the HTML page is the export's page (``document.static_page``: inline stylesheet, a CSP that allows no script
at all); per aligned turn a header (how the turn was matched, a summary table, tool calls by name, argument
differences, the final texts' word diff as ``<del>``/``<ins>``), then two columns, each side's rows of that turn
rendered exactly as the chat export renders them (``document.render_article`` with the display the assembler
decided). Rows outside any turn are not shown (the comparison is turn by turn). Markdown: the session summary table,
then per turn its summary table, the word diff (``~~deleted~~`` / ``**inserted**``) and both final texts. Every
text from a log is escaped. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..comparison import Comparison, SideTotals, ToolCount, TurnComparison, TurnSide, turns_of
from ..views import NodeDisplay, ViewNode
from .document import render_article, static_page
from .markdown import escape
from .markdown_export import fenced, md_text
from .slices import SLICE_CHARS
from .texts import duration_text, plural

__all__ = ["render_comparison_html", "render_comparison_markdown", "MATCH_LABELS", "COMPARE_CSS", "ASPECT_LABELS",
           "aspect_labels",
           "session_summary_html", "turn_header_html", "turn_columns_html", "nodes_by_turn", "turn_title"]

MATCH_LABELS = {"same-prompt": "same prompt", "position": "paired by position (the prompts differ)",
                "only-a": "only in A", "only-b": "only in B"}

# The comparison's aspects (``comparison.DIFFERENCE_ASPECTS``) as a reader names them.
ASPECT_LABELS = {"turns": "turns", "prompt": "prompts", "steps": "steps", "toolCalls": "tool calls",
                 "toolSequence": "call order", "arguments": "arguments", "toolErrors": "tool errors",
                 "retries": "retries", "tokens": "tokens", "duration": "duration", "finalText": "final text"}


def aspect_labels(aspects: Iterable[str]) -> list[str]:
    """The aspects that differ, in words (``toolSequence``: "call order")."""
    return [ASPECT_LABELS.get(a, a) for a in aspects]


Displays = Mapping[str, NodeDisplay]
Row = tuple[str, str, str]

# The comparison's own rules: the static page inlines them, the viewer's build appends them to transcript.css (the
# page's CSP allows no inline style).
COMPARE_CSS = """
.compare-turn { border-top: 2px solid var(--border); margin-top: 1.5rem; padding-top: .5rem; }
.compare-summary { border-collapse: collapse; margin: .5rem 0; }
.compare-summary th, .compare-summary td { border: 1px solid var(--border); padding: .15rem .5rem; text-align: left; }
.compare-summary tr.differs td { background: var(--panel); font-weight: 600; }
.compare-match { color: var(--muted); font-weight: normal; font-size: .9em; }
.compare-diff { white-space: pre-wrap; border: 1px solid var(--border); padding: .5rem; border-radius: 4px; }
.compare-diff del { background: var(--error-bg); color: var(--error-fg); }
.compare-diff ins { background: var(--user-bg); text-decoration: underline; }
.compare-args pre { white-space: pre-wrap; margin: .25rem 0; }
.compare-columns { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; align-items: start; }
.compare-side { min-width: 0; }
.compare-side h3 { margin: .25rem 0; font-size: 1em; color: var(--muted); }
.compare-missing { color: var(--muted); font-style: italic; }
@media (max-width: 60rem) { .compare-columns { grid-template-columns: 1fr; } }
"""


def _n(value: Any) -> str:
    return "—" if value is None else f"{value:,}" if type(value) is int else str(value)


def _duration(value: Any) -> str:
    return "not recorded" if value is None else duration_text(value)


def _rows(a: TurnSide | SideTotals | None, b: TurnSide | SideTotals | None) -> list[Row]:
    def cells(side: TurnSide | SideTotals | None) -> list[str]:
        if side is None:
            return ["—"] * 9
        t = side.tokens
        return [_n(side.steps), _n(side.toolCalls), _n(side.toolErrors), _n(side.retries), _n(t.input),
                _n(t.output), _n(t.cacheRead), _n(t.cacheWrite), _duration(side.durationMs)]

    labels = ["Steps", "Tool calls", "Tool errors", "Retries", "Input tokens", "Output tokens", "Cache read tokens",
              "Cache write tokens", "Duration"]
    rows = list(zip(labels, cells(a), cells(b), strict=True))
    if isinstance(a, SideTotals) and isinstance(b, SideTotals):
        rows.insert(0, ("Turns", _n(a.turns), _n(b.turns)))
    return rows


def _tool_rows(tools: Sequence[ToolCount]) -> list[Row]:
    return [(f"{t.name}", _n(t.a), _n(t.b)) for t in tools]


def _args_text(args: Any) -> str:
    return args if type(args) is str else json.dumps(args, ensure_ascii=False, indent=2)


def _turn_title(t: TurnComparison) -> str:
    numbers = " / ".join(f"{name} turn {side.turn}" for name, side in (("A", t.a), ("B", t.b)) if side is not None)
    return f"{t.index + 1}. {numbers}"


def _prompt(t: TurnComparison) -> list[tuple[str, str]]:
    """The prompt(s) to show: one when both sides have the same, else each side's."""
    if t.a is not None and t.b is not None and t.a.prompt == t.b.prompt:
        return [("Prompt", t.a.prompt or "")]
    return [(f"Prompt {name}", side.prompt if side.prompt is not None else "(no prompt)")
            for name, side in (("A", t.a), ("B", t.b)) if side is not None]


def _counts(comparison: Comparison) -> str:
    s = comparison.session
    c = s.turns
    aspects = f" ({', '.join(aspect_labels(s.differences))})" if s.differences else ""
    return (f"{plural(c.samePrompt, 'turn')} with the same prompt, {c.position} paired by position, {c.onlyA} only "
            f"in A, {c.onlyB} only in B; {plural(c.differing, 'turn')} "
            f"{'differs' if c.differing == 1 else 'differ'}{aspects}.")


# ---- HTML

def _table_html(rows: Iterable[Row], head: tuple[str, str, str]) -> str:
    differs = ' class="differs"'
    body = "".join(f'<tr{differs if a != b else ""}><th scope="row">{escape(label)}</th>'
                   f"<td>{escape(a)}</td><td>{escape(b)}</td></tr>" for label, a, b in rows)
    h = "".join(f'<th scope="col">{escape(x)}</th>' for x in head)
    return f'<table class="compare-summary"><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>'


def _spaced(runs: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(gap, op, text)``: ``gap`` is a space before an insertion that directly follows a deletion when neither
    has whitespace at their join (``one`` → ``two`` reads "~~one~~ **two**", never "onetwo"). The space is the
    rendering's, not a text's: the runs themselves stay the two texts exactly."""
    out: list[tuple[str, str, str]] = []
    prev_op, prev_text = "", ""
    for op, text in runs:
        joined = prev_op == "delete" and op == "insert" and prev_text[-1:].strip() and text[:1].strip()
        out.append((" " if joined else "", op, text))
        prev_op, prev_text = op, text
    return out


def _diff_html(runs: Sequence[tuple[str, str]] | None) -> str:
    if runs is None:
        return ""
    if all(op == "equal" for op, _ in runs):
        return '<p class="compare-same">The final texts are the same.</p>'
    tags = {"delete": "del", "insert": "ins"}
    body = "".join(gap + (f"<{tags[op]}>{escape(text)}</{tags[op]}>" if op in tags else escape(text))
                   for gap, op, text in _spaced(runs))
    return f'<div class="compare-diff" aria-label="final text: A to B">{body}</div>'


def _header_html(t: TurnComparison) -> str:
    parts = [f'<h2>{escape(_turn_title(t))} <span class="compare-match">{escape(MATCH_LABELS[t.match])}</span></h2>']
    parts += [f"<p><strong>{escape(label)}:</strong> {escape(text)}</p>" for label, text in _prompt(t)]
    parts.append(_table_html(_rows(t.a, t.b), ("", "A", "B")))
    if t.tools:
        parts.append(_table_html(_tool_rows(t.tools), ("Tool", "A", "B")))
    if t.sequences is not None:
        note = " (the same calls in another order)" if t.reordered else ""
        parts.append(f"<p>Call order differs{escape(note)}: A {escape(' → '.join(t.sequences.a) or 'none')}; "
                     f"B {escape(' → '.join(t.sequences.b) or 'none')}</p>")
    for d in t.argumentDiffs:
        parts.append(f'<div class="compare-args"><p>Call {d.position + 1} ({escape(d.name)}) has other arguments:</p>'
                     f"<pre>A: {escape(_args_text(d.a))}</pre><pre>B: {escape(_args_text(d.b))}</pre></div>")
    parts.append(_diff_html(t.finalTextDiff))
    return "".join(parts)


def _column(label: str, nodes: Sequence[ViewNode] | None, displays: Displays, lazy: bool) -> str:
    side = f'<div class="compare-side" data-side="{escape(label.lower())}"><h3>{escape(label)}</h3>'
    if nodes is None:
        return f'{side}<p class="compare-missing">No such turn.</p></div>'
    if lazy:  # the page: as the chat view renders its rows (bounded slices, collapsed bodies asked for when opened)
        body = "".join(render_article(n, display=displays.get(n.key), limit=SLICE_CHARS, lazy=True, keyed=True)
                       for n in nodes if n.visibility != "hidden")
    else:
        body = "".join(render_article(n, display=displays.get(n.key), limit=None, lazy=False) for n in nodes
                       if n.visibility != "hidden")
    return f"{side}{body}</div>"


def _by_turn(nodes: Iterable[ViewNode]) -> dict[tuple[str, str], list[ViewNode]]:
    return {(type(t.turn).__name__, repr(t.turn)): t.nodes for t in turns_of(nodes)}


def _side_nodes(groups: Mapping[tuple[str, str], list[ViewNode]], side: TurnSide | None) -> list[ViewNode] | None:
    return None if side is None else groups.get((type(side.turn).__name__, repr(side.turn)), [])


def session_summary_html(comparison: Comparison, *, label_a: str, label_b: str) -> str:
    """The whole-session summary (both labels, the turn counts, the totals, tool calls by name, the final answers'
    word diff) as one ``<section class="compare-session">``."""
    s = comparison.session
    head = [f"<p><strong>A:</strong> {escape(label_a)}<br><strong>B:</strong> {escape(label_b)}</p>",
            f"<p>{escape(_counts(comparison))}</p>",
            _table_html(_rows(s.a, s.b), ("Session", "A", "B"))]
    if s.tools:
        head.append(_table_html(_tool_rows(s.tools), ("Tool", "A", "B")))
    if s.finalTextDiff is not None:
        head.append("<p>Final answer, A to B:</p>" + _diff_html(s.finalTextDiff))
    return "".join(['<section class="compare-session">', *head, "</section>\n"])


def turn_header_html(t: TurnComparison) -> str:
    """One aligned turn's header: its title and how it was matched, the prompt(s), the summary tables, the call
    order and argument differences, the final texts' word diff."""
    return _header_html(t)


def turn_title(t: TurnComparison) -> str:
    """``3. A turn 3 / B turn 4``: the aligned turn's number and which turn of each side it is."""
    return _turn_title(t)


def nodes_by_turn(nodes: Iterable[ViewNode]) -> dict[tuple[str, str], list[ViewNode]]:
    """A side's chat nodes grouped by turn (the keys ``turn_columns_html`` looks a ``TurnSide`` up by)."""
    return _by_turn(nodes)


def turn_columns_html(t: TurnComparison, groups_a: Mapping[tuple[str, str], list[ViewNode]],
                      groups_b: Mapping[tuple[str, str], list[ViewNode]], displays_a: Displays | None = None,
                      displays_b: Displays | None = None, *, lazy: bool = False) -> str:
    """The two columns of one aligned turn (``data-side="a"|"b"``): each side's rows of that turn as the chat
    export renders them, or, ``lazy``, as the chat view does (each article keyed by its node; long texts one slice
    and a "Show more", collapsed bodies empty until opened: ``render_section``)."""
    return ('<div class="compare-columns">'
            f"{_column('A', _side_nodes(groups_a, t.a), displays_a or {}, lazy)}"
            f"{_column('B', _side_nodes(groups_b, t.b), displays_b or {}, lazy)}</div>")


def render_comparison_html(comparison: Comparison, *, title: str, label_a: str, label_b: str,
                           nodes_a: Iterable[ViewNode], nodes_b: Iterable[ViewNode],
                           displays_a: Displays | None = None, displays_b: Displays | None = None) -> str:
    """The comparison as one self-contained static page (``label_a``/``label_b`` name the two sides)."""
    groups_a, groups_b = _by_turn(nodes_a), _by_turn(nodes_b)
    parts = [session_summary_html(comparison, label_a=label_a, label_b=label_b)]
    for t in comparison.turns:
        parts.append(f'<section class="compare-turn" id="turn-{t.index + 1}">{_header_html(t)}'
                     f"{turn_columns_html(t, groups_a, groups_b, displays_a, displays_b)}</section>\n")
    return static_page(title, "".join(parts), extra_css=".transcript { max-width: 110rem; }\n" + COMPARE_CSS)


# ---- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_~\[\]<>#|!])")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _cell(text: str) -> str:
    return _md_escape(text).replace("\n", " ")


def _table_md(rows: Iterable[Row], head: tuple[str, str, str]) -> str:
    lines = [f"| {' | '.join(_cell(h) for h in head)} |", "| --- | --- | --- |"]
    lines += [f"| {_cell(label)} | {_cell(a)} | {_cell(b)} |" for label, a, b in rows]
    return "\n".join(lines)


def _marked(text: str, mark: str) -> str:
    """``text`` wrapped in ``mark`` line by line, its surrounding whitespace outside (emphasis cannot start or end
    with a space, nor cross a line break)."""
    out = []
    for line in text.split("\n"):
        core = line.strip()
        if not core:
            out.append(line)
            continue
        lead = line[:len(line) - len(line.lstrip())]
        trail = line[len(line.rstrip()):]
        out.append(f"{lead}{mark}{_md_escape(core)}{mark}{trail}")
    return "\n".join(out)


def _diff_md(runs: Sequence[tuple[str, str]] | None) -> str:
    if runs is None:
        return ""
    if all(op == "equal" for op, _ in runs):
        return "The final texts are the same."
    marks = {"delete": "~~", "insert": "**"}
    return "".join(gap + (_marked(text, marks[op]) if op in marks else _md_escape(text))
                   for gap, op, text in _spaced(runs))


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in md_text(text).split("\n"))


def _turn_md(t: TurnComparison) -> str:
    parts = [f"## {_cell(_turn_title(t))}: {MATCH_LABELS[t.match]}"]
    parts += [f"**{label}:** {_cell(text)}" for label, text in _prompt(t)]
    parts.append(_table_md(_rows(t.a, t.b), ("", "A", "B")))
    if t.tools:
        parts.append(_table_md(_tool_rows(t.tools), ("Tool", "A", "B")))
    if t.sequences is not None:
        note = " (the same calls in another order)" if t.reordered else ""
        parts.append(f"Call order differs{note}: A {_cell(' → '.join(t.sequences.a) or 'none')}; "
                     f"B {_cell(' → '.join(t.sequences.b) or 'none')}")
    for d in t.argumentDiffs:
        parts.append(f"Call {d.position + 1} ({_cell(d.name)}) has other arguments:\n\n"
                     f"{fenced('A: ' + _args_text(d.a))}\n\n{fenced('B: ' + _args_text(d.b))}")
    if t.finalTextDiff is not None:
        parts.append("### Final text, A to B\n\n" + _diff_md(t.finalTextDiff))
    for name, side in (("A", t.a), ("B", t.b)):
        if side is not None:
            parts.append(f"### Final text {name}\n\n" + (_quote(side.finalText) if side.finalText is not None
                                                         else "(none)"))
    return "\n\n".join(parts)


def render_comparison_markdown(comparison: Comparison, *, title: str, label_a: str, label_b: str) -> str:
    """The comparison as one Markdown document."""
    s = comparison.session
    parts = [f"# {_cell(title)}", f"- **A:** {_cell(label_a)}\n- **B:** {_cell(label_b)}",
             _cell(_counts(comparison)),
             _table_md(_rows(s.a, s.b), ("Session", "A", "B"))]
    if s.tools:
        parts.append(_table_md(_tool_rows(s.tools), ("Tool", "A", "B")))
    if s.finalTextDiff is not None:
        parts.append("Final answer, A to B:\n\n" + _diff_md(s.finalTextDiff))
    parts += [_turn_md(t) for t in comparison.turns]
    return "\n\n".join(parts) + "\n"
