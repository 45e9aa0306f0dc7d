"""ASGI wrapper: a request body that does not arrive in time is refused with 408."""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_TIMED_OUT_BODY = b"Request body not received in time"


class _BodyTimedOut(Exception):
    """Raised from ``receive()`` when the body's deadline passed; caught by :class:`BodyTimeout`."""


class BodyTimeout:
    """The whole request body must arrive within ``timeout`` seconds of the request's headers.

    A client that sends its headers and then trickles the body (or stops)
    gets ``408`` with ``Connection: close`` once the deadline passes, and the
    connection is closed; a per-chunk timeout would not stop a trickle, so the
    deadline is for the whole body. Reads after the body (the disconnect
    watch of SSE streams) are not timed.
    """

    def __init__(self, app: ASGIApp, timeout: float) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = anyio.current_time() + self.timeout
        body_done = False
        started = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:
                return await receive()
            with anyio.CancelScope(deadline=deadline) as waiting:
                message = await receive()
            if waiting.cancelled_caught:
                raise _BodyTimedOut
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, timed_receive, watched_send)
        except _BodyTimedOut:
            if started:  # cannot answer any more: let the server close the connection
                raise
            await send(
                {
                    "type": "http.response.start",
                    "status": 408,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(_TIMED_OUT_BODY)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": _TIMED_OUT_BODY})
