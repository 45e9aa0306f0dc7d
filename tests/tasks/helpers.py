"""A client of the tasks extension through the real SDK client, in process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import httpx2
from mcp import Client, types
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter.compile.server import compile_server
from mcp_adapter.serving.lowlevel import build_sdk_server

EXTENSION = "io.modelcontextprotocol/tasks"


class Raw(types.Result):
    """Any result, as sent."""

    model_config = types.Result.model_config | {"extra": "allow"}


class _Params(types.RequestParams):
    model_config = types.RequestParams.model_config | {"extra": "allow"}


class _Request(types.Request[_Params, str]):
    method: str
    params: _Params


class Tasks:
    """One connection of the real SDK client to a served catalog."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def request(self, method: str, **params: Any) -> dict[str, Any]:
        result = await self.client.session.send_request(
            _Request(method=method, params=_Params(**params)), Raw
        )
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("tools/call", name=name, arguments=dict(arguments or {}))

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.request("tasks/get", taskId=task_id)

    async def cancel(self, task_id: str) -> dict[str, Any]:
        return await self.request("tasks/cancel", taskId=task_id)

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """``tasks/get`` until the task is in one of ``statuses`` (default: an end)."""
        wanted = statuses or ("completed", "failed", "cancelled")
        with anyio.fail_after(20):
            while True:
                task = await self.get(task_id)
                if task["status"] in wanted:
                    return task
                await anyio.sleep(0.02)


@asynccontextmanager
async def connected(
    server: Any,
    container: Container | None = None,
    *,
    negotiated: bool = True,
    token: AccessToken | None = None,
    mode: Literal["auto", "legacy"] = "auto",
    built: Any = None,
) -> AsyncIterator[Tasks]:
    """A connection (2026-07-28 by default) whose client declared the extension."""
    sdk = built
    if sdk is None:
        catalog = compile_server(server, container or Container())
        sdk = build_sdk_server(catalog, container or Container(), caller=token)
    extensions = [advertise(EXTENSION)] if negotiated else []
    async with Client(sdk, mode=mode, extensions=extensions) as client:
        yield Tasks(client)


@asynccontextmanager
async def over_http(
    url: str, token: str | None = None, *, negotiated: bool = True
) -> AsyncIterator[Tasks]:
    """A 2026-07-28 connection over HTTP, signed in with ``token`` if given."""
    extensions = [advertise(EXTENSION)] if negotiated else []
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=20) as http,
        Client(
            streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
            extensions=extensions,
        ) as client,
    ):
        yield Tasks(client)
