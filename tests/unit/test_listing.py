"""The session list's contract (``assembler.server.listing``): title, last activity (events' own time, mtime only
as a labelled fallback), counts, model and status."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assembler.server.listing import LIVE_WINDOW_S, REAL_TIME_MIN_MS, SessionFacts, session_entry, sort_entries

T0 = 1_767_225_600_000


def ev(kind: str, data: dict[str, Any], time: int | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": kind, "data": data}
    if time is not None:
        record["time"] = time
    return record


def user(text: str, time: int | None = None, source: str = "user") -> dict[str, Any]:
    return ev("user/message", {"role": "user", "content": [{"type": "text", "text": text}],
                               "source": {"kind": source}}, time)


def facts_of(records: list[dict[str, Any]]) -> SessionFacts:
    facts = SessionFacts()
    facts.absorb(records)
    return facts


def entry(tmp_path: Path, records: list[dict[str, Any]], *, problem: str | None = None, age_s: float = 3600,
          ) -> dict[str, Any]:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"{}\n")
    now = path.stat().st_mtime + age_s
    return session_entry("s", path, facts=facts_of(records), event_count=len(records), problem=problem,
                         size=3, now_s=now)


def test_title_is_the_first_user_text_first_line_unless_a_title_record(tmp_path: Path) -> None:
    records = [user("context", source="context"), user("  Fix the parser\nplease  "), user("later")]
    assert entry(tmp_path, records)["title"] == "Fix the parser"
    assert entry(tmp_path, [*records, ev("session/title", {"title": "Parser fix"})])["title"] == "Parser fix"
    assert entry(tmp_path, [])["title"] is None


def test_last_activity_is_the_events_time_else_the_labelled_mtime(tmp_path: Path) -> None:
    e = entry(tmp_path, [user("a", T0), ev("turn/start", {"turn": 1}, T0 + 500)])
    assert (e["lastActivity"], e["lastActivitySource"]) == (T0 + 500, "events")
    rebuilt = entry(tmp_path, [user("a", 3), ev("turn/start", {"turn": 1}, 4)])  # a counter, not a clock
    assert rebuilt["lastActivitySource"] == "mtime"
    assert rebuilt["lastActivity"] == int(os.stat(tmp_path / "s.jsonl").st_mtime * 1000)
    assert REAL_TIME_MIN_MS > 4


def test_last_activity_counts_a_packed_row_as_its_last_member() -> None:
    """A log's streaming deltas set its last activity whether they are written one per line or packed as a row."""
    from assembler.chunk_rows import pack_chunk_runs

    deltas = [{"type": "assistant/chunk", "seq": s, "time": T0 + 10 * s,
               "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}}
              for s in range(1, 6)]
    records = [{**user("a", T0), "seq": 0}, *deltas]
    packed = pack_chunk_runs(records)
    assert len(packed) == 2  # the user message and one row
    assert facts_of(packed).last_real_time == facts_of(records).last_real_time == T0 + 50


def test_counts_and_model(tmp_path: Path) -> None:
    records = [ev("request/header", {"header": {"config": {"model": "deepseek-v4-pro"}}}),
               ev("turn/start", {"turn": 1}), ev("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
               ev("turn/start", {"turn": 2}), ev("turn/end", {"turn": 2, "reason": {"kind": "completed"}})]
    e = entry(tmp_path, records)
    assert (e["turnCount"], e["eventCount"], e["model"], e["status"]) == (2, 5, "deepseek-v4-pro", "ended")
    by_provenance = [ev("assistant/message", {"provenance": {"provider": "p", "model": "m1"}})]
    assert entry(tmp_path, by_provenance)["model"] == "m1"


@pytest.mark.parametrize("records, problem, age_s, status", [
    ([ev("turn/start", {"turn": 1})], None, 1.0, "live"),
    ([ev("turn/start", {"turn": 1})], None, LIVE_WINDOW_S + 60, "interrupted"),
    ([ev("turn/start", {"turn": 1}), ev("turn/end", {"reason": {"kind": "interrupted"}})], None, 1.0, "interrupted"),
    ([ev("turn/start", {"turn": 1}), ev("turn/end", {"reason": {"kind": "aborted"}})], None, 1.0, "interrupted"),
    ([ev("turn/start", {"turn": 1}), ev("turn/end", {"reason": {"kind": "completed"}})], None, 1.0, "ended"),
    ([ev("turn/start", {"turn": 1})], "s.jsonl:3: invalid JSON", 1.0, "damaged"),
])
def test_status(tmp_path: Path, records: list[dict[str, Any]], problem: str | None, age_s: float,
                status: str) -> None:
    assert entry(tmp_path, records, problem=problem, age_s=age_s)["status"] == status


def test_wrong_types_are_ignored_not_a_traceback(tmp_path: Path) -> None:
    records: list[Any] = [ev("user/message", {"content": 5}), ev("request/header", {"header": []}),
                          ev("turn/end", {"reason": "x"}), {"type": "turn/start", "data": None}, ["not", "a", "dict"]]
    e = entry(tmp_path, records)
    assert (e["title"], e["model"], e["turnCount"]) == (None, None, 0)


def test_sorted_newest_first() -> None:
    entries = [{"id": "a", "lastActivity": 1}, {"id": "b", "lastActivity": 3}, {"id": "c", "lastActivity": 3}]
    assert [e["id"] for e in sort_entries(entries)] == ["b", "c", "a"]
