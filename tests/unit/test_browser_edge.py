"""``assembler.browser`` on CPython: the entry points the worker calls, bytes in and JSON bytes out."""

from __future__ import annotations

import json
import sys
from typing import Any

import msgspec
import pytest
from conversation_support import Session, assemble_page, storage_page_bytes

from assembler.browser import FileLoad, Viewer
from assembler.chunk_rows import pack_chunk_runs
from assembler.demo import demo_session
from assembler.history import snapshot_value
from assembler.logfile import parse_session_bytes
from assembler.records import decode_page, encode
from assembler.transcript import digest


def demo_bytes() -> bytes:
    header, batches = demo_session()
    records = [r for batch in batches for r in pack_chunk_runs(batch)]
    return b"\n".join([encode(header), *(encode(r) for r in records)]) + b"\n"


def events_of() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header, batches = demo_session()
    return header, [e for batch in batches for e in batch]


def load(viewer: Viewer, data: bytes, *, slice_size: int = 7, **kw: Any) -> dict[str, Any]:
    viewer.file_begin("demo.jsonl", len(data))
    for i in range(0, len(data), slice_size):
        viewer.file_feed(memoryview(data)[i:i + slice_size])
    return json.loads(viewer.file_finish(**kw))


def test_imports_no_browser_modules() -> None:
    assert "js" not in sys.modules and "pyodide" not in sys.modules


@pytest.mark.parametrize("slice_size", [1, 3, 64, 1 << 20])
def test_file_parsed_in_slices_equals_a_whole_parse(slice_size: int) -> None:
    data = demo_bytes().replace(b"\n", b"\r\n")
    load_ = FileLoad("x.jsonl")
    for i in range(0, len(data), slice_size):
        load_.feed(data[i:i + slice_size])
    assert load_.finish().records == parse_session_bytes(data).records


def test_torn_last_line_is_a_warning() -> None:
    data = demo_bytes() + b'{"type": "assistant/ch'
    update = load(Viewer(), data)
    assert update["error"] is None
    assert update["warnings"] and "torn last line" in update["warnings"][0]


def test_whole_file_digest_equals_the_cli_path() -> None:
    data = demo_bytes()
    update = load(Viewer(), data, all_records=True)
    expected = digest(assemble_page(decode_page(storage_page_bytes(parse_session_bytes(data).records))))
    assert update["digest"] == expected
    assert update["stats"]["inputs"] == update["stats"]["records"] < update["file"]["events"]


def test_malformed_line_keeps_the_valid_part() -> None:
    lines = demo_bytes().split(b"\n")
    lines[20] = b"{nope"
    update = load(Viewer(), b"\n".join(lines))
    assert update["error"]["line"] == 21 and "invalid JSON" in update["error"]["message"]
    assert update["nodes"]


def test_zstd_file_in_slices() -> None:
    import zstandard

    data = demo_bytes()
    packed = zstandard.ZstdCompressor().compress(data[:500]) + zstandard.ZstdCompressor().compress(data[500:])
    viewer = Viewer()
    viewer.file_begin("demo.jsonl.zst", len(packed))
    for i in range(0, len(packed), 100):
        viewer.file_feed(packed[i:i + 100])
    update = json.loads(viewer.file_finish(all_records=True))
    assert update["error"] is None
    assert update["file"]["events"] == 179


def test_follow_snapshot_live_events_duplicates_and_gap_repair() -> None:
    header, events = events_of()
    viewer = Viewer()
    cut = 100
    snap = snapshot_value(header, events[:cut], 50)
    update = json.loads(viewer.apply_frames([encode(snap)]))
    assert update["replace"] and update["last"] == cut - 1
    frames = [encode({"type": "event", "event": e}) for e in events[cut:cut + 5]]
    update = json.loads(viewer.apply_frames(frames + frames[:2]))  # the repeats are complete duplicates
    assert update["last"] == cut + 4 and update["requests"] == [] and "error" not in update
    # A gap: seq cut+10 arrives after cut+4.
    update = json.loads(viewer.apply_frames([encode({"type": "event", "event": events[cut + 10]})]))
    (request,) = update["requests"]
    assert request["kind"] == "repair" and request["through"] == cut + 10
    page = {"records": [{"type": "event", "event": e} for e in events[: cut + 11]], "hasMore": False}
    update = json.loads(viewer.answer_page(request["id"], encode(page)))
    assert update["replace"] and update["last"] == cut + 10 and "error" not in update


def test_reconnect_snapshot_replaces_the_window() -> None:
    header, events = events_of()
    viewer = Viewer()
    viewer.apply_frames([encode(snapshot_value(header, events[:60], 50))])
    update = json.loads(viewer.apply_frames([encode(snapshot_value(header, events, 50))]))
    assert "error" not in update and update["last"] == len(events) - 1


