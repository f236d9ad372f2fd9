"""Issue 9 items 6 and 7: deep nesting is a line error everywhere; lone surrogates load and round-trip byte-exact."""

from __future__ import annotations

import warnings
from pathlib import Path

import msgspec
import pytest

from assembler.cli import main
from assembler.jsontext import MAX_DEPTH, NestingError, check_depth, decode_json, encode_with
from assembler.logfile import parse_session_bytes
from assembler.records import decode_page, encode
from assembler.store.jsonl import read_session
from perf.demo import write_demo

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from assembler.server import create_app

HEADER = b'{"type":"session","id":"s","version":1}\n'


def _deep(levels: int) -> bytes:
    return b'{"type":"note","seq":0,"time":0,"data":' + b"[" * levels + b"]" * levels + b"}\n"


def test_check_depth_counts_brackets_outside_strings_only() -> None:
    check_depth(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    check_depth(b'["' + b"[" * 5000 + b'"]')  # brackets inside a string are text
    with pytest.raises(NestingError, match="nesting too deep"):
        check_depth(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    with pytest.raises(NestingError):
        check_depth(b'{"a\\"[":' * (MAX_DEPTH + 1))


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 5000, 100_000])
def test_deep_line_is_a_fault_naming_its_line(levels: int) -> None:
    result = parse_session_bytes(HEADER + b'{"type":"a","seq":0,"time":0}\n' + _deep(levels).replace(b'"seq":0',
                                                                                                      b'"seq":1'))
    assert result.error is not None and result.error.line == 3
    assert "nesting too deep" in result.error.message
    assert result.event_count == 1  # the line before it is kept


def test_stats_and_assemble_say_nesting_too_deep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(HEADER + _deep(20_000))
    for argv in (["stats", str(path)], ["assemble", str(path)], ["pack", str(path)], ["check", str(path)]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"{path}:2: error: nesting too deep" in err, argv
        assert "Traceback" not in err and "RecursionError" not in err


def test_session_list_and_page_survive_a_deep_line(tmp_path: Path) -> None:
    (tmp_path / "deep.jsonl").write_bytes(HEADER + b'{"type":"a","seq":0,"time":0}\n' + _deep(50_000).replace(
        b'"seq":0', b'"seq":1'))
    client = TestClient(create_app([tmp_path], serve_static=False), raise_server_exceptions=False,
                        base_url="http://127.0.0.1")
    listing = client.get("/api/sessions")
    assert listing.status_code == 200
    page = client.get("/api/sessions/deep/page")
    assert page.status_code == 200
    assert "nesting too deep" in page.headers.get("X-Session-Error", "")
    assert len(page.json()["records"]) == 1


def test_wire_page_deeper_than_the_cap_is_a_decode_error() -> None:
    raw = b'{"records":[{"type":"event","event":{"type":"a","seq":0,"time":0,"data":' + b"[" * 9000 + b"]" * 9000
    with pytest.raises(Exception, match="nesting too deep"):
        decode_page(raw + b"}}],\"hasMore\":false}")



@pytest.mark.parametrize("escapes", [b"", b'\\\\\\"'])
def test_deep_nesting_after_a_long_string_full_of_brackets_is_caught(escapes: bytes) -> None:
    # Brackets in strings are text: ``check_depth`` skips them without walking every string, and still finds the
    # nesting hidden after them, here in a field no Struct knows (msgspec would skip it unchecked).
    text = b'"' + (b"[{" + escapes) * 50_000 + b'"'
    def page(levels: int) -> bytes:
        event = (b'{"type":"a","seq":0,"time":0,"data":{"s":' + text + b',"t":[' + text + b"," + text
                 + b'],"unknown":' + b"[" * levels + b"]" * levels + b"}}")
        return b'{"records":[{"type":"event","event":' + event + b'}],"hasMore":false}'
    with pytest.raises(Exception, match="nesting too deep"):
        decode_page(page(MAX_DEPTH + 8))
    with pytest.raises(NestingError):
        check_depth(text + b"," + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    check_depth(b"[" + text + b"," + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"]")
    assert len(decode_page(page(MAX_DEPTH - 8)).records) == 1

LONE = (b'{"type":"user/message","seq":0,"time":5,"data":{"text":"a\\ud800b","\\udfff":["\\ud83d",'
        b'"\xf0\x9f\x98\x80",1.0]}}\n')


def test_lone_surrogates_decode_and_encode_back_to_the_same_bytes() -> None:
    value = decode_json(LONE.rstrip(b"\n"), msgspec.json.decode)
    assert value["data"]["text"] == "a\ud800b" and "\udfff" in value["data"]
    assert encode(value) == LONE.rstrip(b"\n")
    assert encode_with(msgspec.json.encode, ["x"]) == b'["x"]'


def test_lone_surrogate_line_loads_and_packs_byte_exact(tmp_path: Path) -> None:
    src, out, flat = tmp_path / "s.jsonl", tmp_path / "out.jsonl", tmp_path / "flat.jsonl"
    later = b'{"type":"note","seq":1,"time":6,"data":"after"}\n'
    src.write_bytes(HEADER + LONE + later)
    result = read_session(src)
    assert result.ok and result.event_count == 2  # the line and everything after it load
    assert main(["pack", str(src), "-o", str(out)]) == 0
    assert out.read_bytes() == src.read_bytes()
    assert main(["unpack", str(src), "-o", str(flat)]) == 0
    assert flat.read_bytes() == src.read_bytes()


def test_lone_surrogate_in_a_row_and_through_assemble(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo = tmp_path / "demo.jsonl"
    write_demo(str(demo))
    data = demo.read_bytes()
    assert b'"Let"' in data and data.count(b"Let me") >= 2  # a text row and the messages that repeat it
    path = tmp_path / "lone.jsonl"
    path.write_bytes(data.replace(b'"Let"', b'"Let\\ud800"').replace(b"Let me", b"Let\\ud800 me"))
    assert read_session(path).ok
    assert main(["assemble", str(path), "--mode", "scalar"]) == 0
    scalar = capsys.readouterr().out
    assert main(["assemble", str(path)]) == 0
    assert capsys.readouterr().out == scalar and "\\ud800" in scalar
    page = TestClient(create_app([tmp_path], serve_static=False), raise_server_exceptions=False,
                      base_url="http://127.0.0.1").get("/api/sessions/lone/page")
    assert page.status_code == 200 and b"\\ud800" in page.content
    assert decode_page(page.content).records
