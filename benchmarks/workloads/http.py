"""Over HTTP: the request the benchmarks send, the answers it must get, and the apps.

One 2026-07-28 ``tools/call`` of the per-call workload's ``add`` tool
(:mod:`benchmarks.workloads.mcp`) with its per-request ``_meta`` envelope and the
headers the SDK's streamable HTTP client sends, posted to :data:`PATH` on
:data:`HOST`; the checks of an answer (the structured sum, the same as JSON
text) and of a refusal (arguments outside the schema); and :func:`caller`, which
sends it to a Starlette app's ASGI callable in process, without a socket, as
uvicorn would (to check an app, and to time its own work apart from uvicorn, the
kernel's TCP stack and the load generator).

The apps: ``python -m benchmarks.workloads.http KIND --port P [--workers N]`` runs
``uvicorn.run("benchmarks.workloads.http:<factory>", factory=True, workers=N,
log_level="warning", lifespan="on")`` on 127.0.0.1: the uvicorn settings of
``mcp-adapter serve --http`` (``mcp_adapter/cli/serve.py``), so every contender
gets the same server loop, HTTP parser and logging. Kinds: ``floor`` (the SDK's
low-level ``Server`` with hand-written handlers; ``floor-hook`` the same with the
SDK's ``get_tool_input_schema`` hook set), ``mcpserver`` (the SDK's ``MCPServer``
with ``Resolve``), ``fastmcp`` (FastMCP with ``Depends``; run with the python of its
own venv), and this adapter's ``http_app`` (``adapter``; ``adapter-lean`` drops the
``CancelOnDisconnect`` wrapper: a diagnostic of what it costs, not a configuration
to serve). ``--adapter-settings`` serves a kind with the uvicorn settings
``mcp-adapter serve`` uses (``uvicorn_config`` with the default ``HttpLimits``)
instead of uvicorn's own: a diagnostic of what those settings are worth apart from
the app. The factories import what they serve when called, so this runs in the
FastMCP venv too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
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


def answered(status: int, answer: Any, who: str) -> Any:
    """The ``result`` of a 200 JSON-RPC answer."""
    result = answer.get("result") if isinstance(answer, dict) else None
    if status != 200 or not isinstance(result, dict):
        raise AssertionError(f"{who}: HTTP {status}: {str(answer)[:300]}")
    return result


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


def scope_for(body: bytes, headers: Sequence[tuple[str, str]] = HEADERS) -> dict[str, Any]:
    """The HTTP scope uvicorn would build for a POST of ``body`` with ``headers`` to
    :data:`PATH`."""
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


# -- the apps, served -------------------------------------------------------------------


def _served(server: Any) -> Any:
    """A low-level ``Server``'s own ``streamable_http_app``: stateless, JSON responses."""
    return server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, host=HOST
    )


def mcpserver_app() -> Any:
    """``MCPServer`` + ``Resolve``."""
    from benchmarks.workloads.mcp import mcpserver_resolve

    return _served(mcpserver_resolve())


def floor_app() -> Any:
    """The SDK's low-level ``Server`` with hand-written handlers (the per-call floor)."""
    from benchmarks.workloads.mcp import floor_server

    return _served(floor_server())


def floor_hook_app() -> Any:
    """:func:`floor_app` with the SDK's ``get_tool_input_schema`` hook set, as ``MCPServer``
    and this adapter set it: without it the SDK runs the whole ``tools/list`` handler on
    every 2026-07-28 ``tools/call`` to find the tool's schema for its ``Mcp-Param``
    headers."""
    from benchmarks.workloads.mcp import TOOL, AddArguments, floor_server

    schema = AddArguments.model_json_schema()
    server = floor_server()
    server.get_tool_input_schema = lambda name: schema if name == TOOL else None
    return _served(server)


def fastmcp_app() -> Any:
    """FastMCP + ``Depends`` (its own venv only)."""
    from benchmarks.workloads.fastmcp import app

    return app(PATH, HOST)


def adapter_app() -> Any:
    """What ``mcp-adapter serve ... --http --json-response`` builds."""
    from benchmarks.workloads.adapter import AddServer, services
    from mcp_adapter import http_app

    return http_app(AddServer, services(), json_response=True)


def without_layer(served: Any, layer: str) -> Any:
    """``served`` with the ASGI wrapper of type ``layer`` unlinked from its routes' chains."""
    for route in served.routes:
        outer: Any = route
        inner: Any = getattr(route, "app", None)
        while inner is not None and hasattr(inner, "app"):
            if type(inner).__name__ == layer:
                outer.app = inner.app
                break
            outer, inner = inner, inner.app
    return served


def adapter_lean_app() -> Any:
    """:func:`adapter_app` without ``CancelOnDisconnect``: a client that disconnects
    mid-call is then no longer cancelled in JSON-response mode (a diagnostic)."""
    return without_layer(adapter_app(), "CancelOnDisconnect")


APPS: dict[str, Callable[[], Any]] = {
    "floor": floor_app,
    "floor-hook": floor_hook_app,
    "mcpserver": mcpserver_app,
    "fastmcp": fastmcp_app,
    "adapter": adapter_app,
    "adapter-lean": adapter_lean_app,
}


def tcp_listener(port: int) -> socket.socket:
    """A listening socket made with ``IPPROTO_TCP``, so accepted sockets get ``TCP_NODELAY``.

    asyncio turns on ``TCP_NODELAY`` only for sockets whose ``proto`` is
    ``IPPROTO_TCP``, and accepted sockets inherit ``proto`` from the listener.
    uvicorn's ``--workers`` path binds its listener with ``proto`` 0 (uvicorn
    issue 3149), which leaves Nagle's algorithm on: uvicorn writes a response's
    head and body separately, so each keep-alive response waits for the
    client's delayed ACK (about 40 ms on Linux).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads.http")
    parser.add_argument("kind", choices=sorted(APPS))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--stock",
        action="store_true",
        help="with --workers > 1: uvicorn.run's own listener (Nagle stays on, uvicorn#3149)",
    )
    parser.add_argument(
        "--adapter-settings",
        action="store_true",
        help="one worker, with the uvicorn settings of `mcp-adapter serve` (uvicorn_config)",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    target = f"benchmarks.workloads.http:{APPS[args.kind].__name__}"
    settings: dict[str, Any] = {"factory": True, "log_level": "warning", "lifespan": "on"}
    if args.adapter_settings:
        from mcp_adapter import HttpLimits
        from mcp_adapter.serving.uvicorn_config import uvicorn_config

        tuned = uvicorn_config(target, limits=HttpLimits(), host=HOST, port=args.port, **settings)
        uvicorn.Server(tuned).run()
        return 0
    if args.workers == 1 or args.stock:
        # One worker: uvicorn hands asyncio a host and port, and asyncio's listener
        # (from getaddrinfo) has proto IPPROTO_TCP, so TCP_NODELAY is on.
        uvicorn.run(target, host=HOST, port=args.port, workers=args.workers, **settings)
        return 0
    sock = tcp_listener(args.port)
    config = uvicorn.Config(target, host=HOST, port=args.port, workers=args.workers, **settings)
    try:
        Multiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