def test_stale_reconnect_is_reported_not_raised() -> None:
    header, events = events_of()
    viewer = Viewer()
    viewer.apply_frames([encode(snapshot_value(header, events, 50))])
    update = json.loads(viewer.apply_frames([encode(snapshot_value(header, events[:60], 50))]))
    assert update["error"]["where"] == "live"


def test_load_older_from_a_local_file_prepends_without_expansion() -> None:
    header, events = events_of()
    data = demo_bytes()
    viewer = Viewer()
    update = load(viewer, data, max_messages=1)
    assert update["hasMore"] and update["canLoadOlder"]
    before = update["stats"]["records"]
    update = json.loads(viewer.request_older(1))
    assert update["stats"]["records"] > before
    assert update["stats"]["inputs"] == update["stats"]["records"]


def test_remote_older_page_is_a_request() -> None:
    header, events = events_of()
    viewer = Viewer()
    viewer.apply_frames([encode(snapshot_value(header, events, 1))])
    value = json.loads(viewer.request_older(1))
    (request,) = value["requests"]
    assert request["kind"] == "prepend" and request["through"] == len(events) - 1


def test_render_entry_points_return_html_per_key() -> None:
    viewer = Viewer()
    update = load(viewer, demo_bytes(), all_records=True)
    keys = [n["key"] for n in update["nodes"]]
    html = json.loads(viewer.render(keys))["html"]
    assert set(html) == set(keys)
    step = next(n["key"] for n in update["nodes"] if n["kind"] == "assistant-step")
    assert "wc -l" in html[step]  # the Think title: the reasoning's one line
    assert json.loads(viewer.render_section(step, 0))["html"] == ""  # the body never repeats the title
    assert update["summary"]["steps"] >= 1 and update["summary"]["recordedTimes"] is True
    found = json.loads(viewer.find_seq(1e9))
    assert found["key"] == keys[-1] and found["inWindow"]


@pytest.mark.parametrize("mode", ["scalar", "packed"])
def test_load_page_reports_timings_counts_and_the_digest_on_request(mode: str) -> None:
    records = parse_session_bytes(demo_bytes()).records
    page = storage_page_bytes(records, mode, None)
    viewer = Viewer()
    update = json.loads(viewer.load_page(page))
    assert set(update["ms"]) >= {"decode", "journal", "fold"}
    assert "digest" not in update  # off the timed path: computed when asked
    expected = digest(assemble_page(decode_page(storage_page_bytes(records, "scalar", None))))
    assert json.loads(viewer.digest())["digest"] == expected
    assert update["stats"]["records"] == update["stats"]["inputs"] == len(decode_page(page).records)


def test_bad_page_is_an_error_not_an_exception() -> None:
    update = json.loads(Viewer().load_page(b'{"records": [{"type": "nope"}], "hasMore": false}'))
    assert update["error"]["where"] == "page"
    assert msgspec.json.decode(Viewer().load_page(b"[]"))["error"]


def test_a_streamed_tool_call_leaves_its_step_when_the_call_gets_its_own_row() -> None:
    """The assembler republishes the step when its call gets a ``tool`` row; the viewer forwards it (new rev) and
    the step renders without the streamed call. No diffing in the edge."""
    s = Session()
    s.turn_start(1)
    s.step_start(1, 1)
    for part in ["{", '"cmd": "ls"', "}"]:
        s.tool_delta(1, 1, 0, "call_1", part, name="bash")
    s.message(1, 1, [{"type": "tool-call", "id": "call_1", "name": "bash", "arguments": '{"cmd": "ls"}'}])
    call = s.add("tool/call", {"turn": 1, "step": 1, "callId": "call_1", "name": "bash", "arguments": "{}"})
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0}
    viewer = Viewer()
    first = json.loads(viewer.apply_frames([encode(snapshot_value(header, s.events[:call], 50))]))
    (step,) = [n for n in first["nodes"] if n["kind"] == "assistant-step"]
    assert "tool-streaming" in json.loads(viewer.render([step["key"]]))["html"][step["key"]]
    update = json.loads(viewer.apply_frames([encode({"type": "event", "event": s.events[call]})]))
    upserted = {n["key"]: n for n in update["nodes"]}
    assert {"assistant-step", "tool"} <= {n["kind"] for n in upserted.values()}
    assert upserted[step["key"]]["rev"] > step["rev"]
    html = json.loads(viewer.render([step["key"]]))["html"][step["key"]]
    assert "tool-streaming" not in html


