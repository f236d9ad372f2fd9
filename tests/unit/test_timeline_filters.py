"""The trajectory overview's spans (``browser.timeline``), the chat rows' facets (``browser.facets``) and search
over the rows the filters leave shown (``browser.filters``), on CPython: pure values and real logs."""

from __future__ import annotations

import json
from typing import Any

from corpus import FIXTURES, require_corpus
from test_browser_views import COMPACTION, demo_bytes, opened

from assembler import render
from assembler.browser.facets import has_thinking, row_facet
from assembler.browser.timeline import IDLE_CAP_MS, NO_TIMES, NO_TIMES_RUN, timeline_of
from assembler.browser.updates import node_meta
from assembler.jsontext import reader_text

T = 1_700_000_000_000  # a recorded epoch-ms time


def step(key: str, turn: int, started: int | None, ended: int | None, tools: list[dict[str, Any]] = (),  # type: ignore[assignment]
         status: str = "complete") -> dict[str, Any]:
    return {"kind": "step", "key": key, "chatKey": f"c-{key}", "turn": turn, "step": 1, "status": status,
            "summary": "", "startedAt": started, "endedAt": ended, "tools": list(tools)}


def test_spans_are_steps_then_their_tool_calls_in_run_order_with_slots() -> None:
    rows = [step("a", 1, T, T + 1000, [{"name": "bash", "key": "t1", "status": "error", "endedAt": T + 3000}]),
            {"kind": "turn-end", "key": "e", "turn": 1},
            step("b", 2, T + 5000, T + 6000)]
    value = timeline_of(rows)
    assert [(s["lane"], s["slot"], s["row"], s["chat"]) for s in value["spans"]] == [
        ("step", 0, "a", "c-a"), ("tool", 1, "a", "t1"), ("step", 2, "b", "c-b")]
    assert value["spans"][1]["status"] == "error"
    assert [(t["turn"], t["slot"], t["t"]) for t in value["turns"]] == [(1, 0, 0), (2, 2, 5000)]
    assert [(s["t0"], s["t1"]) for s in value["spans"]] == [(0, 1000), (1000, 3000), (5000, 6000)]
    assert value["timed"] == value["total"] == 3 and value["end"] == 6000 and value["reason"] == ""


def test_rebuilt_times_give_equal_widths_only_and_say_why() -> None:
    # Times below 2000-01-01 are counters a reader rebuilt (views.is_recorded_time): never a duration.
    rows = [step("a", 1, 5, 9, [{"name": "read", "key": "t", "status": "done", "endedAt": 12}])]
    value = timeline_of(rows)
    assert value["timed"] == 0 and value["total"] == 2
    assert value["reason"] == NO_TIMES and "unavailable" in value["reason"]
    assert all(s["t0"] is None and s["t1"] is None for s in value["spans"])


def test_a_tool_without_a_recorded_result_has_no_actual_extent() -> None:
    value = timeline_of([step("a", 1, T, T + 10, [{"name": "x", "key": None, "status": "running", "endedAt": None}])])
    tool = value["spans"][1]
    assert tool["t0"] is None and tool["chat"] == "c-a"  # the step's chat row stands in for a tool with no row
    assert value["timed"] == 1


def test_idle_stretches_longer_than_the_cap_are_shortened_and_listed() -> None:
    hour = 3_600_000
    rows = [step("a", 1, T, T + 1000), step("b", 2, T + hour, T + hour + 2000)]
    value = timeline_of(rows)
    b = value["spans"][1]
    assert (b["t0"], b["t1"]) == (1000 + IDLE_CAP_MS, 3000 + IDLE_CAP_MS)  # its own duration is kept exactly
    assert value["gaps"] == [{"t": 1000, "ms": hour - 1000}]


def test_no_steps_is_an_empty_timeline_with_no_reason() -> None:
    value = timeline_of([{"kind": "turn-end", "key": "e", "turn": 1}])
    assert value["spans"] == [] and value["reason"] == "" and value["slots"] == 0


