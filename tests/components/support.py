"""Shared helpers for the component tests: both eras, both clients, a simulated identity."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import mcp
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import Catalog, Server, build_sdk_server, compile_server

ERAS = ("2026-07-28", "2025-11-25")
"""What ``McpTestClient(protocol=...)`` speaks."""
SDK_MODES = ("2026-07-28", "legacy")
"""What ``mcp.Client(mode=...)`` speaks: 2026-07-28 in process, or the 2025-11-25 handshake."""

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def is_modern(era: str) -> bool:
    return era == MODERN


@asynccontextmanager
async def sdk_client(
    server: type[Server] | Catalog, container: Container, mode: str, **options: Any
) -> AsyncIterator[mcp.Client]:
    """The SDK's own client on our server, without its response cache (listings always hit)."""
    catalog = server if isinstance(server, Catalog) else compile_server(server, container)
    sdk_server = build_sdk_server(catalog, container)
    async with mcp.Client(sdk_server, mode=mode, cache=None, **options) as client:
        yield client


@contextmanager
def signed_in(subject: str = "ada", scopes: tuple[str, ...] = ("notes:read",)) -> Iterator[None]:
    """Act as an authenticated caller, as the SDK's HTTP auth middleware would.

    Sets the SDK's own auth context variable; servers started inside the block
    (``McpTestClient`` starts one per request) inherit it.
    """
    token = AccessToken(
        token="secret-token",
        client_id="client-1",
        scopes=list(scopes),
        subject=subject,
        claims={"iss": "https://issuer.example"},
    )
    reset = auth_context_var.set(AuthenticatedUser(token))
    try:
        yield
    finally:
        auth_context_var.reset(reset)
