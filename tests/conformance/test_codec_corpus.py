"""Every real session log loads, and re-packing its logical events reproduces exactly the rows in the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus import corpus_params, require_corpus

from assembler.chunk_rows import expand_records, pack_chunk_runs, repack_records
from assembler.records import encode
from assembler.store.jsonl import read_session


@pytest.mark.parametrize("path", corpus_params())
def test_log_loads_and_repacks_to_the_same_rows(path: Path | None) -> None:
    require_corpus()
    assert path is not None
    result = read_session(path, strict=True)
    assert result.ok, result.error
    assert result.warnings == []
    events = list(expand_records(result.records))
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert len(events) == result.event_count
    assert encode(pack_chunk_runs(events)) == encode(result.records)
    assert encode(list(repack_records(result.records))) == encode(result.records)

    # The file itself is projected (no seq/time): after removing the rebuilt fields the bytes are the same.
    lines = [ln for ln in path.read_bytes().splitlines()[1:] if ln.strip()]
    assert len(lines) == len(result.records)
    for raw, record in zip(lines, result.records, strict=True):
        original = json.loads(raw)
        value = json.loads(encode(record))  # an event as kept, a row Struct as it is written
        projected = {k: v for k, v in value.items() if k not in ("seq", "time", "seq0", "time0")
                     or k in original}
        assert projected == original


def test_corpus_has_packed_rows_of_every_kind() -> None:
    require_corpus()
    from corpus import session_logs

    kinds: set[str] = set()
    for path in session_logs():
        kinds.update(r.type for r in read_session(path).records if type(r) is not dict)
    assert kinds == {"text-chunks", "reasoning-chunks", "tool-call-chunks"}
