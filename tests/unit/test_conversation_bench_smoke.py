"""Smoke run of the fold benchmark with tiny sizes: it works and its structural equalities hold (no timings)."""

from __future__ import annotations

from perf.bench_fold import main, run


def test_bench_fold_runs_small_and_digests_agree(tmp_path):
    result = run(runs=3, total_deltas=60, repeat=1, ws_sizes=(5, 9), ws_repeat=1)
    assert result["same_digest"] is True
    assert result["scalar"]["digest"] == result["packed"]["digest"]
    assert result["scalar"]["records"] == 3 + 60 + 3 * 4
    assert result["packed"]["records"] == 3 + 3 + 3 * 4
    assert result["whitespace_prefix"]["9"]["firstVisibleSeq"] == 9
    out = tmp_path / "bench.json"
    assert main(["--runs", "2", "--deltas", "20", "--repeat", "1", "--ws-sizes", "4", "--json", str(out)]) == 0
    assert out.read_text().startswith("{")
