"""The Conversation assembler (ASSEMBLY 5.1-5.2): dispatch, one row = one input, errors, append, prepend, flush."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from conversation_support import Session, assemble_entries, page

import assembler.chunk_rows as chunk_rows
from assembler.conversation import ConversationAssembler
from assembler.definition import Definition, context_key
from assembler.errors import ConversationError, MatchOrderError, PackedStartError
from assembler.records import ChunksRecord, EventRecord, SessionEvent, decode_page
from assembler.transcript import canonical_json, transcript
from definitions import ChatAssistant, InboxNextStep, InputMessage, TrajectoryAssistant, TurnTail, default_definitions


def rich_session() -> Session:
    s = Session()
    s.turn_start(1)
    s.user("hello")
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["thinking ", "about ", "it"], kind="reasoning")
    s.texts(1, 1, 1, [" ", "Hel", "lo"])
    for part in ["{", "\"a\"", "}"]:
        s.tool_delta(1, 1, 2, "call_1", part, name="bash")
    s.usage(1, 1, {"inputTokens": 3, "outputTokens": 9, "cacheReadTokens": 0, "cacheWriteTokens": 0})
    s.message(1, 1, [{"type": "reasoning", "text": "thinking about it"}, {"type": "text", "text": " Hello"},
                     {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": "{\"a\"}"}],
              usage={"inputTokens": 3, "outputTokens": 9, "cacheReadTokens": 0, "cacheWriteTokens": 0})
    s.add("tool/call", {"turn": 1, "step": 1, "callId": "call_1", "name": "bash", "arguments": "{\"a\"}"})
    s.add("tool/result", {"turn": 1, "step": 1, "message": {"role": "user", "content": [
        {"type": "tool-result", "toolCallId": "call_1", "content": [{"type": "text", "text": "ok"}],
         "isError": False}]}}, surfaceOp="append")
    s.step_end(1, 1)
    s.step_start(1, 2)
    s.texts(1, 2, 0, ["Do", "ne", "."])
    s.message(1, 2, [{"type": "text", "text": "Done."}])
    s.step_end(1, 2)
    s.turn_end(1)
    return s


def ev(etype: str, data: Any, seq: int = 5, **extra: Any) -> SessionEvent:
    return SessionEvent(type=etype, seq=seq, time=10, data=data, **extra)


ROW = decode_page(msgspec.json.encode({"records": [{"type": "chunks", "event": {
    "type": "chunkrow/text-chunks", "seq": 7, "time": 1,
    "data": {"turn": 2, "step": 3, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}}}], "hasMore": False}
)).records[0].event
MSG = {"turn": 2, "step": 3, "message": {"role": "assistant", "content": []}}

# (definition, event, expected (id, role) or None): ASSEMBLY 5.3-5.6 matching rules.
MATCH_TABLE = [
    (ChatAssistant, ev("step/start", {"turn": 2, "step": 3}), ("2:3", "start")),
    (ChatAssistant, ev("assistant/chunk", {"turn": 2, "step": 3, "chunk": {}}), ("2:3", "update")),
    (ChatAssistant, ROW, ("2:3", "update")),
    (ChatAssistant, ev("assistant/message", MSG, surfaceOp="append"), ("2:3", "update")),
    (ChatAssistant, ev("assistant/message", MSG), None),  # not append-origin
    (ChatAssistant, ev("llm/retry", {"turn": 2, "step": 3}), ("2:3", "update")),
    (ChatAssistant, ev("step/end", {"turn": 2, "step": 3}), "undeclared"),
    (TrajectoryAssistant, ev("step/end", {"turn": 2, "step": 3}), ("2:3", "update")),
    (TrajectoryAssistant, ev("assistant/message", MSG), ("2:3", "update")),
    (TrajectoryAssistant, ROW, ("2:3", "update")),
    (TurnTail, ev("turn/start", {"turn": 2}), ("2", "start")),
    (TurnTail, ev("turn/end", {"turn": 2, "reason": {"kind": "completed"}}), ("2", "update")),
    (TurnTail, ev("assistant/message", MSG), ("2", "update")),
    (TurnTail, ROW, ("2", "update")),
    (TurnTail, ev("tool/call", {"turn": 2, "step": 3, "callId": "c"}), ("2", "update")),
    (TurnTail, ev("llm/retry-started", {"turn": 2, "step": 3}), ("2", "update")),
    (TurnTail, ev("turn/end", {"error": "legacy"}), None),
    (TurnTail, ev("user/message", {}), "undeclared"),
    (InputMessage, ev("user/message", {"id": "u", "source": {"kind": "user"}}, surfaceOp="append"), ("5", "start")),
    (InputMessage, ev("user/message", {"id": "u", "source": {"kind": "plugin", "plugin": "compact"}},
                      surfaceOp="append"), None),
    (InputMessage, ev("user/message", {"id": "u"}, surfaceOp={"op": "replace", "start": 0, "end": 1}), None),
    (InboxNextStep, ev("agent/inbox/spliced", {"target": "next-step", "inserted": []}), ("5", "start")),
    (InboxNextStep, ev("agent/inbox/spliced", {"target": "next-turn", "inserted": []}), None),
]


@pytest.mark.parametrize("cls, event, expected", MATCH_TABLE,
                         ids=[f"{c.kind}-{e.type}-{i}" for i, (c, e, _) in enumerate(MATCH_TABLE)])
def test_matching_rules(cls: type[Definition], event: Any, expected: Any) -> None:
    d = cls()
    if expected == "undeclared":
        assert event.type not in d.event_types
    else:
        assert event.type in d.event_types
        assert d.match(event) == expected


def test_context_key_format():
    assert context_key("assistant-step", "1:2") == "14:assistant-step1:2"


class RowStarter(Definition):
    kind = "row-starter"
    target = "chat"
    event_types = frozenset({"chunkrow/text-chunks"})

    def match(self, event):
        return "x", "start"

    def start(self, context, match, reader):
        return {}


def test_packed_row_cannot_start_a_context():
    asm = ConversationAssembler([RowStarter()])
    with pytest.raises(PackedStartError) as info:
        asm.replace_window([ChunksRecord(ROW)], False)
    assert info.value.seq == 7
    assert "packed start" in str(info.value)


class Recorder(Definition):
    """Counts match calls by type; claims every declared event for one Context."""

    kind = "recorder"
    target = "chat"
    event_types = frozenset({"assistant/chunk", "chunkrow/text-chunks", "chunkrow/reasoning-chunks",
                             "chunkrow/tool-call-chunks"})

    def __init__(self):
        self.calls: list[str] = []

    def match(self, event):
        self.calls.append(event.type)
        return "all", "update"


def test_one_row_is_one_input_and_at_most_one_match_per_definition():
    s = rich_session()
    p = page(s.events, "packed")
    rows = [r for r in p.records if type(r) is ChunksRecord]
    assert len(rows) == 4
    recorder = Recorder()
    definitions = [*default_definitions(), recorder]
    calls: dict[str, list[int]] = {}
    for d in definitions:
        original = d.match

        def counting(event, _original=original, _kind=d.kind):
            calls.setdefault(_kind, []).append(event.seq)
            return _original(event)

        d.match = counting  # type: ignore[method-assign]
    asm = ConversationAssembler(definitions)
    asm.replace_window(p.records, False)
    for kind, seqs in calls.items():
        assert len(seqs) == len(set(seqs)), f"{kind} matched an entry twice"
    # every row reached each declaring Definition exactly once, as one input
    for r in rows:
        for d in definitions:
            if r.event.type in d.event_types:
                assert calls[d.kind].count(r.event.seq) == 1
            else:
                assert r.event.seq not in calls.get(d.kind, [])
    ctx = asm.context("recorder", "all")
    assert [m.seq for m in ctx.matches if m.packed] == [r.event.seq for r in rows]
    assert asm.entry_count == len(p.records)


def test_match_never_runs_for_undeclared_types():
    recorder = Recorder()
    asm = ConversationAssembler([recorder])
    asm.replace_window(page(rich_session().events, "packed").records, False)
    assert set(recorder.calls) <= recorder.event_types


def test_packed_path_never_expands_rows(monkeypatch):
    s = rich_session()
    p = page(s.events, "packed")
    expected = canonical_json(assemble_entries(page(s.events, "scalar").records, False))

    def boom(*args, **kwargs):
        raise AssertionError("the codec's expansion was called on the packed path")

    monkeypatch.setattr(chunk_rows, "decode_storage_record", boom)
    monkeypatch.setattr(chunk_rows, "expand_records", boom)
    assert canonical_json(assemble_entries(p.records, False)) == expected


def test_fallback_runs_only_when_no_definition_of_its_target_matched():
    s = Session()
    s.turn_start(1)
    s.add("session/title", {"title": "t"})
    s.add("hook/invoked", {"x": 1}, ignorable=True)
    t = assemble_entries(page(s.events, "packed").records, False)
    kinds = {n.data.type: n for n in t.chat if n.kind == "event"}
    assert set(kinds) == {"session/title", "hook/invoked"}  # turn/start went to Turn Tail
    assert kinds["hook/invoked"].data.ignorable is True


class Orderly(Definition):
    kind = "orderly"
    target = "chat"
    event_types = frozenset({"a", "b"})

    def match(self, event):
        return "k", "start" if event.type == "a" else "update"

    def start(self, context, match, reader):
        return {"n": 0}

    def update(self, context, match):
        return context.state


@pytest.mark.parametrize("types, reason", [
    (["a", "a"], "second start"),
    (["b", "a"], "update before its start"),
])
def test_rejects_bad_match_order(types, reason):
    asm = ConversationAssembler([Orderly()])
    records = [EventRecord(SessionEvent(type=t, seq=i, time=0)) for i, t in enumerate(types)]
    with pytest.raises(MatchOrderError, match=reason):
        asm.replace_window(records, False)


def test_update_returning_none_is_an_error():
    class Bad(Orderly):
        kind = "bad"

        def update(self, context, match):
            return None

    asm = ConversationAssembler([Bad()])
    records = [EventRecord(SessionEvent(type=t, seq=i, time=0)) for i, t in enumerate("ab")]
    with pytest.raises(ConversationError, match="returned no state"):
        asm.replace_window(records, False)


def test_append_ignores_an_already_present_seq():
    s = rich_session()
    p = page(s.events, "packed")
    asm = ConversationAssembler(default_definitions())
    asm.replace_window(p.records, False)
    asm.flush()
    row = next(r for r in p.records if type(r) is ChunksRecord)
    inside = SessionEvent(type="assistant/chunk", seq=row.event.seq + 1, time=0,
                          data={"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 1, "text": "!"}})
    asm.append(EventRecord(inside))
    asm.append(EventRecord(p.records[0].event))
    assert asm.flush() is None
    with pytest.raises(ConversationError):
        asm.append(row)


def _apply_flush(view: dict[str, Any], result: Any) -> None:
    for target, update in result.views.items():
        nodes = view.setdefault(target, {})
        if update.replace:
            nodes.clear()
        for node in update.nodes:
            nodes[node.key] = node


def test_append_one_by_one_equals_replace_window():
    s = rich_session()
    records = page(s.events, "scalar").records
    full = ConversationAssembler(default_definitions())
    full.replace_window(records, False)
    expected: dict[str, Any] = {}
    _apply_flush(expected, full.flush())
    for cut in (0, 3, 9, len(records) - 2):
        live = ConversationAssembler(default_definitions())
        live.replace_window(records[:cut], False)
        view: dict[str, Any] = {}
        _apply_flush(view, live.flush())
        for r in records[cut:]:
            live.append(r)
            result = live.flush()
            if result is not None:
                _apply_flush(view, result)
        assert {t: dict(sorted(v.items())) for t, v in view.items()} == \
               {t: dict(sorted(v.items())) for t, v in expected.items()}


@pytest.mark.parametrize("split", [3, 7, 12])
def test_prepend_equals_replace_window(split):
    s = rich_session()
    records = page(s.events, "packed").records
    expected = canonical_json(assemble_entries(records, False))
    asm = ConversationAssembler(default_definitions())
    asm.replace_window(records[split:], True)
    asm.flush()
    asm.prepend(records[:split] + records[split:split + 1], False)
    result = asm.flush()
    got = transcript(result)
    assert canonical_json(got) == expected


def test_dependency_replay_makes_a_claimed_message_steering():
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    s.add("agent/inbox/spliced", {"target": "next-step", "start": 0,
                                  "inserted": [{"id": "steer-1", "role": "user", "content": []}]})
    s.add("agent/inbox/spliced", {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []})
    s.user("change course", mid="steer-1")
    s.user("plain", mid="u-2")
    records = page(s.events, "scalar").records
    t = assemble_entries(records, False)
    kinds = [n.data.kind for n in t.chat if n.kind == "input-message"]
    assert kinds == ["steering", "user"]
    # the claim arrives late (prepend): the message Context is replayed and becomes steering
    asm = ConversationAssembler(default_definitions())
    asm.replace_window(records[3:], True)
    r1 = asm.flush()
    assert [n.data.kind for n in r1.views["chat"].nodes if n.kind == "input-message"] == ["user", "user"]
    asm.prepend(records[:3], False)
    r2 = asm.flush()
    assert sorted(n.data.kind for n in r2.views["chat"].nodes if n.kind == "input-message") == ["steering", "user"]


def test_location_index_status_and_resolution():
    s = rich_session()
    asm = ConversationAssembler([ChatAssistant()])
    asm.replace_window(page(s.events[:-1], "packed").records, False)
    turn = asm.index.turns[1]
    assert turn.status == "open"
    assert [st.status for st in turn.steps.values()] == ["closed", "closed"]
    ctx = asm.context("assistant-step", "1:1")
    assert ctx.location.kind == "step" and ctx.location.step.step == 1
    timeline = asm.flush().timeline
    assert timeline[0].status == "open" and [x.step for x in timeline[0].steps] == [1, 2]


def test_flush_returns_none_when_nothing_is_pending():
    asm = ConversationAssembler(default_definitions())
    asm.replace_window([], False)
    assert asm.flush() is not None
    assert asm.flush() is None
