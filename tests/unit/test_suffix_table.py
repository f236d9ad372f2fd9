"""Each readable suffix is written once, in the format table (``assembler.formats``): the scan, the id rules, the
output-format choice, the readers' session ids and the page's file picker all take it from there."""

from __future__ import annotations

import ast
from pathlib import Path

from assembler.formats import ACCEPT

ROOT = Path(__file__).resolve().parents[2]
# Suffixes with a second meaning outside the table: ``.jsonl`` (a Claude Code project's files) and ``.json``.
WATCHED = set(ACCEPT) - {".jsonl", ".json"}
# Files that name one of these suffixes for something other than a session file.
OTHER_MEANING = {
    "assembler/server/site_files.py",  # files served already compressed
    "assembler/server/site_index.py",  # the published site's search shards
}


def test_no_readable_suffix_is_written_outside_the_table() -> None:
    found = []
    for folder in ("assembler", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "assembler/formats.py" or rel in OTHER_MEANING:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in WATCHED:
                    found.append(f"{rel}:{node.lineno}: {node.value!r}")
    for path in sorted((ROOT / "web").rglob("*.mjs")):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT).as_posix()}: {s!r}" for s in sorted(WATCHED) if f'"{s}"' in text]
    assert found == []
