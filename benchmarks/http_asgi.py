"""Driving an MCP Starlette app's ASGI callable in process, without a socket.

Used by the HTTP suite to check every contender's app (the answer, one
``Ledger`` per request, one ``Clock``) and to time the app's own work per
``tools/call`` apart from uvicorn, the kernel's TCP stack and the load
generator. It imports only the standard library, so it runs anywhere.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

HOST = "127.0.0.1"
PORT = 8000

Asgi = Callable[..., Awaitable[None]]
DISCONNECT: Mapping[str, Any] = {"type": "http.disconnect"}
Call = Callable[[], Awaitable[tuple[int, bytes]]]


def scope_for(path: str, headers: Sequence[tuple[str, str]], body: bytes) -> dict[str, Any]:
    """The HTTP scope uvicorn would build for a POST of ``body`` to ``path`` on 127.0.0.1."""
    raw = [
        (b"host", f"{HOST}:{PORT}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers),
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": (HOST, 50000),
        "server": (HOST, PORT),
        "state": {},
    }


def caller(app: Asgi, path: str, headers: Sequence[tuple[str, str]], body: bytes) -> Call:
    """``await call()`` sends one request to ``app`` and returns its status and body."""
    template = scope_for(path, headers, body)
    request = {"type": "http.request", "body": body, "more_body": False}

    async def call() -> tuple[int, bytes]:
        sent = False
        status = 0
        chunks: list[bytes] = []
        answered = asyncio.Event()

        async def receive() -> Mapping[str, Any]:
            # As uvicorn: the body once, then ``http.disconnect`` when the response is
            # complete (a keep-alive connection's request cycle is over).
            nonlocal sent
            if not sent:
                sent = True
                return request
            await answered.wait()
            return DISCONNECT

        async def send(message: Mapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    answered.set()

        await app(dict(template, state={}), receive, send)
        return status, b"".join(chunks)

    return call


async def running(app: Any) -> Callable[[], Awaitable[None]]:
    """Enter ``app``'s lifespan in a task of its own; returns the coroutine that leaves it.

    The SDK's session manager runs a task group in the lifespan, and anyio's cancel
    scopes must be left by the task that entered them; the harness runs setup and
    teardown as separate tasks, so one owner task holds the lifespan.
    """
    ready = asyncio.Event()
    leave = asyncio.Event()

    async def owner() -> None:
        async with app.router.lifespan_context(app):
            ready.set()
            await leave.wait()

    task = asyncio.create_task(owner())
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():
        waiter.cancel()
        task.result()
        raise RuntimeError("the app's lifespan ended before it was ready")

    async def close() -> None:
        leave.set()
        await task

    return close


def decoded(body: bytes) -> Any:
    return json.loads(body)
