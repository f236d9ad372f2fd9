"""Live repacking keeps the view: a viewer that packs each ended block's deltas into one row shows exactly what a
viewer that keeps every delta shows, after every frame, over random live streams with block ends, duplicates, gaps
(repaired from pages), reconnects and older pages; its window stays continuous and never holds more entries.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from live_support import LiveServer, assert_continuous, row_count, same_view
from session_strategies import sessions

from assembler.browser import Viewer

OPS = st.sampled_from(["event", "event", "event", "event", "batch", "gap", "duplicate", "reconnect"])


def check(server: LiveServer, updates: list[dict[str, Any]]) -> None:
    """Both viewers answered alike, neither raised (a Definition breaking its contract) nor reported an error."""
    packed, plain = server.viewers
    a, b = ({k: v for k, v in u.items() if k != "stats"} for u in updates)
    assert "exception" not in a and "exception" not in b, (a.get("exception"), b.get("exception"))
    assert a == b
    assert "error" not in a, a["error"]
    assert_continuous(packed)
    assert_continuous(plain)
    assert packed.window.assembler.entry_count <= plain.window.assembler.entry_count


@settings(max_examples=300, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.data())
def test_repacked_window_shows_what_the_scalar_window_shows(events: list[dict[str, Any]], data: Any) -> None:
    viewers = [Viewer(repack_live=True), Viewer(repack_live=False)]
    n = len(events)
    server = LiveServer(events, viewers, max_messages=data.draw(st.sampled_from([1, 2, 50]), "max_messages"))
    check(server, server.snapshot(data.draw(st.integers(0, min(n, 3)) | st.integers(0, n), "cut")))
    while server.pos < n:
        op = data.draw(OPS)
        pos = server.pos
        if op == "event":
            updates = server.send([pos])
        elif op == "batch":
            updates = server.send(list(range(pos, min(n, pos + data.draw(st.integers(2, 12))))))
        elif op == "gap":
            updates = server.send([min(n - 1, pos + data.draw(st.integers(1, 4)))])
        elif op == "duplicate":
            updates = server.send([max(0, pos - 1 - data.draw(st.integers(0, 3))), pos])
        else:
            updates = server.snapshot(data.draw(st.integers(pos, n)))
        check(server, updates)
    same_view(*viewers)
    while viewers[1].window.journal.has_more:
        check(server, server.load_older())
        same_view(*viewers)
    rows = viewers[0].window.repacker.rows
    event("rows made: " + ("3+" if rows >= 3 else str(rows)))
    assert row_count(viewers[0]) >= row_count(viewers[1])