def test_the_trajectory_view_carries_the_timeline_of_its_rows() -> None:
    viewer = opened(demo_bytes())
    value = json.loads(viewer.trajectory_view())
    assert value["timeline"] == json.loads(json.dumps(timeline_of(value["rows"], scope="run")))  # all loaded
    assert value["timeline"]["timed"] > 0  # the demo log records its times


def test_a_projected_fixture_has_no_actual_durations() -> None:
    require_corpus()
    viewer = opened((FIXTURES / COMPACTION).read_bytes())
    timeline = json.loads(viewer.trajectory_view())["timeline"]
    assert timeline["total"] > 0 and timeline["timed"] == 0 and timeline["reason"] == NO_TIMES_RUN  # all loaded


# --- facets and filtered search ---------------------------------------------------------------------------------


def test_every_chat_row_has_one_facet_matching_its_kind() -> None:
    viewer = opened(demo_bytes())
    facets = {key: row_facet(node) for key, node in viewer.window.chat.items()}
    for key, node in viewer.window.chat.items():
        facet = facets[key]
        if node.kind == "tool":
            assert facet == f"tool:{node.data.name}"
        elif node.kind == "input-message":
            assert facet == "user"
        elif node.kind == "assistant-step":
            kinds = {k for k, _ in render.node_text_blocks(node)}
            assert facet == ("thinking" if kinds == {"think"} else "assistant")
            assert has_thinking(node) == ("think" in kinds)
        else:
            assert facet == "notice"
    assert {"user", "assistant"} <= set(facets.values())
    assert any(f.startswith("tool:") for f in facets.values())


def test_node_meta_sends_the_facet() -> None:
    viewer = opened(demo_bytes())
    for node in viewer.window.chat.values():
        meta = node_meta(node, 0)
        assert (meta.facet, meta.think) == (row_facet(node), has_thinking(node))


def test_search_shown_skips_hidden_kinds_and_hidden_think_sections() -> None:
    viewer = opened(demo_bytes())
    every = json.loads(viewer.search("the"))
    assert every["total"] > 0
    same = json.loads(viewer.search_shown("the", False, []))
    assert (same["total"], same["hits"]) == (every["total"], every["hits"])
    kinds = {row_facet(n) for n in viewer.window.chat.values()}
    for facet in kinds:
        value = json.loads(viewer.search_shown("the", False, [facet]))
        keys = {h[0] for h in value["hits"]}
        assert all(row_facet(viewer.window.chat[k]) != facet for k in keys)
        expected = sum(h[1] for h in every["hits"] if row_facet(viewer.window.chat[h[0]]) != facet)
        if facet != "thinking":
            assert value["total"] == expected
    no_think = json.loads(viewer.search_shown("the", False, ["thinking"]))
    think_text = sum(reader_text(text).lower().count("the") for n in viewer.window.chat.values()
                     if row_facet(n) != "thinking" for k, text in render.node_text_blocks(n) if k == "think")
    assert think_text > 0  # the demo's steps reason: the case is exercised
    assert no_think["total"] == sum(h[1] for h in every["hits"]
                                    if row_facet(viewer.window.chat[h[0]]) != "thinking") - think_text


def test_a_turn_of_a_wrong_type_is_no_turn_of_the_timeline() -> None:
    """A log's ``turn`` that is a list (valid JSON, wrong type) reaches the rows as it is: the timeline groups it
    under no turn instead of failing on an unhashable key."""
    rows = [{"kind": "step", "key": "a", "turn": [], "status": "complete"},
            {"kind": "step", "key": "b", "turn": 1, "status": "complete"}]
    value = timeline_of(rows)
    assert [s["turn"] for s in value["spans"]] == [None, 1]
    assert [t["turn"] for t in value["turns"]] == [None, 1]
