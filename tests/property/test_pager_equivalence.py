"""The no-expansion pager (MessageIndex over storage records) is byte-identical to expand → paginate → pack."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.chunk_rows import expand_records, pack_chunk_runs
from assembler.history import MessageIndex, page_value, snapshot_value
from assembler.records import decode_follow_frame, decode_page, encode, record_range

_KINDS = ("text-delta", "reasoning-delta", "tool-call-delta")


@st.composite
def logical_logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A contiguous logical log: turns, messages (append, replace, legacy), chunk runs of every kind, odd events."""
    events: list[dict[str, Any]] = []
    time = draw(st.integers(0, 10))

    def add(etype: str, data: Any, **extra: Any) -> int:
        nonlocal time
        time += draw(st.sampled_from([0, 1, 1, 2, 5, -1]))
        seq = len(events)
        events.append({"type": etype, "seq": seq, "time": time, "data": data, **extra})
        return seq

    for turn in range(draw(st.integers(0, 6))):
        add("turn/start", {"turn": turn})
        op = draw(st.sampled_from(["append", "append", "append", None, {"op": "replace", "start": 0, "end": 0}]))
        extra: dict[str, Any] = {} if op is None else {"surfaceOp": op}
        add("user/message", {"id": f"u{turn}", "role": "user", "content": []}, **extra)
        for step in range(draw(st.integers(0, 3))):
            add("step/start", {"turn": turn, "step": step})
            cited: list[int] = []
            for index in range(draw(st.integers(0, 3))):
                kind = draw(st.sampled_from(_KINDS))
                cited.append(add("assistant/chunk", {"turn": turn, "step": step,
                                                     "chunk": {"type": "block-start", "index": index}}))
                for k in range(draw(st.integers(0, 9))):
                    if kind == "tool-call-delta":
                        chunk: dict[str, Any] = {"type": kind, "index": index, "id": f"c{index}"}
                        if draw(st.integers(0, 7)) == 0:
                            chunk["name"] = "n"
                        chunk["argumentsDelta"] = f"a{k}"
                    else:
                        chunk = {"type": kind, "index": index, "text": draw(st.sampled_from(["x", " ", "é", ""]))}
                    cited.append(add("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk}))
                if draw(st.booleans()):
                    add("benchmark/separator", {}, ignorable=True)
            op = draw(st.sampled_from(["append", "append", None]))
            extra = {} if op is None else {"surfaceOp": op}
            if draw(st.booleans()):
                extra["sourceEventSeqs"] = draw(st.permutations(cited)) if cited else []
            add("assistant/message", {"turn": turn, "step": step, "message": {"role": "assistant"}}, **extra)
            if draw(st.booleans()):
                add("tool/result", {"turn": turn, "step": step}, surfaceOp="append")
        add("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return events


@st.composite
def storage_of(draw: st.DrawFn, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pack the log per random append batch, as the JSONL writer does (rows may split across batches)."""
    storage: list[dict[str, Any]] = []
    i = 0
    while i < len(events):
        n = draw(st.integers(1, 40))
        batch = events[i:i + n]
        storage.extend(pack_chunk_runs(batch) if draw(st.integers(0, 5)) else batch)
        i += n
    return storage


@st.composite
def logs_with_storage(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    events = draw(logical_logs())
    return events, draw(storage_of(events))


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(logs_with_storage(), st.data())
def test_index_page_is_byte_identical_to_reference(log: Any, data: st.DataObject) -> None:
    events, storage = log
    assert list(expand_records(storage)) == events
    index = MessageIndex(storage)
    n = len(events)
    for _ in range(5):
        through = data.draw(st.integers(-1, n - 1), label="through")
        before = data.draw(st.one_of(st.none(), st.integers(0, n + 2)), label="before")
        max_messages = data.draw(st.integers(1, 6), label="max_messages")
        from_seq = data.draw(st.one_of(st.none(), st.integers(0, n + 2)), label="from_seq")
        expected = encode(page_value(events, through, before, max_messages, from_seq))
        assert encode(index.page(through, before, max_messages, from_seq=from_seq)) == expected
        decode_page(expected)


@_SETTINGS
@given(logs_with_storage(), st.integers(1, 6))
def test_snapshot_tail_is_exactly_cursor(log: Any, max_messages: int) -> None:
    events, storage = log
    header = {"type": "session", "version": 0, "id": "s"}
    frame = MessageIndex(storage).snapshot(header, max_messages)
    assert encode(frame) == encode(snapshot_value(header, events, max_messages))
    snapshot = decode_follow_frame(encode(frame))
    assert snapshot.cursor == len(events) - 1
    if snapshot.records:
        assert record_range(snapshot.records[-1])[1] == snapshot.cursor
    else:
        assert snapshot.cursor == -1


@_SETTINGS
@given(logs_with_storage(), st.integers(0, 60))
def test_incremental_extend_equals_one_shot_index(log: Any, split: int) -> None:
    events, storage = log
    index = MessageIndex(storage[:split])
    index.extend(storage[split:])
    whole = MessageIndex(storage)
    for max_messages in (1, 2, 50):
        assert encode(index.page(None, None, max_messages)) == encode(whole.page(None, None, max_messages))
