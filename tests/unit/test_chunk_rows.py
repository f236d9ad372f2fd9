"""The chunk-row codec, rule by rule (PROTOCOL 2.2 encoder, 2.3 decoder)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from assembler.chunk_rows import (
    MIN_RUN,
    decode_storage_record,
    expand_records,
    pack_chunk_runs,
    repack_records,
    slice_storage_row,
    storage_record_range,
    storage_row,
)
from assembler.errors import AssemblerError, ChunkRowError
from assembler.records import MAX_SAFE_INTEGER, encode


def delta(seq: int, text: str = "a", *, time: Any = None, kind: str = "text-delta", index: Any = 0, turn: Any = 1,
          step: Any = 1) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": seq, "time": 1000 + seq if time is None else time,
            "data": {"turn": turn, "step": step, "chunk": {"type": kind, "index": index, "text": text}}}


def tool_delta(seq: int, arg: str = "{", *, call_id: str = "c1", name: str | None = None, index: int = 0,
               time: int | None = None) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
    if name is not None:
        chunk["name"] = name
    chunk["argumentsDelta"] = arg
    return {"type": "assistant/chunk", "seq": seq, "time": 1000 + seq if time is None else time,
            "data": {"turn": 1, "step": 1, "chunk": chunk}}


def other(seq: int, etype: str = "step/start") -> dict[str, Any]:
    return {"type": etype, "seq": seq, "time": 1000 + seq, "data": {"turn": 1, "step": 1}}


def kinds(records: list[Any]) -> list[str]:
    return [r["type"] if type(r) is dict else r.type for r in records]


def as_json(value: Any) -> Any:
    """The generic JSON value of a record (a row Struct as written on disk)."""
    return json.loads(encode(value))


def roundtrip_exact(events: list[Any]) -> list[Any]:
    packed = pack_chunk_runs(copy.deepcopy(events))
    assert encode(list(expand_records(packed))) == encode(events)
    return packed


# --- 2.2 which events qualify -----------------------------------------------------------------------------------


def test_three_text_deltas_pack_into_one_row() -> None:
    packed = roundtrip_exact([delta(0, "He"), delta(1, "llo"), delta(2, "!")])
    assert as_json(packed) == [{"type": "text-chunks", "seq0": 0, "time0": 1000,
                                "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["He", "llo", "!"]}}]


def test_reasoning_deltas_pack_into_reasoning_row() -> None:
    packed = roundtrip_exact([delta(i, kind="reasoning-delta") for i in range(4)])
    assert kinds(packed) == ["reasoning-chunks"]


def test_tool_call_row_keeps_name_and_key_order() -> None:
    packed = roundtrip_exact([tool_delta(i, name="bash") for i in range(3)])
    assert list(as_json(packed[0])["data"]) == ["turn", "step", "index", "dt", "id", "name", "args"]
    assert list(as_json(packed[0])) == ["type", "seq0", "time0", "data"]


def test_tool_call_row_without_name_has_no_name_key() -> None:
    packed = roundtrip_exact([tool_delta(i) for i in range(3)])
    assert "name" not in as_json(packed[0])["data"]


def test_runs_shorter_than_min_run_stay_events() -> None:
    assert MIN_RUN == 3
    events = [delta(0), delta(1), other(2), delta(3)]
    assert roundtrip_exact(events) == events


@pytest.mark.parametrize("extra", [{"ignorable": True}, {"surfaceOp": "append"}, {"x": 1}])
def test_envelope_with_extra_key_is_not_packable(extra: dict[str, Any]) -> None:
    events = [delta(0), {**delta(1), **extra}, delta(2), delta(3)]
    assert kinds(roundtrip_exact(events)) == ["assistant/chunk"] * 4


def test_data_with_extra_key_is_not_packable() -> None:
    odd = delta(1)
    odd["data"]["extra"] = 1
    assert kinds(roundtrip_exact([delta(0), odd, delta(2), delta(3)])) == ["assistant/chunk"] * 4


def test_chunk_with_extra_key_is_not_packable() -> None:
    odd = delta(1)
    odd["data"]["chunk"]["extra"] = 1
    assert kinds(roundtrip_exact([delta(0), odd, delta(2), delta(3)])) == ["assistant/chunk"] * 4


@pytest.mark.parametrize("field, value", [("turn", "1"), ("step", None), ("turn", True)])
def test_non_numeric_turn_or_step_is_not_packable(field: str, value: Any) -> None:
    events = [delta(i) for i in range(3)]
    for e in events:
        e["data"][field] = value
    assert kinds(roundtrip_exact(events)) == ["assistant/chunk"] * 3


def test_fractional_index_and_turn_are_numbers() -> None:
    packed = roundtrip_exact([delta(i, index=1.5, turn=2.5) for i in range(3)])
    assert kinds(packed) == ["text-chunks"]


def test_non_string_text_is_not_packable() -> None:
    events = [delta(0), delta(1), delta(2)]
    events[1]["data"]["chunk"]["text"] = 5
    assert kinds(roundtrip_exact(events)) == ["assistant/chunk"] * 3


@pytest.mark.parametrize("seq", [-1, 2**53, 1.5])
def test_unsafe_or_negative_seq_is_not_packable(seq: Any) -> None:
    events = [delta(0), delta(1), delta(2)]
    events[0]["seq"] = seq
    assert kinds(roundtrip_exact(events))[0] == "assistant/chunk"


def test_integral_float_seq_and_time_count_as_integers() -> None:
    events = [delta(0), delta(1), delta(2)]
    events[0]["seq"] = 0.0
    events[0]["time"] = 1000.0
    packed = pack_chunk_runs(copy.deepcopy(events))
    assert kinds(packed) == ["text-chunks"]
    # JS has one number type: 0.0 and 0 are the same value, so equality (not bytes) is the contract here.
    assert list(expand_records(packed)) == events


@pytest.mark.parametrize("chunk_type", ["block-start", "block-end", "usage", "finish", "image-delta"])
def test_other_chunk_variants_pass_through_and_break_runs(chunk_type: str) -> None:
    mid = {"type": "assistant/chunk", "seq": 3, "time": 1003,
           "data": {"turn": 1, "step": 1, "chunk": {"type": chunk_type, "index": 0}}}
    events = [delta(0), delta(1), delta(2), mid, delta(4), delta(5), delta(6)]
    assert kinds(roundtrip_exact(events)) == ["text-chunks", "assistant/chunk", "text-chunks"]


# --- 2.2 continuation --------------------------------------------------------------------------------------------


def test_seq_gap_breaks_run() -> None:
    events = [delta(0), delta(1), delta(2), delta(4), delta(5), delta(6)]
    packed = roundtrip_exact(events)
    assert [storage_record_range(r) for r in packed] == [(0, 2), (4, 6)]


def test_kind_change_breaks_run() -> None:
    events = [delta(0), delta(1), delta(2), delta(3, kind="reasoning-delta"), delta(4, kind="reasoning-delta"),
              delta(5, kind="reasoning-delta")]
    assert kinds(roundtrip_exact(events)) == ["text-chunks", "reasoning-chunks"]


@pytest.mark.parametrize("field", ["turn", "step", "index"])
def test_block_coordinate_change_breaks_run(field: str) -> None:
    events = [delta(i) for i in range(6)]
    for e in events[3:]:
        if field == "index":
            e["data"]["chunk"]["index"] = 9
        else:
            e["data"][field] = 9
    assert kinds(roundtrip_exact(events)) == ["text-chunks", "text-chunks"]


def test_tool_call_id_change_breaks_run() -> None:
    events = [tool_delta(i) for i in range(3)] + [tool_delta(i, call_id="c2") for i in range(3, 6)]
    assert kinds(roundtrip_exact(events)) == ["tool-call-chunks", "tool-call-chunks"]


def test_tool_call_run_never_mixes_named_and_unnamed_members() -> None:
    events = [tool_delta(0, name="bash"), tool_delta(1), tool_delta(2), tool_delta(3)]
    packed = roundtrip_exact(events)
    assert kinds(packed) == ["assistant/chunk", "tool-call-chunks"]
    assert packed[1].seq == 1


def test_tool_call_name_value_change_breaks_run() -> None:
    events = [tool_delta(i, name="a") for i in range(3)] + [tool_delta(i, name="b") for i in range(3, 6)]
    assert kinds(roundtrip_exact(events)) == ["tool-call-chunks", "tool-call-chunks"]


def test_negative_time_gap_is_kept() -> None:
    events = [delta(0, time=100), delta(1, time=90), delta(2, time=95)]
    packed = roundtrip_exact(events)
    assert packed[0].data.dt == [-10, 5]


def test_unsafe_time_gap_breaks_run() -> None:
    events = [delta(0, time=-MAX_SAFE_INTEGER), delta(1, time=MAX_SAFE_INTEGER), delta(2, time=MAX_SAFE_INTEGER),
              delta(3, time=MAX_SAFE_INTEGER)]
    packed = roundtrip_exact(events)
    assert kinds(packed) == ["assistant/chunk", "text-chunks"]


def test_non_packable_event_closes_the_open_run_in_order() -> None:
    events = [delta(0), delta(1), delta(2), other(3), delta(4)]
    assert kinds(roundtrip_exact(events)) == ["text-chunks", "step/start", "assistant/chunk"]


def test_packing_canonical_output_again_changes_nothing() -> None:
    events = [delta(0), delta(1), delta(2), other(3), tool_delta(4, name="x"), tool_delta(5), tool_delta(6),
              tool_delta(7)]
    packed = pack_chunk_runs(events)
    assert encode(pack_chunk_runs(packed)) == encode(packed)
    assert encode(list(repack_records(packed))) == encode(packed)


def test_repack_merges_rows_split_across_batches_without_expanding() -> None:
    events = [delta(i) for i in range(8)]
    batches = pack_chunk_runs(events[:4]) + pack_chunk_runs(events[4:5]) + pack_chunk_runs(events[5:])
    assert kinds(batches) == ["text-chunks", "assistant/chunk", "text-chunks"]
    assert encode(list(repack_records(batches))) == encode(pack_chunk_runs(events))


# --- 2.3 decoding ------------------------------------------------------------------------------------------------


def good_row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"type": "text-chunks", "seq0": 5, "time0": 100,
                           "data": {"turn": 1, "step": 2, "index": 0, "dt": [3, -1], "texts": ["a", "", "c"]}}
    for key, value in changes.items():
        if key in row["data"]:
            row["data"][key] = value
        else:
            row[key] = value
    return row


def test_decode_expands_members_with_running_time_and_key_order() -> None:
    events = decode_storage_record(good_row())
    assert [e["seq"] for e in events] == [5, 6, 7]
    assert [e["time"] for e in events] == [100, 103, 102]
    assert json.dumps(events[0]) == json.dumps({"type": "assistant/chunk", "seq": 5, "time": 100, "data": {
        "turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}})


def test_decode_tool_row_member_key_order() -> None:
    row = {"type": "tool-call-chunks", "seq0": 0, "time0": 0,
           "data": {"turn": 1, "step": 1, "index": 2, "dt": [], "id": "c", "name": "n", "args": ["{}"]}}
    (event,) = decode_storage_record(row)
    assert list(event["data"]["chunk"]) == ["type", "index", "id", "name", "argumentsDelta"]


@pytest.mark.parametrize("value", [None, 5, "x", [1], {"type": "user/message"}, {"no": "type"}])
def test_non_row_values_pass_through_unvalidated(value: Any) -> None:
    assert decode_storage_record(value) == [value]


@pytest.mark.parametrize("changes, field", [
    ({"dt": [1]}, "dt"),
    ({"texts": []}, "texts"),
    ({"texts": ["a", 1, "c"]}, "texts[1]"),
    ({"seq0": -1}, "seq0"),
    ({"seq0": 1.5}, "seq0"),
    ({"seq0": 2**53}, "seq0"),
    ({"time0": "0"}, "time0"),
    ({"time0": 2**53}, "time0"),
    ({"dt": [1, 0.5]}, "dt[1]"),
    ({"turn": "1"}, "turn"),
    ({"index": None}, "index"),
    ({"extra": 1}, "extra"),
])
def test_malformed_rows_raise_naming_the_field(changes: dict[str, Any], field: str) -> None:
    row = good_row(**changes)
    with pytest.raises(ChunkRowError, match="malformed text-chunks storage row") as info:
        decode_storage_record(row)
    assert field.split("[")[0] in str(info.value)


def test_extra_data_key_is_rejected() -> None:
    row = good_row()
    row["data"]["name"] = "n"
    with pytest.raises(ChunkRowError, match="unknown field `name` - at `\\$.data`"):
        decode_storage_record(row)


def test_running_time_must_stay_safe() -> None:
    row = good_row(time0=MAX_SAFE_INTEGER - 1, dt=[1, 1])
    with pytest.raises(ChunkRowError, match="a member time is not a safe integer"):
        decode_storage_record(row)


def test_last_member_seq_must_stay_safe() -> None:
    with pytest.raises(ChunkRowError, match="last member seq"):
        decode_storage_record(good_row(seq0=MAX_SAFE_INTEGER - 1))


def test_chunk_row_error_is_an_assembler_error_and_pickles() -> None:
    import pickle

    with pytest.raises(AssemblerError) as info:
        decode_storage_record(good_row(dt=[]))
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == str(info.value)


# --- rows without expansion -------------------------------------------------------------------------------------


def test_storage_and_wire_rows_are_renames_sharing_data() -> None:
    value = good_row()
    row = storage_row(value)
    wire = row.to_wire()
    assert as_json(wire) == {"type": "chunkrow/text-chunks", "seq": 5, "time": 100, "data": value["data"]}
    assert as_json(row) == value
    assert wire.data is row.data
    assert wire.to_storage() == row


@pytest.mark.parametrize("first, last", [(5, 7), (5, 5), (6, 7), (7, 7), (6, 6)])
def test_slicing_a_row_equals_slicing_its_events(first: int, last: int) -> None:
    row = storage_row(good_row())
    part = slice_storage_row(row, first, last)
    expected = [e for e in decode_storage_record(row) if first <= e["seq"] <= last]
    assert decode_storage_record(part) == expected


def test_slice_outside_row_is_rejected() -> None:
    with pytest.raises(ValueError):
        slice_storage_row(storage_row(good_row()), 4, 6)
