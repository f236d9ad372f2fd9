"""The server's security edges (issue 9 items 12, 13 and 17): files checked against their roots at every open,
the Host check against DNS rebinding, the warning off loopback, and strict integers in queries."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette 1.10 nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.records import encode
from assembler.server import create_app
from assembler.server.confine import OutsideRootError, open_in_root
from assembler.server.hosts import HostCheck
from perf.load_follow import HEADER, LogGenerator, append_batch

ROOT = Path(__file__).resolve().parents[2]
LOCAL = "http://127.0.0.1"


def write_log(path: Path, n: int = 200) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, LogGenerator(0).take(n))


@pytest.fixture()
def served(tmp_path: Path) -> tuple[Path, Path]:
    """(the served folder holding ``s.jsonl``, a secret file outside it)."""
    root = tmp_path / "root"
    write_log(root / "s.jsonl")
    secret = tmp_path / "secret.jsonl"
    secret.write_bytes(encode({"type": "session", "id": "SECRET"}) + b"\n")
    return root, secret


def client(root: Path, base_url: str = LOCAL, **kw: Any) -> TestClient:
    return TestClient(create_app([root], serve_static=False, **kw), raise_server_exceptions=False,
                      base_url=base_url)


# -- item 12: at-open root checks ----------------------------------------------------------------------------------


def swap_for_symlink(path: Path, target: Path) -> None:
    path.unlink()
    path.symlink_to(target)


@pytest.mark.parametrize("route", ["page", "raw", "follow"])
def test_a_file_swapped_for_a_symlink_after_the_scan_is_refused(served: tuple[Path, Path], route: str) -> None:
    root, secret = served
    c = client(root)
    assert c.get("/api/sessions").status_code == 200  # scanned, and (for the list) opened once
    swap_for_symlink(root / "s.jsonl", secret)
    response = c.get(f"/api/sessions/s/{route}")
    assert response.status_code in (403, 404)
    assert b"SECRET" not in response.content
    assert response.json()["error"] in ("forbidden", "not-found")


def test_a_folder_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_log(root / "sub" / "s.jsonl")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.jsonl").write_bytes(encode({"type": "session", "id": "SECRET"}) + b"\n")
    c = client(root)
    assert c.get("/api/sessions/sub/s/raw").status_code == 200
    os.rename(root / "sub", tmp_path / "old-sub")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    response = c.get("/api/sessions/sub/s/raw")
    assert response.status_code == 403 and b"SECRET" not in response.content
    assert "outside the served folders" in response.json()["detail"]


def test_a_fifo_put_in_place_is_refused_without_blocking(served: tuple[Path, Path]) -> None:
    root, _ = served
    c = client(root)
    (root / "s.jsonl").unlink()
    os.mkfifo(root / "s.jsonl")
    assert c.get("/api/sessions/s/raw").status_code in (403, 404)
    real_root = root.resolve()
    with pytest.raises(OutsideRootError, match="no longer a regular file"):  # O_NONBLOCK: no writer needed
        open_in_root(real_root / "s.jsonl", real_root)


def test_open_in_root_accepts_the_file_and_names_what_it_refuses(served: tuple[Path, Path]) -> None:
    root, secret = served
    real_root = root.resolve()
    with open_in_root(real_root / "s.jsonl", real_root) as stream:
        assert stream.read(20).startswith(b'{"type":"session"')
    with pytest.raises(OutsideRootError, match="refused: the session path is outside the served folders"):
        open_in_root(secret.resolve(), real_root)
    link = real_root / "link.jsonl"
    link.symlink_to(real_root / "s.jsonl")  # even a link inside the root: the registry stores resolved paths
    with pytest.raises(OutsideRootError, match="a symbolic link replaced a file"):
        open_in_root(link, real_root)


def test_a_served_single_file_is_its_own_root(served: tuple[Path, Path]) -> None:
    root, secret = served
    c = client(root / "s.jsonl")
    assert c.get("/api/sessions/s/raw").status_code == 200
    swap_for_symlink(root / "s.jsonl", secret)
    response = c.get("/api/sessions/s/raw")
    assert response.status_code == 403 and b"SECRET" not in response.content


def test_raw_streams_the_file_as_stored(served: tuple[Path, Path]) -> None:
    root, _ = served
    response = client(root).get("/api/sessions/s/raw")
    assert response.status_code == 200 and response.content == (root / "s.jsonl").read_bytes()
    assert response.headers["content-length"] == str((root / "s.jsonl").stat().st_size)
    assert response.headers["content-type"].startswith("application/x-ndjson")


# -- item 13: Host check (DNS rebinding) ---------------------------------------------------------------------------


@pytest.mark.parametrize("base_url", ["http://127.0.0.1", "http://localhost", "http://[::1]", "http://LOCALHOST"])
def test_loopback_names_on_the_servers_port_are_answered(served: tuple[Path, Path], base_url: str) -> None:
    root, _ = served
    assert client(root, base_url=base_url).get("/api/sessions").status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "localhost:8080", "127.0.0.1:1",
                                  "127.0.0.1.evil.example", "", "[::1", "localhost:80x", "0.0.0.0"])
@pytest.mark.parametrize("path", ["/api/sessions", "/api/sessions/s/page", "/api/sessions/s/raw",
                                  "/api/sessions/s/follow"])
def test_another_host_is_421_before_any_route(served: tuple[Path, Path], host: str, path: str) -> None:
    root, _ = served
    response = client(root).get(path, headers={"host": host})
    assert response.status_code == 421
    assert response.json()["error"] == "misdirected-request"
    assert "content-security-policy" in response.headers  # the security headers wrap the check


def test_allow_host_names_are_answered(served: tuple[Path, Path]) -> None:
    root, _ = served
    c = client(root, allowed_hosts=["viewer.lan", "box.lan:9000"])
    assert c.get("/api/sessions", headers={"host": "viewer.lan:1234"}).status_code == 200
    assert c.get("/api/sessions", headers={"host": "box.lan:9000"}).status_code == 200
    assert c.get("/api/sessions", headers={"host": "box.lan:9001"}).status_code == 421


def test_the_bound_address_is_a_name_of_the_server(served: tuple[Path, Path]) -> None:
    root, _ = served
    c = TestClient(create_app([root], serve_static=False, bound_host="192.0.2.7"), base_url="http://192.0.2.7")
    assert c.get("/api/sessions").status_code == 200


def test_a_request_without_host_is_421() -> None:
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover - must not be reached
        raise AssertionError("reached the app")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "headers": [], "server": ("127.0.0.1", 8765)}
    asyncio.run(HostCheck(app)(scope, None, send))
    assert sent[0]["status"] == 421


def test_a_malformed_allow_host_is_refused() -> None:
    with pytest.raises(ValueError, match="not a host name"):
        HostCheck(None, ["bad host:port:x"])


def serve_stderr(*args: str) -> str:
    """The first lines ``serve`` writes, then stop it."""
    proc = subprocess.Popen([sys.executable, "-m", "assembler", "serve", "--no-static", "--port", "0", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith("serving "), first
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    return err


def test_binding_a_non_loopback_address_warns_that_sessions_are_readable(served: tuple[Path, Path]) -> None:
    root, _ = served
    err = serve_stderr("--host", "0.0.0.0", str(root))
    assert "warning: listening on 0.0.0.0:" in err and "readable by anyone who can reach it" in err
    assert "no authentication" in err


def test_binding_loopback_does_not_warn(served: tuple[Path, Path]) -> None:
    root, _ = served
    assert "warning" not in serve_stderr(str(root))


# -- item 17: strict integers --------------------------------------------------------------------------------------


BAD_INTEGERS = ["1_0", "+5", " 5", "5 ", "\u0661\u0660", "\uff15", "0x10", "1e3", "5.0", "", "-", "99999999999999999"]


@pytest.mark.parametrize("value", BAD_INTEGERS)
@pytest.mark.parametrize("param", ["maxMessages", "throughSeq", "beforeSeq"])
def test_page_integers_are_ascii_digits_only(served: tuple[Path, Path], param: str, value: str) -> None:
    root, _ = served
    response = client(root).get("/api/sessions/s/page", params={param: value})
    assert response.status_code == 400
    assert param in response.json()["detail"]


@pytest.mark.parametrize("value", BAD_INTEGERS)
def test_follow_integers_are_ascii_digits_only(served: tuple[Path, Path], value: str) -> None:
    root, _ = served
    c = client(root)
    response = c.get("/api/sessions/s/follow", params={"maxMessages": value})
    assert response.status_code == 400 and "maxMessages" in response.json()["detail"]
    response = c.get("/api/sessions/s/follow", headers={"last-event-id": value.encode("utf-8")})
    assert response.status_code == 400 and "Last-Event-ID" in response.json()["detail"]


def test_plain_integers_still_work(served: tuple[Path, Path]) -> None:
    root, _ = served
    c = client(root)
    assert c.get("/api/sessions/s/page", params={"maxMessages": "10", "throughSeq": "-1"}).status_code == 200
    assert c.get("/api/sessions/s/page", params={"throughSeq": "20", "beforeSeq": "5"}).status_code == 200
