"""The page opens a local SQLite session (written by our own ``convert``) as it opens ``.jsonl``: same transcript
digest as CPython's ``assemble --all --digest`` of the log, same counts; sqlite3 comes from the built site (the
page never leaves 127.0.0.1: the viewer fixture records every request)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from conversation_support import storage_page_bytes

from assembler.cli import main
from assembler.demo import demo_session
from assembler.logfile import parse_session_bytes
from assembler.records import decode_page, encode
from assembler.transcript import assemble, digest
from definitions import default_definitions

if TYPE_CHECKING:
    from conftest import Viewer


def test_a_local_sqlite_session_opens_with_the_cpython_digest(viewer: Viewer, tmp_path: Path) -> None:
    header, batches = demo_session()
    log = b"".join(encode(v) + b"\n" for v in [header, *(e for batch in batches for e in batch)])
    (tmp_path / "demo.jsonl").write_bytes(log)
    assert main(["convert", str(tmp_path / "demo.jsonl"), str(tmp_path / "demo.sqlite")]) == 0
    path = viewer.add_file("demo.sqlite", (tmp_path / "demo.sqlite").read_bytes())
    result = viewer.open_file(path, all=True)
    assert result["error"] is None
    records = parse_session_bytes(log).records
    expected = digest(assemble(decode_page(storage_page_bytes(records, "packed", None)).records, False,
                               default_definitions()))
    assert result["digest"] == expected
    assert result["file"]["events"] == len(records)
    assert viewer.page.locator("#transcript article.node").count() > 0


def test_a_damaged_database_is_one_alert_naming_the_file(viewer: Viewer) -> None:
    path = viewer.add_file("broken.db", b"SQLite format 3\x00" + b"\x00" * 200)
    result = viewer.open_file(path, all=True)
    assert result["error"] is not None and "broken.db" in result["error"]["message"]
