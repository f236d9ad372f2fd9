"""The server's edges (issue 23 item 11): no page can frame it (``frame-ancestors 'none'``, ``X-Frame-Options``);
SIGTERM with a follower open ends the stream and the server with one line, no ``CancelledError`` traceback; a
malformed ``--allow-host``, a port outside 0-65535 and a path that does not exist are one error line before anything
starts (they were 500 for every request, an ``OverflowError`` traceback, and ``serving 0 session(s)``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ROOT

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.records import encode
from assembler.server import create_app
from perf.load_follow import HEADER, LogGenerator, append_batch


def _served(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "s.jsonl"
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, LogGenerator(1).take(100))
    return folder


@pytest.mark.parametrize("url", ["/", "/api/sessions", "/api/sessions/nope/page"])
@pytest.mark.parametrize("host", ["127.0.0.1", "evil.example"])  # a 421 carries them too
def test_no_page_can_frame_the_server(tmp_path: Path, url: str, host: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text('<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">')
    client = TestClient(create_app([_served(tmp_path / "root")], static_dir=site), raise_server_exceptions=False,
                        base_url=f"http://{host}")
    response = client.get(url)
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"


def _serve(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assembler", "serve", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("allow", ["a b:x", "a b", "name:99999", "name:", ":80", "[::1"])
def test_a_malformed_allow_host_stops_serve_before_it_starts(tmp_path: Path, allow: str) -> None:
    done = _serve(str(_served(tmp_path)), "--port", "0", "--no-static", "--allow-host", allow)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"transcript-assembler: --allow-host: not a host name or host:port: {allow!r}"
    assert "serving" not in done.stdout


def test_good_allow_hosts_are_still_accepted(tmp_path: Path) -> None:
    app = create_app([_served(tmp_path)], serve_static=False,
                     allowed_hosts=["example.test", "box.lan:8080", "[::1]:9000", "10.0.0.7", "my_host"])
    client = TestClient(app, raise_server_exceptions=False, base_url="http://box.lan:8080")
    assert client.get("/api/sessions").status_code == 200


@pytest.mark.parametrize("port", ["99999", "65536", "-1", "abc", "８０"])
def test_a_port_outside_the_range_is_one_error_line(tmp_path: Path, port: str) -> None:
    done = _serve(str(_served(tmp_path)), "--port", port, "--no-static")
    assert done.returncode == 2 and "Traceback" not in done.stderr and "OverflowError" not in done.stderr
    assert "argument --port: a port is a number from 0 to 65535" in done.stderr


def test_a_path_that_does_not_exist_is_an_error_not_zero_sessions(tmp_path: Path) -> None:
    done = _serve(str(_served(tmp_path / "real")), str(tmp_path / "nonexistent"), "--port", "0", "--no-static")
    assert done.returncode == 2 and "serving" not in done.stdout
    assert done.stderr.strip() == (f"transcript-assembler: serve: {tmp_path / 'nonexistent'}: no such file or folder "
                                   "(nothing to serve)")


def test_sigterm_with_a_follower_open_ends_the_stream_and_the_server_with_one_line(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "assembler", "serve", str(_served(tmp_path)), "--port", "0",
                                "--no-static"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving 1 session(s) at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].strip()
        seen: dict[str, Any] = {"snapshot": threading.Event(), "ended": False, "error": None}

        def follow() -> None:
            try:
                with httpx.stream("GET", f"{url}api/sessions/s/follow", timeout=30) as response:
                    for chunk in response.iter_bytes():
                        if b'"snapshot"' in chunk or b"cursor" in chunk:
                            seen["snapshot"].set()
                seen["ended"] = True
            except Exception as exc:
                seen["error"] = repr(exc)
                seen["snapshot"].set()

        client = threading.Thread(target=follow, daemon=True)
        client.start()
        assert seen["snapshot"].wait(30), "no snapshot"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        client.join(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert "Traceback" not in stderr and "CancelledError" not in stderr and "ERROR" not in stderr, stderr
    assert stderr.strip().splitlines() == ["transcript-assembler: serve stopped by SIGTERM"], stderr
    assert process.returncode == 128 + signal.SIGTERM
    assert seen["ended"] and seen["error"] is None, seen
