"""JSON responses and the HTTP failure contract: every error is JSON ``{error, detail}`` with its status.

Rules: ``EXCEPTION_HANDLERS`` turns what the endpoints raise into that body (404 unknown or unreadable session,
403 a session file swapped for something outside its root, 400 bad request or bad session, 500 anything else,
logged).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from ..errors import AssemblerError
from ..history import PageRequestError
from ..records import encode
from .confine import OutsideRootError

__all__ = [
    "EXCEPTION_HANDLERS",
    "error_response",
    "json_response",
]

log = logging.getLogger("assembler.server")  # one logger for the whole server package


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(encode(value), status_code=status, media_type="application/json", headers=headers)


def error_response(status: int, code: str, detail: str) -> Response:
    return json_response({"error": code, "detail": detail}, status)


_CODES = {400: "bad-request", 403: "forbidden", 404: "not-found", 405: "method-not-allowed"}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, _CODES.get(exc.status_code, "http-error"), str(exc.detail))


async def _bad_request(request: Request, exc: Exception) -> Response:
    return error_response(400, "bad-request", str(exc))


async def _assembler_error(request: Request, exc: Exception) -> Response:
    return error_response(400, "bad-session", str(exc))


async def _os_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OSError)
    return error_response(404, "not-found", f"cannot read session: {exc.strerror or exc}")


async def _outside_root(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OutsideRootError)
    return error_response(403, "forbidden", f"session file {exc.reason}")


async def _internal(request: Request, exc: Exception) -> Response:
    log.exception("internal error", exc_info=exc)
    return error_response(500, "internal", f"{type(exc).__name__}: {exc}")


EXCEPTION_HANDLERS: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    HTTPException: _http_error,
    PageRequestError: _bad_request,
    AssemblerError: _assembler_error,
    OutsideRootError: _outside_root,
    OSError: _os_error,
    Exception: _internal,
}
"""What ``create_app`` installs: exception type → handler (Starlette picks the nearest class in the MRO)."""
