"""Long unbroken runs render in bounded pieces that wrap (issue 23 item 8): a text block that is one long "word"
(a million letters, Arabic, combining accents, a run full of ``&`` and ``<``) comes out of the HTML export and the
viewer's rows with a ``<wbr>`` break opportunity at least every ``RUN_CHARS`` characters of its text, the text
itself unchanged (take the ``<wbr>`` out and the HTML is what it was), no tag touched, no entity cut, no combining
mark or joiner split from its base. The layout itself is measured in ``tests/browser/test_long_token.py``."""

from __future__ import annotations

import html
import random
import re
from pathlib import Path

import pytest

from assembler.cli import main
from assembler.records import encode
from assembler.render.slices import RUN_CHARS, break_long_runs, sliced

SLACK = 16  # a cut moves past an entity or a run of combining marks: pieces may be this much longer

RUNS = {
    "letters": "abcdefghij" * 100_000,
    "arabic": "".join(chr(0x0627 + random.Random(1).randrange(20)) for _ in range(300_000)),
    "combining": "e\u0301" * 150_000,
    "emoji-zwj": "\U0001f469\u200d\U0001f4bb\U0001f3fd" * 50_000,
    "markup-chars": "a&b<c>d\"e'" * 30_000,
}


def _text_runs(markup: str) -> list[str]:
    """The runs of text without white space between break opportunities (``<wbr>``) or tags, entities decoded."""
    out = []
    for text in re.split(r"<[^>]*>", markup):
        out += [html.unescape(run) for run in text.split()]
    return out


def _check(markup: str, source: str) -> None:
    runs = _text_runs(markup)
    longest = max(map(len, runs))
    assert longest <= RUN_CHARS + SLACK, longest
    assert all(not re.match(r"[\u0300-\u036f\u200d\U0001f3fb-\U0001f3ff]", run) for run in runs)  # no split mark
    assert "".join(html.unescape(t) for t in re.split(r"<[^>]*>", markup)).count(source[:50]) >= 1


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_a_sliced_text_block_breaks_long_runs_and_keeps_its_text(kind: str) -> None:
    text = RUNS[kind]
    for markdown in (True, False):
        whole = sliced(text, markdown=markdown, key="k", block=0, limit=None)  # the export renders it whole
        _check(whole, text)
        plain = re.sub(r"<[^>]*>", "", whole.replace("<wbr>", ""))
        assert html.unescape(plain).replace("\n", "") == text.replace("\n", "")
        first = sliced(text, markdown=markdown, key="k", block=0, limit=20_000)  # the viewer's first slice
        _check(first.split('<button type="button" class="show-more"')[0], text)


def test_tags_and_attributes_are_never_touched() -> None:
    href = "https://example.com/" + "x" * 500
    markup = f'<p><a href="{href}" title="{"t" * 300}">{"y" * 400}</a></p>'
    out = break_long_runs(markup)
    assert f'href="{href}"' in out and f'title="{"t" * 300}"' in out
    assert out.replace("<wbr>", "") == markup and out.count("<wbr>") == 3


def test_short_runs_are_left_alone() -> None:
    markup = "<p>" + " ".join(["word" * 30] * 50) + "</p>"  # runs of 120 characters
    assert break_long_runs(markup) == markup


def test_the_html_export_of_a_million_character_token_is_broken_into_bounded_runs(tmp_path: Path) -> None:
    token = RUNS["letters"]
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "user/message", "seq": 1, "time": 0, "data": {"id": "u", "role": "user", "content": [
            {"type": "text", "text": "a long word"}], "source": {"kind": "user"}}, "surfaceOp": "append"},
        {"type": "step/start", "seq": 2, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 3, "time": 0, "data": {"turn": 1, "step": 1, "message": {
            "role": "assistant", "content": [{"type": "text", "text": token}],
            "source": {"kind": "model", "provider": "p", "model": "m"}, "id": "a"}}, "surfaceOp": "append"},
    ]
    path = tmp_path / "token.jsonl"
    path.write_bytes(b"".join(encode(v) + b"\n" for v in [{"type": "session", "id": "t"}, *events]))
    assert main(["export", str(path), "-o", str(tmp_path / "t.html")]) == 0
    document = (tmp_path / "t.html").read_text(encoding="utf-8")
    body = document.split("<body", 1)[1]
    assert max(map(len, _text_runs(body))) <= RUN_CHARS + SLACK
    assert body.count("<wbr>") >= len(token) // RUN_CHARS - 1
    assert re.sub(r"<[^>]*>", "", body.replace("<wbr>", "")).count(token) == 1  # the token itself, whole
