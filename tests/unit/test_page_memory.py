"""``page`` and ``export`` of an unpacked log hold runs of delta lines as rows (issue 23 item 10), as the server's page
path does: measured with ``tracemalloc``, reading the log written one delta per line peaks at about what reading the
same log packed does (it was several times that: one dict per delta), and the output is byte for byte the same."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.records import encode
from perf.load_follow import HEADER, LogGenerator


def _peak(argv: list[str]) -> int:
    tracemalloc.start()
    try:
        assert main(argv) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("command", ["page", "export"])
def test_an_unpacked_log_is_held_as_small_as_the_same_log_packed(tmp_path: Path, capsys: Any, command: str) -> None:
    (tmp_path / "unpacked").mkdir()
    (tmp_path / "packed").mkdir()
    unpacked = tmp_path / "unpacked" / "s.jsonl"  # one name: an export's title falls back to it
    unpacked.write_bytes(b"".join(encode(v) + b"\n" for v in [HEADER, *LogGenerator(2).take(60_000)]))
    packed = tmp_path / "packed" / "s.jsonl"
    assert main(["pack", str(unpacked), "-o", str(packed)]) == 0
    peaks, outputs = {}, {}
    for name, path in (("packed", packed), ("unpacked", unpacked)):
        out = tmp_path / f"{name}.html"
        argv = ([command, str(path), "--max-messages", "20"] if command == "page"
                else [command, str(path), "--max-messages", "20", "-o", str(out)])
        capsys.readouterr()
        peaks[name] = _peak(argv)
        outputs[name] = capsys.readouterr().out.encode() if command == "page" else out.read_bytes()
    print(f"\n{command} peaks (tracemalloc): {peaks}")
    assert outputs["unpacked"] == outputs["packed"]
    assert peaks["unpacked"] < peaks["packed"] * 1.5, peaks
