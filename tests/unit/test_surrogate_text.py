"""Text made of UTF-16 code units: a model's deltas can split a surrogate pair (an emoji) between two events, and a
JSON text may hold a surrogate with no partner. JSON outputs keep the escapes byte for byte; what a reader gets
(HTML, Markdown, the terminal, search) shows the pair as its character and a lone surrogate as U+FFFD; nothing
ends in a traceback, on the scalar path, in a packed row, through SQLite or in the viewer's API."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from assembler.browser import Viewer
from assembler.cli import main
from assembler.jsontext import convert, reader_text, utf8_text
from assembler.records import StorageRow, convert_storage_row

HEADER = b'{"type":"session","id":"s","version":1}\n'
START = b'{"type":"step/start","seq":0,"time":0,"data":{"turn":1,"step":1}}\n'


def _delta(seq: int, text: bytes) -> bytes:
    return (b'{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":1,"step":1,"chunk":'
            b'{"type":"text-delta","index":0,"text":"%s"}}}\n' % (seq, seq, text))


SCALAR = HEADER + START + _delta(1, b"h\\ud83d") + _delta(2, b"\\ude00i") + _delta(3, b" \\udc00!")
PACKED = HEADER + START + (b'{"type":"text-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,'
                           b'"dt":[1,1],"texts":["h\\ud83d","\\ude00i"," \\udc00!"]}}\n')
SHOWN = "h\U0001f600i \ufffd!"  # the pair joined, the lone low surrogate replaced


def test_reader_text_joins_pairs_and_replaces_lone_surrogates() -> None:
    assert reader_text("h\ud83d" + "\ude00i \udc00!") == SHOWN
    assert reader_text("plain") == "plain"
    assert utf8_text("a\ud800") == "a\ufffd".encode()
    assert utf8_text("é") == "é".encode()


def test_convert_keeps_surrogates_in_struct_fields() -> None:
    value = {"type": "text-chunks", "seq0": 1, "time0": 1,
             "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["h\ud83d", "\ude00i"]}}
    row = convert_storage_row(value)
    assert row.data.texts == ["h\ud83d", "\ude00i"]  # type: ignore[union-attr]
    assert convert(value, StorageRow, strict=True).data.texts == ["h\ud83d", "\ude00i"]
    with pytest.raises(msgspec.ValidationError):
        convert({**value, "seq0": "1"}, StorageRow, strict=True)  # still validated


@pytest.mark.parametrize("data", [SCALAR, PACKED], ids=["scalar", "packed"])
def test_every_command_reads_a_split_pair(tmp_path: Path, data: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(data)
    for suffix in (".md", ".html"):
        out = tmp_path / f"out{suffix}"
        assert main(["export", str(src), "-o", str(out)]) == 0
        assert SHOWN in out.read_text(encoding="utf-8")
    assert main(["assemble", str(src), "--digest"]) == 0
    digest = capsys.readouterr().out
    assert main(["assemble", str(src)]) == 0
    assert "\\ud83d\\ude00i \\udc00!" in capsys.readouterr().out  # JSON keeps the code units
    db = tmp_path / "s.sqlite"
    assert main(["convert", str(src), str(db)]) == 0
    capsys.readouterr()
    assert main(["assemble", str(db), "--digest"]) == 0
    assert capsys.readouterr().out == digest  # through SQLite and back, the same transcript
    assert main(["stats", str(src)]) == 0


def test_scalar_and_packed_fold_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    digests = []
    for name, data in (("a.jsonl", SCALAR), ("b.jsonl", PACKED)):
        (tmp_path / name).write_bytes(data)
        assert main(["assemble", str(tmp_path / name), "--digest"]) == 0
        digests.append(capsys.readouterr().out)
    assert digests[0] == digests[1]


def test_a_surrogate_event_type_prints_and_is_refused_by_sqlite(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.jsonl"
    src.write_bytes(SCALAR + b'{"type":"odd\\ud800","seq":4,"time":4,"data":{}}\n')
    assert main(["stats", str(src)]) == 0
    assert "odd\ufffd" in capsys.readouterr().out
    assert main(["convert", str(src), str(tmp_path / "s.sqlite")]) == 1
    err = capsys.readouterr().err
    assert "seq 4" in err and "surrogate" in err and "Traceback" not in err
    assert not (tmp_path / "s.sqlite").exists()  # nothing half-written


@pytest.mark.parametrize("data", [SCALAR, PACKED], ids=["scalar", "packed"])
def test_viewer_renders_exports_and_finds_the_character(data: bytes) -> None:
    viewer = Viewer()
    viewer.file_begin("s.jsonl", len(data))
    viewer.file_feed(data)
    update = json.loads(viewer.file_finish(all_records=True))
    assert update.get("error") is None
    keys = [n["key"] for n in update["nodes"]]
    html = viewer.render(keys)
    assert b"h\\ud83d\\ude00i" in html  # escaped: JSON.parse joins the pair, as the page does
    assert "h\U0001f600i" in json.dumps(json.loads(html), ensure_ascii=False)
    assert json.loads(viewer.search("\U0001f600"))["total"] == 1
    assert json.loads(viewer.search("H\U0001f600I"))["total"] == 1
    text = json.loads(viewer.export(fmt="md", scope="window", title="t"))["text"]
    assert reader_text(text).count(SHOWN) == 1
