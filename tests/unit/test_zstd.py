"""Damaged zstd is an error, never a short success (issue 9 item 3): one decoder, both backends, every reader.

The decoder runs here on both backends: ``zstandard`` (CPython 3.11-3.13) and the ``compression.zstd`` API (Python
3.14 and Pyodide), which ``backports.zstd`` provides on 3.11. The browser test ``test_bad_input.py`` runs the
Pyodide build of it on the same kinds of damage.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import zstandard

from assembler.browser.local import FileLoad
from assembler.cli import main
from assembler.store import zstd
from assembler.store.jsonl import read_session
from assembler.store.zstd import ZstdDataError, ZstdDecoder, ZstdTruncatedError

try:
    import backports.zstd as std_api
except ImportError:  # Python 3.14+: the standard library itself
    import compression.zstd as std_api  # type: ignore[import-not-found, no-redef, unused-ignore]

BACKENDS: list[ModuleType | None] = [None, std_api]
"""None: the module's own pick (zstandard on 3.11); ``std_api``: the ``compression.zstd`` API."""
BACKEND_IDS = ["default", "compression.zstd-api"]


def session_lines(n: int) -> list[bytes]:
    header = {"type": "session", "id": "z"}
    events = [{"type": "x/e", "seq": i, "time": i, "data": {"k": i, "pad": "p" * (i % 50)}} for i in range(n)]
    return [json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in [header, *events]]


def frames_of(lines: list[bytes], per_frame: int) -> list[bytes]:
    """One zstd frame per ``per_frame`` lines (as a writer flushing whole frames per batch makes)."""
    return [zstandard.ZstdCompressor().compress(b"".join(lines[i:i + per_frame]))
            for i in range(0, len(lines), per_frame)]


def decode(data: bytes, module: ModuleType | None, step: int) -> tuple[bytes, Exception | None]:
    decoder = ZstdDecoder(lines=True, module=module)
    out = []
    try:
        for i in range(0, len(data), step):
            out.append(decoder.feed(data[i:i + step]))
        decoder.finish()
    except zstd.ZstdStreamError as exc:
        return b"".join(out), exc
    return b"".join(out), None


@pytest.fixture(params=BACKENDS, ids=BACKEND_IDS)
def backend(request: pytest.FixtureRequest) -> ModuleType | None:
    return request.param  # type: ignore[no-any-return]


@pytest.mark.parametrize("step", [1, 97, 1 << 20])
def test_whole_streams_of_several_frames_decode_exactly(backend: ModuleType | None, step: int) -> None:
    lines = session_lines(3000)
    skippable = b"\x5a\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"  # a skippable frame is a valid frame
    data = b"".join(frames_of(lines, 700)[:2]) + skippable + b"".join(frames_of(lines, 700)[2:])
    out, error = decode(data, backend, step)
    assert error is None and out == b"".join(lines)


