"""Deterministic large session logs for the fault tests: a header, then packed text rows (``unpack`` expands each
row into one line per delta, so a small input makes a large output)."""

from __future__ import annotations

import json
from pathlib import Path

_encode = json.JSONEncoder(separators=(",", ":")).encode


def write_rows_log(path: Path, rows: int = 100, per_row: int = 5000) -> int:
    """Writes ``rows`` text-chunks rows of ``per_row`` deltas each; returns the number of logical events."""
    seq = 0
    with path.open("w", encoding="utf-8") as out:
        out.write(_encode({"type": "session", "id": path.stem}) + "\n")
        for _ in range(rows):
            data = {"turn": 1, "step": 1, "index": 0, "dt": [1] * (per_row - 1),
                    "texts": [f"tok{i} " for i in range(per_row)]}
            out.write(_encode({"type": "text-chunks", "seq0": seq, "time0": seq, "data": data}) + "\n")
            seq += per_row
    return seq
