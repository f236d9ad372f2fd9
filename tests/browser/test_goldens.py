"""The reference app's golden Chat transcripts: their transcript content appears in our rendered Chat view.

For each scenario under ``apps/web/tests/snapshots`` with a ``ui.expected.md`` and a session log
(``session.jsonl``, else ``seed.jsonl``), the log is opened in the page as a local file, every row is rendered
(the test scrolls through the lazily rendered list), and the Chat view's text must contain:

* each user message of the golden: a top-level ``- text:`` item ending in the message clock ``{{clock}}`` (the
  reference prints the clock, and an optional ``M/D`` date, after the text; a turn-tail line may run into it);
* each slash command: a top-level ``- group "Command input": /name args`` item (the command as typed), and the
  done text of the top-level ``- button "name <done text>"`` that follows it (the reference names the row by the
  command name, then the text);
* each assistant paragraph: a top-level ``- paragraph:`` item, its value or the concatenated values of its inline
  children (``strong``, ``code``, ``text`` ...);
* for logs that are full recordings (``FULL_RECORDINGS``): each "Think" row's title (the golden shows a reasoning
  block's first line), and as many turn-tail rows as the golden shows "Ran for" lines. The golden was taken from a
  live run with real clocks; the committed logs are projected (no ``time``: rebuilt as 0, PROTOCOL 2.3), so the
  durations, TTFT and throughput the golden prints cannot honestly be derived from them: our tails show none of
  them (``views.is_recorded_time``), and the test asserts that instead of matching the golden's count of TTFTs.

Comparison ignores all whitespace (the accessibility tree joins inline children with spaces; the DOM does not) and
treats the golden's ``{{placeholders}}`` as wildcards.

Excluded, with the reason:

* ``approval-composer``: its golden is the approval dialog only (app chrome): no user text, paragraph or Think
  row; the scenario still has to open without error.
* Think rows and tails of ``cordis-tool-round`` and ``web-search-round``: these logs are replay scripts, not
  recordings of the run the golden shows. In ``cordis-tool-round`` the chunks (which the replay streams) and the
  ``assistant/message`` events (from another recording) carry different reasoning, and the settled message wins;
  ``web-search-round`` has no ``turn/*`` or ``step/*`` events, so there is no turn to put a tail on. Their user
  texts and paragraphs are checked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from corpus import FIXTURES, require_corpus

if TYPE_CHECKING:
    from conftest import Viewer


def corpus_present() -> None:
    """A browser test over the real logs: in CI it fails without them, naming where they were looked for; a user
    without ../shared has it skipped (``corpus.require_corpus``), so `make test` runs everything else."""
    require_corpus()

SNAPSHOTS = FIXTURES / "apps" / "web" / "tests" / "snapshots"

COLLECT = """async () => {
    const tv = window.transcriptViewer;
    const doc = document.scrollingElement;
    const rows = new Map();
    const take = () => {
        for (const el of document.querySelectorAll("#transcript article[data-key]")) {
            if (el.hidden) continue;
            // Off-screen Think blocks skip layout (content-visibility) and innerText leaves skipped content out.
            for (const d of el.querySelectorAll("details.think")) d.style.contentVisibility = "visible";
            rows.set(el.dataset.key, {kind: el.dataset.kind, turn: el.dataset.turn ?? null,
                                      seq: Number(el.dataset.seq), text: el.innerText});
        }
    };
    window.scrollTo(0, 0);
    for (let i = 0; i < 500; i++) {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        await tv.idle();
        take();
        if (doc.scrollTop + innerHeight >= doc.scrollHeight - 2) break;
        window.scrollBy(0, innerHeight * 0.9);
    }
    await tv.idle();
    take();
    return [...rows.values()].sort((a, b) => a.seq - b.seq);
}"""
"""Scrolls the (virtualised) transcript top to bottom and returns every shown row, in order: kind, turn, seq and
its text as rendered (rows far from the viewport leave the DOM, so they are collected on the way)."""
_ITEM = re.compile(
    r"""^(?P<indent>\ *)-\ (?P<role>[a-z]+)
        (?:\ (?P<name>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'))?
        (?P<attrs>(?:\ \[[^\]]*\])*)
        (?::(?:\ (?P<value>.*))?)?$""",
    re.VERBOSE,
)
_QUOTED_ITEM = re.compile(r"^(?P<indent> *)- '(?P<inner>(?:[^']|'')*)'(?::(?: (?P<value>.*))?)?$")
_PLACEHOLDER = re.compile(r"\{\{[a-z]+\}\}")
_USER_TAIL = re.compile(r"(?:\s+\d{1,2}/\d{1,2})?\s+\{\{clock\}\}$")
_TAIL_PREFIX = re.compile(r"^(?:\d{1,2}/\d{1,2}\s+)?\{\{clock\}\} Ran for \{\{duration\}\}"
                          r"(?: TTFT \{\{duration\}\} \{\{throughput\}\} tok/s)?\s*")
_TAIL = re.compile(r"\{\{clock\}\} Ran for \{\{duration\}\}(?P<ttft> TTFT)?")
FULL_RECORDINGS = {"code-mode-round", "fresh-round-trip", "goal-multi-turn-actions", "seeded-history"}


def _unquote(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        return str(json.loads(value))
    if value.startswith("'") and value.endswith("'"):
        return value[1:-1].replace("''", "'")
    return value


@dataclass
class Golden:
    """What a golden Chat transcript shows of the transcript itself (the app's chrome left out)."""

    user_texts: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    think_titles: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    command_outputs: list[str] = field(default_factory=list)
    tails: int = 0
    tails_with_ttft: int = 0


def parse_golden(text: str) -> Golden:
    """Extract user texts, commands and their done texts, assistant paragraphs, Think titles and turn-tail counts
    from a ``ui.expected.md``."""
    golden = Golden()
    lines = text.splitlines()
    command_name: str | None = None  # the name of the command whose output button may come next
    for i, line in enumerate(lines):
        quoted = _QUOTED_ITEM.match(line)
        if quoted is not None:  # - 'button "Think …"': the whole "role name" is quoted because of a colon
            line = f"{quoted['indent']}- {quoted['inner'].replace(chr(39) * 2, chr(39))}" + (
                f": {quoted['value']}" if quoted["value"] else (":" if line.rstrip().endswith(":") else ""))
        m = _ITEM.match(line)
        if m is None or m["indent"]:
            continue
        role, value = m["role"], m["value"]
        after_command, command_name = command_name, None
        if role == "group" and m["name"] and _unquote(m["name"]) == "Command input" and value:
            command = _unquote(value)
            golden.commands.append(command)
            command_name = command.split()[0].removeprefix("/")
        elif role == "button" and m["name"] and after_command is not None and (
                _unquote(m["name"]).startswith(after_command + " ")):
            golden.command_outputs.append(_unquote(m["name"])[len(after_command) + 1:])
        elif role == "text" and value:
            item = _unquote(value)
            for tail in _TAIL.finditer(item):
                golden.tails += 1
                golden.tails_with_ttft += tail["ttft"] is not None
            if _USER_TAIL.search(item):
                user = _USER_TAIL.sub("", _TAIL_PREFIX.sub("", item)).strip()
                if user:
                    golden.user_texts.append(user)
        elif role == "paragraph":
            if value:
                golden.paragraphs.append(_unquote(value))
            else:
                parts = []
                for child in lines[i + 1:]:
                    if not child.startswith("  "):
                        break
                    cm = _ITEM.match(child)
                    if cm is not None and cm["value"]:
                        parts.append(_unquote(cm["value"]))
                golden.paragraphs.append("".join(parts))
        elif role == "button" and m["name"]:
            name = _unquote(m["name"])
            if name.startswith("Think "):
                golden.think_titles.append(name[len("Think "):])
    return golden


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def contains(haystack: str, needle: str) -> bool:
    """Whitespace-insensitive containment; ``{{placeholders}}`` in ``needle`` match anything."""
    pieces = [re.escape(squash(p)) for p in _PLACEHOLDER.split(needle)]
    return re.search(".*?".join(pieces), haystack, re.DOTALL) is not None


def scenarios() -> list[object]:
    out: list[object] = []
    if SNAPSHOTS.is_dir():
        for d in sorted(SNAPSHOTS.iterdir()):
            log = d / "session.jsonl" if (d / "session.jsonl").is_file() else d / "seed.jsonl"
            if (d / "ui.expected.md").is_file() and log.is_file():
                out.append(pytest.param(d, log, id=d.name))
    return out or [pytest.param(None, None, id="corpus-missing")]


def test_extractor_reads_a_golden_with_inline_children_and_a_merged_tail() -> None:
    text = "\n".join([
        "- banner:",
        '  - text: "not a transcript item {{clock}}"',
        '- text: "Say \\"hi\\" please. {{clock}}"',
        "- 'button \"Think Step one: look\"':",
        "  - img",
        "- paragraph:",
        "  - strong: Turn 1",
        "  - text: — done",
        "- paragraph: hi",
        "- text: {{clock}} Ran for {{duration}} TTFT {{duration}} {{throughput}} tok/s",
        "- text: {{clock}} Ran for {{duration}} Next question? 7/25 {{clock}}",
        '- group "Command input": /goal ship it',
        "- 'button \"goal Goal created Commands: /goal edit <objective>\"':",
        "  - img",
        '- group "Command input": /goal',
        '- button "Commands"',  # not named after the command: not its output
    ])
    golden = parse_golden(text)
    assert golden.commands == ["/goal ship it", "/goal"]
    assert golden.command_outputs == ["Goal created Commands: /goal edit <objective>"]
    assert golden.user_texts == ['Say "hi" please.', "Next question?"]
    assert golden.paragraphs == ["Turn 1— done", "hi"]
    assert golden.think_titles == ["Step one: look"]
    assert (golden.tails, golden.tails_with_ttft) == (2, 1)


@pytest.mark.parametrize(("scenario", "log"), scenarios())
def test_golden_transcript_content_appears_in_the_chat_view(scenario: Path | None, log: Path | None,
                                                            viewer: Viewer) -> None:
    corpus_present()
    assert scenario is not None and log is not None
    golden = parse_golden((scenario / "ui.expected.md").read_text(encoding="utf-8"))
    rel = log.relative_to(FIXTURES).as_posix()
    result = viewer.open_file(f"/__fixtures__/{rel}", all=True)
    assert result["error"] is None, result["error"]
    rows = viewer.page.evaluate(COLLECT)
    shown = squash("\n".join(r["text"] for r in rows))
    if scenario.name == "approval-composer":
        assert golden.user_texts == golden.paragraphs == golden.think_titles == []
        return
    assert golden.user_texts or golden.commands, "the extractor found no user text or command"
    for text in golden.user_texts:
        assert contains(shown, text), f"user text missing: {text!r}"
    for command in golden.commands:
        assert contains(shown, command), f"command input missing: {command!r}"
    for output in golden.command_outputs:
        assert contains(shown, output), f"command output missing: {output[:100]!r}"
    assert golden.paragraphs, "the extractor found no assistant paragraph"
    for paragraph in golden.paragraphs:
        assert contains(shown, paragraph), f"assistant paragraph missing: {paragraph!r}"
    if scenario.name not in FULL_RECORDINGS:
        return
    assert golden.think_titles, "the extractor found no Think row"
    for title in golden.think_titles:
        assert contains(shown, "Think" + title[:100]), f"Think row missing: {title[:100]!r}"
    tails = [r["text"] for r in rows if r["kind"] == "turn-tail"]
    assert len(tails) == golden.tails
    assert not any(x in t for t in tails for x in ("Ran for", "TTFT", "tok/s")), \
        "a projected log's rebuilt times gave a duration"
