"""The plan panel's data (issue 22, Todo panel): the window's last ``todo/write`` with its items' states; a
malformed item is left out, an unknown status reads pending; no plan is None."""

from __future__ import annotations

import json

from assembler.browser import Viewer
from assembler.records import encode


def viewer_of(events: list[dict[str, object]]) -> Viewer:
    header = {"type": "session", "version": 0, "id": "plan", "createdAt": 1}
    lines = [header] + [{"seq": i, "time": 1_767_225_600_000 + i, **e} for i, e in enumerate(events)]
    data = b"".join(encode(v) + b"\n" for v in lines)
    viewer = Viewer()
    viewer.file_begin("plan.jsonl", len(data))
    viewer.file_feed(data)
    viewer.file_finish(True)
    return viewer


def test_the_last_plan_of_the_window_with_its_states() -> None:
    viewer = viewer_of([
        {"type": "todo/write", "data": {"todos": [{"content": "old", "status": "pending"}]}},
        {"type": "todo/write", "data": {"todos": [
            {"content": "read the code", "status": "completed"},
            {"content": "write the fix", "status": "in_progress"},
            {"content": "odd status", "status": "blocked"},
            {"status": "completed"},
            "not an item",
        ]}},
    ])
    value = json.loads(viewer.todo_list())
    assert value == {"seq": 1, "todos": [{"content": "read the code", "status": "completed"},
                                         {"content": "write the fix", "status": "in_progress"},
                                         {"content": "odd status", "status": "pending"}]}


def test_no_plan_is_null() -> None:
    viewer = viewer_of([{"type": "todo/write", "data": {"todos": "nonsense"}}])
    assert json.loads(viewer.todo_list()) == {"seq": 0, "todos": []}
    assert json.loads(Viewer().todo_list()) is None
