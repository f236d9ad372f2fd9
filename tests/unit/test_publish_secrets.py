"""``publish`` and secrets: a log holding (fake, real-shaped) API keys, tokens and a private key in a prompt, in
streamed text and tool arguments (split across deltas) and in a tool result is refused with one
``FILE: error: session SID: seq N: KIND found`` line per secret and never the secret, nothing written (an existing
site stays byte for byte); ``--redact`` publishes a site holding only markers whose pages the viewer still opens,
the log untouched; and the scanner's own rules (``server.secrets_scan``)."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from assembler.browser.viewer import Viewer
from assembler.cli import main as cli_main
from assembler.records import ChunksRecord, decode_page, encode, joined, record_range
from assembler.server import publish as publish_module
from assembler.server.secrets_scan import Scanner, find, marker, redact, redact_fragments
from assembler.server.site_paths import ALL_MESSAGES, CATALOG, site_path
from perf.load_follow import HEADER, append_batch
from tests.interop_support import interop_file
from tests.unit.test_publish_pages import make_viewer
from tests.unit.test_server import write_log

# Fake keys of real shapes, built from parts so that no scanner of this repository flags the test file itself.
AWS = "AKIA" + "Z7Q3RTVWXY2PLM5N"
GITHUB = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3bC5"
SLACK = "xoxb-" + "2048193847-7730294851-Zq8LmR2vN5tW9yB4cX7dF1hK"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
OPENAI = "sk-" + "proj-aZ3bY4cX5dW6eV7fU8gT" + "T3BlbkFJ" + "hS9iR0jQ1kP2lO3mN4nM"
PEM_BODY = "MIIEowIBAAKCAQEA7bq9mZ3xQvT5hJk2Jd8sLx0PqW4yR6uN1cV3bM9eZ7aX5gH2"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nk2Jd8sLx0PqW\n-----END RSA PRIVATE KEY-----\n"
SECRETS = {"AWS Access Key": AWS, "GitHub Token": GITHUB, "Slack Token": SLACK, "Stripe Access Key": STRIPE,
           "OpenAI Token": OPENAI, "Private Key": PEM_BODY}


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def secret_log(path: Path) -> dict[str, int]:
    """A session of our format holding every secret; answers the seq each kind is first seen at."""
    events: list[dict[str, Any]] = []
    seqs: dict[str, int] = {}

    def add(etype: str, data: Any, kinds: tuple[str, ...] = (), **extra: Any) -> int:
        seq = len(events)
        events.append({"type": etype, "seq": seq, "time": 1_700_000_000_000 + seq, "data": data, **extra})
        for kind in kinds:
            seqs.setdefault(kind, seq)
        return seq

    add("turn/start", {"turn": 1})
    add("user/message", {"id": "u1", "role": "user", "source": {"kind": "user"},
                         "content": [{"type": "text", "text": f"deploy with AWS_ACCESS_KEY_ID={AWS} please"}]},
        ("AWS Access Key",), surfaceOp="append")
    add("step/start", {"turn": 1, "step": 1})
    cited = [add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0}})]
    text = f"I will use the token {GITHUB} now."
    for n, piece in enumerate(pieces(text, 7)):  # the token straddles deltas
        kinds = ("GitHub Token",) if n == text.index(GITHUB) // 7 else ()  # the delta it begins in
        cited.append(add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": piece}}, kinds))
    cited.append(add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-end", "index": 0}}))
    cited.append(add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 1}}))
    args = '{"command": "curl -u ' + STRIPE + ': https://api.example.com/v1/charges"}'
    for n, piece in enumerate(pieces(args, 5)):
        kinds = ("Stripe Access Key",) if n == args.index(STRIPE) // 5 else ()
        cited.append(add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {
            "type": "tool-call-delta", "index": 1, "id": "call1", "name": "bash", "argumentsDelta": piece}}, kinds))
    cited.append(add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-end", "index": 1}}))
    add("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [
        {"type": "text", "text": text}, {"type": "tool-call", "id": "call1", "name": "bash", "arguments": args}],
        "source": {"kind": "model", "provider": "p", "model": "m"}, "id": "a1"}},
        surfaceOp="append", sourceEventSeqs=cited)
    add("tool/call", {"turn": 1, "step": 1, "callId": "call1", "name": "bash", "arguments": args})
    result = f"ok\nSLACK_TOKEN={SLACK}\nOPENAI_API_KEY={OPENAI}\n{PEM}"
    add("tool/result", {"turn": 1, "step": 1, "message": {
        "source": {"kind": "tool", "callId": "call1"}, "role": "user", "id": "r1", "content": [
            {"type": "tool-result", "toolCallId": "call1", "content": [{"type": "text", "text": result}],
             "isError": False}]}}, ("Slack Token", "OpenAI Token", "Private Key"), surfaceOp="append")
    add("step/end", {"turn": 1, "step": 1})
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(HEADER) + b"\n")
    append_batch(path, events)  # packed: the deltas become rows, as the JSONL backend writes them
    return seqs


def run(paths: list[Path], out: Path, static: Path, capsys: pytest.CaptureFixture[str],
        *extra: str) -> tuple[int, str, str]:
    code = cli_main(["publish", *map(str, paths), "-o", str(out), "--static", str(static), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def snapshot(out: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(out).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*")
            if p.is_file()}


def site_texts(out: Path) -> list[tuple[str, str]]:
    """Every file of the site as text (``.gz`` variants decompressed; ``.br`` ones hold the same bytes)."""
    texts = []
    for p in out.rglob("*"):
        if p.is_file() and not p.name.endswith(".br"):
            data = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
            texts.append((p.relative_to(out).as_posix(), data.decode("utf-8", "replace")))
    return texts


def leaks(text: str) -> list[str]:
    """The secrets ``text`` holds any 8 characters of (the provider prefixes excepted)."""
    return [kind for kind, secret in SECRETS.items()
            if any(secret[i:i + 8] in text for i in range(len(secret) - 7) if not secret[i:i + 8].isalpha())]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "logs"
    write_log(root / "clean.jsonl", 80, title="Clean one")
    return root, make_viewer(tmp_path), tmp_path / "site"


def test_refused_with_session_seq_and_kind_never_the_secret(folders: tuple[Path, Path, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    root, static, out = folders
    code, _, err = run([root], out, static, capsys)
    assert code == 0, err
    before = snapshot(out)
    log = root / "leaky.jsonl"
    seqs = secret_log(log)
    code, stdout, err = run([root], out, static, capsys)
    assert code == 1 and "published" not in stdout
    name = str(log)
    lines = [line for line in err.splitlines() if ": error: " in line]
    expected = {f"{name}: error: session leaky: seq {seq}: {kind} found" for kind, seq in seqs.items()}
    assert expected <= set(lines), (expected, lines)
    for line in lines:  # every line names the file, the session, the row and the kind: nothing else
        assert re.fullmatch(rf"{re.escape(name)}: error: session leaky: (seq \d+|list entry): [A-Za-z ]+ found",
                            line), line
    assert "nothing was written" in err and "--redact" in err
    assert leaks(err + stdout) == [], err
    assert snapshot(out) == before  # the old site whole: the same files, bytes and times
    fresh = out.parent / "fresh"
    assert run([log], fresh, static, capsys)[0] == 1 and not fresh.exists()  # a new site is not even begun


def test_redact_publishes_markers_the_viewer_opens(folders: tuple[Path, Path, Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root, static, out = folders
    log = root / "leaky.jsonl"
    seqs = secret_log(log)
    source = log.read_bytes()
    code, stdout, err = run([root], out, static, capsys, "--redact")
    assert code == 0, err
    assert f"{len(seqs)} secret(s) redacted in 1 session(s)" in stdout or "redacted in 1 session(s)" in stdout
    assert f"{log}: warning: session leaky: seq {seqs['AWS Access Key']}: AWS Access Key redacted" in err
    assert leaks(err + stdout) == []
    texts = site_texts(out)
    assert [(path, leaks(text)) for path, text in texts if leaks(text)] == []
    everything = "\n".join(text for _, text in texts)
    for kind in SECRETS:
        assert marker(kind) in everything, kind
    assert log.read_bytes() == source  # the log itself is never changed
    whole = (out / str(site_path("page", "leaky", max_messages=ALL_MESSAGES))).read_bytes()
    page = decode_page(whole)  # still a valid page, every row and seq kept
    assert [record_range(r) for r in page.records][-1][1] == max(seqs.values()) + 2  # step/end, turn/end
    rows = [r.event for r in page.records if isinstance(r, ChunksRecord)]
    assert any(marker("GitHub Token") in joined(row.data.fragments) for row in rows)
    assert all(all(row.data.fragments) for row in rows)  # no fragment emptied
    for path, paged in ((site_path("page", "leaky", max_messages=ALL_MESSAGES), False),
                        (site_path("page", "leaky"), True)):
        update = json.loads(Viewer().load_page((out / str(path)).read_bytes(), paged=paged))
        assert "error" not in update, update  # the viewer opens it, and shows the markers
        html = json.dumps(update["html"], ensure_ascii=False)
        assert marker("AWS Access Key") in html and marker("GitHub Token") in html and not leaks(html)
    # published redacted, the next publish without --redact does not keep it: it is refused again
    code, _, err = run([root], out, static, capsys)
    assert code == 1 and "AWS Access Key found" in err


def test_a_title_in_the_catalog_is_scanned(folders: tuple[Path, Path, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root, static, out = folders
    write_log(root / "titled.jsonl", 20, seed=2, title=f"use {AWS}")
    code, _, err = run([root], out, static, capsys)
    assert code == 1 and f"{root / 'titled.jsonl'}: error: session titled: list entry: AWS Access Key found" in err
    assert run([root], out, static, capsys, "--redact")[0] == 0
    titles = [e["title"] for e in json.loads((out / CATALOG).read_bytes())["sessions"]]
    assert f"use {marker('AWS Access Key')}" in titles and not leaks(str(titles))


def test_clean_logs_publish_as_before(folders: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    root, static, out = folders
    code, stdout, err = run([root], out, static, capsys)
    assert (code, err) == (0, "") and "redacted" not in stdout
    assert run([root], out, static, capsys, "--redact")[:2] == (0, stdout.replace("1 written, 0 unchanged",
                                                                                   "0 written, 1 unchanged"
                                                                                   ).replace("3 file(s) written",
                                                                                             "0 file(s) written"
                                                                                             ).replace(
        "bytes, 1 written", "bytes, 0 written"))  # the search index's shard: kept


def test_real_fixtures_hold_no_secret(tmp_path: Path) -> None:
    """The project's real logs (ours and every interop format) publish with no finding: the plugin set is not
    noisy on hashes, base64, ids and code."""
    roots = [str(interop_file("../deepseek-harness").resolve()), str(interop_file(".").resolve())]
    report = asyncio.run(publish_module.publish(roots, tmp_path / "site", static_dir=make_viewer(tmp_path)))
    assert report.findings == [] and not report.refused and report.sessions > 100


@pytest.mark.parametrize("kind", list(SECRETS))
def test_each_kind_is_found_and_redacted_whole(kind: str) -> None:
    secret = PEM if kind == "Private Key" else SECRETS[kind]
    text = f"before {secret} after"
    (found,) = find(text)
    assert found.kind == kind and text[found.start:found.end].strip() == secret.strip()
    assert redact(text, [found]) == f"before {marker(kind)}{' ' if kind != 'Private Key' else chr(10) + ' '}after"


def test_hashes_ids_and_code_are_not_secrets() -> None:
    text = ("commit 3f786850e387550fdab836ed7e6dc881de23001b sha256 "
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 uuid 9a08e199-69d7-4b85-bfa4-27b41a92672a"
            " data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6"
            "kgAAAABJRU5ErkJggg=="
            ' password = input("password: ") 10.0.0.1 8.8.8.8')
    assert find(text) == []


@pytest.mark.parametrize("size", [1, 2, 3, 7, 40])
def test_fragments_keep_their_count_and_join_to_the_redacted_text(size: int) -> None:
    text = f"a {GITHUB} b {AWS} c"
    fragments = pieces(text, size)
    found = find(text)
    out = redact_fragments(fragments, found)
    assert len(out) == len(fragments) and all(out)
    assert not leaks("".join(out))
    if len(GITHUB) <= size * len(marker("GitHub Token")):  # the marker had enough characters to spread
        assert "".join(out) == redact(text, found) or size == 1
    assert marker("AWS Access Key")[:-1] in "".join(out)


def test_scanner_reports_the_member_seq_of_a_row() -> None:
    fragments = ["x", "y ", GITHUB[:10], GITHUB[10:], " z"]
    page = {"records": [{"type": "chunks", "event": {"type": "chunkrow/text-chunks", "seq": 40, "time": 1, "data": {
        "turn": 1, "step": 1, "index": 0, "dt": [0] * 4, "texts": fragments}}}], "hasMore": False}
    data = encode(page)
    same, found = Scanner().page(data, redacting=False)
    assert same is data and found == [(42, "GitHub Token")]
    redacted, _ = Scanner().page(data, redacting=True)
    texts = decode_page(redacted).records[0].event.data.fragments
    assert len(texts) == 5 and joined(texts) == f"xy {marker('GitHub Token')} z"
