"""Issue 9 item 5: a Definition's type fault on a malformed event is an ``InputFault`` (the event shown by the
fallback Definition, a warning naming its seq), never a traceback: in ``assemble``, ``export``, the live path
(``append``) and the browser edge; wrongly typed envelope fields are line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembler.browser import Viewer
from assembler.cli import main
from assembler.conversation import ConversationAssembler
from assembler.history import MessageIndex
from assembler.logfile import parse_session_bytes
from assembler.records import EventRecord, SessionEvent
from assembler.transcript import assemble_checked, canonical_json, transcript
from definitions import default_definitions
from perf.demo import write_demo

BAD_INDEX = b'"seq":3,"time":1767225600186,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,'


def _demo_with(tmp_path: Path, old: bytes, new: bytes) -> Path:
    demo = tmp_path / "demo.jsonl"
    write_demo(str(demo))
    data = demo.read_bytes()
    assert data.count(old) == 1
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data.replace(old, new))
    return path


def _seq_of(path: Path, marker: bytes) -> int:
    line = next(x for x in path.read_bytes().splitlines() if marker in x)
    return int(json.loads(line)["seq"])


def test_assemble_shows_the_event_raw_and_warns_naming_its_seq(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _demo_with(tmp_path, BAD_INDEX, BAD_INDEX.replace(b'"index":0', b'"index":[0]'))
    seq = _seq_of(path, b'"index":[0]')
    for mode in ("packed", "scalar"):
        assert main(["assemble", str(path), "--mode", mode]) == 0
        out, err = capsys.readouterr()
        assert f"{path}: warning: seq {seq}: assistant/chunk event not understood (TypeError" in err
        assert "Traceback" not in err
        chat = json.loads(out)["chat"]
        raw = [n for n in chat if n["kind"] == "event" and n["data"]["seq"] == seq]
        assert len(raw) == 1 and raw[0]["data"]["type"] == "assistant/chunk"
    out_html = tmp_path / "out.html"
    assert main(["export", str(path), "-o", str(out_html)]) == 0
    assert f"warning: seq {seq}:" in capsys.readouterr().err


def test_fault_found_while_following_rebuilds_the_window() -> None:
    result = parse_session_bytes(_demo_bytes())
    records = MessageIndex(result.records).session_page(None, None, None, scalar=True).records
    asm = ConversationAssembler(default_definitions())
    asm.replace_window(records[:-1], False)  # all but the final turn/end: the turn is still open
    assert asm.flush() is not None and asm.faults == []
    last = records[-2].event
    bad = EventRecord(SessionEvent("assistant/chunk", last.seq + 1, last.time,
                                   {"turn": 2, "step": 1, "chunk": {"type": "usage", "usage": {"inputTokens": "x"}}}))
    end = EventRecord(SessionEvent("turn/end", last.seq + 2, last.time, {"turn": 2, "reason": {"kind": "completed"}}))
    asm.append(bad)
    assert [f.seq for f in asm.faults] == [bad.event.seq]
    asm.append(end)
    live = asm.flush()
    assert live is not None
    whole, faults = assemble_checked([*records[:-1], bad, end], False, default_definitions())
    assert [str(f) for f in faults] == [str(f) for f in asm.faults]
    assert canonical_json(transcript(live)) == canonical_json(whole)
    assert any(n.kind == "event" and n.anchorSeq == bad.event.seq for n in whole.chat)


def _demo_bytes() -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "d.jsonl"
        write_demo(str(path))
        return path.read_bytes()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("ignorable", "false", "field 'ignorable' must be true when present, got False"),
    ("ignorable", '"yes"', "field 'ignorable' must be true"),
    ("sourceEventSeqs", '"1,2"', "field 'sourceEventSeqs' must be a list of safe integers >= 0"),
    ("sourceEventSeqs", "[1.5]", "field 'sourceEventSeqs' must be a list"),
])
def test_wrongly_typed_envelope_fields_are_line_errors(field: str, value: str, message: str) -> None:
    data = (b'{"type":"session","id":"s"}\n{"type":"a","seq":0,"time":0}\n'
            + f'{{"type":"b","seq":1,"time":0,"{field}":{value}}}\n'.encode())
    result = parse_session_bytes(data)
    assert result.error is not None and result.error.line == 3 and result.error.seq == 1
    assert message in result.error.message and result.event_count == 1


def test_browser_entry_points_answer_an_internal_error_instead_of_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    viewer = Viewer()

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(viewer.window, "replace", broken)
    data = _demo_bytes()
    viewer.file_begin("d.jsonl", len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish())
    assert update["error"]["internal"] is True and update["error"]["type"] == "ZeroDivisionError"
    assert update["error"]["message"] == "boom"
    with pytest.raises(RuntimeError, match="before file_begin"):
        Viewer().file_feed(b"")  # a call out of order is the worker's bug: it still raises


def test_browser_reports_input_faults_beside_the_update(tmp_path: Path) -> None:
    path = _demo_with(tmp_path, BAD_INDEX, BAD_INDEX.replace(b'"index":0', b'"index":{"a":1}'))
    data = path.read_bytes()
    viewer = Viewer()
    viewer.file_begin("bad.jsonl", len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish(all_records=True))
    assert update.get("error") is None
    assert [f["seq"] for f in update["inputFaults"]] == [_seq_of(path, b'"index":{"a":1}')]
