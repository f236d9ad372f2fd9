"""Over every real session log: the no-expansion pager is byte-identical to expand → paginate → pack, for the tail
page, every older page walked back to seq 0, and the follow snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import corpus_params, require_corpus

from assembler.chunk_rows import expand_records, pack_chunk_runs
from assembler.history import MessageIndex, page_value, snapshot_value
from assembler.records import decode_page, encode, record_range
from assembler.store.jsonl import read_session


@pytest.mark.parametrize("path", corpus_params())
@pytest.mark.parametrize("max_messages", [1, 2, 50])
def test_pager_matches_reference_on_real_log(path: Path | None, max_messages: int) -> None:
    require_corpus()
    assert path is not None
    result = read_session(path)
    events = list(expand_records(result.records))
    for storage in (result.records, pack_chunk_runs(events)):  # as committed, and canonically packed
        index = MessageIndex(storage)
        header = result.header or {}
        assert encode(index.snapshot(header, max_messages)) == encode(snapshot_value(header, events, max_messages))
        through, before = len(events) - 1, None
        while True:
            page = index.page(through, before, max_messages)
            assert encode(page) == encode(page_value(events, through, before, max_messages))
            decoded = decode_page(encode(page))
            if not decoded.records:
                break
            first = record_range(decoded.records[0])[0]
            if not decoded.hasMore:
                assert first == 0
                break
            before = first
