"""``publish``: a published site's pages and catalog are the bytes ``serve`` answers for the same requests, the
viewer's own requests land on the published files, the page's URL scheme (web/site.mjs) and the publish side's
(server/site_paths.py) agree, a republish rewrites only the sessions whose source changed and swaps the catalog
last, and a session that fails to parse is reported as FILE:LINE: error: while the rest are published."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette 1.10 nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.browser.viewer import Viewer
from assembler.cli import main as cli_main
from assembler.records import decode_page, record_range
from assembler.server import create_app
from assembler.server import site_files as site_files_module
from assembler.server.site_index import INDEX_DIR
from assembler.server.site_paths import ALL_MESSAGES, CATALOG, MANIFEST, MARKER, PAGE_SIZE, session_dir, site_path
from assembler.server.timeline_api import timeline_bytes
from tests.claude_projects import AGENT, PARENT, claude_projects
from tests.interop_support import interop_file
from tests.unit.test_server import write_log

ROOT = Path(__file__).resolve().parents[2]
LOCAL = "http://127.0.0.1"
EVAL = "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log/log_formats.eval"
OURS = "../deepseek-harness/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
"""A real log of our own format (a compaction in it); beside ``interop`` under the shared fixtures."""


def make_viewer(tmp: Path) -> Path:
    """A stand-in viewer build (the real one is only needed by the browser test)."""
    static = tmp / "viewer"
    (static / "pyodide").mkdir(parents=True)
    (static / "index.html").write_text('<!doctype html>\n<html><head>\n  <meta charset="utf-8">\n</head></html>\n')
    (static / "app.mjs").write_text("export const x = 1;\n" * 200)
    (static / "pyodide" / "snapshot.bin.gz").write_bytes(gzip.compress(b"heap" * 1000))
    return static


def sessions_folder(tmp: Path) -> Path:
    """Generated sessions (one of several pages), a damaged one, a real Claude Code project (parent, subagent,
    inline sidechains), a real log of our own format and a real Inspect log holding a sample."""
    root = claude_projects(tmp / "home")  # .../projects
    write_log(root / "gen" / "big.jsonl", 3000)
    write_log(root / "gen" / "small.jsonl", 60, seed=3, title="Small one")
    bad = root / "gen" / "bad.jsonl"
    write_log(bad, 40, seed=4)
    lines = bad.read_bytes().split(b"\n")
    bad.write_bytes(b"\n".join([*lines[:3], b"{not json", *lines[3:]]))
    shutil.copy(interop_file(EVAL), root / "gen" / "log_formats.eval")
    (root / "ours").mkdir()
    shutil.copy(interop_file(OURS), root / "ours" / "compaction.jsonl")
    then = time.time() - 3600  # idle files: a Claude Code turn left open reads the same a minute later
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))
    return root


def publish(root: Path, out: Path, static: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(["publish", str(root), "-o", str(out), "--static", str(static)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def catalog(out: Path) -> list[dict[str, Any]]:
    value: list[dict[str, Any]] = json.loads((out / CATALOG).read_bytes())["sessions"]
    return value


@pytest.fixture
def site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path, str]:
    root = sessions_folder(tmp_path)
    static = make_viewer(tmp_path)
    out = tmp_path / "site"
    code, _, err = publish(root, out, static, capsys)
    assert code == 1, err  # the damaged session
    return root, out, static, err


def test_pages_and_catalog_are_serves_answers(site: tuple[Path, Path, Path, str]) -> None:
    root, out, _, _ = site
    client = TestClient(create_app([root], serve_static=False), base_url=LOCAL)
    served = client.get("/api/sessions").json()["sessions"]
    published = catalog(out)
    assert [e["id"] for e in published] == [e["id"] for e in served]
    for mine, theirs in zip(published, served, strict=True):
        assert mine["path"] == f"{root.name}/{Path(theirs['path']).relative_to(root).as_posix()}"  # never absolute
        assert {**mine, "path": None} == {**theirs, "path": None}
    ids = {e["id"] for e in published}
    assert f"-src-experiments-claude_p/{PARENT}/subagents/{AGENT}" in ids  # the subagent, by the server's id
    assert any(e.get("parentSession") for e in published)  # and its link to its parent
    assert any(i.startswith("gen/log_formats/") for i in ids)  # an Inspect sample: FILE_ID/KEY
    assert "ours/compaction" in ids  # the real log of our own format
    manifest = json.loads((out / MANIFEST).read_bytes())
    assert manifest["layout"]["older"].format(dir=session_dir("gen/big"), beforeSeq=7) == site_path(
        "page", "gen/big", before=7)  # the manifest's templates are the scheme site_path answers by
    assert manifest["generated"].endswith("Z") and manifest["scheme"] == 2
    chained = timelines_agree = 0
    for entry in published:
        sid = entry["id"]
        base = f"/api/sessions/{'/'.join(sid.split('/'))}/page"
        first = client.get(base, params={"maxMessages": PAGE_SIZE}).content
        assert (out / str(site_path("page", sid))).read_bytes() == first, sid
        records = decode_page(first).records
        last = record_range(records[-1])[1] if records else -1
        expected = [site_path("page", sid), ]
        page = decode_page(first)
        while page.hasMore:
            before = record_range(page.records[0])[0]
            answer = client.get(base, params={"throughSeq": last, "beforeSeq": before, "maxMessages": PAGE_SIZE})
            path = site_path("page", sid, before=before)
            assert (out / str(path)).read_bytes() == answer.content, (sid, before)
            expected.append(path)
            page = decode_page(answer.content)
            assert page.records and record_range(page.records[-1])[1] == before - 1, (sid, before)  # no gap
            chained += 1
        whole = client.get(base, params={"throughSeq": last, "maxMessages": ALL_MESSAGES}).content
        expected.append(site_path("page", sid, max_messages=ALL_MESSAGES))
        assert (out / str(expected[-1])).read_bytes() == whole, sid
        everything = decode_page(whole).records
        if everything:  # the chain reaches back to the session's first record
            assert page.records and record_range(page.records[0])[0] == record_range(everything[0])[0], sid
        # The whole run's overview: folded from the whole-session file as published, and serve's answer when serve
        # reads the session through the same seq (an idle Claude Code log's open tail is closed by a later read).
        expected.append(site_path("timeline", sid))
        published_timeline = (out / str(expected[-1])).read_bytes()
        whole_page = decode_page(whole)
        assert published_timeline == timeline_bytes(whole_page.records, whole_page.hasMore, last), sid
        value = json.loads(published_timeline)
        assert value["scope"] == "run" and value["last"] == last, sid
        served_timeline = client.get(f"/api/sessions/{sid}/timeline")
        assert served_timeline.status_code == 200, (sid, served_timeline.text)
        if json.loads(served_timeline.content)["last"] == last:
            assert served_timeline.content == published_timeline, sid
            timelines_agree += 1
        assert manifest["sessions"][sid]["files"] == expected
    assert chained >= 2  # the big session has Load-older pages
    assert timelines_agree >= len(published) - 3  # all but the Claude Code sessions whose tail serve closed since
    big = json.loads((out / str(site_path("timeline", "gen/big"))).read_bytes())
    assert big["total"] > 0 and big["spans"][0]["seq"] < record_range(decode_page(
        (out / str(site_path("page", "gen/big"))).read_bytes()).records[0])[0]  # it reaches before the first page
    on_disk = {p.relative_to(out).as_posix() for p in (out / "sessions").rglob("*.json")}
    assert on_disk == {f for s in manifest["sessions"].values() for f in s["files"]}  # nothing else


def test_precompressed_variants_and_marked_viewer(site: tuple[Path, Path, Path, str]) -> None:
    import brotli  # type: ignore[import-untyped]

    _, out, static, _ = site
    plain = [p for p in out.rglob("*") if p.is_file() and not p.name.endswith((".gz", ".br"))]
    assert len(plain) > 10
    for path in plain:
        data = path.read_bytes()
        for suffix, unpack, pack in ((".gz", gzip.decompress, gzip.compress), (".br", brotli.decompress,
                                                                               brotli.compress)):
            variant = path.with_name(path.name + suffix)
            if variant.exists():
                assert unpack(variant.read_bytes()) == data, variant
            else:  # kept only when smaller (a tiny page's is not)
                assert len(pack(data)) >= len(data), variant
    assert not (out / "pyodide" / "snapshot.bin.gz.gz").exists()  # compressed files are stored as they are
    index = (out / "index.html").read_text()
    assert MARKER in index and index.replace(f"\n  {MARKER}", "") == (static / "index.html").read_text()


def test_viewer_requests_land_on_published_files(site: tuple[Path, Path, Path, str]) -> None:
    """The viewer's Python (as in the page's worker) opened on a published first page: every "Load older" it asks
    for is a published file, and the window it ends with is the whole session (its digest is all.json's)."""
    _, out, _, _ = site
    sid = "gen/big"
    viewer = Viewer()
    update = json.loads(viewer.load_page((out / str(site_path("page", sid))).read_bytes(), paged=True))
    assert update["canLoadOlder"]  # as in the page: "Load older" is enabled
    pages = 1
    while update.get("hasMore"):
        requests = json.loads(viewer.request_older(PAGE_SIZE))["requests"]
        (request,) = requests
        path = site_path("page", sid, before=request["before"], max_messages=request["maxMessages"])
        assert path is not None and (out / path).is_file(), request
        update = json.loads(viewer.answer_page(request["id"], (out / path).read_bytes()))
        assert "error" not in update, update
        pages += 1
    assert pages >= 3
    walked = json.loads(viewer.digest())["digest"]
    whole = Viewer()
    whole.load_page((out / str(site_path("page", sid, max_messages=ALL_MESSAGES))).read_bytes())
    assert json.loads(whole.digest())["digest"] == walked


def test_fault_reported_rest_published(site: tuple[Path, Path, Path, str]) -> None:
    root, out, _, err = site
    bad = root / "gen" / "bad.jsonl"
    name = os.path.relpath(bad) if bad.is_relative_to(Path.cwd()) else str(bad)
    assert f"{name}:4: error: " in err, err
    assert len(err.strip().splitlines()) == 1, err  # only it
    entries = {e["id"]: e for e in catalog(out)}
    assert entries["gen/bad"]["status"] == "damaged"
    page = json.loads((out / str(site_path("page", "gen/bad"))).read_bytes())
    assert page["records"] and page["error"]["line"] == 4  # its valid part, with its fault, as serve shows it
    assert entries["gen/big"]["status"] != "damaged" and (out / str(site_path("page", "gen/big"))).is_file()


def test_republish_rewrites_only_changed_sessions(site: tuple[Path, Path, Path, str], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root, out, static, _ = site

    def state() -> dict[str, tuple[int, int]]:
        return {p.relative_to(out).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
                for p in out.rglob("*") if p.is_file()}

    before = state()
    code, text, _ = publish(root, out, static, capsys)
    assert code == 1 and "0 written" in text and state() == before  # nothing changed: nothing written

    written: list[str] = []
    real = site_files_module._put

    def spy(path: Path, data: bytes) -> bool:
        done = real(path, data)
        if done:
            written.append(path.relative_to(out).as_posix())
        return done

    monkeypatch.setattr(site_files_module, "_put", spy)
    small = root / "gen" / "small.jsonl"
    write_log(small, 90, seed=3, title="Small one, longer")  # rewritten with more
    code, text, _ = publish(root, out, static, capsys)
    assert code == 1 and "1 written" in text, text
    after = state()
    changed = {p for p in after if before.get(p) != after[p]}
    small_dir = f"sessions/{session_dir('gen/small')}/"
    assert changed and all(p.startswith((small_dir, CATALOG, MANIFEST, f"{INDEX_DIR}/")) for p in changed), changed
    assert written[-1] == CATALOG and written[-2] == f"{CATALOG}.br"  # the catalog last (its variants just before)
    assert written.index(MANIFEST) < written.index(f"{CATALOG}.gz")
    assert next(e for e in catalog(out) if e["id"] == "gen/small")["title"] == "Small one, longer"

    small.unlink()  # a session gone: its files go, after the catalog no longer lists it
    code, text, _ = publish(root, out, static, capsys)
    assert not (out / small_dir).exists()
    assert "gen/small" not in {e["id"] for e in catalog(out)}
    assert "gen/small" not in json.loads((out / MANIFEST).read_bytes())["sessions"]


def test_republish_sees_a_change_that_keeps_size_and_mtime(site: tuple[Path, Path, Path, str],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The fingerprint hashes the whole file: an edit in the middle of a file, its size and mtime restored (``cp -p``,
    ``rsync -t``), is still a change."""
    root, out, static, _ = site
    wide = root / "gen" / "wide.jsonl"
    write_log(wide, 8000, seed=5)
    code, text, _ = publish(root, out, static, capsys)
    assert code == 1 and "1 written" in text, text  # the new session only
    data = wide.read_bytes()
    at = data.find(b'"text":"question ', len(data) // 2) + len(b'"text":"')
    assert 64 << 10 < at < len(data) - (64 << 10)  # far from both ends of the file
    st = wide.stat()
    wide.write_bytes(data[:at] + b"Q" + data[at + 1:])
    os.utime(wide, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (wide.stat().st_size, wide.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    code, text, _ = publish(root, out, static, capsys)
    assert code == 1 and "1 written" in text, text
    edited = data[at:data.index(b'"', at) + 1].replace(b"q", b"Q", 1)
    whole = (out / str(site_path("page", "gen/wide", max_messages=ALL_MESSAGES))).read_bytes()
    assert edited in whole and data[at:data.index(b'"', at) + 1] not in whole


def test_output_folder_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "logs"
    write_log(root / "a.jsonl", 20)
    static = make_viewer(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, _, err = publish(root, other, static, capsys)
    assert code == 2 and "not a published site" in err and (other / "notes.txt").read_text() == "mine"
    code, _, err = publish(root, root / "site", static, capsys)
    assert code == 2 and "inside the published folder" in err and not (root / "site").exists()
    code, _, err = publish(root, tmp_path / "new", tmp_path / "no-viewer", capsys)
    assert code == 2 and "no viewer build" in err
    code, text, err = publish(root, tmp_path / "new", static, capsys)
    assert code == 0 and err == "" and "published 1 session(s)" in text


IDS = ["gen/big", "a b/c?d#e%f", ".hidden/x", "ünï/çødé", "proj/uuid/subagents/agent-1", "log/sample_1_epoch_1",
       "x~y+z"]


def test_page_and_publish_url_schemes_agree() -> None:
    """web/site.mjs: requestUrl (published) and site_paths.site_path name the same file for every request."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is missing (the build needs it)")
        pytest.skip("node is missing")
    requests: list[dict[str, Any]] = [{"kind": "list"}]
    for sid in IDS:
        requests += [{"kind": "page", "id": sid, "through": None},
                     {"kind": "page", "id": sid, "through": 99, "before": 17, "maxMessages": PAGE_SIZE},
                     {"kind": "page", "id": sid, "through": 99, "maxMessages": ALL_MESSAGES},
                     {"kind": "page", "id": sid, "through": 99, "before": 17, "maxMessages": 7},
                     {"kind": "follow", "id": sid, "maxMessages": PAGE_SIZE},
                     {"kind": "timeline", "id": sid}]
    script = ("globalThis.self = { location: { search: '' } };\n"  # config.mjs reads the page's query
              "const { requestUrl } = await import('./web/site.mjs');\n"
              f"const requests = {json.dumps(requests)};\n"
              "console.log(JSON.stringify(requests.map((r) => requestUrl(r, true))));\n")
    done = subprocess.run([node, "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    page_side = json.loads(done.stdout)
    publish_side = [site_path(r["kind"], r.get("id"), before=r.get("before"),
                              max_messages=r.get("maxMessages", PAGE_SIZE)) for r in requests]
    assert page_side == publish_side
    assert all(p is None or all(c.isascii() and (c.isalnum() or c in "._-~/") for c in p) for p in publish_side)
    assert len({session_dir(s) for s in IDS}) == len(IDS) and not any(session_dir(s).startswith(".") for s in IDS)


def test_the_same_bytes_written_again_are_compressed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assembler.server import site_files

    calls: list[bytes] = []

    def packer(data: bytes) -> bytes:
        calls.append(data)
        return gzip.compress(data, mtime=0)

    monkeypatch.setattr(site_files, "VARIANTS", ((".gz", packer),))
    monkeypatch.setattr(site_files, "_packed", {})
    one, two = b"first page " * 500, b"another page " * 500
    site_files.write_file(tmp_path / "a" / "page.json", one)
    site_files.write_file(tmp_path / "a" / "all.json", one)  # a one-page session: its whole session is its page
    site_files.write_file(tmp_path / "b" / "page.json", two)
    assert calls == [one, two]
    for rel, data in (("a/page.json", one), ("a/all.json", one), ("b/page.json", two)):
        assert (tmp_path / rel).read_bytes() == data and gzip.decompress((tmp_path / f"{rel}.gz").read_bytes()) == data
    for n in range(site_files._PACKED_KEPT + 1):  # only the last few are kept
        site_files.write_file(tmp_path / "c" / f"{n}.json", b"filler %d " % n * 300)
    site_files.write_file(tmp_path / "d.json", one)
    assert calls.count(one) == 2
