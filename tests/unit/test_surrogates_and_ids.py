"""Issue 23 item 6: a lone surrogate escape is kept byte for byte by every JSON output, including the indented
ones (``messages``, ``messages --seqs``, ``stats --json``, ``check --json``), which ran msgspec's formatter over it
and crashed; a ``callId`` of the wrong type is a warning naming its seq in ``repair``, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.jsontext import format_json

LONE = "\\ud800"  # as the log spells it: a JSON escape, six characters


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def _surrogate_log(tmp_path: Path) -> Path:
    return _write(tmp_path / "s.jsonl", [
        '{"type":"session","id":"x","title":"t' + LONE + '"}',
        '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}',
        '{"type":"user/message","seq":1,"time":0,"data":{"id":"u1","role":"user","content":[{"type":"text",'
        '"text":"hi ' + LONE + ' there \\\\ud800 not one"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
        '{"type":"x/\\udc00","seq":2,"time":0,"data":{"k\\udbff":"v"}}',
    ])


@pytest.mark.parametrize("argv", [["messages"], ["messages", "--seqs"], ["stats", "--json"], ["check", "--json"],
                                  ["page"], ["assemble"]], ids=" ".join)
def test_json_outputs_keep_a_lone_surrogate_escape_byte_for_byte(tmp_path: Path, capsys: Any,
                                                                 argv: list[str]) -> None:
    path = _surrogate_log(tmp_path)
    assert main([argv[0], str(path), *argv[1:]]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    out = captured.out
    json.loads(out)  # valid JSON to JSON.parse's rules (Python's json takes lone surrogates too)
    if argv[0] in ("messages", "page", "assemble"):
        assert "hi " + LONE + " there \\\\ud800 not one" in out  # the escape kept, the escaped backslash too
    if argv[0] == "stats":
        assert '"x/\\udc00"' in out


def test_format_json_puts_every_escape_back() -> None:
    data = b'{"a":"x\\ud800y\\\\ud800","b":[1,"\\udc00"],"c":"\\ud83d\\ude00"}'
    assert format_json(data) == b'{\n  "a": "x\\ud800y\\\\ud800",\n  "b": [\n    1,\n    "\\udc00"\n  ],\n' \
                                b'  "c": "\\ud83d\\ude00"\n}'


@pytest.mark.parametrize("call_id", ['["a"]', '{"a":1}', "7", "null"])
def test_repair_warns_about_a_call_id_of_the_wrong_type(tmp_path: Path, capsys: Any, call_id: str) -> None:
    path = _write(tmp_path / "c.jsonl", [
        '{"type":"session","id":"x"}',
        '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}',
        '{"type":"step/start","seq":1,"time":0,"data":{"turn":1,"step":1}}',
        '{"type":"tool/call","seq":2,"time":0,"data":{"turn":1,"step":1,"callId":' + call_id + ',"name":"f"}}',
        '{"type":"tool/result","seq":3,"time":0,"data":{"turn":1,"step":1,"callId":' + call_id + '}}',
        '{"type":"tool/call","seq":4,"time":0,"data":{"turn":1,"step":1,"callId":"ok","name":"f"}}',
    ])
    out = tmp_path / "r.jsonl"
    assert main(["repair", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path}: warning: seq 2: tool/call callId is not a string" in err, err
    closers = [json.loads(line) for line in out.read_text().splitlines()[6:]]
    assert [c["type"] for c in closers] == ["tool/result", "step/end", "turn/end"]
    assert closers[0]["data"]["message"]["source"] == {"kind": "tool", "callId": "ok"}
