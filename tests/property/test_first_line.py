"""``first_line`` (the summary of a Think row, a tool title, a panel line) finds the pieces of
``text.split("\\n", 20)`` one by one: its answer equals the first non-blank piece of that split, stripped and cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.render.texts import first_line

PIECE = st.one_of(st.sampled_from(["\n", " ", "\t", "\r", "\u2028", "\u3000", "x", "ab c", "y" * 40, "\n \n"]),
                  st.text(max_size=6))


def _split_first_line(text: str, limit: int) -> str:
    for line in text.split("\n", 20):
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECE, max_size=60).map("".join), st.sampled_from([1, 2, 5, 80, 160, 200]))
def test_first_line_is_the_first_nonblank_piece_of_the_split(text: str, limit: int) -> None:
    assert first_line(text, limit) == _split_first_line(text, limit)


def test_first_line_after_twenty_blank_lines_is_the_rest() -> None:
    text = "\n" * 20 + " a\nb "
    assert first_line(text) == "a\nb" == _split_first_line(text, 160)
