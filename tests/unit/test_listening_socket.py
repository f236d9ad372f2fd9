"""The servers' listening socket (``server.hosts.listening_socket``): every accepted connection sends without
Nagle's delay (asyncio sets ``TCP_NODELAY`` on a connection whose ``proto`` is TCP; the listener's own option is
inherited on Linux), and a bind failure closes the socket and raises."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from assembler.server.hosts import listening_socket


def test_an_accepted_connection_has_nagle_off() -> None:
    with listening_socket("127.0.0.1", 0) as listener:
        listener.listen(1)
        with socket.create_connection(listener.getsockname()[:2]) as client:
            conn, _ = listener.accept()
            with conn:
                assert conn.proto == socket.IPPROTO_TCP  # what asyncio checks before it sets TCP_NODELAY
                if sys.platform == "linux":
                    assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            assert client.fileno() >= 0


def test_asyncio_turns_nagle_off_on_the_connections_it_accepts() -> None:
    seen: list[int] = []

    async def main() -> None:
        def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listener = listening_socket("127.0.0.1", 0)
        server = await asyncio.start_server(handle, sock=listener)
        async with server:
            reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            await reader.read()
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0


def test_a_taken_port_raises_and_closes() -> None:
    with listening_socket("127.0.0.1", 0) as first:
        first.listen(1)
        with pytest.raises(OSError):
            listening_socket("127.0.0.1", first.getsockname()[1])
