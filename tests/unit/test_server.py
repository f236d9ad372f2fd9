"""The HTTP edge: listing, pages, raw, static, ids that cannot escape the roots, JSON errors (no bare 500)."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette 1.10 nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.chunk_rows import expand_records
from assembler.cli import main as cli_main
from assembler.history import page_value
from assembler.records import decode_page, encode
from assembler.server import CSP, create_app, session_id_is_safe
from assembler.store import zstd
from assembler.store.jsonl import read_session
from perf.load_follow import HEADER, LogGenerator, append_batch

LOCAL = "http://127.0.0.1"  # the Host check answers 421 to TestClient's default "testserver"


def write_log(path: Path, n: int, seed: int = 0, title: str | None = None) -> list[dict[str, Any]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    events = LogGenerator(seed).take(n)
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, events[: n // 2])
    append_batch(path, events[n // 2:])
    if title is not None:
        with open(path, "ab") as stream:
            stream.write(encode({"type": "session/title", "seq": n, "time": 5, "data": {"title": title}}) + b"\n")
    return events


@pytest.fixture
def root(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    write_log(sessions / "alpha.jsonl", 400, title="Alpha")
    write_log(sessions / "nested" / "beta.jsonl", 50, seed=1)
    return sessions


@pytest.fixture
def client(root: Path) -> TestClient:
    return TestClient(create_app([root], serve_static=False), raise_server_exceptions=False, base_url=LOCAL)


def error_of(response: Any) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "detail"} and body["detail"]
    return body


def test_lists_sessions_with_title_count_and_activity(client: TestClient, root: Path) -> None:
    response = client.get("/api/sessions")
    assert response.status_code == 200
    listed = response.json()["sessions"]
    sessions = {s["id"]: s for s in listed}
    assert set(sessions) == {"alpha", "nested/beta"}
    assert sessions["alpha"]["title"] == "Alpha"
    assert sessions["alpha"]["eventCount"] == 401
    beta = sessions["nested/beta"]
    assert beta["eventCount"] == 50
    # No title record: the first user text names it (it is in the file, as JSON text).
    assert isinstance(beta["title"], str) and beta["title"]
    assert json.dumps(beta["title"])[1:-1].encode() in (root / "nested" / "beta.jsonl").read_bytes()
    assert beta["lastActivity"] > 1_700_000_000_000 and beta["lastActivitySource"] == "events"
    assert (beta["file"], beta["path"]) == ("beta.jsonl", str((root / "nested" / "beta.jsonl").resolve()))
    assert [s["lastActivity"] for s in listed] == sorted((s["lastActivity"] for s in listed), reverse=True)


def test_page_defaults_to_tail_and_matches_reference(client: TestClient, root: Path) -> None:
    events = list(expand_records(read_session(root / "alpha.jsonl").records))
    response = client.get("/api/sessions/alpha/page", params={"maxMessages": 5})
    assert response.status_code == 200
    assert response.content == encode(page_value(events, None, None, 5))
    assert "x-session-error" not in response.headers
    page = decode_page(response.content)
    assert page.hasMore


def test_page_with_through_and_before(client: TestClient, root: Path) -> None:
    events = list(expand_records(read_session(root / "alpha.jsonl").records))
    response = client.get("/api/sessions/alpha/page", params={"throughSeq": 300, "beforeSeq": 200,
                                                               "maxMessages": 3})
    assert response.content == encode(page_value(events, 300, 200, 3))


def test_page_from_seq_reaches_back_to_it_in_one_answer(client: TestClient, root: Path) -> None:
    """A deep link's page: ``fromSeq`` takes the page back to the message at or before it, ``maxMessages`` the cap."""
    events = list(expand_records(read_session(root / "alpha.jsonl").records))
    params = {"throughSeq": 300, "beforeSeq": 250, "maxMessages": 1_000, "fromSeq": 40}
    response = client.get("/api/sessions/alpha/page", params=params)
    assert response.content == encode(page_value(events, 300, 250, 1_000, 40))
    first = decode_page(response.content).records[0]
    first_seq = first.event.seq if hasattr(first, "event") else first.seq
    assert first_seq <= 40 < 250
    nearer = client.get("/api/sessions/alpha/page", params={**params, "fromSeq": 200})
    assert len(response.content) > len(nearer.content)


def test_nested_id(client: TestClient) -> None:
    assert client.get("/api/sessions/nested/beta/page").status_code == 200


