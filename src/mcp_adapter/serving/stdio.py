"""Serving a catalog over the process's stdin and stdout (both protocol eras)."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from container import Container
from mcp_adapter.sdk import build_sdk_server
from mcp_adapter.serving.servable import Servable, catalog_of


async def serve_stdio(
    servable: Servable,
    container: Container,
    *,
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
    close_container: bool = False,
) -> None:
    """Serve ``servable`` over stdio until the client closes stdin.

    Each request runs in its own container scope; singletons live as long as
    ``container``. With ``close_container=True`` the container is closed (its
    singleton finalizers run) when serving ends. The SDK answers both the
    2025-11-25 handshake and 2026-07-28 per-request envelopes on one stream.
    """
    catalog = catalog_of(servable, container)
    server = build_sdk_server(catalog, container, transport="stdio")
    try:
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        if close_container:
            await container.aclose()


def run_stdio(servable: Servable, container: Container, *, close_container: bool = False) -> None:
    """Blocking form of :func:`serve_stdio`, for a script's ``if __name__ == "__main__":``."""
    anyio.run(lambda: serve_stdio(servable, container, close_container=close_container))
