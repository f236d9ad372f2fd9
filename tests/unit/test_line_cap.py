"""Issue 9 item 9: a line longer than the cap (``--max-line-bytes``, default 256 MiB) is a clear error naming it in
every reader, never a MemoryError; ``stats /dev/zero`` ends with a message."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from assembler.cli import build_parser, main
from assembler.logfile import DEFAULT_MAX_LINE_BYTES, LogLoader

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from assembler.server import create_app

ROOT = Path(__file__).resolve().parents[2]
HEADER = b'{"type":"session","id":"s"}\n'


def _log(tmp_path: Path, text_bytes: int) -> Path:
    path = tmp_path / "long.jsonl"
    path.write_bytes(HEADER + b'{"type":"a","seq":0,"time":0}\n'
                     + b'{"type":"b","seq":1,"time":0,"data":"' + b"x" * text_bytes + b'"}\n')
    return path


def test_default_cap_is_256_mib_and_every_command_takes_the_flag() -> None:
    assert DEFAULT_MAX_LINE_BYTES == 256 << 20
    parser = build_parser()
    for command in ("stats", "pack", "unpack", "assemble", "export", "page", "convert", "messages", "check",
                    "repair", "serve"):
        argv = [command, "--max-line-bytes", "64K", "f"] + (["o"] if command == "convert" else []) + (
            ["-o", "o"] if command in ("repair", "export") else [])
        assert parser.parse_args(argv).max_line_bytes == 64 << 10, command
    with pytest.raises(SystemExit):
        parser.parse_args(["stats", "f", "--max-line-bytes", "1_0"])


@pytest.mark.parametrize("command", ["stats", "pack", "assemble", "check", "unpack"])
def test_a_line_over_the_cap_is_an_error_naming_it(tmp_path: Path, command: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = _log(tmp_path, 5000)
    assert main([command, str(path), "--max-line-bytes", "4K"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3: error: line is longer than 4096 bytes" in err and "Traceback" not in err
    assert main([command, str(path), "--max-line-bytes", "8K"]) == 0
    capsys.readouterr()


def test_the_cap_holds_for_a_line_fed_in_small_slices() -> None:
    loader = LogLoader(max_line_bytes=1000)
    loader.feed(HEADER)
    for _ in range(100):  # no newline: the buffer stops growing at the cap
        loader.feed(b"y" * 97)
    result = loader.finish()
    assert result.error is not None and result.error.line == 2 and "longer than 1000 bytes" in result.error.message
    assert loader.parser.buffered == 0


def test_stats_of_dev_zero_ends_with_a_message() -> None:
    run = subprocess.run([sys.executable, "-m", "assembler", "stats", "/dev/zero", "--max-line-bytes", "8M"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert "/dev/zero: error: not a known session log (not JSON); tried: " in run.stderr
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr


def test_server_reports_a_line_over_its_cap(tmp_path: Path) -> None:
    _log(tmp_path, 5000)
    client = TestClient(create_app([tmp_path], serve_static=False, max_line_bytes=4096),
                        raise_server_exceptions=False, base_url="http://127.0.0.1")
    page = client.get("/api/sessions/long/page")
    assert page.status_code == 200 and len(page.json()["records"]) == 1
    assert "line 3: line is longer than 4096 bytes" in page.headers["X-Session-Error"]


def test_zstd_decodes_in_bounded_pieces_and_a_bomb_line_hits_the_cap(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from assembler.store import zstd

    text = HEADER + b'{"type":"a","seq":0,"time":0,"data":"' + b"x" * (64 << 20) + b'"}\n'
    packed = zstd.compress(text)
    assert len(packed) < (64 << 20) // 100  # a bomb: a small file, a huge line
    pieces = list(zstd.ZstdDecoder(lines=True).pieces(packed))
    assert b"".join(pieces) == text and len(pieces) > 4
    assert max(map(len, pieces)) <= (64 << 20) // 4  # never the whole stream at once
    path = tmp_path / "bomb.jsonl.zst"
    path.write_bytes(packed)
    assert main(["stats", str(path), "--max-line-bytes", "1M"]) == 1
    assert f"{path}:2: error: line is longer than 1048576 bytes" in capsys.readouterr().err
