"""Serve one contender of the HTTP benchmark under uvicorn, as ``mcp-adapter serve`` does.

``python -m benchmarks.http_serve KIND --port P [--workers N]`` runs
``uvicorn.run("benchmarks.http_serve:<factory>", factory=True, workers=N,
log_level="warning", lifespan="on")`` on 127.0.0.1: the uvicorn settings of
``mcp-adapter serve --http`` (``mcp_adapter/cli/serve.py``), so every contender
gets the same server loop, HTTP parser and logging.

Kinds: ``floor`` (the SDK's low-level ``Server`` with hand-written handlers;
``floor-hook`` the same with the SDK's ``get_tool_input_schema`` hook set),
``mcpserver`` (the SDK's ``MCPServer`` with ``Resolve``), ``fastmcp``
(FastMCP with ``Depends``; run with the python of its own venv), and this
adapter's app built in-process (``adapter``; ``adapter-lean`` drops the
``CancelOnDisconnect`` wrapper: a diagnostic, see :mod:`benchmarks.http_adapter`).
``--adapter-settings`` serves a kind with the uvicorn settings ``mcp-adapter serve``
uses (:func:`mcp_adapter.serving.uvicorn_config.uvicorn_config` with the default
``HttpLimits``) instead of uvicorn's own: a diagnostic of what those settings are
worth apart from the app. This module imports only the standard library and
uvicorn at the top, so it runs in the FastMCP venv too.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from typing import Any

HOST = "127.0.0.1"
PATH = "/mcp"


def mcpserver_app() -> Any:
    """``MCPServer`` + ``Resolve``: stateless streamable HTTP, JSON responses."""
    from benchmarks.mcp_workload import mcpserver_resolve

    return mcpserver_resolve().streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, host=HOST
    )


def floor_app() -> Any:
    """The SDK's low-level ``Server`` with hand-written handlers (the per-call suite's
    floor), served by its own ``streamable_http_app``: stateless, JSON responses."""
    from benchmarks.mcp_workload import floor_server

    return floor_server().streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, host=HOST
    )


def floor_hook_app() -> Any:
    """:func:`floor_app` with the SDK's ``get_tool_input_schema`` hook set, as ``MCPServer``
    and this adapter set it: without it the SDK runs the whole ``tools/list`` handler on
    every 2026-07-28 ``tools/call`` to find the tool's schema for its ``Mcp-Param``
    headers."""
    from benchmarks.mcp_workload import TOOL, AddArguments, floor_server

    schema = AddArguments.model_json_schema()
    server = floor_server()
    server.get_tool_input_schema = lambda name: schema if name == TOOL else None
    return server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True, host=HOST
    )


def fastmcp_app() -> Any:
    """FastMCP + ``Depends`` (:mod:`benchmarks.http_fastmcp`; its own venv only)."""
    from benchmarks.http_fastmcp import app

    return app(PATH, HOST)


def adapter_app() -> Any:
    from benchmarks.http_adapter import app

    return app()


def adapter_lean_app() -> Any:
    from benchmarks.http_adapter import app_lean

    return app_lean()


FACTORIES = {
    "floor": "floor_app",
    "floor-hook": "floor_hook_app",
    "mcpserver": "mcpserver_app",
    "fastmcp": "fastmcp_app",
    "adapter": "adapter_app",
    "adapter-lean": "adapter_lean_app",
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

    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_serve")
    parser.add_argument("kind", choices=sorted(FACTORIES))
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
    target = f"benchmarks.http_serve:{FACTORIES[args.kind]}"
    settings: dict[str, Any] = {"factory": True, "log_level": "warning", "lifespan": "on"}
    if args.adapter_settings:
        from mcp_adapter import HttpLimits
        from mcp_adapter.serving.uvicorn_config import uvicorn_config

        config = uvicorn_config(target, limits=HttpLimits(), host=HOST, port=args.port, **settings)
        uvicorn.Server(config).run()
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
