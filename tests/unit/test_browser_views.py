"""The viewer's Trajectory and Model-context views, search, raw records and page export, on CPython (the same entry
points the worker calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from corpus import FIXTURES, corpus_params, require_corpus

from assembler import render
from assembler.browser import Viewer
from assembler.chunk_rows import expand_records, pack_chunk_runs
from assembler.demo import demo_session
from assembler.logfile import parse_session_bytes
from assembler.records import encode
from assembler.surface import SurfaceManager

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
PACKED = "examples/jsonrpc-agent/tests/snapshots/text-turn/session.jsonl"


def demo_bytes() -> bytes:
    header, batches = demo_session()
    records = [r for batch in batches for r in pack_chunk_runs(batch)]
    return b"\n".join([encode(header), *(encode(r) for r in records)]) + b"\n"


def opened(data: bytes, name: str = "s.jsonl", **kw: Any) -> Viewer:
    viewer = Viewer()
    viewer.file_begin(name, len(data))
    viewer.file_feed(data)
    kw.setdefault("all_records", True)
    update = json.loads(viewer.file_finish(**kw))
    assert update["error"] is None
    return viewer


def fixture(rel: str) -> bytes:
    require_corpus()
    return (FIXTURES / rel).read_bytes()


def J(value: bytes) -> Any:
    return json.loads(value)


# --- trajectory -------------------------------------------------------------------------------------------------


def test_trajectory_rows_one_per_step_with_times_from_a_recorded_log() -> None:
    viewer = opened(demo_bytes())
    rows = J(viewer.trajectory_view())["rows"]
    steps = [r for r in rows if r["kind"] == "step"]
    expected = [n for n in viewer.window.trajectory_nodes.values() if n.kind == "trajectory-assistant-step"]
    assert len(steps) == len(expected) > 0
    for row in steps:
        assert row["status"] in {"running", "complete", "error", "retried"}
        chat = viewer.window.chat[row["chatKey"]]
        assert chat.kind == "assistant-step" and (chat.location.turn, chat.location.step) == (row["turn"], row["step"])
        assert row["durationMs"] is not None and row["durationMs"] >= 0
        bar = row["bar"]
        assert bar is not None and 0 <= bar["left"] <= 1 and 0 < bar["left"] + bar["width"] <= 1
        for tool in row["tools"]:
            assert tool["key"] is None or viewer.window.chat[tool["key"]].kind == "tool"
    assert any(r["model"] == "demo-model-1" for r in steps)
    assert any(r["tools"] for r in steps)


@pytest.mark.parametrize("path", corpus_params())
def test_trajectory_never_times_a_rebuilt_clock(path: Path | None) -> None:
    """The projected fixtures have no times (rebuilt as 0): no TTFT, no duration, no bar."""
    require_corpus()
    assert path is not None
    viewer = opened(path.read_bytes())
    for row in J(viewer.trajectory_view())["rows"]:
        assert row.get("ttftMs") is None and row["durationMs"] is None and row.get("bar") is None


# --- context ----------------------------------------------------------------------------------------------------


def surface_seqs(data: bytes) -> list[int]:
    events = list(expand_records(parse_session_bytes(data).records))
    return [n.seq for n in SurfaceManager(events)]


@pytest.mark.parametrize("rel", [COMPACTION, PACKED])
def test_context_is_the_surface_of_the_whole_log(rel: str) -> None:
    data = fixture(rel)
    viewer = opened(data)
    value = J(viewer.context_view())
    assert value["problems"] == []
    assert [m["seq"] for m in value["messages"]] == surface_seqs(data)
    for message in value["messages"]:
        assert message["role"] in {"user", "assistant", "tool", "system"}
        for key in message["links"]:
            assert key in viewer.window.chat


def test_context_shows_the_shadowed_messages_under_the_compaction_summary() -> None:
    data = fixture(COMPACTION)
    viewer = opened(data)
    messages = J(viewer.context_view())["messages"]
    summaries = [m for m in messages if m["shadowed"]]
    assert summaries, "the compaction-recovery log replaces a range"
    events = {e["seq"]: e for e in expand_records(parse_session_bytes(data).records)}
    for m in summaries:
        op = events[m["seq"]]["surfaceOp"]
        assert [s["seq"] for s in m["shadowed"]][0] == op["start"] and m["shadowed"][-1]["seq"] == op["end"]
        assert m["sources"] and set(s["seq"] for s in m["shadowed"]) <= set(m["sources"])
    full = J(viewer.context_message(summaries[0]["seq"]))["text"]
    assert full.startswith(summaries[0]["text"][:100])


# --- search -----------------------------------------------------------------------------------------------------


def cpython_count(viewer: Viewer, query: str) -> int:
    q = query.lower()
    return sum(text.lower().count(q) for node in viewer.window.chat.values() if node.kind != "event"
               for _, text in render.node_text_blocks(node))


def test_search_finds_a_match_spanning_fragments_of_one_packed_row() -> None:
    data = demo_bytes()
    rows = [r for r in parse_session_bytes(data).records if not isinstance(r, dict) and r.type == "text-chunks"]
    row = rows[0]
    fragments = row.data.texts
    # Two words across the boundary of the 2nd and 3rd fragments.
    joined = "".join(fragments)
    cut = len(fragments[0]) + len(fragments[1])
    query = joined[cut - 3:cut + 3].upper()
    assert not any(query.lower() in f.lower() for f in fragments)
    viewer = opened(data)
    value = J(viewer.search(query))
    assert value["total"] >= 1 and value["total"] == cpython_count(viewer, query)
    assert value["total"] == sum(h[1] for h in value["hits"])
    keys = list(viewer.window.chat)
    assert [h[0] for h in value["hits"]] == sorted((h[0] for h in value["hits"]), key=lambda k: (
        viewer.window.chat[k].anchorSeq, keys.index(k)))


@pytest.mark.parametrize("query", ["the", "bash", "README", "def ", "zzz-no-such-text"])
def test_search_counts_equal_cpython_counts(query: str) -> None:
    data = fixture(COMPACTION)
    viewer = opened(data)
    assert J(viewer.search(query))["total"] == cpython_count(viewer, query)


def test_search_includes_reasoning_and_tool_results() -> None:
    viewer = opened(demo_bytes())
    think = next(n for n in viewer.window.chat.values() for k, t in render.node_text_blocks(n) if k == "think" and t)
    text = next(t for k, t in render.node_text_blocks(think) if k == "think")
    hit = J(viewer.search(text[:12]))
    assert think.key in [h[0] for h in hit["hits"]]
    tool = next(n for n in viewer.window.chat.values() if n.kind == "tool")
    result = render.node_text_blocks(tool)[1][1]
    assert tool.key in [h[0] for h in J(viewer.search(result[:10]))["hits"]]


# --- raw records ------------------------------------------------------------------------------------------------


def test_raw_records_of_a_packed_row_are_summarised_then_expanded_on_demand() -> None:
    data = demo_bytes()
    viewer = opened(data)
    lines = {json.loads(line).get("seq"): json.loads(line) for line in data.splitlines()[1:]}
    found = False
    for key in viewer.window.chat:
        records = J(viewer.records(key))["records"]
        assert records, key
        for i, rec in enumerate(records):
            if not rec["packed"]:
                assert json.loads(rec["json"]) == lines[rec["seq"]]  # lossless, as stored
                continue
            found = True
            assert rec["members"] == rec["lastSeq"] - rec["seq"] + 1 >= 3 and rec["lastTime"] >= rec["time"]
            full = J(viewer.record_members(key, i))
            stored = json.loads(full["json"])
            assert stored["type"] == rec["type"] and stored["seq0"] == rec["seq"]
            members = [json.loads(m) for m in full["members"]]
            assert [m["seq"] for m in members] == list(range(rec["seq"], rec["lastSeq"] + 1))
            fragments = stored["data"].get("texts", stored["data"].get("args"))
            chunks = [m["data"]["chunk"] for m in members]
            assert [c.get("text", c.get("argumentsDelta")) for c in chunks] == fragments
    assert found


# --- export -----------------------------------------------------------------------------------------------------


def test_export_html_of_the_window_and_of_the_whole_session() -> None:
    data = demo_bytes()
    viewer = opened(data, all_records=False, max_messages=1)
    window = J(viewer.export("html", "window", "Demo"))
    session = J(viewer.export("html", "session", "Demo"))
    assert window["name"] == "Demo.html" and window["text"].startswith("<!doctype html>")
    assert "older history is not included" in window["text"]
    assert len(session["text"]) > len(window["text"]) and "older history" not in session["text"]
    assert "<script" not in session["text"]
    header, batches = demo_session()
    first_prompt = next(e for b in batches for e in b if e["type"] == "user/message")["data"]["content"][0]["text"]
    assert first_prompt.split()[0] in session["text"]


def test_export_of_a_fetched_page() -> None:
    from conversation_support import storage_page_bytes

    from assembler.history import MessageIndex

    data = demo_bytes()
    viewer = opened(data)
    records = parse_session_bytes(data).records
    page = storage_page_bytes(records)
    viewer.window.index = None  # a served session: the page brings the records
    value = J(viewer.export("html", "session", "", page))
    assert value["text"].count("<article") == J(viewer.export("html", "window", ""))["text"].count("<article")
    assert MessageIndex(records).event_count > 0


def test_export_markdown_equals_the_cli_markdown_of_the_same_nodes() -> None:
    data = demo_bytes()
    viewer = opened(data)
    value = J(viewer.export("md", "session", "Demo"))
    assert value["name"] == "Demo.md"
    nodes = list(viewer.window.ordered())
    displays = viewer.window.assembler.display.display
    assert value["text"] == render.render_markdown(nodes, title="Demo", displays=displays)
    header, batches = demo_session()
    prompts = [e["data"]["content"][0]["text"] for b in batches for e in b if e["type"] == "user/message"]
    for prompt in prompts:
        assert prompt.split("`")[0].strip() in value["text"]


def test_trajectory_statuses_running_retried_and_error() -> None:
    from conversation_support import Session as Events

    from assembler.history import page_value

    s = Events()
    s.turn_start(1)
    s.user("go")
    s.step_start(1, 1)  # retried, then complete
    s.texts(1, 1, 0, ["fir", "st"])
    s.retry(1, 1)
    s.texts(1, 1, 0, ["sec", "ond"])
    s.message(1, 1, [{"type": "text", "text": "second"}])
    s.step_end(1, 1)
    s.step_start(1, 2)  # a retry that never completed: error
    s.retry(1, 2, code="UPSTREAM", message="it broke")
    s.step_end(1, 2)
    s.turn_end(1, {"kind": "error", "error": {"message": "it broke", "code": "UPSTREAM"}})
    s.turn_start(2)
    s.user("again")
    s.step_start(2, 1)  # still streaming: running
    s.texts(2, 1, 0, ["still ", "going"])
    viewer = Viewer()
    viewer.load_page(json.dumps(page_value(s.events, None, None, max_messages=100)).encode())
    rows = J(viewer.trajectory_view())["rows"]
    steps = {(r["turn"], r["step"]): r for r in rows if r["kind"] == "step"}
    assert steps[(1, 1)]["status"] == "retried" and steps[(1, 1)]["summary"] == "second"
    assert steps[(1, 2)]["status"] == "error" and steps[(1, 2)]["error"] == "it broke"
    assert steps[(2, 1)]["status"] == "running" and steps[(2, 1)]["summary"] == "still going"
    ends = [r for r in rows if r["kind"] == "turn-end"]
    assert [e["status"] for e in ends] == ["error"] and ends[0]["error"] == "it broke"


def test_export_of_the_trajectory_and_context_views() -> None:
    viewer = opened(demo_bytes())
    rows = [r for r in J(viewer.trajectory_view())["rows"] if r["kind"] == "step"]
    md = J(viewer.export("md", "trajectory", "Demo"))
    assert md["name"] == "Demo-trajectory.md" and md["text"].startswith("# Demo: trajectory")
    for row in rows:
        assert f"**Turn {row['turn']} · step {row['step']}** · {row['status']}" in md["text"]
        assert "TTFT" in md["text"] and row["model"] in md["text"]
    html = J(viewer.export("html", "trajectory", "Demo"))["text"]
    assert html.startswith("<!doctype html>") and "<script" not in html and "Turn 1 · step 1" in html
    messages = J(viewer.context_view())["messages"]
    ctx = J(viewer.export("md", "context", "<b>Demo</b>"))["text"]
    assert ctx.startswith("# &lt;b>Demo&lt;/b>: model context")
    assert ctx.count("\n## ") == len(messages)
    for m in messages:
        assert m["text"][:40] in ctx


def test_a_page_load_pauses_the_cycle_collector_and_resumes_it() -> None:
    """load_page and answer_page run with the cyclic GC paused (their objects live until the next page) and leave it
    as they found it, after a bad page too; a ``defer_gc`` viewer (the worker's) resumes it at ``settle``."""
    import gc

    from perf.bench_browser import pages

    page = pages(2, 100)["packed"]
    viewer = Viewer()
    seen: list[bool] = []
    real = viewer.window.reset

    def spy() -> None:
        seen.append(gc.isenabled())
        real()

    viewer.window.reset = spy  # type: ignore[method-assign]
    assert gc.isenabled()
    viewer.load_page(page)
    assert seen == [False] and gc.isenabled()
    assert "error" in J(viewer.load_page(b'{"records": 7}')) and gc.isenabled()
    gc.disable()
    try:
        viewer.load_page(page)
        assert not gc.isenabled()
    finally:
        gc.enable()
    deferred = Viewer(defer_gc=True)
    try:
        deferred.load_page(page)
        assert not gc.isenabled()
        deferred.load_page(page)  # a second load before the page settles
        assert not gc.isenabled()
        deferred.settle()
        assert gc.isenabled()
        deferred.settle()
        assert gc.isenabled()
    finally:
        gc.enable()
