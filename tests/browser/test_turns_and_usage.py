"""What the page shows of turns and numbers (issue 12 items 5-6, issue 10 item 4 links): no durations from rebuilt
times, token usage and models where the log records them (per turn and in the header), the turn tail as the last row
of its turn on every real log that has one, one "Interrupted" per interruption, turn dividers, subagent links."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, Any

from conversation_support import Session, assemble_page, page
from corpus import FIXTURES, session_logs
from test_goldens import COLLECT, corpus_present

from assembler.render.texts import token_count_text
from assembler.store.jsonl import read_session

if TYPE_CHECKING:
    from conftest import Viewer

SNAPSHOTS = FIXTURES / "apps" / "web" / "tests" / "snapshots"


def shown_rows(viewer: Viewer, rel: str) -> list[dict[str, Any]]:
    result = viewer.open_file(f"/__fixtures__/{rel}", all=True)
    assert result["error"] is None, result["error"]
    return list(viewer.page.evaluate(COLLECT))


def test_rebuilt_times_show_counts_not_durations(viewer: Viewer) -> None:
    corpus_present()
    rows = shown_rows(viewer, "apps/web/tests/snapshots/fresh-round-trip/session.jsonl")
    tails = [r for r in rows if r["kind"] == "turn-tail"]
    assert tails and all("step" in r["text"] for r in tails)
    assert viewer.page.locator("#transcript :is(.tail-ran, .tail-ttft, .tail-tps, .tail-clock)").count() == 0
    assert not any("Ran for" in r["text"] or "tok/s" in r["text"] for r in rows)
    assert viewer.page.get_attribute("#session-summary", "data-recorded-times") == "false"


def test_recorded_times_show_the_duration(viewer: Viewer) -> None:
    s = Session()  # epoch-ms clock
    s.turn_start(1)
    s.user("hi")
    s.step_start(1, 1)
    s.text(1, 1, 0, "hello", dt=250)
    s.message(1, 1, [{"type": "text", "text": "hello"}], usage={"inputTokens": 9, "outputTokens": 4})
    s.step_end(1, 1)
    s.turn_end(1)
    header = {"type": "session", "version": 0, "id": "rec", "createdAt": s.events[0]["time"]}
    data = ("\n".join(json.dumps(e) for e in [header, *s.events]) + "\n").encode()
    viewer.open_file(viewer.add_file("recorded.jsonl", data), all=True)
    tail = viewer.page.locator("#transcript .turn-tail").first.inner_text()
    assert "Ran for" in tail and "TTFT 250 ms" in tail and "Input 9 tok" in tail
    assert viewer.page.get_attribute("#session-summary", "data-recorded-times") == "true"


def test_a_real_log_with_usage_shows_its_figures_per_turn_and_in_the_header(viewer: Viewer) -> None:
    corpus_present()
    rel = "apps/web/tests/snapshots/code-mode-round/session.jsonl"
    t = assemble_page(page(read_session(FIXTURES / rel).records, "packed"))
    [tail] = [n for n in t.chat if n.kind == "turn-tail"]
    usage = tail.data.usage
    rows = shown_rows(viewer, rel)
    [shown] = [r for r in rows if r["kind"] == "turn-tail"]
    assert f"Input {token_count_text(usage.inputTokens)} tok" in shown["text"]
    assert f"Output {token_count_text(usage.outputTokens)} tok" in shown["text"]
    assert f"Cache read {token_count_text(usage.cacheReadTokens)} tok" in shown["text"]
    assert tail.data.models[0] in shown["text"]
    header = viewer.page.inner_text("#session-summary")
    assert "tokens:" in header and tail.data.models[0] in header and "1 turn" in header


def test_turn_tail_is_the_last_row_of_its_turn_on_every_real_log(viewer: Viewer) -> None:
    corpus_present()
    checked = 0
    for path in session_logs():
        if b'"turn/end"' not in path.read_bytes():
            continue
        rel = path.relative_to(FIXTURES).as_posix()
        rows = shown_rows(viewer, rel)
        for i, row in enumerate(rows):
            if row["kind"] == "turn-tail":
                checked += 1
                later = [r["kind"] for r in rows[i + 1:] if r["turn"] == row["turn"]]
                assert later == [], f"{rel} turn {row['turn']}: shown after its tail: {later}"
    assert checked > 100


def test_one_interrupted_and_turn_dividers(viewer: Viewer) -> None:
    corpus_present()
    rows = shown_rows(viewer, "examples/acp-agent/tests/snapshots/cancel/session.jsonl")
    assert sum(r["text"].count("Interrupted") for r in rows) == 1
    rows = shown_rows(viewer, "examples/acp-agent/tests/goal-snapshots/goal-round-driver/session.expected.jsonl")
    dividers = viewer.page.locator("#transcript .turn-divider")
    turns = sorted({int(r["turn"]) for r in rows if r["turn"] is not None})
    assert len(turns) >= 2
    assert any(f"Turn {turns[-1]}".upper() in r["text"].upper() for r in rows)
    assert dividers.count() >= 1


def test_subagent_rows_link_to_served_child_sessions(viewer: Viewer) -> None:
    corpus_present()
    folder = viewer.served.sessions / "advanced-toolchain"
    folder.mkdir(exist_ok=True)
    for name in ("session.jsonl", "session.1.jsonl", "session.2.jsonl"):
        shutil.copyfile(FIXTURES / "examples/acp-agent/tests/snapshots/advanced-toolchain" / name, folder / name)
    try:
        page_ = viewer.page
        page_.evaluate("() => { location.hash = 'session=advanced-toolchain%2Fsession'; }")
        page_.wait_for_selector("#transcript article.kind-subagent", timeout=60_000)
        page_.evaluate(COLLECT)
        viewer.attach_all()  # a small session: every row in the DOM again (COLLECT ended at the bottom)
        links = page_.locator("#transcript .child-link a")
        links.first.wait_for(timeout=30_000)
        hrefs = sorted(links.nth(i).get_attribute("href") or "" for i in range(links.count()))
        assert hrefs == ["#session=advanced-toolchain%2Fsession.1", "#session=advanced-toolchain%2Fsession.2"]
    finally:
        viewer.attach_all(False)
        shutil.rmtree(folder)  # the served folder is shared by the whole browser session
        viewer.page.evaluate("() => { location.hash = ''; }")
