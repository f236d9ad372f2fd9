"""Where the real session logs live, and the rule for when they are missing.

The logs are read from ``../shared/fixtures/deepseek-harness`` at test time and never copied into the repo. In CI
(``CI=true``) a missing corpus fails the run; elsewhere the conformance tests skip so ``make test`` still works.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRANSCRIPT_SHARED", REPO.parent / "shared"))
FIXTURES = SHARED / "fixtures" / "deepseek-harness"


def session_logs() -> list[Path]:
    """Every session log in the corpus, sorted (empty when the corpus is absent)."""
    if not FIXTURES.is_dir():
        return []
    return sorted(p for p in FIXTURES.rglob("*.jsonl") if p.is_file())


def log_id(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


def require_corpus() -> None:
    """Call at the top of a conformance test: fail in CI, skip elsewhere, when the corpus is absent."""
    if FIXTURES.is_dir() and session_logs():
        return
    if os.environ.get("CI"):
        pytest.fail(f"conformance corpus missing at {FIXTURES} (CI requires ../shared)")
    pytest.skip(f"conformance corpus not found at {FIXTURES}")


def corpus_params() -> list[object]:
    """``pytest.mark.parametrize`` values over the corpus; one placeholder that skips/fails when it is absent."""
    logs = session_logs()
    if logs:
        return [pytest.param(p, id=log_id(p)) for p in logs]
    return [pytest.param(None, id="corpus-missing")]
