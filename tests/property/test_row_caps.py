"""Row caps (issue 23 item 9): a run longer than ``MAX_ROW_MEMBERS`` deltas or ``MAX_ROW_CHARS`` characters is
packed as consecutive rows of one block, cut greedily. With the caps made tiny (so every run meets them), the codec
properties still hold: decode(pack) is the identity, packing is idempotent, repacking split batches or rows packed
under larger caps gives exactly what packing the events gives, every row keeps to the caps; and packed = scalar
still holds for sessions whose blocks are cut into several rows."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from conversation_support import both
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from session_strategies import sessions
from test_codec_roundtrip import event_streams

from assembler import chunk_rows
from assembler.chunk_rows import expand_records, is_storage_row, pack_chunk_runs, repack_records
from assembler.records import encode


@contextlib.contextmanager
def caps(members: int, chars: int) -> Iterator[None]:
    saved = chunk_rows.MAX_ROW_MEMBERS, chunk_rows.MAX_ROW_CHARS
    chunk_rows.MAX_ROW_MEMBERS, chunk_rows.MAX_ROW_CHARS = members, chars
    try:
        yield
    finally:
        chunk_rows.MAX_ROW_MEMBERS, chunk_rows.MAX_ROW_CHARS = saved


CAPS = st.tuples(st.integers(1, 7), st.integers(0, 12))


@settings(max_examples=400, deadline=None)
@given(event_streams(), CAPS, st.lists(st.integers(0, 60), max_size=4))
def test_capped_packing_keeps_every_codec_property(events: list[dict[str, Any]], limits: tuple[int, int],
                                                   cuts: list[int]) -> None:
    members, chars = limits
    loose = pack_chunk_runs(events)  # under the real caps (nothing here reaches them)
    with caps(members, chars):
        packed = pack_chunk_runs(events)
        assert encode(list(expand_records(packed))) == encode(events)
        assert encode(list(repack_records(packed))) == encode(packed)
        assert encode(list(repack_records(loose))) == encode(packed)  # rows over the caps are cut the same way
        batches: list[Any] = []
        start = 0
        for cut in sorted(cuts):
            batches += pack_chunk_runs(events[start:cut])
            start = max(start, cut)
        batches += pack_chunk_runs(events[start:])
        assert encode(list(repack_records(batches))) == encode(packed)
    for record in packed:
        if is_storage_row(record):
            size = sum(map(len, record.data.fragments))
            assert record.members <= members and (size <= chars or record.members == 1)


@settings(max_examples=200, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.none() | st.integers(1, 3), st.integers(3, 6))
def test_packed_equals_scalar_when_blocks_span_several_rows(events: list[dict[str, Any]], max_messages: int | None,
                                                           members: int) -> None:
    with caps(members, 1 << 22):
        packed, scalar = both(events, max_messages)
    assert packed == scalar
