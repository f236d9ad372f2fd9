"""The ``command`` Definition (PROTOCOL 1.3, ASSEMBLY 5.6): ``command/run`` + ``command/done`` as one chat row."""

from __future__ import annotations

from typing import Any

import pytest
from conversation_support import Session, both, fold, page, view_node
from msgspec import UNSET

from assembler import render
from assembler.conversation import ConversationAssembler
from assembler.definition import context_key
from assembler.records import SessionEvent
from assembler.transcript import canonical_json
from assembler.views import CommandData, CommandOutcome, ViewNode
from definitions import Command, Fallback, default_definitions
from definitions.command import command_input


def ev(etype: str, data: Any, seq: int = 5) -> SessionEvent:
    return SessionEvent(type=etype, seq=seq, time=10, data=data)


def run(s: Session, cid: Any, name: Any = "goal", args: Any = " ship it") -> int:
    data: dict[str, Any] = {"commandId": cid, "name": name, "source": {"kind": "user"}}
    if args is not None:
        data["args"] = args
    return s.add("command/run", data)


def done(s: Session, cid: Any, kind: str = "success", text: Any = None, **extra: Any) -> int:
    data: dict[str, Any] = {"commandId": cid, "kind": kind, **extra}
    if text is not None:
        data["text"] = text
    return s.add("command/done", data)


def chat(events: list[dict[str, Any]], kind: str) -> list[Any]:
    packed, scalar = both(events)
    assert packed == scalar  # packed ≡ scalar for every case here
    return [n for n in fold(events, "packed").chat if n.kind == kind]


# (event, expected (id, role) or None)
MATCH_TABLE = [
    (ev("command/run", {"commandId": "c1", "name": "goal"}), ("c1", "start")),
    (ev("command/done", {"commandId": "c1", "kind": "success"}), ("c1", "update")),
    (ev("command/done", {"commandId": "c1", "kind": "error", "text": "no"}), ("c1", "update")),
    (ev("command/run", {"commandId": 7, "name": "goal"}), ("7", "start")),  # JS String(7)
    (ev("command/done", {"commandId": 7.0, "kind": "success"}), ("7", "update")),  # String(7.0) is "7" too
    (ev("command/run", {"name": "goal"}), None),  # no id: left to the fallback
    (ev("command/done", {"commandId": None, "kind": "success"}), None),
    (ev("command/done", {"commandId": {"x": 1}, "kind": "success"}), None),
    (ev("command/run", "not an object"), None),
    (ev("command/run", None), None),
]


@pytest.mark.parametrize(("event", "expected"), MATCH_TABLE)
def test_match_table(event: SessionEvent, expected: tuple[str, str] | None) -> None:
    assert Command().match(event) == expected


def test_declares_only_command_events_and_is_registered_before_the_fallback() -> None:
    assert Command.event_types == {"command/run", "command/done"}
    assert Command.target == "chat" and not Command.fallback
    kinds = [d.kind for d in default_definitions()]
    assert "command" in kinds and kinds.index("command") < kinds.index(Fallback.kind)
    assert kinds[-1] == Fallback.kind


@pytest.mark.parametrize(("name", "args", "expected"), [
    ("goal", " ship it", "/goal ship it"),  # the reference keeps the rest of the line, leading space included
    ("goal", "ship it", "/goal ship it"),
    ("goal", None, "/goal"),
    ("goal", "", "/goal"),
    ("permission", " read-only", "/permission read-only"),
    (None, None, "/"),
    ("x", ["a", 1], '/x ["a",1]'),
])
def test_command_input_is_the_line_as_typed(name: Any, args: Any, expected: str) -> None:
    assert command_input(name, args) == expected


def test_success_pairs_run_and_done_and_anchors_on_the_run() -> None:
    s = Session()
    s.add("permission/preset", {"preset": "workspace-write"})
    r = run(s, "c1", "goal", " 做两个turn")
    s.add("goal/change", {"operation": "create"})
    d = done(s, "c1", text="Goal created\nStatus: active", sourceEventSeq=2)
    (node,) = chat(s.events, "command")
    assert node.key == context_key("command", "c1") and node.id == "c1"
    assert node.anchorSeq == r and node.location.kind == "session"
    data = node.data
    assert (data.name, data.args, data.input, data.status) == ("goal", " 做两个turn", "/goal 做两个turn", "success")
    assert (data.seq, data.runSeq, data.source) == (r, r, {"kind": "user"})
    assert (data.outcome.kind, data.outcome.seq, data.outcome.text) == ("success", d, "Goal created\nStatus: active")
    assert data.outcome.sourceEventSeq == 2
    # claimed: neither event falls through to the fallback
    assert [n.data.type for n in chat(s.events, "event")] == ["permission/preset"]
    assert [n.data.title for n in chat(s.events, "goal")] == ["Goal create"]  # its own activity row


