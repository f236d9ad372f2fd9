"""Sessions in object storage (``store.remote``): the CLI reading commands, ``publish`` and ``serve`` on ``s3://``
locations, against moto's standalone S3 server on 127.0.0.1 (credentials and endpoint from the standard AWS
environment, as a user sets them). Each answer from the bucket is compared with the same command on a local copy of
the same files: real fixtures read from the shared folder at test time, a generated log, and a damaged one."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import moto.server as moto_server
import pytest
import s3fs  # noqa: F401  (the s3:// filesystem fsspec loads by name; the cloud extra `make setup` installs)

from assembler.cli import main as cli_main
from tests.interop_support import interop_file
from tests.unit.test_server import write_log

BUCKET = "ta-sessions"
FIXTURES = {
    "claude/bash_output.jsonl": "claude-code/claude-code-log-1.7.0/dev-docs/messages/claude-code/user/"
                                "bash_output.jsonl",
    "codex/rollout.jsonl": "codex/madshn+localpush@219b539/src-tauri/tests/fixtures/codex/2026-02-23/raw/sessions/"
                           "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "inspect/log_formats.eval": "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_formats.eval",
    "ours/compaction.jsonl": "../deepseek-harness/examples/headless-agent/tests/snapshots/compaction-recovery/"
                             "session.jsonl",
}
_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_DEFAULT_REGION",
        "AWS_EC2_METADATA_DISABLED", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws(endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The standard AWS environment pointing at the test server (no file of the machine's own AWS setup read)."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing-secret")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    return endpoint


@pytest.fixture
def local(tmp_path: Path) -> Path:
    """A folder of sessions (named as the bucket's prefix is, so both list under the same root name)."""
    root = tmp_path / "local" / "sessions"
    for rel, fixture in FIXTURES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(interop_file(fixture), root / rel)
    write_log(root / "gen" / "generated.jsonl", 400, seed=7, title="Generated")
    bad = root / "gen" / "damaged.jsonl"
    write_log(bad, 40, seed=4)
    lines = bad.read_bytes().split(b"\n")
    bad.write_bytes(b"\n".join([*lines[:3], b"{not json", *lines[3:]]))
    return root


@pytest.fixture
def bucket(aws: str, local: Path) -> str:
    """``s3://BUCKET/sessions``: every file of ``local`` uploaded under that prefix (a fresh bucket per test)."""
    client = boto3.client("s3")
    for old in client.list_objects_v2(Bucket=BUCKET).get("Contents", []) if _exists(client) else []:
        client.delete_object(Bucket=BUCKET, Key=old["Key"])
    if not _exists(client):
        client.create_bucket(Bucket=BUCKET)
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        key = f"sessions/{path.relative_to(local).as_posix()}"
        client.upload_file(str(path), BUCKET, key)
        # The store's time of an object is its upload: the local copy says the same, so both list one activity.
        when = client.head_object(Bucket=BUCKET, Key=key)["LastModified"].timestamp()
        os.utime(path, (when, when))
    return f"s3://{BUCKET}/sessions"


def _exists(client: Any) -> bool:
    return any(b["Name"] == BUCKET for b in client.list_buckets().get("Buckets", []))


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- reading commands ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", [*FIXTURES, "gen/generated.jsonl"])
def test_export_from_the_bucket_equals_exporting_the_local_file(rel: str, bucket: str, local: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in ("md", "html"):
        remote_out, local_out = tmp_path / f"remote.{fmt}", tmp_path / f"local.{fmt}"
        code, _, err = run(["export", f"{bucket}/{rel}", "-o", str(remote_out)], capsys)
        assert code == 0, err
        assert run(["export", str(local / rel), "-o", str(local_out)], capsys)[0] == 0
        assert remote_out.read_bytes() == local_out.read_bytes()
        assert len(remote_out.read_bytes()) > 200


def test_an_object_is_read_in_ranged_pieces(bucket: str, local: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import s3fs.core

    from assembler.store import remote

    ranges: list[tuple[int, int]] = []
    piece = 2048
    fetch = s3fs.core.S3File._fetch_range

    def spy(self: Any, start: int, end: int) -> bytes:
        ranges.append((start, end))
        data: bytes = fetch(self, start, end)
        return data

    monkeypatch.setattr(s3fs.core.S3File, "_fetch_range", spy)
    monkeypatch.setattr(remote, "READ_PIECE", piece)
    size = (local / "gen/generated.jsonl").stat().st_size
    assert size > 4 * piece
    code, _, err = run(["export", f"{bucket}/gen/generated.jsonl", "-o", str(tmp_path / "out.md")], capsys)
    assert code == 0, err
    # export sniffs the head (one piece: is it a file of several sessions?), then reads it once, piece by piece
    assert ranges[0] == (0, piece)
    assert ranges[1:] == [(start, start + piece) for start in range(0, size, piece)]  # the last asks past the end
    assert all(end - start <= piece for start, end in ranges)


@pytest.mark.parametrize("command", [["stats", "--json"], ["messages"], ["check"], ["convert", "{out}"],
                                     ["assemble", "--all"], ["page", "--max-messages", "3"], ["unpack", "-o", "{out}"],
                                     ["pack", "-o", "{out}"], ["repair", "-o", "{out}"]])
def test_reading_commands_answer_as_for_the_local_file(command: list[str], bucket: str, local: Path,
                                                       tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for rel in ("ours/compaction.jsonl", "gen/generated.jsonl", "codex/rollout.jsonl"):
        answers = []
        for where, source in (("remote", f"{bucket}/{rel}"), ("local", str(local / rel))):
            out = tmp_path / f"{where}-{rel.replace('/', '-')}"
            args = [command[0], source, *[a.replace("{out}", str(out)) for a in command[1:]]]
            code, stdout, err = run(args, capsys)
            written = out.read_bytes().replace(source.encode(), b"FILE") if out.exists() else None  # source ids
            answers.append((code, stdout.replace(source, "FILE"), err.replace(source, "FILE"), written))
        assert answers[0] == answers[1], rel
        assert any(answers[0][1:]), rel  # the command said or wrote something


def test_compare_reads_a_bucket_object_as_the_local_file(bucket: str, local: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(local)  # short local names: the report names its two files (Markdown-escaped)
    a, b = "gen/generated.jsonl", "ours/compaction.jsonl"
    code, _, err = run(["compare", f"{bucket}/{a}", b, "-o", str(tmp_path / "r.md")], capsys)
    assert code == run(["compare", a, b, "-o", str(tmp_path / "l.md")], capsys)[0], err
    remote = (tmp_path / "r.md").read_text()
    assert f"{bucket}/{a}" in remote
    assert remote.replace(f"{bucket}/{a}", a) == (tmp_path / "l.md").read_text()
    assert len(remote) > 200


def test_an_https_style_location_reads_through_the_same_code(local: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A plain HTTP server on 127.0.0.1 (fsspec's http backend: the scheme ``https://`` uses too)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # the test reads stderr: no access log there
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(local)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/ours/compaction.jsonl"
        code, _, err = run(["export", url, "-o", str(tmp_path / "r.html")], capsys)
        assert code == 0, err
        assert run(["export", str(local / "ours/compaction.jsonl"), "-o", str(tmp_path / "l.html")], capsys)[0] == 0
        assert (tmp_path / "r.html").read_bytes() == (tmp_path / "l.html").read_bytes()
        missing = url.replace("compaction", "none")
        assert run(["export", missing, "-o", str(tmp_path / "x.html")], capsys)[1:] == (
            "", f"{missing}: error: no such object, prefix or bucket\n")
    finally:
        server.shutdown()
        server.server_close()


def test_a_damaged_object_is_reported_as_the_local_file_is(bucket: str, local: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    remote = run(["export", f"{bucket}/gen/damaged.jsonl", "-o", str(tmp_path / "r.md")], capsys)
    here = run(["export", str(local / "gen/damaged.jsonl"), "-o", str(tmp_path / "l.md")], capsys)
    assert remote[0] == here[0] != 0
    assert f"{bucket}/gen/damaged.jsonl:4: error:" in remote[2]
    assert remote[2].replace(f"{bucket}/gen/damaged.jsonl", "F") == here[2].replace(str(local / "gen/damaged.jsonl"),
                                                                                    "F")
    assert "Traceback" not in remote[2]
    assert (tmp_path / "r.md").read_bytes() == (tmp_path / "l.md").read_bytes()  # the valid part, as for a file


@pytest.mark.parametrize(("location", "expected"), [
    ("s3://no-such-bucket-here/a.jsonl", "no such object, prefix or bucket"),
    (f"s3://{BUCKET}/sessions/none.jsonl", "no such object, prefix or bucket"),
])
def test_a_missing_object_or_bucket_is_a_clear_error(location: str, expected: str, bucket: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["export", location, "-o", "out.md"], capsys)
    assert code == 1
    assert err == f"{location}: error: {expected}\n"


def test_a_missing_credential_is_a_clear_error(bucket: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code, _, err = run(["stats", f"{bucket}/gen/generated.jsonl"], capsys)
    assert code == 1
    assert "no credentials for this storage" in err and "AWS_ACCESS_KEY_ID" in err
    assert "Traceback" not in err and err.count("\n") == 1, err


def test_credentials_in_the_url_are_refused_and_never_printed(bucket: str, capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    code, out, err = run(["export", f"s3://AKIDEXAMPLE:s3cr3t@{BUCKET}/sessions/gen/generated.jsonl",
                          "-o", "out.md"], capsys)
    assert code == 2
    assert "credentials in the location are refused" in err
    assert "s3cr3t" not in err + out and "AKIDEXAMPLE" not in err + out
    assert f"s3://***@{BUCKET}/sessions/gen/generated.jsonl" in err


def test_without_the_cloud_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "fsspec", None)  # as if not installed: ``import fsspec`` raises ImportError
    code, _, err = run(["export", "s3://any-bucket/a.jsonl", "-o", "out.md"], capsys)
    assert code == 1
    assert err == ("s3://any-bucket/a.jsonl: error: reading object storage needs the cloud extra: "
                   "pip install 'transcript-assembler[cloud]'\n")


# -- publish ---------------------------------------------------------------------------------------------------


def _site_files(out: Path) -> dict[str, bytes]:
    """Every file of a published site but the manifest (which names when it was made and each source's mtime)."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name.split(".")[0] != "site"}


def test_publish_from_the_bucket_equals_publishing_the_local_folder(bucket: str, local: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tests.unit.test_publish_pages import make_viewer

    static = make_viewer(tmp_path)
    remote_site, local_site = tmp_path / "site-remote", tmp_path / "site-local"
    remote = run(["publish", bucket, "-o", str(remote_site), "--static", str(static)], capsys)
    here = run(["publish", str(local), "-o", str(local_site), "--static", str(static)], capsys)
    assert remote[0] == here[0] == 1  # the damaged log: published with its valid part, reported
    assert remote[2].replace(bucket, "ROOT") == here[2].replace(str(local), "ROOT")
    assert remote[1].replace(str(remote_site), "SITE") == here[1].replace(str(local_site), "SITE")
    assert "published 6 session(s)" in remote[1]  # six files, the damaged one with its valid part
    remote_files, local_files = _site_files(remote_site), _site_files(local_site)
    assert remote_files.keys() == local_files.keys()
    assert len([k for k in remote_files if k.startswith("sessions/")]) >= 6 * 3
    for name, data in remote_files.items():
        assert data == local_files[name], name


def test_publish_of_a_missing_bucket_is_an_error_before_anything_is_written(
        aws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.unit.test_publish_pages import make_viewer

    code, _, err = run(["publish", "s3://no-such-bucket-here/sessions", "-o", str(tmp_path / "site"),
                        "--static", str(make_viewer(tmp_path))], capsys)
    assert code == 2
    assert err == "s3://no-such-bucket-here/sessions: error: no such object, prefix or bucket (nothing to publish)\n"
    assert not (tmp_path / "site").exists()


# -- serve -----------------------------------------------------------------------------------------------------


def _client(root: str | Path) -> Any:
    from starlette.testclient import TestClient

    from assembler.server import create_app

    return TestClient(create_app([str(root) if isinstance(root, str) else root], serve_static=False),
                      raise_server_exceptions=False, base_url="http://127.0.0.1")


def _entries(client: Any) -> list[dict[str, Any]]:
    answer = client.get("/api/sessions")
    assert answer.status_code == 200
    sessions: list[dict[str, Any]] = answer.json()["sessions"]
    for entry in sessions:
        entry.pop("path", None)  # the file's path on the serving machine (a spool file for the bucket)
    return sessions


def test_serve_lists_the_bucket_and_answers_pages_as_for_the_local_folder(bucket: str, local: Path) -> None:
    with _client(bucket) as remote, _client(local) as here:
        listed = _entries(remote)
        assert listed == _entries(here)
        ids = [e["id"] for e in listed]
        assert "gen/generated" in ids and "ours/compaction" in ids and len(ids) == 6
        for sid in ids:
            page = remote.get(f"/api/sessions/{sid}/page", params={"maxMessages": 5})
            assert page.status_code == 200, sid
            assert page.content == here.get(f"/api/sessions/{sid}/page", params={"maxMessages": 5}).content, sid
        raw = remote.get("/api/sessions/gen/generated/raw")
        assert raw.content == (local / "gen/generated.jsonl").read_bytes()


def test_serve_says_a_remote_session_cannot_be_followed(bucket: str, local: Path) -> None:
    with _client(bucket) as remote:
        with remote.stream("GET", "/api/sessions/gen/generated/follow") as answer:
            body = b"".join(answer.iter_bytes())  # the stream ends by itself: nothing is followed
        assert answer.status_code == 200
        frames = body.split(b"\n\n")
        assert frames[0].startswith(b"id: ") and b'"cursor"' in frames[0]  # the snapshot, as for a local file
        assert frames[1].startswith(b"event: error\ndata: ")
        fault = __import__("json").loads(frames[1].split(b"data: ", 1)[1])
        assert fault["error"] == "not-followed" and fault["following"] is False
        assert "not followed" in fault["detail"]


def test_serve_reads_an_object_changed_in_the_bucket_again(bucket: str, local: Path, tmp_path: Path) -> None:
    with _client(bucket) as remote:
        first = remote.get("/api/sessions/gen/generated/page").json()
        assert {e["id"]: e.get("title") for e in _entries(remote)}["gen/generated"] == "Generated"  # start-up's
        newer = tmp_path / "newer" / "sessions" / "gen" / "generated.jsonl"
        write_log(newer, 600, seed=9, title="Newer")
        boto3.client("s3").upload_file(str(newer), BUCKET, "sessions/gen/generated.jsonl")
        titles = {e["id"]: e.get("title") for e in _entries(remote)}  # the listing sees the new tag
        assert titles["gen/generated"] == "Newer"
        second = remote.get("/api/sessions/gen/generated/page")
        assert second.json() != first
        with _client(newer.parents[1]) as here:
            assert second.content == here.get("/api/sessions/gen/generated/page").content


def test_serve_of_a_missing_bucket_is_an_error(aws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["serve", "s3://no-such-bucket-here/sessions", "--port", "0", "--no-index"], capsys)
    assert code == 2
    assert err == ("transcript-assembler: serve: s3://no-such-bucket-here/sessions: no such object, prefix or bucket "
                   "(nothing to serve)\n")


def test_serve_without_a_credential_is_an_error(bucket: str, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code, _, err = run(["serve", bucket, "--port", "0"], capsys)
    assert code == 2
    assert err.startswith(f"transcript-assembler: serve: {bucket}: no credentials for this storage")
    assert err.endswith("(nothing to serve)\n") and err.count("\n") == 1


def test_serve_answers_a_clear_error_for_an_object_gone_before_it_was_read(bucket: str) -> None:
    remote = _client(bucket)  # no lifespan: the start-up scan lists the objects, nothing reads them yet
    boto3.client("s3").delete_object(Bucket=BUCKET, Key="sessions/gen/generated.jsonl")
    answer = remote.get("/api/sessions/gen/generated/page")
    assert answer.status_code == 502
    assert "cannot read session 'gen/generated' from object storage: no such object, prefix or bucket" in answer.text
    assert remote.get("/api/sessions/ours/compaction/page").status_code == 200  # the others stand


# -- search across the bucket's sessions ---------------------------------------------------------------------------


def _indexed(root: str | Path, index_dir: Path) -> tuple[Any, Any]:
    """An app serving ``root`` with its search index in ``index_dir`` (no background passes: the test runs them)."""
    from starlette.testclient import TestClient

    from assembler.server import create_app

    app = create_app([root if isinstance(root, str) else root], serve_static=False, index_dir=index_dir,
                     index_interval=3600)
    return app, TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1")


def _words(path: Path, count: int) -> list[str]:
    """Words of ``path``'s indexed rows (letters only, longer than 5), a few of each kind."""
    import re

    from assembler.server.search_text import file_sessions

    found = sorted({w for s in file_sessions(path) for r in s.rows for w in re.findall(r"[a-z]{6,}", r.text.lower())})
    assert len(found) >= count, path
    return found[:: max(1, len(found) // count)][:count]


def _search(client: Any, query: str) -> dict[str, Any]:
    answer = client.get("/api/search", params={"q": query, "limit": "100"})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_serve_searches_the_bucket_as_the_local_folder_and_keeps_its_index(bucket: str, local: Path,
                                                                             tmp_path: Path) -> None:
    words = [*_words(local / "claude/bash_output.jsonl", 3), *_words(local / "codex/rollout.jsonl", 2),
             *_words(local / "ours/compaction.jsonl", 2)]
    app, remote = _indexed(bucket, tmp_path / "idx")
    here_app, here = _indexed(local, tmp_path / "idx-local")
    with remote, here:
        indexer = app.state.indexer
        assert indexer.wait_pass(0) and here_app.state.indexer.wait_pass(0)
        assert indexer.indexed == 6 and indexer.progress() == {"done": 6, "pending": 0}
        index_file = indexer.path
        assert index_file.name.startswith("sessions-") and "transcript-assembler-remote" not in str(index_file)
        listed = {e["id"] for e in _entries(remote)}
        answers = {}
        for word in words:
            got, want = _search(remote, word), _search(here, word)
            assert got["results"], word
            assert got["results"] == want["results"] and got["total"] == want["total"], word  # same hits, same rows
            answers[word] = got["results"]
        for hit in answers[words[0]][:3]:  # a hit opens through the normal API, its row in the session's page
            assert hit["session"] in listed
            page = remote.get(f"/api/sessions/{hit['session']}/page", params={"maxMessages": "1000000"})
            assert page.status_code == 200
            assert page.content == here.get(f"/api/sessions/{hit['session']}/page",
                                            params={"maxMessages": "1000000"}).content
            from assembler.records import decode_page, record_range

            ranges = [record_range(r) for r in decode_page(page.content).records]
            assert any(lo <= hit["seq"] <= hi for lo, hi in ranges)
        assert _search(remote, '"no such words here"')["results"] == []
        assert remote.get("/api/search", params={"q": '"'}).status_code in (200, 400)

    # A restart: the same index file, nothing indexed again, the same answers.
    app, remote = _indexed(bucket, tmp_path / "idx")
    with remote:
        indexer = app.state.indexer
        assert indexer.wait_pass(0)
        assert indexer.path == index_file and indexer.indexed == 0
        assert indexer.progress() == {"done": 6, "pending": 0}
        for word in words:
            assert _search(remote, word)["results"] == answers[word], word

        # An object changed in the bucket: that one is indexed again, the others are left alone.
        old = next(w for w in _words(local / "claude/bash_output.jsonl", 40)
                   if {h["session"] for h in _search(remote, w)["results"]} == {"claude/bash_output"})
        assert not _search(remote, "quokkafizz")["results"]
        newer = tmp_path / "bash_output.jsonl"
        newer.write_bytes((local / "claude/bash_output.jsonl").read_bytes().replace(old.encode(), b"quokkafizz"))
        boto3.client("s3").upload_file(str(newer), BUCKET, "sessions/claude/bash_output.jsonl")
        indexer.run_pass()
        assert indexer.indexed == 1
        hits = _search(remote, "quokkafizz")["results"]
        assert hits and {h["session"] for h in hits} == {"claude/bash_output"}
        assert not _search(remote, old)["results"]
        assert _search(remote, words[-1])["results"] == answers[words[-1]]  # another object's hits stand
        boto3.client("s3").delete_object(Bucket=BUCKET, Key="sessions/ours/compaction.jsonl")
        remote.get("/api/sessions")  # the list sees it gone
        indexer.run_pass()
        assert indexer.indexed == 1 and indexer.progress() == {"done": 5, "pending": 0}
        assert _search(remote, words[-1])["results"] == []  # its rows left the index
    assert sorted(p.name for p in (tmp_path / "idx").iterdir() if p.name.endswith(".sqlite3")) == [index_file.name]


def test_an_object_that_cannot_be_fetched_is_indexed_at_the_next_pass(bucket: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    from assembler.server.remote_root import RemoteRoot
    from assembler.store.remote import RemoteError

    ensure = RemoteRoot.ensure

    def failing(self: RemoteRoot, path: Path) -> None:
        if path.name == "rollout.jsonl":
            raise RemoteError("the store refused the read")
        ensure(self, path)

    monkeypatch.setattr(RemoteRoot, "ensure", failing)
    app, remote = _indexed(bucket, tmp_path / "idx")  # no lifespan: the test runs the passes
    indexer = app.state.indexer
    indexer.run_pass()
    indexer.run_pass()
    assert indexer.indexed == 5 and indexer.progress() == {"done": 5, "pending": 1}
    warnings = [r.getMessage() for r in caplog.records if "cannot index" in r.getMessage()]
    assert warnings == [f"cannot index {bucket}/codex/rollout.jsonl: the store refused the read"]  # said once
    monkeypatch.setattr(RemoteRoot, "ensure", ensure)
    indexer.run_pass()
    assert indexer.indexed == 6 and indexer.progress() == {"done": 6, "pending": 0}
    hits = _search(remote, _words(Path(indexer.registry.roots[0][1]) / "codex/rollout.jsonl", 1)[0])["results"]
    assert "codex/rollout" in {h["session"] for h in hits}
    indexer.store.close()


def test_locations_are_named_and_printed_without_credentials_or_query() -> None:
    from assembler.store.remote import location_key, remote_name, shown

    url = "https://AKIDEXAMPLE:s3cr3t@example.com/logs/run.jsonl?X-Amz-Signature=deadbeef#frag"
    for text in (location_key(url), shown(url), remote_name(url)):
        assert "s3cr3t" not in text and "AKIDEXAMPLE" not in text and "deadbeef" not in text, text
    assert shown(url) == "https://***@example.com/logs/run.jsonl?***"
    assert remote_name(url) == "run.jsonl"
    key = location_key(url)
    assert key.startswith("https://example.com/logs/run.jsonl?") and key == location_key(url)
    assert key != location_key(url.replace("deadbeef", "cafe"))  # another signed URL: another key
    assert location_key("s3://bucket/prefix") == shown("s3://bucket/prefix") == "s3://bucket/prefix"
    assert shown("/local/odd?name.jsonl") == "/local/odd?name.jsonl"  # a local path is never cut


def test_serve_of_a_bucket_prints_its_index_file(bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from assembler.commands import serve

    monkeypatch.setattr(serve, "_open_browser", lambda url: None)

    class Stop(Exception):
        pass

    def no_run(self: Any, sockets: Any = None) -> None:
        raise Stop

    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", no_run)
    with pytest.raises(Stop):
        cli_main(["serve", bucket, "--port", "0", "--no-static", "--index-dir", str(tmp_path / "idx")])
    out = capsys.readouterr().out
    assert f"search index: {tmp_path / 'idx'}/sessions-" in out and "search index: off" not in out
