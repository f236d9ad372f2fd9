"""Bad input: a malformed file shows a visible error naming the line with the valid part still shown; a 100 MB file
shows progress while the page stays responsive (the worker parses it; the main thread only paints)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer

BIG_TARGET_BYTES = 100_000_000


def two_turns() -> Session:
    s = Session("malformed")
    s.user("The first question, which is valid.")
    s.assistant([("text", "The first answer, also valid.")])
    s.end_step()
    s.end_turn()
    s.user("The second question, after which the file breaks.")
    s.assistant([("text", "An answer that never arrives.")])
    s.end_step()
    s.end_turn()
    return s


def test_malformed_line_shows_a_banner_naming_it_and_keeps_the_valid_part(viewer: Viewer) -> None:
    lines = two_turns().to_bytes().split(b"\n")
    broken_at = 12  # 1-based line number of the damage
    lines[broken_at - 1] = b'{"type": "assistant/chunk", "data": {"turn": 2, oops'
    result = viewer.open_file(viewer.add_file("malformed.jsonl", b"\n".join(lines)))
    assert result["error"]["line"] == broken_at
    banner = viewer.page.locator("[role=alert]")
    assert banner.count() == 1
    assert banner.is_visible()
    assert banner.inner_text().startswith(f"malformed.jsonl, line {broken_at}: invalid JSON")
    assert "Everything before it is shown" in banner.inner_text()
    text = viewer.render_all()
    assert "The first question, which is valid." in text
    assert "The first answer, also valid." in text
    assert "An answer that never arrives." not in text


def test_malformed_chunk_row_names_its_line(viewer: Viewer) -> None:
    s = two_turns()
    header, *records = s.to_bytes().split(b"\n")
    row = {"type": "text-chunks", "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2, 3], "texts": ["a", "b"]}}
    records.insert(3, json.dumps(row).encode())
    result = viewer.open_file(viewer.add_file("bad-row.jsonl", b"\n".join([header, *records])))
    assert result["error"]["line"] == 5
    assert "dt" in result["error"]["message"]
    assert viewer.page.locator("[role=alert]").inner_text().startswith("bad-row.jsonl, line 5")


def test_a_good_file_clears_the_banner(viewer: Viewer) -> None:
    result = viewer.open_file(viewer.add_file("good.jsonl", two_turns().to_bytes()))
    assert result["error"] is None
    assert viewer.page.locator("[role=alert]").is_hidden()


def test_truncated_zstd_file_is_reported(viewer: Viewer) -> None:
    import zstandard

    data = zstandard.ZstdCompressor().compress(two_turns().to_bytes())
    result = viewer.open_file(viewer.add_file("cut.jsonl.zst", data[: len(data) // 2]))
    assert result["error"] is not None
    assert "zstd" in result["error"]["message"] or "truncated" in result["error"]["message"]
    assert viewer.page.locator("[role=alert]").is_visible()


def damaged_zstd(damage: str) -> bytes:
    """two_turns() as two zstd frames split mid-line, then damaged: the second frame cut in half, missing, or
    followed by garbage."""
    import zstandard

    text = two_turns().to_bytes()
    cut = text.index(b"\n", len(text) // 2) - 7  # inside a line
    first, second = (zstandard.ZstdCompressor().compress(part) for part in (text[:cut], text[cut:]))
    return {"cut": first + second[: len(second) // 2], "missing-frame": first,
            "garbage": first + second + b"not zstd"}[damage]


@pytest.mark.parametrize("damage", ["cut", "missing-frame", "garbage"])
def test_damaged_zstd_is_an_error_that_keeps_what_came_before_as_on_cpython(viewer: Viewer, damage: str) -> None:
    """The worker decodes with Python 3.14's ``compression.zstd``; CPython here with ``zstandard``: both report the
    same damage at the same place and keep the same events (issue 9 item 3)."""
    from assembler.browser.local import FileLoad

    data = damaged_zstd(damage)
    expected = FileLoad("x.jsonl.zst", len(data))
    expected.feed(data)
    outcome = expected.outcome(expected.finish())
    backend = viewer.run_python(
        "import json, sys\nfrom assembler.store import zstd\n"
        "json.dumps([list(sys.version_info[:2]), zstd._std is not None])")
    assert backend == [[3, 14], True]
    result = viewer.open_file(viewer.add_file(f"{damage}.jsonl.zst", data))
    assert result["error"]["message"] == outcome["error"]["message"]
    assert result["error"]["message"].startswith(
        "garbage after the last zstd frame" if damage == "garbage" else "truncated zstd stream after")
    assert result["file"]["events"] == outcome["file"]["events"] > 0
    assert viewer.page.locator("[role=alert]").is_visible()
    assert "The first question, which is valid." in viewer.render_all()


def big_session(path: Path, target: int = BIG_TARGET_BYTES) -> int:
    """Writes a ~``target``-byte packed session of many turns with long streamed answers; returns its size.

    Each turn streams 2,000 text deltas of ~100 characters as one packed row, then the settled message."""
    fragments = 2000
    piece = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore "
    enc = json.JSONEncoder(separators=(",", ":")).encode
    seq, t = 0, 1_767_225_600_000
    with path.open("w", encoding="utf-8") as out:
        out.write(enc({"type": "session", "version": 0, "id": "big", "createdAt": t}) + "\n")
        turn = 0
        while out.tell() < target:
            turn += 1
            texts = [f"{turn}:{k} {piece}" for k in range(fragments)]
            full = "".join(texts)

            def event(etype: str, data: object, **extra: object) -> None:
                nonlocal seq, t
                out.write(enc({"type": etype, "seq": seq, "time": t, "data": data, **extra}) + "\n")
                seq += 1
                t += 5

            event("turn/start", {"turn": turn})
            event("user/message", {"id": f"u{turn}", "role": "user", "source": {"kind": "user"},
                                   "content": [{"type": "text", "text": f"Question {turn}"}]}, surfaceOp="append")
            event("step/start", {"turn": turn, "step": 1})
            first_chunk = seq
            event("assistant/chunk", {"turn": turn, "step": 1,
                                      "chunk": {"type": "block-start", "index": 0, "blockType": "text"}})
            row = {"turn": turn, "step": 1, "index": 0, "dt": [1] * (fragments - 1), "texts": texts}
            out.write(enc({"type": "text-chunks", "seq0": seq, "time0": t, "data": row}) + "\n")
            seq += fragments
            t += fragments
            event("assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": "block-end", "index": 0,
                                                                       "block": {"type": "text", "text": full}}})
            sources = list(range(first_chunk, seq))
            event("assistant/message", {"turn": turn, "step": 1, "message": {
                "role": "assistant", "content": [{"type": "text", "text": full}],
                "source": {"kind": "model", "provider": "p", "model": "m"}, "id": f"a{turn}"}},
                  sourceEventSeqs=sources, surfaceOp="append")
            event("step/end", {"turn": turn, "step": 1})
            event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        return out.tell()


@pytest.fixture(scope="module")
def big_file(viewer: Viewer, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    path = viewer.served.files / "big.jsonl"
    size = big_session(path)
    return "/__test__/big.jsonl", size


def test_100_mb_file_shows_progress_and_the_page_stays_responsive(viewer: Viewer,
                                                                   big_file: tuple[str, int]) -> None:
    path, size = big_file
    assert size >= BIG_TARGET_BYTES
    page = viewer.page
    page.evaluate(
        """async (path) => {
            const bytes = await (await fetch(path)).arrayBuffer();
            const file = new File([bytes], "big.jsonl");
            const probe = window.__probe = { ticks: 0, maxGap: 0, progress: new Set(), clicks: [], done: false };
            let last = performance.now();
            probe.timer = setInterval(() => {
                const now = performance.now();
                probe.maxGap = Math.max(probe.maxGap, now - last);
                last = now;
                probe.ticks += 1;
                const bar = document.getElementById("progress-bar");
                const shown = !document.getElementById("progress").hidden;
                if (shown && bar.hasAttribute("value")) probe.progress.add(bar.value);
            }, 10);
            document.getElementById("theme-toggle").addEventListener("click", (e) => {
                probe.clicks.push(performance.now() - e.timeStamp);
            });
            probe.started = performance.now();
            probe.promise = window.transcriptViewer.openFile(file).then((r) => {
                probe.result = r;
                probe.ms = performance.now() - probe.started;
                probe.done = true;
                clearInterval(probe.timer);
            }, (err) => { probe.error = String(err); probe.done = true; clearInterval(probe.timer); });
        }""",
        path,
    )
    # While the worker reads the file: progress is visible, and a real click is handled promptly.
    page.wait_for_function("() => window.__probe.progress.size >= 2 || window.__probe.done", timeout=120_000)
    assert page.evaluate("() => window.__probe.done") is False, "the load finished before progress could be seen"
    theme = page.evaluate("() => document.documentElement.dataset.theme")
    started = time.perf_counter()
    page.click("#theme-toggle")
    click_wall_ms = (time.perf_counter() - started) * 1000
    assert page.evaluate("() => document.documentElement.dataset.theme") != theme
    page.wait_for_function("() => window.__probe.done", timeout=300_000)
    probe = page.evaluate(
        "() => ({ticks: __probe.ticks, maxGap: __probe.maxGap, progress: __probe.progress.size, clicks: __probe.clicks,"
        " ms: __probe.ms, error: __probe.error, result: __probe.result})"
    )
    page.click("#theme-toggle")  # restore the theme
    print(f"\n100 MB load: {probe['ms']:.0f} ms, {probe['progress']} progress values, main-thread max gap "
          f"{probe['maxGap']:.0f} ms over {probe['ticks']} ticks, click latency {probe['clicks']} ms "
          f"(wall {click_wall_ms:.0f} ms), worker ms {probe['result'] and probe['result']['ms']}")
    assert probe["error"] is None
    result = probe["result"]
    assert result["error"] is None
    assert result["file"]["bytes"] == size
    assert probe["progress"] >= 3
    assert probe["clicks"] and probe["clicks"][0] < 1000
    # Generous bound: a main thread that parsed 100 MB would stall for many seconds, not a fraction of one.
    assert probe["maxGap"] < 1000
    # The tail page (50 messages) is shown; older history comes from "Load older".
    assert page.locator("#load-older").is_visible()
    assert result["chatNodes"] > 0
    turns = [int(n) for n in re.findall(r"(\d+):\d+ lorem", page.inner_text("#transcript"))]
    assert turns and max(turns) >= 100  # the newest turn is on screen