def test_replay_window_scalar_and_packed_fold_to_the_open_windows_digest() -> None:
    """The "Replay benchmark" entry points: both modes of the open window give the same digest and nodes, the
    packed one with fewer records; the open window is untouched."""
    viewer = Viewer()
    update = load(viewer, demo_bytes(), all_records=True)
    before = viewer.render([n["key"] for n in update["nodes"]])
    modes = {mode: json.loads(viewer.replay_window(mode)) for mode in ("scalar", "packed")}
    scalar, packed = modes["scalar"], modes["packed"]
    assert packed["digest"] == scalar["digest"] == update["digest"]
    assert set(packed["ms"]) == {"decode", "journal", "fold", "render"}
    assert packed["records"] < scalar["records"] == 179
    assert (packed["chatNodes"], packed["rendered"]) == (scalar["chatNodes"], scalar["rendered"]) != (0, 0)
    assert viewer.render([n["key"] for n in update["nodes"]]) == before
    assert json.loads(viewer.replay_page(b"{}"))["error"]["where"] == "replay"


def test_markdown_export_of_the_window_and_the_session() -> None:
    viewer = Viewer()
    load(viewer, demo_bytes(), all_records=True)
    for scope in ("window", "session"):
        value = json.loads(viewer.export("md", scope, "demo"))
        assert value["name"] == "demo.md"
        text = value["text"]
        assert text.startswith("# demo") and "### User" in text and "### Assistant" in text
        assert "How many lines does `README.md` have?" in text


def test_load_older_rerenders_the_row_that_loses_its_turn_divider() -> None:
    from conversation_support import Session

    s = Session()
    s.turn_start(1)
    s.user("first")
    for step in range(1, 5):
        s.step_start(1, step)
        s.message(1, step, [{"type": "text", "text": f"answer {step}"}])
        s.step_end(1, step)
    s.turn_end(1)
    header = {"type": "session", "version": 0, "id": "t", "createdAt": 0}
    data = ("\n".join(json.dumps(e) for e in [header, *s.events]) + "\n").encode()
    viewer = Viewer()
    first = load(viewer, data, max_messages=2)
    keys = [n["key"] for n in first["nodes"]]
    html = json.loads(viewer.render(keys))["html"]
    [top] = [k for k in keys if "turn-divider" in html[k]]
    older = json.loads(viewer.request_older(10))
    resent = {n["key"]: n["rev"] for n in older["nodes"]}
    assert top in resent  # its divider moves to an older row: the page must render it again
    html = json.loads(viewer.render(list(resent)))["html"]
    assert "turn-divider" not in html[top]
    assert sum("turn-divider" in h for h in html.values()) == 1


def test_every_entry_point_the_worker_calls_is_one_of_the_viewer() -> None:
    """``web/*.mjs`` calls the Python viewer by name (the worker's ``call("name", ...)``; the page's
    ``bridge.call("op")`` names a worker op, not a method): each such name is a public method of ``Viewer``, and each
    public method of ``Viewer`` is called by the worker (none is kept for tests only)."""
    import re
    from pathlib import Path

    web = Path(__file__).resolve().parents[2] / "web"
    calls = re.compile(r'(?<![.\w])call\("([a-z_]+)"')
    called = {m for path in web.glob("*.mjs") for m in calls.findall(path.read_text("utf-8"))}
    public = {n for n in dir(Viewer) if not n.startswith("_") and callable(getattr(Viewer, n))}
    assert called and called <= public, sorted(called - public)
    assert public == called, sorted(public - called)


def test_a_served_snapshot_opens_through_the_lazy_decoder_with_its_first_screen() -> None:
    """The served open path decodes its snapshot as ``load_page`` decodes a page (packed payloads kept lazy) and,
    like it, sends the first screen's rows with the update: the page needs no second trip for them."""
    from assembler.history import MessageIndex
    from assembler.lazy_rows import LazyTexts

    header, _events = events_of()
    records = parse_session_bytes(demo_bytes()).records
    frame = encode(MessageIndex(records).snapshot(header, 50))
    viewer = Viewer()
    update = json.loads(viewer.apply_frames([frame]))
    lazy = [type(e.event.data.fragments) is LazyTexts for e in viewer.window.assembler.window_entries()
            if e.event.type.startswith("chunkrow/")]
    assert any(lazy)
    assert update["replace"] and update["html"]["html"]
    assert set(update["html"]["html"]) <= {n["key"] for n in update["nodes"]}
    served = json.loads(viewer.digest())["digest"]
    page = Viewer()
    page.load_page(encode(MessageIndex(records).page(None, None, 50)))
    assert json.loads(page.digest())["digest"] == served
    assert lazy == [type(e.event.data.fragments) is LazyTexts for e in page.window.assembler.window_entries()
                    if e.event.type.startswith("chunkrow/")]  # the same rows stay lazy as load_page's
    live = json.loads(viewer.apply_frames([encode({"type": "event", "event": _events[-1] | {"seq": 10**6}})]))
    assert "html" not in live  # a live event's update is an upsert: its rows are rendered when shown