@pytest.mark.parametrize(("query", "field"), [
    ({"throughSeq": 10_000}, "throughSeq"),
    ({"throughSeq": -2}, "throughSeq"),
    ({"beforeSeq": -1}, "beforeSeq"),
    ({"maxMessages": 0}, "maxMessages"),
    ({"maxMessages": "many"}, "maxMessages"),
    ({"throughSeq": "1.5"}, "throughSeq"),
    ({"fromSeq": "35.5"}, "fromSeq"),
    ({"fromSeq": -1}, "fromSeq"),
])
def test_bad_page_requests_are_400_with_a_message(client: TestClient, query: dict[str, Any], field: str) -> None:
    response = client.get("/api/sessions/alpha/page", params=query)
    assert response.status_code == 400
    body = error_of(response)
    assert body["error"] == "bad-request" and field in body["detail"]


def test_through_past_end_names_the_last_seq(client: TestClient) -> None:
    body = error_of(client.get("/api/sessions/alpha/page", params={"throughSeq": 401}))
    assert "past the last seq" in body["detail"] and "400" in body["detail"]


def test_empty_page_at_through_minus_one(client: TestClient) -> None:
    response = client.get("/api/sessions/alpha/page", params={"throughSeq": -1})
    assert response.json() == {"records": [], "hasMore": False}


def test_unknown_session_is_404(client: TestClient) -> None:
    for path in ("/api/sessions/nope/page", "/api/sessions/nope/raw", "/api/sessions/nope/follow"):
        response = client.get(path)
        assert response.status_code == 404
        assert error_of(response)["error"] == "not-found"


# (A literal "a/../b" is resolved by the client before it is sent; these forms reach the server.)
@pytest.mark.parametrize("sid", ["..%2Foutside", "nested%2F..%2Falpha", "%2E%2E/outside", "%2E%2E%2Foutside",
                                 "/etc/passwd", "%2Fetc%2Fpasswd", ".%2Falpha", "nested%5C..%5Calpha"])
def test_ids_with_dot_segments_are_404(client: TestClient, root: Path, sid: str) -> None:
    write_log(root.parent / "outside.jsonl", 10)
    response = client.get(f"/api/sessions/{sid}/page")
    assert response.status_code == 404
    error_of(response)


def test_session_id_shapes() -> None:
    assert session_id_is_safe("a/b.zst")
    for bad in ("", "..", "a/../b", "/a", "a//b", "a\\b", "./a", "a/.", "a\x00"):
        assert not session_id_is_safe(bad)


def test_symlink_escaping_the_root_is_not_served(client: TestClient, root: Path) -> None:
    outside = root.parent / "secret.jsonl"
    write_log(outside, 10)
    os.symlink(outside, root / "link.jsonl")
    os.symlink(root.parent, root / "up")
    ids = {s["id"] for s in client.get("/api/sessions").json()["sessions"]}
    assert "link" not in ids and not any(i.startswith("up/") for i in ids)
    assert client.get("/api/sessions/link/raw").status_code == 404
    assert client.get("/api/sessions/up/secret/raw").status_code == 404


def test_symlink_inside_the_root_is_served(client: TestClient, root: Path) -> None:
    os.symlink(root / "alpha.jsonl", root / "alias.jsonl")
    assert client.get("/api/sessions/alias/page").status_code == 200