@pytest.mark.parametrize("step", [1, 4096, 1 << 20])
def test_a_frame_cut_off_is_truncation_keeping_what_came_before(backend: ModuleType | None, step: int) -> None:
    lines = session_lines(6000)
    frames = frames_of(lines, 1000)
    whole = b"".join(frames[:3])
    data = whole + frames[3][: len(frames[3]) // 2]
    out, error = decode(data, backend, step)
    assert isinstance(error, ZstdTruncatedError)
    assert out.startswith(b"".join(lines[:3000]))  # every frame before the cut, whole
    assert b"".join(lines).startswith(out)  # and nothing that was not in the file
    complete = out.count(b"\n")
    assert str(error) == f"truncated zstd stream after {len(data)} bytes / line {complete} (the last frame is cut off)"


def test_a_missing_last_frame_is_truncation(backend: ModuleType | None) -> None:
    lines = session_lines(3000)
    text = b"".join(lines)
    cut = len(text) * 2 // 3 + 5  # frames split mid-line, as a streaming writer flushing by size does
    frames = [zstandard.ZstdCompressor().compress(text[:cut]), zstandard.ZstdCompressor().compress(text[cut:])]
    out, error = decode(frames[0], backend, 4096)
    assert isinstance(error, ZstdTruncatedError)
    assert out == text[:cut]
    complete = text[:cut].count(b"\n")
    assert f"/ line {complete} (the data stops inside line {complete + 1}: a frame is missing)" in str(error)


@pytest.mark.parametrize("garbage", [b"hello world", b"\x00", b"{\"type\":\"x\"}\n" * 40])
def test_garbage_after_a_valid_frame_is_an_error_after_everything_valid(backend: ModuleType | None,
                                                                        garbage: bytes) -> None:
    lines = session_lines(500)
    frame = zstandard.ZstdCompressor().compress(b"".join(lines))
    out, error = decode(frame + garbage, backend, 1 << 20)
    assert isinstance(error, ZstdDataError)
    assert out == b"".join(lines)
    assert str(error).startswith(f"garbage after the last zstd frame after {len(frame)} bytes / line {len(lines)}")


def test_a_corrupt_frame_and_non_zstd_data_are_errors(backend: ModuleType | None) -> None:
    frame = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(b"".join(session_lines(300))))
    frame[len(frame) // 2] ^= 0xFF
    _, error = decode(bytes(frame), backend, 1 << 20)
    assert isinstance(error, ZstdDataError)
    _, error = decode(b'{"type":"session"}\n', backend, 1 << 20)
    assert isinstance(error, ZstdDataError) and str(error).startswith("not zstd data after 0 bytes")


def test_an_empty_stream_is_truncation_not_an_empty_file(backend: ModuleType | None) -> None:
    _, error = decode(b"", backend, 1)
    assert isinstance(error, ZstdTruncatedError) and "no zstd frame" in str(error)


def test_our_own_writer_round_trips_through_both_backends(tmp_path: Path, backend: ModuleType | None) -> None:
    lines = session_lines(2000)
    path = tmp_path / "s.jsonl.zst"
    with open(path, "wb") as raw, zstd.compressing_writer(raw) as stream:
        stream.write(b"".join(lines))
    out, error = decode(path.read_bytes(), backend, 1 << 16)
    assert error is None and out == b"".join(lines)


# -- every reader: the CLI (store.jsonl), the browser edge (browser.local) ---------------------------------------


def damaged_file(tmp_path: Path) -> tuple[Path, int, int]:
    """A .jsonl.zst of 4 whole frames, then half a frame: (path, its size, the complete lines decoded)."""
    lines = session_lines(4000)
    frames = frames_of(lines, 801)
    data = b"".join(frames[:4]) + frames[4][: len(frames[4]) // 2]
    path = tmp_path / "cut.jsonl.zst"
    path.write_bytes(data)
    out, _ = decode(data, None, 1 << 20)
    return path, len(data), out.count(b"\n")


def test_cli_reports_the_truncated_stream_keeps_the_valid_part_and_exits_1(tmp_path: Path, capsys: Any) -> None:
    path, size, lines = damaged_file(tmp_path)
    result = read_session(path)
    assert not result.ok and result.header is not None
    assert result.event_count == lines - 1  # every complete line before the cut (the header is line 1)
    assert main(["stats", "--json", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"{path}: error: truncated zstd stream after {size} bytes / line {lines}" in captured.err
    assert json.loads(captured.out)["events"] == lines - 1
    assert "empty file" not in captured.err and "Traceback" not in captured.err


def test_cli_pack_of_a_damaged_stream_writes_the_valid_part_and_exits_1(tmp_path: Path) -> None:
    path, _, lines = damaged_file(tmp_path)
    out = tmp_path / "out.jsonl"
    assert main(["pack", str(path), "-o", str(out)]) == 1
    assert len(out.read_bytes().splitlines()) == lines


def test_a_stream_cut_inside_the_first_frame_is_not_an_empty_file(tmp_path: Path, capsys: Any) -> None:
    data = zstandard.ZstdCompressor().compress(b"".join(session_lines(100)))
    path = tmp_path / "tiny.jsonl.zst"
    path.write_bytes(data[: len(data) // 2])
    assert main(["stats", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: error: truncated zstd stream after {len(data) // 2} bytes / line 0" in err
    assert "empty file" not in err


@pytest.mark.parametrize("slice_size", [1000, 4 << 20])
def test_browser_file_load_reports_damage_and_keeps_the_valid_part(tmp_path: Path, slice_size: int) -> None:
    path, size, lines = damaged_file(tmp_path)
    data = path.read_bytes()
    load = FileLoad(path.name, len(data))
    for i in range(0, len(data), slice_size):
        load.feed(memoryview(data)[i:i + slice_size])
    result = load.finish()
    outcome = load.outcome(result)
    assert outcome["error"]["message"].startswith(f"truncated zstd stream after {size} bytes / line {lines}")
    assert result.event_count == lines - 1


def test_browser_file_load_reports_garbage_after_the_frames() -> None:
    lines = session_lines(300)
    data = zstandard.ZstdCompressor().compress(b"".join(lines)) + b"trailing junk"
    load = FileLoad("junk.jsonl.zst", len(data))
    load.feed(data)
    result = load.finish()
    assert load.outcome(result)["error"]["message"].startswith("garbage after the last zstd frame")
    assert result.event_count == len(lines) - 1


def test_the_zstd_module_loads_without_sqlite3(tmp_path: Path) -> None:
    """The browser edge loads without sqlite3 (it is imported when a SQLite file or a published site's index
    needs it): it imports the decoder from ``assembler.store`` without ``store.sqlite``."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['sqlite3'] = None\n"
            "import assembler.browser, assembler.store.zstd\n"
            "assert 'assembler.store.sqlite' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
