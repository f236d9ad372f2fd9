"""The ``Host`` check against DNS rebinding: a page on another site whose name resolves to 127.0.0.1 must not be
able to read the sessions, so a request is only answered when its ``Host`` names this server.

Rules: allowed are ``localhost``, ``127.0.0.1`` and ``[::1]``, plus the bound address when it is a
specific one, each with the port the request arrived on; and every name given with ``--allow-host`` (``NAME`` for
any port, ``NAME:PORT`` for one). Anything else, or no ``Host`` at all, is answered 421 (Misdirected Request) with
the JSON error body, before any route runs. Names compare case-insensitively; a port missing from ``Host`` is 80.

The listening socket is made here too (``listening_socket``), so every server of ours answers without Nagle's delay.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable, MutableMapping
from typing import Any

from ..records import encode

__all__ = [
    "check_allowed",
    "LOOPBACK_NAMES",
    "HostCheck",
    "is_loopback",
    "host_name",
    "listening_socket",
]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not listening yet) for uvicorn's ``sockets=``, with ``TCP_NODELAY`` on
    every connection it accepts.

    Rule: a response is written as two sends (headers, then body); with Nagle's algorithm the body waits for the
    client's delayed ACK of the headers, 40 ms on Linux, for every request after the first on a kept-alive
    connection (the page's ~50 static files took ~1 s). asyncio turns Nagle off only on sockets whose ``proto`` is
    ``IPPROTO_TCP`` (an accepted socket inherits the listener's), so the socket is made with it, and the listener's
    own ``TCP_NODELAY`` is inherited by accepted connections where the system does so (Linux).

    Raises:
        OSError: the address cannot be bound (the socket is closed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def host_name(address: str) -> str:
    """How a ``Host`` header writes a bound address: IPv6 in brackets, names lowercased."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address.lower()


def is_loopback(address: str) -> bool:
    """Whether a bound address only accepts connections from this machine."""
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def _split(host: str) -> tuple[str, int | None] | None:
    """``name[:port]`` (``[v6][:port]``) → (lowercased name, port or None); None when malformed."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return None
        name, rest = host[: end + 1], host[end + 1:]
    else:
        name, sep, port_text = host.partition(":")
        rest = f":{port_text}" if sep else ""
    if not name:
        return None
    if not rest:
        return name, None
    port_text = rest[1:]
    if not rest.startswith(":") or not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
        return None
    return name, int(port_text)


_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\]")


def check_allowed(allowed: Iterable[str]) -> list[tuple[str, int | None]]:
    """The ``--allow-host`` entries as (name, port or None).

    Raises:
        ValueError: an entry is not ``NAME`` or ``NAME:PORT`` (a DNS name, an IPv4 or bracketed IPv6 address, a
            port of 1-65535): checked when the app is made, so a bad one stops ``serve`` before it starts instead
            of failing every request.
    """
    out = []
    for entry in allowed:
        parsed = _split(entry)
        if parsed is None or not _HOST_NAME.fullmatch(parsed[0]) or not 0 < (parsed[1] or 1) <= 65535:
            raise ValueError(f"not a host name or host:port: {entry!r}")
        out.append(parsed)
    return out


class HostCheck:
    """ASGI middleware answering 421 to a request whose ``Host`` is not an allowed name for this server."""

    def __init__(self, app: Any, allowed: Iterable[str] = (), bound: str | None = None) -> None:
        self.app = app
        self.local = set(LOOPBACK_NAMES)
        if bound and bound not in ("0.0.0.0", "::", ""):
            self.local.add(host_name(bound))
        self.any_port: set[str] = set()
        self.exact: set[tuple[str, int]] = set()
        for name, port in check_allowed(allowed):
            if port is None:
                self.any_port.add(name)
            else:
                self.exact.add((name, port))

    def allows(self, host: str | None, server_port: int | None) -> bool:
        if not host:
            return False
        parsed = _split(host)
        if parsed is None:
            return False
        name, port = parsed
        port = 80 if port is None else port
        if name in self.any_port or (name, port) in self.exact:
            return True
        return name in self.local and (server_port is None or port == server_port)

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = None
        for key, value in scope.get("headers", ()):
            if key == b"host":
                host = value.decode("latin-1")
                break
        server = scope.get("server")
        server_port = server[1] if server and len(server) > 1 and type(server[1]) is int else None
        if self.allows(host, server_port):
            await self.app(scope, receive, send)
            return
        body = encode({"error": "misdirected-request",
                       "detail": f"Host {host!r} is not served here; use http://127.0.0.1:PORT/ or allow the name "
                                 "with serve --allow-host"})
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "http.response.start", "status": 421, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]})
        await send({"type": "http.response.body", "body": body})