def test_malformed_middle_line_serves_valid_part_and_reports(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    events = write_log(path, 60)
    lines = path.read_bytes().split(b"\n")
    lines.insert(3, b'{"type": "turn/start", oops')
    path.write_bytes(b"\n".join(lines))
    client = TestClient(create_app([tmp_path], serve_static=False), raise_server_exceptions=False, base_url=LOCAL)
    response = client.get("/api/sessions/broken/page", params={"maxMessages": 1000})
    assert response.status_code == 200
    assert "line 4" in response.headers["x-session-error"]
    body = response.json()
    assert body["error"]["error"] == "malformed-session" and "line 4" in body["error"]["detail"]
    page = decode_page(response.content)
    valid = read_session(path)
    assert valid.error is not None and valid.error.line == 4
    expected = list(expand_records(valid.records))
    assert 0 < len(expected) < len(events)
    assert page.records and not page.hasMore
    body.pop("error")
    assert encode(body) == encode(page_value(expected, None, None, 1000))
    listed = client.get("/api/sessions").json()["sessions"][0]
    assert "line 4" in listed["error"]


def test_raw_is_the_file_as_stored(client: TestClient, root: Path) -> None:
    response = client.get("/api/sessions/alpha/raw")
    assert response.status_code == 200 and response.content == (root / "alpha.jsonl").read_bytes()


def test_zst_sessions_serve_page_and_raw(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "s.jsonl"
    events = write_log(plain, 120)
    packed = tmp_path / "z" / "s.jsonl.zst"
    packed.parent.mkdir()
    packed.write_bytes(zstd.compress(plain.read_bytes()))
    client = TestClient(create_app([packed.parent], serve_static=False), raise_server_exceptions=False, base_url=LOCAL)
    assert [s["id"] for s in client.get("/api/sessions").json()["sessions"]] == ["s"]  # named by its base name
    response = client.get("/api/sessions/s/page", params={"maxMessages": 2})
    assert response.content == encode(page_value(events, None, None, 2))
    assert client.get("/api/sessions/s/raw").content == packed.read_bytes()


@pytest.mark.parametrize("suffix", [".sqlite", ".db"])
def test_sqlite_sessions_are_listed_and_served(tmp_path: Path, suffix: str) -> None:
    plain = tmp_path / "plain" / "s.jsonl"
    events = write_log(plain, 120, title="Database")
    folder = tmp_path / "db"
    folder.mkdir()
    assert cli_main(["convert", str(plain), str(folder / f"s{suffix}")]) == 0
    (folder / "t.jsonl").write_bytes(plain.read_bytes())
    (folder / "t.jsonl.zst").write_bytes(zstd.compress(plain.read_bytes()))
    client = TestClient(create_app([folder], serve_static=False), raise_server_exceptions=False, base_url=LOCAL)
    listed = {s["id"]: s for s in client.get("/api/sessions").json()["sessions"]}
    assert set(listed) == {"s", "t", "t.jsonl.zst"}  # a clash of base names keeps the second file's whole name
    assert listed["s"]["title"] == "Database" and listed["s"]["error"] is None
    assert listed["s"]["eventCount"] == listed["t"]["eventCount"] == len(events) + 1
    page = client.get("/api/sessions/s/page", params={"maxMessages": 2})
    assert page.status_code == 200 and page.content == client.get("/api/sessions/t/page",
                                                                  params={"maxMessages": 2}).content
    raw = client.get("/api/sessions/s/raw")
    assert raw.content == (folder / f"s{suffix}").read_bytes()
    assert raw.headers["content-type"].startswith("application/vnd.sqlite3")


def test_a_file_named_like_a_database_that_is_not_one_is_listed_with_its_error(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_bytes(b"not a database")
    client = TestClient(create_app([tmp_path], serve_static=False), raise_server_exceptions=False, base_url=LOCAL)
    [entry] = client.get("/api/sessions").json()["sessions"]
    assert entry["id"] == "notes" and "notes.db" in entry["error"]


def test_file_and_several_roots_get_prefixed_ids(tmp_path: Path, root: Path) -> None:
    other = tmp_path / "other"
    write_log(other / "alpha.jsonl", 20)
    app = create_app([root, other, root / "alpha.jsonl"], serve_static=False)
    ids = set(app.state.registry.scan())
    assert ids == {"sessions/alpha", "sessions/nested/beta", "other/alpha", "alpha"}


def test_unknown_route_is_json_404(client: TestClient) -> None:
    response = client.get("/api/whatever")
    assert response.status_code == 404
    error_of(response)


def test_static_viewer_with_csp(tmp_path: Path, root: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>v</title>")
    client = TestClient(create_app([root], static_dir=site), raise_server_exceptions=False, base_url=LOCAL)
    response = client.get("/")
    assert response.status_code == 200 and "<title>v</title>" in response.text
    assert response.headers["content-security-policy"] == f"{CSP}; frame-ancestors 'none'"  # header-only directive
    assert client.get("/api/sessions/alpha/page").status_code == 200
    missing = client.get("/nope.js")
    assert missing.status_code == 404
    error_of(missing)


def test_served_build_csp_wins(tmp_path: Path, root: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    policy = "default-src 'self'; worker-src 'self'"
    (site / "index.html").write_text(f'<meta http-equiv="Content-Security-Policy"\n  content="{policy}">')
    client = TestClient(create_app([root], static_dir=site), raise_server_exceptions=False, base_url=LOCAL)
    assert client.get("/").headers["content-security-policy"] == f"{policy}; frame-ancestors 'none'"
    assert client.get("/api/sessions").headers["content-security-policy"] == f"{policy}; frame-ancestors 'none'"


def test_csp_matches_the_viewer_page() -> None:
    html = (Path(__file__).resolve().parents[2] / "web" / "index.html").read_text()
    assert f'content="{CSP}"' in html


def test_session_list_links_subagent_children_to_their_parent() -> None:
    """The real advanced-toolchain logs: the children's header ids, parent and own label are in the list."""
    from corpus import FIXTURES, require_corpus

    require_corpus()
    folder = FIXTURES / "examples/acp-agent/tests/snapshots/advanced-toolchain"
    client = TestClient(create_app([folder], serve_static=False), raise_server_exceptions=False, base_url=LOCAL)
    sessions = {s["id"]: s for s in client.get("/api/sessions").json()["sessions"]}
    parent = next(s for s in sessions.values() if "parentSession" not in s)
    children = [s for s in sessions.values() if s.get("parentSession") == parent["sessionId"]]
    assert len(children) == 2
    assert {c.get("subagentLabel") for c in children} == {"Check direct child", None}
