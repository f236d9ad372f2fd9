"""Tool calls that talk to the reader rather than to a machine: questions to the user (with their options and the
answer), plans put up for review, and fetched pages. Their texts are Markdown written by the model or a web page,
so they are rendered as Markdown (the safe renderer: raw HTML shown as text, unsafe links left as text), never as
Markdown source in a monospace block, and never as JSON.

Rules: a question's options keep their order; the answer marks the options it chose (``answers: [{id, selected,
custom}]`` as our harness records it, or Claude Code's ``"question"="answer"`` sentence); an answer that names no
option is shown as written. ``*_html`` make the expanded body, ``*_text`` the Markdown export's parts
(``(label, text, "markdown")``: Markdown text, not a fenced block). Pure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .markdown import escape, markdown_html
from .tools import string_arg

__all__ = ["question_html", "question_text", "plan_html", "plan_text", "fetched_html", "fetched_text", "asked"]

_CLAUDE_ANSWER = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')


def asked(args: dict[str, Any]) -> list[dict[str, Any]]:
    """The questions of a call, each ``{id, header, question, options: [{label, description}], multi}``."""
    raw = args.get("questions")
    items = raw if type(raw) is list else [args]
    out: list[dict[str, Any]] = []
    for q in items:
        if type(q) is str and q:
            out.append({"id": None, "header": None, "question": q, "options": [], "multi": False})
            continue
        if type(q) is not dict:
            continue
        text = string_arg(q, "question", "text", "prompt")
        if not text:
            continue
        options = []
        given = q.get("options")
        for o in given if type(given) is list else []:
            if type(o) is str and o:
                options.append({"label": o, "description": None})
            elif type(o) is dict and type(o.get("label")) is str:
                desc = o.get("description")
                options.append({"label": o["label"], "description": desc if type(desc) is str else None})
        multi = q.get("multi_select", q.get("multiSelect")) is True
        out.append({"id": q.get("id") if type(q.get("id")) is str else None, "header": string_arg(q, "header"),
                    "question": text, "options": options, "multi": multi})
    return out


def _answers(result: str | None) -> dict[str, tuple[list[str], str | None]]:
    """What the answer chose, by question id or text: ``(selected labels, custom text)``."""
    if not result:
        return {}
    out: dict[str, tuple[list[str], str | None]] = {}
    stripped = result.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        items = value.get("answers") if type(value) is dict else None
        if type(items) is list:
            for a in items:
                if type(a) is dict and type(a.get("id")) is str:
                    sel = a.get("selected")
                    chosen = [s for s in sel if type(s) is str] if type(sel) is list else []
                    custom = a.get("custom")
                    out[a["id"]] = (chosen, custom if type(custom) is str and custom else None)
            return out
    for question, answer in _CLAUDE_ANSWER.findall(result):
        out[question.replace('\\"', '"')] = ([a.strip() for a in answer.replace('\\"', '"').split(",")], None)
    return out


def _answer_of(q: dict[str, Any], answers: dict[str, tuple[list[str], str | None]]) -> tuple[list[str], str | None]:
    return answers.get(q["id"] or "", answers.get(q["question"], ([], None)))


def question_html(args: dict[str, Any], result: str | None, *, error: bool) -> str | None:
    """The questions with their options (the chosen ones marked), then the answer or the error as written."""
    questions = asked(args)
    if not questions:
        return None
    answers = {} if error else _answers(result)
    items = []
    for q in questions:
        chosen, custom = _answer_of(q, answers)
        head = f'<span class="badge">{escape(q["header"])}</span> ' if q["header"] else ""
        multi = ' <span class="question-multi">(several may be chosen)</span>' if q["multi"] and q["options"] else ""
        opts = []
        for o in q["options"]:
            picked = o["label"] in chosen
            desc = f' <span class="option-description">— {escape(o["description"])}</span>' if o["description"] else ""
            opts.append(f'<li class="option{" chosen" if picked else ""}">{"☑" if picked else "☐"} '
                        f'<span class="option-label">{escape(o["label"])}</span>{desc}</li>')
        listed = f'<ul class="options">{"".join(opts)}</ul>' if opts else ""
        free = [c for c in chosen if c not in {o["label"] for o in q["options"]}]
        said = ", ".join(free + ([custom] if custom else []))
        extra = f'<div class="answer-text">Answer: {escape(said)}</div>' if said else ""
        items.append(f'<li class="question">{head}<div class="md">{markdown_html(q["question"])}</div>'
                     f'{multi}{listed}{extra}</li>')
    body = _section("Asked", f'<ol class="questions">{"".join(items)}</ol>')
    if result is not None and (error or not answers):
        body += _section("Error" if error else "Answer", f'<div class="plain-pre">{escape(result)}</div>',
                         "tool-result is-error" if error else "tool-result")
    return body


def question_text(args: dict[str, Any], result: str | None, *, error: bool) -> list[tuple[str, str, str]] | None:
    questions = asked(args)
    if not questions:
        return None
    answers = {} if error else _answers(result)
    lines = []
    for n, q in enumerate(questions, 1):
        chosen, custom = _answer_of(q, answers)
        head = f"**{q['header']}** " if q["header"] else ""
        lines.append(f"{n}. {head}{q['question']}")
        for o in q["options"]:
            desc = f" — {o['description']}" if o["description"] else ""
            lines.append(f"   - [{'x' if o['label'] in chosen else ' '}] {o['label']}{desc}")
        free = [c for c in chosen if c not in {o["label"] for o in q["options"]}] + ([custom] if custom else [])
        if free:
            lines.append(f"   - Answer: {', '.join(free)}")
    parts = [("Asked", "\n".join(lines), "markdown")]
    if result is not None and (error or not answers):
        parts.append(("Error" if error else "Answer", result, ""))
    return parts


def plan_html(args: dict[str, Any], result: str | None, *, error: bool) -> str | None:
    """The plan as Markdown, then the review (a rejection is an error) as written."""
    plan = string_arg(args, "plan", "summary")
    if plan is None:
        return None
    review = "" if result is None else _section("Rejected" if error else "Review",
                                                f'<div class="plain-pre">{escape(result)}</div>',
                                                "tool-result is-error" if error else "tool-result")
    return _section("Plan", f'<div class="md plan">{markdown_html(plan)}</div>') + review


def plan_text(args: dict[str, Any], result: str | None, *, error: bool) -> list[tuple[str, str, str]] | None:
    plan = string_arg(args, "plan", "summary")
    if plan is None:
        return None
    tail = [] if result is None else [("Rejected" if error else "Review", result, "")]
    return [("Plan", plan, "markdown"), *tail]


def fetched_html(result: str, *, error: bool) -> str:
    """A fetched page's text (Markdown, as fetch tools return it) rendered; an error as written."""
    if error:
        return _section("Error", f'<div class="plain-pre is-error">{escape(result)}</div>', "tool-result is-error")
    return _section("Page", f'<div class="md fetched">{markdown_html(result)}</div>', "tool-result")


def fetched_text(result: str, *, error: bool) -> tuple[str, str, str]:
    return ("Error", result, "") if error else ("Page", result, "markdown")


def _section(label: str, inner: str, css: str = "") -> str:
    return (f'<div class="tool-section{(" " + css) if css else ""}"><div class="section-label">{escape(label)}</div>'
            f'{inner}</div>')
