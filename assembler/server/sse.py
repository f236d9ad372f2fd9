"""The follow stream (SSE): ``EventStreamResponse`` sends a source's snapshot frame, then its live frames, with
heartbeats, until the client leaves or the source closes the follower.

Rules: the client's disconnect is watched on ``receive``, so a departed follower is unsubscribed at once and leaves
no task behind; a session that cannot be read is a JSON 404 like every other error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from starlette.responses import Response

from .responses import error_response
from .source import Follower, SessionSource

__all__ = [
    "EventStreamResponse",
]

_HEARTBEAT_S = 15.0


class _Gone(Exception):
    """The client went away."""


class EventStreamResponse(Response):
    """``text/event-stream``: the snapshot frame, then live frames, with heartbeats; stops when the client leaves.

    The client's disconnect is watched on ``receive`` whatever the server's ASGI version, so a departed follower is
    unsubscribed at once and leaves no task behind.
    """

    def __init__(self, source: SessionSource, max_messages: int) -> None:
        super().__init__(media_type="text/event-stream")
        self.source = source
        self.max_messages = max_messages

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        follower = Follower()
        source = self.source
        try:
            try:
                snapshot = await source.subscribe(follower, self.max_messages)
            except OSError as exc:
                response = error_response(404, "not-found", f"cannot read session: {exc.strerror or exc}")
                await response(scope, receive, send)
                return
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no")]})
            await self._send(send, snapshot)
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch_disconnect, receive, group.cancel_scope)
                await self._pump(follower, send)
                group.cancel_scope.cancel()
            with contextlib.suppress(_Gone):
                await self._send(send, b"", more=False)
        except _Gone:
            pass
        finally:
            source.unsubscribe(follower)

    @staticmethod
    async def _send(send: Callable[[Any], Awaitable[None]], body: bytes, more: bool = True) -> None:
        try:
            await send({"type": "http.response.body", "body": body, "more_body": more})
        except OSError:
            raise _Gone from None

    async def _pump(self, follower: Follower, send: Callable[[Any], Awaitable[None]]) -> None:
        while True:
            with anyio.move_on_after(_HEARTBEAT_S):
                await follower.wake.wait()
            chunk = follower.take()
            if chunk:
                await self._send(send, chunk)
            elif follower.closed:
                return
            else:
                await self._send(send, b": keep-alive\n\n")
            if follower.closed and not follower.chunks:
                return

    @staticmethod
    async def _watch_disconnect(receive: Callable[[], Awaitable[Any]], scope: anyio.CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                scope.cancel()
                return
