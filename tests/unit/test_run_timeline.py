"""The whole run's trajectory overview (issue 22): ``timeline.run_timeline`` is the page's own timeline value of the
whole session; the server answers it at ``GET .../timeline`` (kept per file version, folded again when the file
grows), and a local file's worker makes it from its pager while the window holds only the newest pages."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from test_browser_views import opened

with warnings.catch_warnings():  # starlette 1.10 nudges towards httpx2; httpx is what the project pins
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from assembler.browser.timeline import NO_TIMES_RUN, run_timeline
from assembler.history import MessageIndex
from assembler.server import create_app, timeline_api
from assembler.store.loader import AnyLoader
from perf.turns import many_turns_bytes

LOCAL = "http://127.0.0.1"
TURNS = 120  # several pages of the page size (each turn is a few messages)


def records_of(data: bytes) -> tuple[Any, int]:
    loader = AnyLoader("s.jsonl", pack_deltas=True)
    loader.feed(data)
    loader.finish()
    index = MessageIndex(loader.result.records)
    page = index.session_page(None, None, None)
    assert not page.hasMore
    return page.records, index.last_seq


def test_the_whole_run_is_the_trajectory_views_timeline_of_every_row() -> None:
    data = many_turns_bytes(TURNS)
    viewer = opened(data)  # every record in the window
    loaded = json.loads(viewer.trajectory_view())["timeline"]
    records, last = records_of(data)
    whole = json.loads(json.dumps(run_timeline(records, False, last)))
    assert loaded["scope"] == "run" and whole["scope"] == "run" and whole["last"] == last
    keyless = [{**s, "row": None, "chat": None} for s in loaded["spans"]]  # a fold's keys are its own
    assert {**whole, "last": None} == {**loaded, "last": None, "spans": keyless}
    steps = [s for s in whole["spans"] if s["lane"] == "step"]
    assert len(steps) == TURNS and whole["timed"] == whole["total"] == 2 * TURNS  # the generator records times
    assert all(isinstance(s["seq"], int) for s in whole["spans"])


def test_a_local_file_shown_from_its_newest_page_gets_the_whole_run_from_its_pager() -> None:
    data = many_turns_bytes(TURNS)
    viewer = opened(data, all_records=False)  # the newest page only, "Load older" for the rest
    assert viewer.window.assembler.has_more
    loaded = json.loads(viewer.trajectory_view())["timeline"]
    whole = json.loads(viewer.run_timeline())
    assert loaded["scope"] == "loaded" and whole["scope"] == "run"
    assert loaded["total"] < whole["total"] == 2 * TURNS
    first_loaded = min(s["seq"] for s in loaded["spans"])
    assert min(s["seq"] for s in whole["spans"]) < first_loaded  # bars of steps not loaded yet, with their seq
    kept = viewer.window.run_timeline
    assert kept is not None and viewer.run_timeline() == viewer.run_timeline()
    assert viewer.window.run_timeline is kept  # kept until the file changes: not folded again
    everything = opened(data)
    assert json.loads(everything.run_timeline()) is None  # the window is the whole run: its own timeline says so


def test_rebuilt_times_say_so_for_the_run() -> None:
    rows_value = run_timeline([], False, -1)
    assert rows_value["spans"] == [] and rows_value["reason"] == "" and rows_value["scope"] == "run"
    assert "the run" in NO_TIMES_RUN and "loaded history" not in NO_TIMES_RUN


@pytest.fixture
def served(tmp_path: Path) -> tuple[TestClient, Path]:
    root = tmp_path / "sessions"
    root.mkdir()
    (root / "many.jsonl").write_bytes(many_turns_bytes(TURNS))
    return TestClient(create_app([root], serve_static=False), raise_server_exceptions=False, base_url=LOCAL), root


def test_the_server_answers_the_whole_run_kept_until_the_file_changes(
        served: tuple[TestClient, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    client, root = served
    folds: list[int] = []
    real = timeline_api.timeline_bytes

    def counted(records: Any, has_more: bool, last: int) -> bytes:
        folds.append(last)
        return real(records, has_more, last)

    monkeypatch.setattr(timeline_api, "timeline_bytes", counted)
    first_page = client.get("/api/sessions/many/page").json()
    assert first_page["hasMore"]  # the page opens with the newest messages only
    answer = client.get("/api/sessions/many/timeline")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    value = answer.json()
    records, last = records_of((root / "many.jsonl").read_bytes())
    assert answer.content == real(records, False, last)  # the same pure code as the page's, on every record
    assert value["scope"] == "run" and value["last"] == last and value["total"] == 2 * TURNS
    assert answer.headers["content-encoding"] == "gzip"  # the client accepts it: kept gzipped, sent gzipped
    plain = client.get("/api/sessions/many/timeline", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == answer.content
    assert folds == [last]  # the second answer was kept, not folded again
    # The file grows: the next answer is folded again and covers the new turn.
    more = many_turns_bytes(TURNS + 1)
    (root / "many.jsonl").write_bytes(more)
    grown = client.get("/api/sessions/many/timeline").json()
    assert len(folds) == 2 and grown["total"] == 2 * (TURNS + 1) and grown["last"] > last


def test_an_unknown_session_has_no_timeline(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    answer = client.get("/api/sessions/nope/timeline")
    assert answer.status_code == 404 and answer.json()["error"] == "not-found"
