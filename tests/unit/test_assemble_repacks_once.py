"""``assemble`` repacks a log once: the records are repacked as they stream by (the canonical packing), and the page
taken from them repacks only its two edges, where a page boundary may cut a row; never the whole page again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler import chunk_rows, history
from assembler.cli import main
from assembler.records import StorageRecord
from assembler.store.jsonl import read_session
from perf.demo import write_demo


@pytest.mark.parametrize("max_messages", [None, 3])
def test_assemble_repacks_the_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any,
                                       max_messages: int | None) -> None:
    path = tmp_path / "demo.jsonl"
    write_demo(str(path))
    real = chunk_rows.repack_records
    repacked: list[int] = []  # records taken by each call

    def counting(records: Iterable[StorageRecord]) -> Iterator[StorageRecord]:
        taken = list(records)
        repacked.append(len(taken))
        return real(taken)

    monkeypatch.setattr(chunk_rows, "repack_records", counting)
    monkeypatch.setattr(history, "repack_records", counting)
    window = ["--all"] if max_messages is None else ["--max-messages", str(max_messages)]
    assert main(["assemble", str(path), *window, "--digest"]) == 0
    capsys.readouterr()
    assert len(read_session(path).records) > 20  # a log long enough that a second whole repack would show
    assert repacked[0] == len(read_session(path).records)  # the stream, whole, once
    assert sum(repacked[1:]) <= 4, repacked  # then only the page's edges
