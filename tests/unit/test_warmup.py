"""The worker's idle warm-up (``browser.warmup``): each step folds our own generated session in a scratch viewer,
through the wire API a real load takes (a packed page, then the same session as a follow snapshot frame), and stops
after ``STEPS``; the open window is never touched."""

from __future__ import annotations

import json

import msgspec

from assembler.browser import Viewer
from assembler.browser.warmup import COPIES, STEPS
from assembler.demo import demo_session
from assembler.history import page_value
from assembler.records import encode


def demo_page() -> bytes:
    header, batches = demo_session()
    events = [e for b in batches for e in b]
    return encode(page_value(events, max_messages=len(events) + 1))


def test_the_steps_alternate_page_and_frame_and_stop_after_steps() -> None:
    viewer = Viewer()
    steps = [json.loads(viewer.warm_up()) for _ in range(STEPS)]
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    assert [s["path"] for s in steps] == ["page", "frame"] * (STEPS // 2)
    assert [s["done"] for s in steps] == [False] * (STEPS - 1) + [True]
    assert json.loads(viewer.warm_up()) == {"step": STEPS, "path": None, "ms": 0, "done": True}  # nothing more


def test_page_and_snapshot_fold_the_same_session() -> None:
    viewer = Viewer()
    digests = []
    for _ in range(2):
        viewer.warm_up()
        scratch = viewer.warm.scratch
        assert scratch is not None
        digests.append(msgspec.json.decode(scratch.digest())["digest"])  # type: ignore[attr-defined]
    assert digests[0] == digests[1]
    one = Viewer()
    one.load_page(demo_page())
    assert msgspec.json.decode(one.digest())["digest"] != digests[0]  # COPIES copies, not one
    assert COPIES > 1


def test_the_open_window_is_never_touched() -> None:
    viewer = Viewer()
    update = json.loads(viewer.load_page(demo_page()))
    before = viewer.digest()
    for _ in range(STEPS):
        viewer.warm_up()
    assert json.loads(viewer.digest())["digest"] == json.loads(before)["digest"]
    assert viewer.window.assembler is not viewer.warm.scratch.window.assembler  # type: ignore[union-attr]
    assert update["stats"]["chatNodes"] == json.loads(viewer.load_page(demo_page()))["stats"]["chatNodes"]


def test_the_demo_session_is_copied_with_its_own_turns_and_ids() -> None:
    _, batches = demo_session(3)
    events = [e for b in batches for e in b]
    assert [e["seq"] for e in events] == list(range(len(events)))
    times = [e["time"] for e in events]
    assert times == sorted(times)
    turns = sorted({e["data"]["turn"] for e in events if e["type"] == "turn/start"})
    assert turns == [1, 2, 3, 4, 5, 6]
    calls = [e["data"]["callId"] for e in events if e["type"] == "tool/call"]
    assert calls == ["call-1", "call-3", "call-5"]
    ids = [e["data"]["id"] for e in events if e["type"] == "user/message"]
    assert len(ids) == len(set(ids)) == 6
