"""The compare benchmark's pairs (``perf/bench_compare.py``): each copy is generated from its original with one turn
changed and as many events, and its CPython path (read, page, fold, compare, render every turn) expands no packed
row; the quick run without the browser writes its report. No time is compared with anything (STYLE 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perf.bench_compare import changed_big_events, changed_turn_records, expanded_rows, main, pairs


def test_the_big_copy_differs_in_its_prompt_and_one_reasoning_run_only() -> None:
    a, b = changed_big_events(4, 2000)
    assert len(a) == len(b)
    changed = [(x["type"], x["seq"]) for x, y in zip(a, b, strict=True) if x != y]
    assert changed[0] == ("user/message", 1)
    assert {t for t, _ in changed[1:]} == {"assistant/chunk"}
    runs = {b[seq]["data"]["chunk"]["index"] for _, seq in changed[1:]}
    assert len(runs) == 1


def test_the_many_turn_copy_changes_one_prompt(tmp_path: Path) -> None:
    a, b = changed_turn_records(6, 3)
    lines_a, lines_b = a.splitlines(), b.splitlines()
    assert len(lines_a) == len(lines_b)
    differing = [i for i, (x, y) in enumerate(zip(lines_a, lines_b, strict=True)) if x != y]
    assert len(differing) == 2  # the header's id and turn 3's prompt
    assert b"changed for the benchmark" in lines_b[differing[1]]


@pytest.mark.slow
def test_no_packed_row_is_expanded_and_the_report_is_written(tmp_path: Path) -> None:
    data = pairs(tmp_path, quick=True, turns=40)
    assert data["big"]["events"][0] == data["big"]["events"][1]
    assert all(expanded_rows(tmp_path, pair) == 0 for pair in data.values())
    out = tmp_path / "report.json"
    assert main(["--quick", "--no-browser", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["checks"] == {"noRowExpanded": True}
    assert report["cli"]["big"]["turns"]["position"] == 1 and report["cli"]["turns"]["turns"]["samePrompt"] == 39
