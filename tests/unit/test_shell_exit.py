"""A failed command is a failed row (issue 22 item 5): a shell call whose result ends with our harness's
``[exit code: N]`` marker (N not 0), whose Codex envelope says the process exited with a non-zero code, or whose
reader recorded a non-zero ``exitCode`` gets the error dot and the "Failed" badge, in the chat row and in the
trajectory; exit 0, no marker, or a marker quoted mid-output is not a failure."""

from __future__ import annotations

import json
import os

import pytest

from assembler.browser import Viewer
from assembler.render.toolrows import shell_exit, tool_error
from assembler.views import TextBlockView, ToolData, ToolResultView
from tests.corpus import SHARED


def call(text: str, name: str = "bash", view: object = None) -> ToolData:
    result = ToolResultView(seq=3, time=0, isError=False, blocks=[TextBlockView(text=text)],
                            **({"view": view} if view is not None else {}))
    return ToolData(kind="tool", callId="c1", name=name, arguments={"command": "false"}, turn=1, step=1,
                    status="done", callSeq=2, result=result)


@pytest.mark.parametrize(("text", "name", "view", "code"), [
    ("(no output)\n[exit code: 1]", "bash", None, 1),
    ("bash: shuf: command not found\n[exit code: 127]\n", "bash", None, 127),
    ("all good\n[exit code: 0]", "bash", None, 0),
    ("ok", "bash", None, None),
    ("the log said [exit code: 1] earlier\nthen it passed", "bash", None, None),  # quoted, not the call's own
    ("Chunk ID: 1\nProcess exited with code 2\nOutput:\nboom", "exec_command", None, 2),
    ("anything", "bash", {"kind": "shell", "exitCode": 3}, 3),
    ("(no output)\n[exit code: 1]", "read_file", None, None),  # not a shell tool
])
def test_the_recorded_exit_status(text: str, name: str, view: object, code: int | None) -> None:
    data = call(text, name, view)
    assert shell_exit(data) == code
    assert tool_error(data) is (code is not None and code != 0)


def test_a_real_failed_command_is_an_error_in_chat_and_trajectory() -> None:
    root = SHARED / "fixtures" / "deepseek-harness"
    logs = [p for p in sorted(root.rglob("session.jsonl")) if b"[exit code: 1]" in p.read_bytes()]
    if not logs:
        if os.environ.get("CI"):
            pytest.fail(f"no shared fixture with a failed command under {root} (CI requires ../shared)")
        pytest.skip("no shared fixture with a failed command")
    data = logs[0].read_bytes()
    viewer = Viewer()
    viewer.file_begin("s.jsonl", len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish(True))
    keys = [n["key"] for n in update["nodes"] if n["kind"] == "tool"]
    html = json.loads(viewer.render(keys))["html"]
    assert any("dot-error" in h and "Failed" in h for h in html.values())
    rows = json.loads(viewer.trajectory_view())["rows"]
    assert any(c["status"] == "error" for r in rows for c in r.get("tools", []))