def test_error_keeps_the_text_and_drops_the_source_seq() -> None:
    s = Session()
    r = run(s, "c1", "model", " nope")
    done(s, "c1", kind="error", text="Unknown model: nope", sourceEventSeq=0)
    (node,) = chat(s.events, "command")
    assert node.anchorSeq == r
    assert (node.data.status, node.data.outcome.kind, node.data.outcome.text) == ("error", "error",
                                                                                  "Unknown model: nope")
    assert "sourceEventSeq" not in canonical_json(fold(s.events, "packed")).decode()  # success only (reference)


def test_done_without_text_and_an_unknown_outcome_kind() -> None:
    s = Session()
    run(s, "a", "clear", None)
    done(s, "a")
    run(s, "b", "weird", None)
    done(s, "b", kind="cancelled", text=["not", "a", "string"])
    a, b = chat(s.events, "command")
    assert (a.data.input, a.data.status) == ("/clear", "success")
    assert a.data.outcome.text is UNSET  # no text: omitted, not null
    assert (b.data.status, b.data.outcome.kind, b.data.outcome.text) == ("done", "cancelled", '["not","a","string"]')


def test_run_without_done_is_running_even_after_the_turn_closes() -> None:
    s = Session()
    s.turn_start(1)
    r = run(s, "c1", "goal", " go")
    s.turn_end(1)
    (node,) = chat(s.events, "command")
    assert (node.anchorSeq, node.data.status, node.data.input) == (r, "running", "/goal go")
    assert node.location.kind == "turn"  # a run inside a turn inherits it
    assert node.data.outcome is UNSET
    assert '"outcome"' not in canonical_json(fold(s.events, "packed")).decode()


def test_done_without_run_is_kept_as_a_node_anchored_on_the_done() -> None:
    s = Session()
    s.user("hi")
    d = done(s, "gone", text="Permission preset: read-only.")
    (node,) = chat(s.events, "command")
    assert node.anchorSeq == d and node.id == "gone"
    data = node.data
    assert (data.name, data.args, data.input, data.runSeq) == (None, None, None, None)
    assert (data.status, data.outcome.text) == ("success", "Permission preset: read-only.")
    assert chat(s.events, "event") == []  # shown as a command row, not dropped, not duplicated


def test_events_without_an_id_fall_back_to_event_rows() -> None:
    s = Session()
    s.add("command/run", {"name": "goal"})
    s.add("command/done", "garbage")
    assert chat(s.events, "command") == []
    assert [n.data.type for n in chat(s.events, "event")] == ["command/run", "command/done"]


def test_the_last_done_wins_and_commands_stay_apart() -> None:
    s = Session()
    run(s, "a", "goal", " one")
    run(s, "b", "goal", " two")
    done(s, "b", text="b ok")
    done(s, "a", kind="error", text="first")
    done(s, "a", text="second")
    a, b = chat(s.events, "command")
    assert (a.data.input, a.data.status, a.data.outcome.text) == ("/goal one", "success", "second")
    assert (b.data.input, b.data.status, b.data.outcome.text) == ("/goal two", "success", "b ok")


def _session_with_turns() -> Session:
    s = Session()
    run(s, "c1", "goal", " go")
    done(s, "c1", text="Goal created")
    s.turn_start(1)
    s.user("<goal_round>")
    s.step_start(1, 1)
    s.texts(1, 1, 0, ["Wor", "king"])
    s.message(1, 1, [{"type": "text", "text": "Working"}])
    s.step_end(1, 1)
    s.turn_end(1)
    run(s, "c2", "goal", " pause")
    return s


def test_packed_equals_scalar_in_a_session_with_chunk_rows() -> None:
    s = _session_with_turns()
    packed, scalar = both(s.events)
    assert packed == scalar
    assert [n.data.status for n in fold(s.events, "packed").chat if n.kind == "command"] == ["success", "running"]


def test_live_append_moves_the_row_from_running_to_done() -> None:
    s = Session()
    run(s, "c1", "goal", " go")
    asm = ConversationAssembler(default_definitions())
    asm.replace_window(page(s.events, "scalar").records, False)
    first = asm.flush()
    assert first is not None
    (node,) = [n for n in first.views["chat"].nodes if n.kind == "command"]
    assert node.data.status == "running"
    done(s, "c1", kind="error", text="boom")
    asm.append(page(s.events, "scalar").records[-1])
    result = asm.flush()
    assert result is not None
    (upsert,) = result.views["chat"].nodes
    assert upsert.key == node.key and upsert.anchorSeq == node.anchorSeq
    assert (upsert.data.status, upsert.data.outcome.text) == ("error", "boom")


