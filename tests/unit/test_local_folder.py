"""browser/folder on CPython: a folder opened in the page, driven as the worker drives it (sidecars and heads first,
then each file in the order Python gives, in slices), becomes list entries of the server's shape; a project's files
are read oldest first and a record an older file holds is a duplicate; a file is opened again with the same
context; a file of no known format is damaged, a ``.json`` that is no log and a sidecar are left out."""

from __future__ import annotations

import copy
import io
import json
import os
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

from assembler.browser import Viewer
from assembler.browser.folder import LocalFolder, is_candidate
from tests.claude_projects import (
    AGENT,
    AGENT_PROMPT,
    CWD,
    EMPTY,
    INLINE,
    INLINE_CWD,
    META,
    PARENT,
    WARMUP_AGENT,
    add_resumed,
    add_warmup,
    claude_projects,
    records_of,
)
from tests.interop_support import interop_file

INSPECT = "inspect/UKGovernmentBEIS+inspect_ai@499e615/tests/log/test_eval_log"
CODEX = ("codex/codemie-ai+codemie-code@8e8d4ce/src/agents/plugins/codex/__tests__/fixtures/"
         "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")


def describe(viewer: Viewer, root: Path, piece: int = 4096) -> list[dict[str, Any]]:
    """What the worker does with a picked folder (web/worker.mjs describeFolder), reading ``root`` from disk."""
    files = [{"path": p.relative_to(root.parent).as_posix(), "size": p.stat().st_size,
              "lastModified": p.stat().st_mtime * 1000} for p in sorted(root.rglob("*")) if p.is_file()]
    needs = json.loads(viewer.folder_open(json.dumps(files).encode()))
    for path in needs["sidecars"]:
        viewer.folder_give("sidecar", path, (root.parent / path).read_bytes()[: needs["sidecarBytes"]])
    for path in needs["heads"]:
        viewer.folder_give("head", path, (root.parent / path).read_bytes()[: needs["headBytes"]])
    for path in json.loads(viewer.folder_order()):
        viewer.folder_read_begin(path)
        data = (root.parent / path).read_bytes()
        for at in range(0, len(data), piece):
            answer = json.loads(viewer.folder_read_feed(data[at:at + piece]))
            assert "go" in answer, (path, answer.get("error"))  # never an internal error
            if not answer["go"]:
                break
        viewer.folder_read_finish()
    return json.loads(viewer.folder_entries())  # type: ignore[no-any-return]


def open_entry(viewer: Viewer, root: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """Opening a listed entry (web/worker.mjs openLocal): the file read again, with the folder's context."""
    path, key = entry["local"]["path"], entry["local"]["key"]
    data = (root.parent / path).read_bytes()
    viewer.file_begin(path.rsplit("/", 1)[-1], len(data), key, path)
    viewer.file_feed(data)
    return json.loads(viewer.file_finish(True))  # type: ignore[no-any-return]


def age(root: Path, seconds: float = 3600) -> None:
    """Every file last written ``seconds`` ago (an idle project: the newest responses are complete)."""
    when = time.time() - seconds
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (when, when))


def test_candidates_are_the_tables_suffixes_but_not_sidecars() -> None:
    assert is_candidate("p/s.jsonl") and is_candidate("log.eval") and is_candidate("x.traj.json")
    assert not is_candidate("p/s/subagents/agent-a.meta.json")
    assert not is_candidate("notes.txt") and not is_candidate("picture.png")
    folder = LocalFolder([{"path": "p/s.jsonl", "size": 3, "lastModified": 1},
                          {"path": "p/agent-a.jsonl", "size": 3, "lastModified": 1},
                          {"path": "p/agent-a.meta.json", "size": 3, "lastModified": 1},
                          {"path": "p/readme.md", "size": 3, "lastModified": 1}])
    needs = folder.needs()
    assert needs["sidecars"] == ["p/agent-a.meta.json"] and needs["heads"] == ["p/agent-a.jsonl", "p/s.jsonl"]


