"""Hypothesis: decode(pack(events)) == events exactly (bytes, key order included); packing is idempotent."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.chunk_rows import (
    expand_records,
    pack_chunk_runs,
    repack_records,
    slice_storage_row,
    storage_record_range,
)
from assembler.records import encode

texts = st.sampled_from(["", " ", "a", "\n", "é", "token", "  ", "{", "\u3000", "x y"])


@st.composite
def event_streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(0, 60))
    seq = draw(st.integers(0, 5))
    time = draw(st.integers(-10**6, 10**6))
    events: list[dict[str, Any]] = []
    for _ in range(n):
        seq += draw(st.sampled_from([1, 1, 1, 1, 1, 2]))  # occasional seq gap
        time += draw(st.sampled_from([0, 1, 5, 30, -4]))  # negative gaps happen when the clock steps back
        kind = draw(st.sampled_from(["text", "text", "reasoning", "tool", "tool", "other", "block"]))
        turn = draw(st.sampled_from([1, 1, 1, 2]))
        step = draw(st.sampled_from([1, 1, 2]))
        index = draw(st.sampled_from([0, 0, 0, 1]))
        data: dict[str, Any] = {"turn": turn, "step": step}
        if kind in ("text", "reasoning"):
            data["chunk"] = {"type": f"{kind}-delta", "index": index, "text": draw(texts)}
        elif kind == "tool":
            chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index,
                                     "id": draw(st.sampled_from(["c1", "c1", "c2"]))}
            name = draw(st.sampled_from([None, None, "bash", "read"]))  # name present or absent mid-run
            if name is not None:
                chunk["name"] = name
            chunk["argumentsDelta"] = draw(texts)
            data["chunk"] = chunk
        elif kind == "block":
            data["chunk"] = {"type": "block-start", "index": index, "blockType": "text"}
        else:
            events.append({"type": draw(st.sampled_from(["step/start", "tool/call", "x/unknown"])), "seq": seq,
                           "time": time, "data": {"turn": turn}})
            continue
        event: dict[str, Any] = {"type": "assistant/chunk", "seq": seq, "time": time, "data": data}
        if draw(st.integers(0, 30)) == 0:
            event["ignorable"] = True  # an extra envelope key makes it unpackable
        events.append(event)
    return events


@settings(max_examples=250, deadline=None)
@given(event_streams())
def test_decode_of_pack_is_identity(events: list[dict[str, Any]]) -> None:
    packed = pack_chunk_runs(events)
    assert encode(list(expand_records(packed))) == encode(events)


@settings(max_examples=150, deadline=None)
@given(event_streams())
def test_packing_canonical_output_changes_nothing(events: list[dict[str, Any]]) -> None:
    packed = pack_chunk_runs(events)
    assert encode(pack_chunk_runs(packed)) == encode(packed)
    assert encode(list(repack_records(packed))) == encode(packed)


@settings(max_examples=150, deadline=None)
@given(event_streams(), st.lists(st.integers(1, 10), max_size=6))
def test_repacking_split_batches_equals_packing_the_whole(events: list[dict[str, Any]], cuts: list[int]) -> None:
    batches: list[Any] = []
    start = 0
    for size in cuts:
        batches.extend(pack_chunk_runs(events[start:start + size]))
        start += size
    batches.extend(pack_chunk_runs(events[start:]))
    assert encode(list(repack_records(batches))) == encode(pack_chunk_runs(events))


@settings(max_examples=120, deadline=None)
@given(event_streams(), st.data())
def test_slicing_rows_equals_slicing_events(events: list[dict[str, Any]], data: st.DataObject) -> None:
    for record in pack_chunk_runs(events):
        first, last = storage_record_range(record)
        if first == last:
            continue
        a = data.draw(st.integers(first, last))
        b = data.draw(st.integers(a, last))
        part = slice_storage_row(record, a, b)
        expected = [e for e in expand_records([record]) if a <= e["seq"] <= b]
        assert encode(list(expand_records([part]))) == encode(expected)