def test_prepending_the_run_completes_an_orphan_done() -> None:
    s = Session()
    run(s, "c1", "goal", " go")
    done(s, "c1", text="ok")
    records = page(s.events, "scalar").records
    asm = ConversationAssembler(default_definitions())
    asm.replace_window(records[1:], True)
    result = asm.flush()
    assert result is not None
    (orphan,) = result.views["chat"].nodes
    assert (orphan.anchorSeq, orphan.data.input, orphan.data.status) == (1, None, "success")
    asm.prepend(records[:1], False)
    result = asm.flush()
    assert result is not None
    (node,) = [n for n in result.views["chat"].nodes if n.kind == "command"]
    assert (node.key, node.anchorSeq, node.data.input, node.data.runSeq) == (orphan.key, 0, "/goal go", 0)
    assert canonical_json(fold(s.events, "scalar")).count(b'"kind":"command"') == 2  # node kind + data kind


# --- rendering --------------------------------------------------------------------------------------------------


def node_dict(**data: Any) -> ViewNode:
    """A ``command`` node with the given data fields (the rest empty); ``outcome`` may be a dict of its fields."""
    fields: dict[str, Any] = {"commandId": "c1", "name": None, "args": None, "input": None, "status": "running",
                              "seq": 0, "time": 0, "runSeq": None, **data}
    outcome = fields.pop("outcome", None)
    if type(outcome) is dict:
        fields["outcome"] = CommandOutcome(seq=0, time=0, **outcome)
    elif outcome is not None:
        fields["outcome"] = outcome
    return view_node("command", CommandData(kind="command", **fields), key="7:commandc1")


def test_render_shows_the_line_and_the_done_text_escaped() -> None:
    node = node_dict(commandId="c1", name="goal", input="/goal <script>x</script>", status="success",
                     outcome={"kind": "success", "text": "Commands: /goal edit <objective>\n**not bold**"})
    out = render.render_node(node)
    assert "<script" not in out and "<objective>" not in out
    assert "/goal &lt;script&gt;x&lt;/script&gt;" in out
    assert "Commands: /goal edit &lt;objective&gt;\n**not bold**" in out  # plain text, lines kept
    assert 'class="command-row command-success"' in out and 'aria-label="Command input"' in out
    assert "badge" not in out
    assert render.node_label(node) == "/goal <script>x</script>"


@pytest.mark.parametrize(("status", "badge"), [("running", "running"), ("error", "Failed")])
def test_render_marks_running_and_failed_commands(status: str, badge: str) -> None:
    out = render.render_node(node_dict(commandId="c1", input="/goal go", status=status,
                                       outcome={"kind": "error", "text": "boom"} if status == "error" else None))
    assert f'command-{status}' in out and f">{badge}</span>" in out


def test_render_an_orphan_done_shows_the_command_id() -> None:
    out = render.render_node(node_dict(commandId='c"1<', name=None, input=None, status="success",
                                       outcome={"kind": "success", "text": "ok"}))
    assert 'class="command-id">c&quot;1&lt;</span>' in out and ">ok</div>" in out
    assert render.node_label(node_dict(input=None)) == "Command"


def test_render_survives_odd_data_and_unknown_statuses() -> None:
    out = render.render_node(node_dict(input=5, name=["x"], status="<b>", outcome="nope"))
    assert "command-done" in out and "<b>" not in out
    assert 'class="generic"' in render.render_node(view_node("command", None))  # not CommandData: shown as data


def test_long_done_text_is_sliced_behind_show_more() -> None:
    text = "\n\n".join(f"line {i} " + "x" * 70 for i in range(2000))
    node = node_dict(commandId="c1", input="/goal go", status="success", outcome={"kind": "success", "text": text})
    assert render.node_text_blocks(node) == [("plain", "/goal go"), ("plain", text)]
    out = render.render_node(node, limit=1000)
    assert 'class="show-more"' in out and 'data-block="1"' in out and len(out) < 3000
    rest = render.render_block_slice(node, 1, 1000, limit=1000)
    assert "line " in rest and "<script" not in rest
    assert render.render_node(node, limit=None).count("line ") == 2000


def test_the_stylesheet_styles_the_command_row() -> None:
    css = render.stylesheet()
    assert ".command-row" in css and ".command-output" in css and ".command-error" in css


def test_export_shows_the_command_row() -> None:
    s = _session_with_turns()
    t = fold(s.events, "packed")
    doc = render.render_document(t.chat, title="t")
    assert "/goal go" in doc and "Goal created" in doc and "/goal pause" in doc and "kind-command" in doc
