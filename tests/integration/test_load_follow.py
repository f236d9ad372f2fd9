"""The full loopback load of issue 4: 50 followers of a session that grows by 10,000 events all end with exactly the
log (no gap, no duplicate); lossy followers repair, stale reconnects are accepted, departed clients leave nothing.
Measured at about 10 s on the 2-core box."""

from __future__ import annotations

from perf.load_follow import run_load


def test_fifty_followers_ten_thousand_events_end_with_exactly_the_log() -> None:
    report = run_load(followers=50, events=10_000)
    assert report["ok"], report["failures"]
    assert report["live_frames"] > 50 * 9_000
    assert report["repairs"] > 0 and report["reconnects"] >= 2
    assert report["leftover"] == {"followers": 0, "watchers": 0, "tasks_over_baseline": 0}
