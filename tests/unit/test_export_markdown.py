"""``export -o OUT.md``: GitHub-flavoured Markdown, the format by extension or ``--format``, never silent HTML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conversation_support import Session

from assembler.cli import main
from assembler.render.markdown_export import fenced, md_text
from perf.demo import write_demo


def test_markdown_export_has_headings_details_and_fences(tmp_path: Path) -> None:
    src, out = tmp_path / "demo.jsonl", tmp_path / "demo.md"
    write_demo(str(src))
    assert main(["export", str(src), "-o", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert md.startswith("# ") and "## Turn 1" in md
    assert "### User" in md and "### Assistant" in md
    assert "How many lines does `README.md` have?" in md
    assert "**42 lines**" in md  # assistant Markdown kept as written
    assert "<details><summary>Think: " in md and "rather than guess" in md
    assert "<details><summary>bash: wc -l README.md</summary>" in md and "```json" in md
    assert "<!doctype" not in md.lower()


def test_format_flag_overrides_and_unknown_extension_is_an_error(tmp_path: Path, capsys) -> None:
    src = tmp_path / "demo.jsonl"
    write_demo(str(src))
    assert main(["export", str(src), "-o", str(tmp_path / "a.txt"), "--format", "md"]) == 0
    assert (tmp_path / "a.txt").read_text(encoding="utf-8").startswith("# ")
    assert main(["export", str(src), "-o", str(tmp_path / "b.html"), "--format", "md"]) == 0
    assert "<html" not in (tmp_path / "b.html").read_text(encoding="utf-8")
    assert main(["export", str(src), "-o", str(tmp_path / "c.HTM")]) == 0
    assert "<html" in (tmp_path / "c.HTM").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["export", str(src), "-o", str(tmp_path / "d.txt")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err
    assert not (tmp_path / "d.txt").exists()


def test_untrusted_text_cannot_open_html_outside_code() -> None:
    text = "hi <script>alert(1)</script> and `<b>code</b>`\n```\n<i>fenced</i>\n```\n<img src=x onerror=y>"
    out = md_text(text)
    assert "<script" not in out and "<img" not in out and "&lt;script>" in out
    assert "`<b>code</b>`" in out and "\n<i>fenced</i>\n" in out
    assert fenced("a ```` b").startswith("`````\n")


def test_markdown_of_notices_tool_results_and_tails(tmp_path: Path) -> None:
    s = Session(t0=0)
    s.turn_start(1)
    s.user("run it")
    s.step_start(1, 1)
    s.message(1, 1, [{"type": "text", "text": "ok"}], usage={"inputTokens": 5, "outputTokens": 2})
    s.add("tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "bash", "arguments": '{"command": "ls"}'})
    s.add("tool/result", {"turn": 1, "step": 1, "callId": "c", "content": [{"type": "text", "text": "a\nb"}],
                          "isError": False}, surfaceOp="append")
    s.step_end(1, 1)
    s.turn_end(1, {"kind": "error", "error": {"message": "API key is invalid", "code": "AUTH"}})
    src, out = tmp_path / "s.jsonl", tmp_path / "s.md"
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0}
    src.write_text("\n".join(json.dumps(e) for e in [header, *s.events]) + "\n", encoding="utf-8")
    assert main(["export", str(src), "-o", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert "> **Error (AUTH)** API key is invalid" in md
    assert "Terminal:\n\n```console\n$ ls\na\nb\n```" in md  # a shell call as its terminal, not JSON arguments
    assert "_1 step · 1 tool call · Input 5 tok · Output 2 tok · m_" in md
    assert "Ran for" not in md


@pytest.mark.parametrize("ext", [".md", ".markdown"])
def test_markdown_extensions(tmp_path: Path, ext: str) -> None:
    src = tmp_path / "demo.jsonl"
    write_demo(str(src))
    assert main(["export", str(src), "-o", str(tmp_path / f"x{ext}")]) == 0
    assert (tmp_path / f"x{ext}").read_text(encoding="utf-8").startswith("# ")
