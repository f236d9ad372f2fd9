"""``pack`` memory stays bounded whatever the block size (issue 23 item 9): a run is closed at the row caps
(``chunk_rows.MAX_ROW_MEMBERS`` deltas, ``MAX_ROW_CHARS`` characters) instead of being held whole until it ends,
and the writer flushes by bytes, not only by lines. Measured with ``tracemalloc`` (deterministic, no timing): packing
a block twice as long peaks at about the same memory; the output is consecutive rows of one block that unpack to
exactly the input. The 10-million-delta figures (RSS before/after) are in the README."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from assembler import chunk_rows
from assembler.cli import main
from assembler.records import decode_storage_row


def _block(path: Path, deltas: int) -> None:
    lines = ['{"type":"session","id":"block"}', '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}',
             '{"type":"step/start","seq":1,"time":0,"data":{"turn":1,"step":1}}']
    lines += [f'{{"type":"assistant/chunk","seq":{2 + i},"time":{2 + i},"data":{{"turn":1,"step":1,"chunk":'
              f'{{"type":"text-delta","index":0,"text":"tok{i % 1000} "}}}}}}' for i in range(deltas)]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def _peak_of_pack(source: Path, out: Path) -> int:
    tracemalloc.start()
    try:
        assert main(["pack", str(source), "-o", str(out)]) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_packing_a_block_twice_as_long_peaks_at_the_same_memory(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunk_rows, "MAX_ROW_MEMBERS", 2048, raising=False)  # rows much shorter than the blocks
    peaks = {}
    for deltas in (100_000, 200_000):
        _block(tmp_path / f"in{deltas}.jsonl", deltas)
        peaks[deltas] = _peak_of_pack(tmp_path / f"in{deltas}.jsonl", tmp_path / f"out{deltas}.jsonl")
    print(f"\npack peaks (tracemalloc): {peaks}")
    assert peaks[200_000] < peaks[100_000] * 1.25, peaks  # held whole, twice the block would take twice the memory


def test_a_block_longer_than_a_row_is_consecutive_rows_that_unpack_to_the_input(tmp_path: Path, capsys: Any,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunk_rows, "MAX_ROW_MEMBERS", 1000, raising=False)
    source = tmp_path / "in.jsonl"
    _block(source, 5_500)
    assert main(["pack", str(source), "-o", str(tmp_path / "packed.jsonl")]) == 0
    lines = (tmp_path / "packed.jsonl").read_bytes().splitlines()
    rows = [decode_storage_row(line) for line in lines[3:]]
    assert [r.members for r in rows] == [1000] * 5 + [500]
    assert [r.seq for r in rows] == [2 + 1000 * k for k in range(6)]  # one block, continued row after row
    assert main(["unpack", str(tmp_path / "packed.jsonl")]) == 0
    assert capsys.readouterr().out.encode() == source.read_bytes()
