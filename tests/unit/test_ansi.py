"""Terminal escape sequences are shown as a terminal shows them (``render.ansi``): styles and the 16 colours as
classed spans in terminal output, every other sequence dropped, nothing raw left, everything escaped; plain text
(a notice, a title) loses them; the Markdown export's terminal has none."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from assembler.render.ansi import ansi_html, strip_ansi
from assembler.render.markdown import escape

ESC = "\x1b"


def test_styles_and_colours_become_spans() -> None:
    html = ansi_html(f"Running {ESC}[1mPostToolUse{ESC}[22m hooks {ESC}[31;1mred{ESC}[0m <b>plain</b>")
    assert html == ('Running <span class="ansi-bold">PostToolUse</span> hooks '
                    '<span class="ansi-bold ansi-fg1">red</span> &lt;b&gt;plain&lt;/b&gt;')
    assert ansi_html(f"{ESC}[92mok{ESC}[39m done") == '<span class="ansi-fg10">ok</span> done'
    assert ansi_html(f"{ESC}[38;5;196mX{ESC}[0m") == "X"  # a 256-colour is not shown, its text is
    assert ansi_html(f"{ESC}[38;2;1;2;3;1mB") == '<span class="ansi-bold">B</span>'  # true colour's 3 values skipped


def test_every_other_sequence_is_dropped() -> None:
    text = f"a{ESC}[2K{ESC}[1Gb{ESC}]8;;https://x{ESC}\\link{ESC}]8;;{ESC}\\ {ESC}c{ESC}(B{ESC}7z{ESC}"
    assert strip_ansi(text) == "ablink z"
    assert ansi_html(text) == "ablink z"


def test_escape_drops_them_from_plain_text() -> None:
    assert escape(f"Running {ESC}[1mStop{ESC}[22m hook") == "Running Stop hook"


@given(st.text(alphabet=st.sampled_from(["\x1b", "[", "]", "m", "1", ";", "3", "a", "<", "&", "\x07", "\\", "("]),
               max_size=60))
def test_no_raw_escape_or_markup_survives(text: str) -> None:
    html = ansi_html(text)
    assert ESC not in html and ESC not in strip_ansi(text)
    assert "<" not in html.replace("<span class=", "").replace("</span>", "")  # only our spans are markup