def test_a_claude_projects_folder_lists_each_session_with_what_grouping_needs(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    age(projects)
    entries = describe(Viewer(), projects)
    by_id = {e["id"]: e for e in entries}
    app = "projects/-src-experiments-claude_p"
    parent = by_id[f"{app}/{PARENT}.jsonl"]
    child = by_id[f"{app}/{PARENT}/subagents/{AGENT}.jsonl"]
    assert parent["cwd"] == child["cwd"] == CWD  # the header's cwd: the project, not the encoded folder name
    assert parent["harness"] == child["harness"] == "Claude Code" and parent["format"] == "claude-code"
    assert parent["sessionId"] == PARENT and child["parentSession"] == PARENT  # the child is listed under it
    assert child["subagentLabel"] == META["description"]  # from the .meta.json beside it
    assert child["title"].startswith(AGENT_PROMPT)
    assert parent["turnCount"] == 1 and parent["model"] == "claude-opus-4-5-20251101"
    assert parent["usage"]["cacheReadTokens"] > 0 and parent["status"] == "ended"
    assert parent["local"] == {"path": f"{app}/{PARENT}.jsonl", "key": None}
    empty = by_id[f"projects/-Users-dain-workspace-JSSoundRecorder/{EMPTY}.jsonl"]
    assert empty["eventCount"] == 0 and empty["error"] is None and empty["lastActivitySource"] == "mtime"
    inline = [e for e in entries if e["local"]["path"].endswith(f"{INLINE}.jsonl")]
    main = next(e for e in inline if e["local"]["key"] is None)
    sidechains = [e for e in inline if e["local"]["key"] is not None]
    assert main["cwd"] == INLINE_CWD and sidechains
    assert all(e["parentSession"] == main["sessionId"] and e["id"] == f"{main['id']}/{e['local']['key']}"
               for e in sidechains)
    assert not any(e["file"].endswith(".meta.json") for e in entries)  # the sidecar is no session


def test_a_warm_up_agent_is_marked_for_the_list_to_hide(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    add_warmup(projects)
    entries = describe(Viewer(), projects)
    warm = next(e for e in entries if e["file"] == f"{WARMUP_AGENT}.jsonl")
    assert warm["warmup"] is True and warm["parentSession"] == PARENT
    assert sum(1 for e in entries if e.get("warmup")) == 1


def test_entries_are_what_the_server_lists_for_the_same_folder(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from assembler.server import create_app

    projects = claude_projects(tmp_path)
    age(projects)
    local = describe(Viewer(), projects, piece=1 << 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = TestClient(create_app([projects], serve_static=False), base_url="http://localhost")
    served = client.get("/api/sessions").json()["sessions"]
    assert len(served) == len(local) == 5
    same = ("title", "file", "eventCount", "turnCount", "model", "status", "error", "bytes", "format", "harness",
            "cwd", "usage", "warmup", "sessionId", "parentSession", "subagentLabel", "lastActivitySource")
    # A served id is the path under the root without its suffix; a local one is the path in the folder.
    keyed = {e["id"]: e for e in served}
    for entry in local:
        path, key = entry["local"]["path"], entry["local"]["key"]
        sid = path.split("/", 1)[1].removesuffix(".jsonl") + (f"/{key}" if key else "")
        other = keyed[sid]
        assert {k: entry.get(k) for k in same} == {k: other.get(k) for k in same}, sid
        if entry["lastActivitySource"] == "events":
            assert entry["lastActivity"] == other["lastActivity"]
        else:
            assert abs(entry["lastActivity"] - other["lastActivity"]) <= 1  # the file's mtime, in ms


def test_a_resumed_session_lists_and_opens_only_what_its_project_did_not_hold_before(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    original, resumed = add_resumed(projects)
    viewer = Viewer()
    entries = {e["id"].rsplit("/", 1)[-1]: e for e in describe(viewer, projects)}
    alone = describe(Viewer(), _only(tmp_path / "alone", original))
    assert entries[f"{PARENT}.jsonl"]["turnCount"] == alone[0]["turnCount"] == 1  # the original is whole
    assert entries[f"{PARENT}.jsonl"]["usage"] == alone[0]["usage"]
    assert entries["0resumed.jsonl"]["turnCount"] == 1  # its own turn only; the copied turn is the original's
    copied_usage = alone[0]["usage"]
    assert entries["0resumed.jsonl"].get("usage", {}).get("cacheReadTokens", 0) < copied_usage["cacheReadTokens"]
    # Opened from the list, each copied record is kept raw, naming the file that holds it first.
    value = open_entry(viewer, projects, entries["0resumed.jsonl"])
    assert value["error"] is None
    raws = [e for e in viewer.window.load_result.records if e["type"] == "interop/raw"]  # type: ignore[union-attr]
    duplicates = [e["data"]["duplicateOf"] for e in raws if "duplicateOf" in e["data"]]
    assert len(duplicates) == sum(1 for r in records_of(original) if "uuid" in json.loads(r))  # every record with one
    assert {d["file"] for d in duplicates} == {f"projects/-src-experiments-claude_p/{PARENT}.jsonl"}
    # Opened alone (the file picker), the same file is complete (FORMATS §4.8).
    data = resumed.read_bytes()
    alone_viewer = Viewer()
    alone_viewer.file_begin(resumed.name, len(data))
    alone_viewer.file_feed(data)
    json.loads(alone_viewer.file_finish(True))
    assert not any("duplicateOf" in e["data"] for e in alone_viewer.window.load_result.records  # type: ignore[union-attr]
                   if e["type"] == "interop/raw")


def _only(folder: Path, path: Path) -> Path:
    folder.mkdir()
    (folder / path.name).write_bytes(path.read_bytes())
    st = path.stat()
    os.utime(folder / path.name, (st.st_atime, st.st_mtime))
    return folder


def test_a_summary_in_another_file_titles_the_session_holding_its_leaf(tmp_path: Path) -> None:
    projects = claude_projects(tmp_path)
    app = projects / "-src-experiments-claude_p"
    leaf = json.loads(records_of(app / f"{PARENT}.jsonl")[-1])["uuid"]
    summary = {"type": "summary", "summary": "Exploring claude-code-log", "leafUuid": leaf}
    (app / "summaries.jsonl").write_text(json.dumps(summary) + "\n")
    age(projects)
    entries = describe(Viewer(), projects)
    parent = next(e for e in entries if e["id"].endswith(f"{PARENT}.jsonl"))
    assert parent["title"] == "Exploring claude-code-log"
    assert not any(e["file"] == "summaries.jsonl" for e in entries)  # a file of summaries is no session


def _two_sample_eval() -> bytes:
    """The real .eval fixture with a second sample: the first one copied under id 2 with its own prompt."""
    source = zipfile.ZipFile(io.BytesIO(interop_file(f"{INSPECT}/log_formats.eval").read_bytes()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in source.infolist():
            z.writestr(info.filename, source.read(info.filename))
        sample = json.loads(source.read("samples/1_epoch_1.json"))
        second = copy.deepcopy(sample)
        second["id"] = 2
        z.writestr("samples/2_epoch_1.json", json.dumps(second))
    return out.getvalue()


def test_other_formats_in_a_folder_damaged_files_and_json_that_is_no_log(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    (root / "run.eval").write_bytes(_two_sample_eval())
    (root / "rollout.jsonl").write_bytes(interop_file(CODEX).read_bytes())
    (root / "notes.jsonl").write_bytes(b"this is not a log\n" * 1000)
    (root / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0"}))
    (root / "readme.md").write_text("# hi")
    viewer = Viewer()
    entries = describe(viewer, root)
    files = sorted({e["file"] for e in entries})
    assert files == ["notes.jsonl", "rollout.jsonl", "run.eval"]  # package.json is left out, readme.md not read
    notes = next(e for e in entries if e["file"] == "notes.jsonl")
    assert notes["status"] == "damaged" and "not a known session log" in notes["error"] and "tried:" in notes["error"]
    samples = [e for e in entries if e["file"] == "run.eval"]
    assert [e["local"]["key"] for e in samples] == ["1_epoch_1", "2_epoch_1"]
    assert [e["id"] for e in samples] == ["logs/run.eval/1_epoch_1", "logs/run.eval/2_epoch_1"]
    assert all(e["harness"] == "Inspect AI" for e in samples)
    codex = next(e for e in entries if e["file"] == "rollout.jsonl")
    assert codex["harness"] == "Codex" and codex["cwd"] == "/Users/Sample_User/naya"
    value = open_entry(viewer, root, samples[1])
    assert value["error"] is None and value["session"] == "2_epoch_1"


def test_a_file_of_no_known_format_is_not_read_past_its_first_slice(tmp_path: Path) -> None:
    viewer = Viewer()
    viewer.folder_open(json.dumps([{"path": "f/big.jsonl", "size": 1 << 30, "lastModified": 0}]).encode())
    viewer.folder_read_begin("f/big.jsonl")
    assert json.loads(viewer.folder_read_feed(b"\x00" * 4096)) == {"go": False}
    entries = json.loads(viewer.folder_read_finish())
    assert entries[0]["status"] == "damaged"
    # Opening a file (the file picker): the progress of the first slice says the parse failed (the worker stops).
    viewer.file_begin("big.jsonl", 1 << 30)
    assert json.loads(viewer.file_feed(b"PK\x03\x04" + bytes(4092)))["error"]
    value = json.loads(viewer.file_finish())
    assert value["error"]["nothingRead"] is True and "tried:" in value["error"]["message"]


@pytest.mark.parametrize("call", ["folder_order", "folder_read_finish"])
def test_folder_calls_out_of_order_raise(call: str) -> None:
    from assembler.browser.guard import CallOrderError

    with pytest.raises(CallOrderError):
        getattr(Viewer(), call)()
