"""Security headers: the viewer's Content-Security-Policy and the middleware that sends it, with ``nosniff``, on
every response.

Rules: the header CSP is the one the served ``index.html`` declares (so header and page never disagree), else ``CSP``,
plus ``frame-ancestors 'none'`` (a ``<meta>`` CSP cannot say it) and ``X-Frame-Options: DENY`` for older browsers:
no other page, a ``data:`` page included, can frame the viewer or the API.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

__all__ = [
    "CSP",
    "SecurityHeaders",
    "viewer_csp",
]

CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; style-src 'self'; "
       "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'")
"""The Content-Security-Policy of ``web/index.html``, also sent as a header (the served build's own meta CSP wins)."""

_CSP_META = re.compile(rb'http-equiv="Content-Security-Policy"\s+content="([^"]+)"', re.IGNORECASE)


def viewer_csp(static_dir: Path) -> str:
    """The CSP declared by ``static_dir/index.html`` (so header and page never disagree), else ``CSP``."""
    try:
        match = _CSP_META.search((static_dir / "index.html").read_bytes())
    except OSError:
        return CSP
    return match.group(1).decode("ascii", "replace") if match else CSP


class SecurityHeaders:
    """Adds the CSP (with ``frame-ancestors 'none'``), ``nosniff`` and ``X-Frame-Options: DENY`` to every
    response."""

    def __init__(self, app: Any, csp: str = CSP) -> None:
        self.app = app
        if "frame-ancestors" not in csp:
            csp = f"{csp.rstrip('; ')}; frame-ancestors 'none'"
        self.csp = csp.encode("ascii", "replace")

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"content-security-policy", self.csp))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"x-frame-options", b"DENY"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
