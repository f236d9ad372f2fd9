"""Reading runs of delta lines straight into rows (``LogParser(pack_deltas=True)``, what a local file in the browser
uses) gives exactly what the line-by-line parse gives once repacked: the same records, line count, event count,
warnings and error, at any slice size.

Hypothesis writes logs of delta lines of a few blocks (text, reasoning, tool calls with and without a name) mixed
with other events, blank and CRLF lines, and the faults the line rules catch or the typed reader must refuse:
seq that skips, seq and time written as integral floats, unsafe times and gaps, extra keys, a wrong chunk shape,
invalid JSON, a torn last line, a time jump whose gap is not a safe integer, and lines without seq or time (the
parser rebuilds them).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.browser.local import FileLoad
from assembler.chunk_rows import repack_records
from assembler.logfile import LoadResult, LogLoader
from assembler.records import MAX_SAFE_INTEGER, encode

HEADER = b'{"type":"session","version":0,"id":"d","createdAt":0,"cwd":"/"}\n'


def _chunk(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text-delta", "text-delta", "reasoning-delta", "tool-call-delta", "bad"]))
    index = draw(st.sampled_from([0, 0, 1, 1.0, 0.5]))
    text = draw(st.sampled_from(["", "a", " b", "\n", "\u00e9", '"', "\\"]))
    if kind == "tool-call-delta":
        chunk = {"type": kind, "index": index, "id": draw(st.sampled_from(["c1", "c2"])), "argumentsDelta": text}
        if draw(st.booleans()):
            chunk["name"] = draw(st.sampled_from(["bash", "edit"]))
        return chunk
    if kind == "bad":
        return {"type": "text-delta", "index": index, "text": 5}
    return {"type": kind, "index": index, "text": text}


@st.composite
def session_log(draw: Any) -> bytes:
    lines = [HEADER]
    seq, time = 0, draw(st.sampled_from([0, 1_700_000_000_000, MAX_SAFE_INTEGER - 5]))
    chunk = _chunk(draw)
    projected = draw(st.integers(0, 3)) == 0
    for _ in range(draw(st.integers(0, 40))):
        what = draw(st.sampled_from(["same"] * 8 + ["new", "event", "blank", "fault"]))
        if what == "blank":
            lines.append(draw(st.sampled_from([b"\n", b"  \n", b"\r\n"])))
            continue
        time += draw(st.sampled_from([0, 1, 7, -2, 0, 3]))
        if draw(st.integers(0, 30)) == 0:  # a jump whose gap is not a safe integer, though both times are
            time = (MAX_SAFE_INTEGER - 9) * (-1 if time > 0 else 1)
        if what == "event":
            line = json.dumps({"type": "step/start", "seq": seq, "time": time, "data": {"turn": 1, "step": 1}})
        else:
            if what == "new":
                chunk = _chunk(draw)
            event: dict[str, Any] = {"type": "assistant/chunk", "seq": seq, "time": time,
                                     "data": {"turn": 1, "step": draw(st.sampled_from([1, 1, 1, 2])), "chunk": chunk}}
            for field in ("seq", "time"):  # a projected line: the parser rebuilds it (next seq, time 0)
                if projected and draw(st.integers(0, 3)) > 0:
                    del event[field]
            line = json.dumps(event)
            if what == "fault":
                fault = draw(st.sampled_from(["seq-skip", "seq-float", "time-float", "time-unsafe", "extra", "json",
                                              "type", "no-type", "type-twice"]))
                if fault == "seq-skip":
                    line = line.replace(f'"seq": {seq},', f'"seq": {seq + 2},')
                elif fault == "seq-float":
                    line = line.replace(f'"seq": {seq},', f'"seq": {seq}.0,')
                elif fault == "time-float":
                    line = line.replace(f'"time": {time},', f'"time": {time}.0,')
                elif fault == "time-unsafe":
                    line = line.replace(f'"time": {time},', f'"time": {MAX_SAFE_INTEGER + 1},')
                elif fault == "extra":
                    line = line[:-1] + ', "ignorable": true}'
                elif fault == "json":
                    line = line[:-3]
                elif fault == "no-type":
                    line = line.replace('"type": "assistant/chunk", ', "")
                elif fault == "type-twice":
                    line = line[:-1] + ', "type": "assistant/chunk"}'
                else:
                    line = line.replace('"assistant/chunk"', '"assistant/chunks"')
        seq += 1
        lines.append(line.encode() + draw(st.sampled_from([b"\n", b"\n", b"\r\n"])))
    data = b"".join(lines)
    if draw(st.integers(0, 5)) == 0:
        data = data.rstrip(b"\r\n")  # a last line without its newline (torn if it is not JSON)
    return data


def _line_by_line(data: bytes) -> LoadResult:
    loader = LogLoader(max_line_bytes=256 << 20)
    loader.feed(data)
    result = loader.finish()
    result.records[:] = list(repack_records(result.records))
    return result


def _as_rows(data: bytes, step: int) -> LoadResult:
    load = FileLoad("s.jsonl", len(data))
    for i in range(0, len(data), step):
        load.feed(data[i:i + step])
    return load.finish()


def _summary(result: LoadResult) -> tuple[Any, ...]:
    # Records compare as values (an integral float equals its int, as in JS): a file is repacked slice by slice, and
    # a gap next to a time written as 4.0 may come out as 0.0 or 0 depending on where a slice ended, as it always
    # has; the rows read straight from delta lines take integer times only.
    return (result.records, result.lines, result.event_count, result.warnings,
            None if result.error is None else (str(result.error), result.error.line, result.error.seq), result.header)


@given(session_log(), st.sampled_from([1 << 30, 4096, 97, 13, 1]))
@settings(max_examples=400, deadline=None)
def test_rows_read_straight_from_delta_lines_equal_the_repacked_line_by_line_parse(data: bytes, step: int) -> None:
    assert _summary(_as_rows(data, step)) == _summary(_line_by_line(data))


@given(session_log())
@settings(max_examples=200, deadline=None)
def test_pack_and_assemble_read_delta_runs_as_rows_with_byte_identical_output(data: bytes) -> None:
    """``pack`` and ``assemble --mode packed`` repack in one pass, so reading runs as rows changes no byte."""
    import os
    import tempfile

    from assembler.store.jsonl import SessionStream

    fd, path = tempfile.mkstemp(suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        out = []
        for pack_deltas in (False, True):
            source = SessionStream(path, pack_deltas=pack_deltas)
            records = [encode(r) for r in repack_records(source)]  # the file closes when the pass ends
            result = source.result
            out.append((records, result.lines, result.event_count, result.warnings, str(result.error)))
        assert out[0] == out[1]
    finally:
        os.unlink(path)


def test_a_long_run_of_delta_lines_is_read_as_rows_not_one_record_per_line() -> None:
    from assembler.logfile import LogParser, Record

    events = [{"type": "assistant/chunk", "seq": s, "time": 10 + s, "data": {
        "turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{s} "}}} for s in range(1000)]
    data = HEADER + b"".join(encode(e) + b"\n" for e in events)
    parser = LogParser(pack_deltas=True)
    parser.feed(data)
    parser.feed_eof()
    out = [parser.next_event() for _ in range(3)]
    assert type(out[1]) is Record and out[1].members == 1000 and out[1].line == 2
    assert "".join(out[1].value.data.fragments) == "".join(f"t{s} " for s in range(1000))  # type: ignore[union-attr]
    assert _summary(_as_rows(data, 4 << 20)) == _summary(_line_by_line(data))


def test_a_served_session_pages_the_same_from_jsonl_and_jsonl_zst(tmp_path: Any) -> None:
    """The server reads both with runs of delta lines as rows (split where the decompressed pieces end, for .zst):
    the page it sends is the same bytes."""
    from assembler.server.catalog import ServedFile
    from assembler.server.source import SessionSource
    from assembler.store import zstd
    from perf.bench_browser import unpacked_log

    data = unpacked_log(20, 20_000)
    (tmp_path / "a.jsonl").write_bytes(data)
    (tmp_path / "b.jsonl.zst").write_bytes(zstd.compress(data))
    pages = []
    for name in ("a.jsonl", "b.jsonl.zst"):
        source = SessionSource(ServedFile(tmp_path / name, tmp_path))
        source.refresh_sync()
        assert source.error is None and any(type(r) is not dict for r in source.index.records)
        pages.append(encode(source.index.session_page(None, None, None)))
    assert pages[0] == pages[1]


@pytest.mark.parametrize("line", [
    '{"type":"assistant/chunk","seq":2,"seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{CHUNK}}}',
    '{"type":"assistant/chunk","seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,'
    '"text":"z","text":"a"}}}',
    '{"type":"assistant/chunk","type":"user/message","seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{CHUNK}}}',
    '{"type":"user/message","type":"assistant/chunk","seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{CHUNK}}}',
    '{"type":"assistant/chunk","seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta",'
    '"type":"reasoning-delta","index":0,"text":"a"}}}',
    '{"seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{CHUNK}}}',  # no type at all: a fault
    '{"type":"assistant/chunk","seq":2,"time":2,"data":{"turn":1,"step":1,"chunk":{"index":0,"text":"a"}}}',
])
def test_odd_lines_in_a_run_read_the_same_either_way(line: str) -> None:
    """Duplicate keys (JSON's last one wins, for both readers), a tag given twice, a missing tag."""
    chunk = '{"type":"text-delta","index":0,"text":"a"}'
    lines = [f'{{"type":"assistant/chunk","seq":{s},"time":{s},"data":{{"turn":1,"step":1,"chunk":{chunk}}}}}'
             for s in range(6)]
    lines[2] = line.replace("{CHUNK}", chunk)
    data = HEADER + "".join(x + "\n" for x in lines).encode()
    assert _summary(_as_rows(data, 1 << 20)) == _summary(_line_by_line(data))
