"""ASGI wrapper: a client that disconnects before its answer cancels the call it sent."""

from __future__ import annotations

import asyncio

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_DISCONNECT: Message = {"type": "http.disconnect"}


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or None under another event loop (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class CancelOnDisconnect:
    """ASGI wrapper: a client that goes away before its answer cancels the request's handling.

    In JSON-response mode the SDK reads the request body, then waits for the
    handler's result with nobody listening to the connection, so a client that
    disconnects mid-call would leave the call (and its container scope) running
    to the end for nobody. Once the app has read the whole body, a watcher task
    becomes the one reader of ``receive``: on ``http.disconnect`` before the
    response is complete it cancels the app's cancel scope, so the handler is
    cancelled and its scope's finalizers run. The app's own later ``receive()``
    calls get ``http.disconnect`` once it happened.

    On asyncio the watcher is a plain task started when the body has been read
    and cancelled when the app returns, which costs a few microseconds; an
    anyio task group per request cost about 130 µs (benchmarks/README.md, "HTTP over the wire").
    Other event loops (trio) get the task group.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = _asyncio_loop()
        request = anyio.CancelScope()
        disconnected = anyio.Event()
        watching = False
        answered = False
        watcher: asyncio.Task[None] | None = None
        body_read = anyio.Event() if loop is None else None

        async def watch() -> None:
            if body_read is not None:
                await body_read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected.set()
            if not answered:
                request.cancel()

        async def app_receive() -> Message:
            nonlocal watching, watcher
            if watching or disconnected.is_set():
                await disconnected.wait()
                return _DISCONNECT
            message = await receive()
            if message["type"] == "http.disconnect":
                disconnected.set()
            elif message["type"] == "http.request" and not message.get("more_body", False):
                watching = True
                if loop is not None:
                    watcher = loop.create_task(watch())
                else:
                    assert body_read is not None
                    body_read.set()
            return message

        async def app_send(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        if loop is not None:
            try:
                with request:
                    await self.app(scope, app_receive, app_send)
            finally:
                if watcher is not None:
                    watcher.cancel()
            return
        failure: Exception | None = None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            with request:
                try:
                    await self.app(scope, app_receive, app_send)
                except Exception as exc:  # noqa: BLE001 - re-raised below as itself, not in a group
                    failure = exc
            tasks.cancel_scope.cancel()
        if failure is not None:
            raise failure
