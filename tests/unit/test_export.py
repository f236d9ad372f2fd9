"""``transcript-assembler export``: a self-contained static transcript with no script at all."""

from __future__ import annotations

from pathlib import Path

from assembler.cli import main
from perf.demo import write_demo


def test_export_writes_a_static_transcript(tmp_path: Path) -> None:
    src, out = tmp_path / "demo.jsonl", tmp_path / "demo.html"
    write_demo(str(src))
    assert main(["export", str(src), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html
    assert "default-src 'none'; style-src 'unsafe-inline'" in html
    assert "How many lines does <code>README.md</code>" not in html  # user text is plain, not markdown
    assert "How many lines does `README.md` have?" in html
    assert "<strong>42 lines</strong>" in html
    assert '<details class="think"' in html and "rather than guess" in html  # Think bodies are in the file
    assert 'style="' not in html


def test_export_of_the_newest_messages_says_so(tmp_path: Path) -> None:
    src, out = tmp_path / "demo.jsonl", tmp_path / "demo.html"
    write_demo(str(src))
    assert main(["export", str(src), "-o", str(out), "--max-messages", "2"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "Showing the newest 2 messages" in html
    assert "Summarise what a packed chunk row is" in html
    # The title is the session's first prompt (no title record); the transcript holds only the newest page.
    assert "<title>How many lines does" in html and "How many lines does" not in html.split("<main", 1)[1]


def test_export_of_a_malformed_log_keeps_the_valid_part_and_names_the_line(tmp_path: Path) -> None:
    src, out = tmp_path / "bad.jsonl", tmp_path / "bad.html"
    write_demo(str(src))
    lines = src.read_bytes().split(b"\n")
    lines[30] = b"{broken"
    src.write_bytes(b"\n".join(lines))
    assert main(["export", str(src), "-o", str(out)]) == 1
    html = out.read_text(encoding="utf-8")
    assert "malformed at line 31" in html
    assert "How many lines does" in html
