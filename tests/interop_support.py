"""Shared checks for the other-harness readers: where their real logs live and what every log they make must hold.

The logs are read from ``../shared/fixtures/interop`` at test time and never copied into the repo; in CI
(``CI=true``) a missing folder fails the run, elsewhere the tests skip (``tests/corpus.py``'s rule).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assembler.history import MessageIndex
from assembler.interop.base import RAW, SOURCE
from assembler.invariants import check_events
from assembler.logfile import LoadResult
from assembler.session import Session
from assembler.transcript import assemble_checked
from tests.corpus import SHARED

INTEROP = SHARED / "fixtures" / "interop"


def interop_file(relative: str) -> Path:
    """A file under ``fixtures/interop`` (skips, or fails in CI, when the folder is absent)."""
    path = INTEROP / relative
    if path.exists():
        return path
    if os.environ.get("CI"):
        pytest.fail(f"interop fixture missing at {path} (CI requires ../shared)")
    pytest.skip(f"interop fixture not found at {path}")


def interop_files(folder: str, suffix: str) -> list[Path]:
    """Every file ending in ``suffix`` under ``fixtures/interop/<folder>``, sorted (empty when absent)."""
    root = INTEROP / folder
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob(f"*{suffix}") if p.is_file())


def check_log(result: LoadResult, *, allow_error: bool = False) -> dict[str, Any]:
    """What every log a reader makes must hold: a header, seqs dense from 0, no provenance or surface violation, a
    session our own code accepts, a fold with no event shown raw for a fault, and every source record kept
    (each ``interop/source`` cites earlier events only). Returns the canonical transcript value."""
    assert result.header is not None and result.header.get("type") == "session"
    if not allow_error:
        assert result.error is None, result.error
    events = result.records
    for i, event in enumerate(events):
        assert type(event) is dict and event["seq"] == i, (i, event)
        assert type(event["time"]) is int
        if event["type"] in (SOURCE, RAW):
            assert event.get("ignorable") is True
            for seq in event["data"].get("events", []):
                assert 0 <= seq < i
    violations = check_events(events)
    assert not violations, violations[:5]
    Session(events, end_seed=False)  # validates the seed as a read-only session would
    page = MessageIndex(list(events)).session_page(None, None, None)
    value, faults = assemble_checked(page.records, page.hasMore, _definitions())
    assert not faults, faults[:5]
    return value  # type: ignore[return-value]


def _definitions() -> list[Any]:
    from definitions import default_definitions

    return default_definitions()


def of_type(result: LoadResult, etype: str) -> list[dict[str, Any]]:
    return [e for e in result.records if type(e) is dict and e["type"] == etype]
