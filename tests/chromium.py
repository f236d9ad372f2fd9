"""How the tests launch Chromium: Debian's /usr/bin/chromium (never a Playwright-downloaded one), headless, with no
sandbox (root in CI) and nothing that reaches the network on its own. Shared by tests/browser/conftest.py and the
tests that open a page outside that suite (tests/integration/test_wheel.py)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-precise-memory-info",
]
