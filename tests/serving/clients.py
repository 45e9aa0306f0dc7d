"""Connecting the SDK's ``mcp.Client`` to a real HTTP server, with headers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.serving.harness import serve_app

CALL_TIMEOUT = 60
MODES = ["auto", "legacy"]
"""``auto`` negotiates 2026-07-28 with our servers; ``legacy`` does the 2025-11-25 handshake."""


@asynccontextmanager
async def connect(
    url: str,
    mode: str = "auto",
    *,
    token: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> AsyncIterator[Client]:
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    with anyio.fail_after(CALL_TIMEOUT):
        async with (
            httpx2.AsyncClient(headers=sent, timeout=CALL_TIMEOUT) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
        ):
            yield client


async def tool_names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


async def bearer_pings(app: Any, token: str, times: int) -> list[int]:
    """The HTTP status of each of ``times`` pings to ``app`` (served on 127.0.0.1 at
    ``/mcp``), each with ``token`` as its bearer token."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    bearer = {"Authorization": f"Bearer {token}"}
    with serve_app(app) as base:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            return [
                (await http.post(f"{base}/mcp", json=ping, headers=bearer)).status_code
                for _ in range(times)
            ]
