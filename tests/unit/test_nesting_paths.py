"""The nesting guard runs before every decoder, on every path (issue 23 item 3): a value nested far deeper than
``MAX_DEPTH`` before a delta line's ``type``, as its ``type``, or inside a delta of a run, is ``FILE:LINE: error:
nesting too deep`` in ``pack``, ``assemble``, ``unpack``, ``stats``, in the server's list and pages and in the
browser's loader, with the lines before it kept; never a ``RecursionError``. JSON held inside a string (tool
arguments and results the renderers pretty-print) goes through the same guard."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.browser.local import FileLoad
from assembler.cli import main
from assembler.jsontext import NestingError
from assembler.logfile import LogLoader
from assembler.records import encode
from assembler.server import create_app

DEEP = "[" * 5000 + "]" * 5000  # far past CPython's recursion limit, which msgspec's decoders honour


def _delta(seq: int, text: str = "a") -> bytes:
    return encode({"type": "assistant/chunk", "seq": seq, "time": seq,
                   "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": text}}})


PLACES = {
    "before-type": b'{"x":' + DEEP.encode() + b',"type":"assistant/chunk","seq":SEQ,"time":0,"data":{}}',
    "as-type": b'{"type":' + DEEP.encode() + b',"seq":SEQ}',
    "in-a-delta": b'{"type":"assistant/chunk","seq":SEQ,"time":0,"data":{"turn":1,"step":1,"chunk":'
                  b'{"type":"text-delta","index":0,"text":"a","x":' + DEEP.encode() + b'}}}',
}


def _log(tmp_path: Path, place: str, before: int) -> Path:
    """A header, ``before`` delta lines of one block, then the deep line (line ``before + 2``)."""
    lines = [encode({"type": "session", "id": "deep"}), *(_delta(i) for i in range(before)),
             PLACES[place].replace(b"SEQ", str(before).encode())]
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("before", [0, 5])
@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("command", ["pack", "assemble", "unpack", "stats"])
def test_every_command_says_nesting_too_deep_naming_the_line(tmp_path: Path, capsys: Any, place: str,
                                                             before: int, command: str) -> None:
    path = _log(tmp_path, place, before)
    assert main([command, str(path)]) == 1
    captured = capsys.readouterr()
    assert f"{path}:{before + 2}: error: nesting too deep" in captured.err, captured.err
    if command == "pack" and before:
        assert b'"text-chunks"' in captured.out.encode()  # the deltas before it are kept, as a row


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("pack_deltas", [False, True])
def test_the_loader_keeps_the_records_before_the_deep_line(tmp_path: Path, place: str, pack_deltas: bool) -> None:
    loader = LogLoader(pack_deltas=pack_deltas)
    loader.feed(_log(tmp_path, place, 5).read_bytes())
    result = loader.finish()
    assert result.error is not None and result.error.line == 7 and "nesting too deep" in result.error.message
    assert result.event_count == 5


@pytest.mark.parametrize("place", sorted(PLACES))
def test_the_browser_loader_reports_it(tmp_path: Path, place: str) -> None:
    data = _log(tmp_path, place, 5).read_bytes()
    load = FileLoad("deep.jsonl", len(data))
    for i in range(0, len(data), 4096):
        load.feed(data[i:i + 4096])
    outcome = load.outcome(load.finish())
    assert outcome["error"]["line"] == 7 and "nesting too deep" in outcome["error"]["message"]


@pytest.mark.parametrize("place", sorted(PLACES))
def test_the_server_lists_and_pages_it_as_damaged(tmp_path: Path, place: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _log(root, place, 5)
    (root / "fine.jsonl").write_bytes(encode({"type": "session", "id": "fine"}) + b"\n" + _delta(0) + b"\n")
    client = TestClient(create_app([root], serve_static=False), raise_server_exceptions=False,
                        base_url="http://127.0.0.1")
    listed = client.get("/api/sessions")
    assert listed.status_code == 200, listed.text
    entries = {s["id"]: s for s in listed.json()["sessions"]}
    assert entries["deep"]["status"] == "damaged" and "nesting too deep" in entries["deep"]["error"]
    assert entries["fine"]["status"] != "damaged"
    page = client.get("/api/sessions/deep/page")
    assert page.status_code == 200 and "nesting too deep" in page.json()["error"]["detail"]
    assert page.json()["error"]["line"] == 7


def test_json_inside_a_string_is_depth_checked() -> None:
    from assembler.jsontext import loads_text

    with pytest.raises(NestingError):
        loads_text(DEEP)
    assert loads_text('{"a": [1]}') == {"a": [1]}


def test_export_of_deeply_nested_tool_arguments_and_results_is_no_traceback(tmp_path: Path) -> None:
    events = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1}},
        {"type": "tool/call", "seq": 2, "time": 0,
         "data": {"turn": 1, "step": 1, "callId": "c1", "name": "f", "args": DEEP, "arguments": DEEP}},
        {"type": "tool/result", "seq": 3, "time": 0, "data": {"turn": 1, "step": 1, "message": {
            "role": "tool", "id": "r", "source": {"kind": "tool", "callId": "c1"},
            "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": DEEP}],
                         "isError": False}]}}},
    ]
    path = tmp_path / "args.jsonl"
    path.write_bytes(b"".join(encode(v) + b"\n" for v in [{"type": "session", "id": "a"}, *events]))
    for out in ("x.html", "x.md"):
        assert main(["export", str(path), "-o", str(tmp_path / out)]) == 0
        assert (tmp_path / out).stat().st_size > 0
