"""``perf.bench_publish`` runs on a few small sessions and reports what a search fetches: the filter, then for a
word found in one shard that shard alone, never more than every shard, and nothing but the filter for an absent
word."""

from __future__ import annotations

from pathlib import Path

from perf.bench_publish import run
from tests.unit.test_publish_pages import make_viewer


def test_bench_publish_reports_what_a_search_fetches(tmp_path: Path) -> None:
    result = run(8, 2, 0.02, make_viewer(tmp_path))
    assert result["errors"] == 0 and result["index_shards"] >= 3
    fetch = result["search_fetch"]
    assert fetch["shards"] == result["index_shards"] and fetch["filter_bytes"] > 0
    queries = list(fetch["queries"].values())
    rare, absent = queries[0], fetch["queries"]["nosuchwordanywhere"]
    assert rare["shards"] == 1 and rare["rows"] >= 1
    assert rare["plain_bytes"] < fetch["before_plain_bytes"]
    assert absent == {"shards": 0, "rows": 0, "plain_bytes": fetch["filter_bytes"],
                      "served_bytes": fetch["filter_served_bytes"]}
    assert all(q["plain_bytes"] <= fetch["before_plain_bytes"] + fetch["filter_bytes"] for q in queries)
