"""Opening local files (issue 23 item 7): a second open while a big file is still being read cancels the first (its
bytes never reach the second's parse, which once reported a valid file as ``line 1: invalid JSON``), and a file
whose parse passes the page's Python memory limit is an alert saying it is too big for the page, how big it is,
and that ``serve`` opens it (past the real limit, a 1.1 GB log came back as garbage bytes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from session_builder import Session

if TYPE_CHECKING:
    from conftest import Viewer


def _big_log(path: Path, target: int, marker: str) -> int:
    """A valid session of many short turns (each a user message), ``target`` bytes or a little more."""
    enc = json.JSONEncoder(separators=(",", ":")).encode
    seq, t = 0, 1_767_225_600_000
    pad = "lorem ipsum dolor sit amet " * 8
    with path.open("w", encoding="utf-8") as out:
        out.write(enc({"type": "session", "version": 0, "id": "alpha", "createdAt": t}) + "\n")
        turn = 0
        while out.tell() < target:
            turn += 1
            for etype, data, extra in (
                ("turn/start", {"turn": turn}, {}),
                ("user/message", {"id": f"u{turn}", "role": "user", "source": {"kind": "user"},
                                  "content": [{"type": "text", "text": f"{marker} {turn} {pad}"}]},
                 {"surfaceOp": "append"}),
                ("turn/end", {"turn": turn, "reason": {"kind": "completed"}}, {}),
            ):
                out.write(enc({"type": etype, "seq": seq, "time": t, "data": data, **extra}) + "\n")
                seq += 1
                t += 3
        return out.tell()


@pytest.fixture(scope="module")
def alpha(viewer: Viewer) -> str:
    _big_log(viewer.served.files / "alpha.jsonl", 40_000_000, "ALPHA-FILE")  # 10 slices of 4 MB
    return "/__test__/alpha.jsonl"


def _bravo(viewer: Viewer) -> str:
    s = Session("bravo")
    s.user("BRAVO-FILE: the second file, which is valid.")
    s.assistant([("text", "BRAVO answer.")])
    s.end_step()
    s.end_turn()
    return viewer.add_file("bravo.jsonl", s.to_bytes())


def test_a_second_open_cancels_the_one_in_flight(viewer: Viewer, alpha: str) -> None:
    bravo = _bravo(viewer)
    alone = viewer.open_file(bravo, all=True)
    assert alone["error"] is None and alone["digest"]
    page = viewer.page
    page.evaluate(
        """async ([alpha]) => {
            const a = new File([await (await fetch(alpha)).blob()], "alpha.jsonl");
            const race = window.__race = { ticks: Number(document.documentElement.dataset.progressTicks || 0) };
            race.first = window.transcriptViewer.openFile(a, { all: true }).then(
                (r) => { race.firstResult = r; }, (e) => { race.firstError = String(e); });
        }""",
        [alpha],
    )
    # The first file is being read (a progress message arrived), not yet parsed whole: open the second now.
    page.wait_for_function(
        "() => Number(document.documentElement.dataset.progressTicks || 0) >= window.__race.ticks + 2"
        " || window.__race.firstResult || window.__race.firstError", timeout=60_000)
    outcome = page.evaluate(
        """async ([bravo]) => {
            const race = window.__race;
            const early = Boolean(race.firstResult || race.firstError);
            const b = new File([await (await fetch(bravo)).arrayBuffer()], "bravo.jsonl");
            const second = await window.transcriptViewer.openFile(b, { all: true });
            await race.first;
            return { early, second, first: race.firstResult ?? null, firstError: race.firstError ?? null,
                     title: document.getElementById("session-title").textContent };
        }""",
        [bravo],
    )
    assert not outcome["early"], "the first file was read whole before the second open: no race was run"
    assert outcome["firstError"] is None, outcome["firstError"]
    assert outcome["first"]["cancelled"] is True
    second = outcome["second"]
    assert second["error"] is None, second["error"]  # never "line 1: invalid JSON" from mixed bytes
    assert second["digest"] == alone["digest"]  # exactly what opening the second file alone shows
    assert outcome["title"] == "bravo.jsonl"
    assert page.locator("[role=alert]").is_hidden()
    text = viewer.render_all()
    assert "BRAVO-FILE" in text and "ALPHA-FILE" not in text


def test_a_file_past_the_memory_limit_says_it_is_too_big_and_that_serve_opens_it(viewer: Viewer,
                                                                                 alpha: str) -> None:
    page = viewer.page
    heap = int(page.evaluate("() => window.transcriptViewer.heapSize()"))
    limit = heap // 2  # already passed: the first slice stops the open, as a real log stops near the real limit
    result = page.evaluate(
        """async ([alpha, limit]) => {
            const a = new File([await (await fetch(alpha)).blob()], "alpha.jsonl");
            return await window.transcriptViewer.openFile(a, { heapLimit: limit });
        }""",
        [alpha, limit],
    )
    message = result["error"]["message"]
    size_mb = f"{(viewer.served.files / 'alpha.jsonl').stat().st_size / 1e6:,.1f} MB"
    assert message.startswith("alpha.jsonl is too big to open in the page: it is " + size_mb), message
    assert "`transcript-assembler serve` opens it" in message
    alert = page.locator("[role=alert]")
    assert alert.is_visible() and alert.inner_text().startswith("alpha.jsonl is too big to open in the page")
    assert "\ufffd" not in alert.inner_text() and "\x00" not in alert.inner_text()
    # The page stays usable: the next file opens as usual.
    after = viewer.open_file(_bravo(viewer), all=True)
    assert after["error"] is None and page.locator("[role=alert]").is_hidden()
