"""The request the HTTP benchmarks send, the answers it must get, and an app driven in process.

One 2026-07-28 ``tools/call`` of the per-call workload's ``add`` tool
(:mod:`benchmarks.workloads.mcp`) with its per-request ``_meta`` envelope and the
headers the SDK's streamable HTTP client sends, posted to :data:`PATH` on
:data:`HOST`; the checks of an answer (the structured sum, the same as JSON
text) and of a refusal (arguments outside the schema); and :func:`caller`, which
sends it to a Starlette app's ASGI callable in process, without a socket, as
uvicorn would (to check an app, and to time its own work apart from uvicorn, the
kernel's TCP stack and the load generator).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)

from benchmarks.harness.processes import HOST
from benchmarks.harness.timing import held
from benchmarks.workloads.mcp import TOOL

PATH = "/mcp"
PROTOCOL = "2026-07-28"

# -- the request -------------------------------------------------------------------


def request_body(a: Any = 1, b: Any = 2, request_id: int = 1) -> bytes:
    """One 2026-07-28 ``tools/call`` with its per-request ``_meta`` envelope."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": TOOL,
            "arguments": {"a": a, "b": b},
            "_meta": {
                PROTOCOL_VERSION_META_KEY: PROTOCOL,
                CLIENT_INFO_META_KEY: {"name": "mcp-adapter-http-bench", "version": "1"},
                CLIENT_CAPABILITIES_META_KEY: {},
            },
        },
    }
    return json.dumps(message, separators=(",", ":")).encode()


HEADERS: tuple[tuple[str, str], ...] = (
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", PROTOCOL),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", TOOL),
)
"""What the SDK's streamable HTTP client sends with a 2026-07-28 ``tools/call``."""
BODY = request_body()
EXPECT = '"structuredContent":{"sum":3}'
"""Every measured answer must contain this (the SDK writes compact JSON)."""

# -- the answer --------------------------------------------------------------------


def check_answer(status: int, answer: Any, total: int, who: str) -> None:
    """A 200 with ``structuredContent == {"sum": total}`` and the same as JSON text."""
    problems = []
    result = answer.get("result") if isinstance(answer, dict) else None
    if status != 200 or not isinstance(result, dict):
        raise AssertionError(f"{who}: HTTP {status}: {str(answer)[:300]}")
    if result.get("isError"):
        problems.append(f"isError: {result.get('content')}")
    if result.get("structuredContent") != {"sum": total}:
        problems.append(f"structuredContent {result.get('structuredContent')!r}")
    texts = [
        block.get("text") for block in result.get("content", ()) if block.get("type") == "text"
    ]
    if len(texts) != 1 or json.loads(texts[0]) != {"sum": total}:
        problems.append(f"text content {texts!r}")
    if problems:
        raise AssertionError(f"{who}: {'; '.join(problems)}")


def check_refusal(status: int, answer: Any, who: str) -> None:
    """Arguments outside the schema are refused (``isError`` or a JSON-RPC error)."""
    refused = isinstance(answer, dict) and (
        "error" in answer or bool((answer.get("result") or {}).get("isError"))
    )
    if not refused:
        raise AssertionError(f"{who}: invalid arguments were accepted (HTTP {status}): {answer}")


# -- an app in process ------------------------------------------------------------

PORT = 8000
Asgi = Callable[..., Awaitable[None]]
DISCONNECT: Mapping[str, Any] = {"type": "http.disconnect"}
Call = Callable[[], Awaitable[tuple[int, bytes]]]


def scope_for(body: bytes) -> dict[str, Any]:
    """The HTTP scope uvicorn would build for a POST of ``body`` to :data:`PATH`."""
    raw = [
        (b"host", f"{HOST}:{PORT}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in HEADERS),
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": (HOST, 50000),
        "server": (HOST, PORT),
        "state": {},
    }


def caller(app: Asgi, body: bytes = BODY) -> Call:
    """``await call()`` sends one request to ``app`` and returns its status and body."""
    template = scope_for(body)
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
    """Enter ``app``'s lifespan (the SDK's session manager) in a task of its own; returns
    the coroutine that leaves it."""
    _, close = await held(app.router.lifespan_context(app))
    return close


def quiet_sdk_logs() -> None:
    """The SDK logs each session manager's start and stop, and refused arguments, at INFO."""
    logging.getLogger("mcp").setLevel(logging.WARNING)
