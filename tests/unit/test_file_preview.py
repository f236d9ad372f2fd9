"""A big local file shows the part read first while the rest is read (``Viewer.file_preview``): the preview is the
tail page of the records read so far, and the whole file's update that replaces it is the same as without one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assembler.browser import Viewer
from assembler.demo import demo_session
from assembler.records import encode
from perf.claude_gen import generate


def ours() -> bytes:
    header, batches = demo_session()
    return b"".join(encode(v) + b"\n" for v in [header, *(e for b in batches for e in b)])


def claude() -> bytes:
    return generate(400_000, seed=3)


def opened(data: bytes, name: str, *, preview_at: int | None, all_records: bool = False) -> tuple[Any, Any]:
    """(preview update or None, finish update) of ``data`` read in 4 KB slices, previewed after ``preview_at``."""
    viewer = Viewer()
    viewer.file_begin(name, len(data))
    preview = None
    for i in range(0, len(data), 4096):
        viewer.file_feed(data[i:i + 4096])
        if preview_at is not None and preview is None and i + 4096 >= preview_at:
            preview = json.loads(viewer.file_preview(50))
    return preview, json.loads(viewer.file_finish(all_records))


def rows(update: dict[str, Any]) -> list[Any]:
    """The update's rows without their revs (a rev names one node state across windows: it never restarts)."""
    return [{k: v for k, v in n.items() if k != "rev"} for n in update["nodes"]]


@pytest.mark.parametrize(("make", "name"), [(ours, "demo.jsonl"), (claude, "claude.jsonl")])
def test_the_whole_file_replaces_its_preview_exactly(make: Any, name: str) -> None:
    data = make()
    preview, final = opened(data, name, preview_at=len(data) // 3)
    _, plain = opened(data, name, preview_at=None)
    assert preview is not None and preview["replace"] is True
    assert preview["preview"] == {"bytes": preview["preview"]["bytes"], "size": len(data)}
    assert 0 < preview["preview"]["bytes"] < len(data)
    assert preview["nodes"] and preview["html"]  # the first screen's rows come with it
    assert final["replace"] is True
    assert rows(final) == rows(plain)
    assert final["stats"] == plain["stats"] and final["file"] == plain["file"]
    _, whole = opened(data, name, preview_at=len(data) // 2, all_records=True)
    _, whole_plain = opened(data, name, preview_at=None, all_records=True)
    assert whole["digest"] == whole_plain["digest"]


def test_the_preview_shows_only_what_was_read() -> None:
    data = claude()
    cut = len(data) // 4
    preview, final = opened(data, "claude.jsonl", preview_at=cut)
    assert preview["stats"]["records"] < final["stats"]["records"]
    last_final = final["nodes"][-1]["key"]
    assert last_final not in {n["key"] for n in preview["nodes"]}


def test_nothing_to_preview_is_null() -> None:
    viewer = Viewer()
    viewer.file_begin("empty.jsonl", 10)
    assert json.loads(viewer.file_preview(50)) is None
    viewer.file_feed(b"not json at all\n")
    assert json.loads(viewer.file_preview(50)) is None  # the parse failed: the whole file's update reports it
    assert json.loads(viewer.file_finish())["error"] is not None
