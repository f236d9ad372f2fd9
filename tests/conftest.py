import sys
from pathlib import Path

# Tests import helpers (tests/corpus.py) and the perf generators from the repo root.
ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
