"""Task clients for the tests: in process (``TaskClient``) and over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import httpx2
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter.tasks import EXTENSION
from mcp_adapter.testing import TaskClient

__all__ = ["EXTENSION", "TaskClient", "connected", "over_http"]


@asynccontextmanager
async def connected(
    server: Any,
    container: Container | None = None,
    *,
    negotiated: bool = True,
    token: AccessToken | None = None,
    mode: Literal["auto", "legacy"] = "auto",
    built: Any = None,
) -> AsyncIterator[TaskClient]:
    """A connection (2026-07-28 by default) whose client declared the extension; ``built``:
    an SDK server built already."""
    if built is None:
        protocol: Literal["2026-07-28", "2025-11-25"] = (
            "2026-07-28" if mode == "auto" else "2025-11-25"
        )
        async with TaskClient.connect(
            container or Container(), server, negotiated=negotiated, protocol=protocol, token=token
        ) as tasks:
            yield tasks
        return
    extensions = [advertise(EXTENSION)] if negotiated else []
    async with Client(built, mode=mode, extensions=extensions) as client:
        yield TaskClient(client)


@asynccontextmanager
async def over_http(
    url: str,
    token: str | None = None,
    *,
    negotiated: bool = True,
    event_hooks: dict[str, list[Any]] | None = None,
    **options: Any,
) -> AsyncIterator[TaskClient]:
    """A 2026-07-28 connection over HTTP, signed in with ``token`` if given; ``event_hooks``:
    the HTTP client's; ``options``: more settings of the SDK ``Client`` (its callbacks)."""
    extensions = [advertise(EXTENSION)] if negotiated else []
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=20, event_hooks=event_hooks) as http,
        Client(
            streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
            extensions=extensions,
            **options,
        ) as client,
    ):
        yield TaskClient(client)
