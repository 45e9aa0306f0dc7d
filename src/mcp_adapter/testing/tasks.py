"""``TaskClient``: one connection of the real SDK client, in process, whose client declared
the tasks extension; it starts tasks, reads them and cancels them (docs/tasks.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
from mcp import Client, types
from mcp.client.extension import advertise
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter.serving.lowlevel import build_sdk_server
from mcp_adapter.serving.servable import Servable, catalog_of
from mcp_adapter.tasks.wire import EXTENSION, TERMINAL

WAIT = 30.0
"""Seconds ``TaskClient.until`` waits at most."""


class _Any(types.Result):
    model_config = types.Result.model_config | {"extra": "allow"}


class _Params(types.RequestParams):
    model_config = types.RequestParams.model_config | {"extra": "allow"}


class _Request(types.Request[_Params, str]):
    method: str
    params: _Params


class _TaskRequest(_Request):
    """``tasks/get``, ``tasks/update``, ``tasks/cancel``: the task's id goes in the
    ``Mcp-Name`` header too, as the extension requires over HTTP."""

    name_param = "taskId"


class TaskClient:
    """Requests as sent and answers as received (JSON), over one connection that
    stays open while the ``async with`` lasts (the tasks live as long as it does).

    ``TaskClient.connect(container, Server)`` opens it; ``negotiated=False`` is a
    client without the extension, ``protocol="2025-11-25"`` an older one, ``token``
    its caller.
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        """The SDK's ``Client``."""

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        container: Container,
        server: Servable | Any,
        *,
        negotiated: bool = True,
        protocol: Literal["2026-07-28", "2025-11-25"] = "2026-07-28",
        token: AccessToken | None = None,
        **options: Any,
    ) -> AsyncIterator[TaskClient]:
        """``options``: more of the SDK ``Client``'s settings (an ``elicitation_callback``
        declares the elicitation capability a task that asks for input needs)."""
        catalog = catalog_of(server, container)
        sdk = build_sdk_server(catalog, container, caller=token)
        extensions = [advertise(EXTENSION)] if negotiated else []
        mode: Literal["auto", "legacy"] = "auto" if protocol == "2026-07-28" else "legacy"
        async with Client(sdk, mode=mode, extensions=extensions, **options) as client:
            yield cls(client)

    async def request(self, method: str, **params: Any) -> dict[str, Any]:
        """Any request; its result as JSON (an error raises the SDK's ``MCPError``)."""
        kind = _TaskRequest if "taskId" in params else _Request
        result = await self.client.session.send_request(
            kind(method=method, params=_Params(**params)), _Any
        )
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``tools/call``: a task's handle (``resultType: "task"``) or an inline result."""
        return await self.request("tools/call", name=name, arguments=dict(arguments or {}))

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.request("tasks/get", taskId=task_id)

    async def cancel(self, task_id: str) -> dict[str, Any]:
        return await self.request("tasks/cancel", taskId=task_id)

    async def update(self, task_id: str, answers: Mapping[str, Any]) -> dict[str, Any]:
        """``tasks/update``: answers to a task waiting for input, by the keys of its
        ``inputRequests``."""
        return await self.request("tasks/update", taskId=task_id, inputResponses=dict(answers))

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """``tasks/get`` until the task is in one of ``statuses`` (by default, ended)."""
        wanted = set(statuses) or TERMINAL
        with anyio.fail_after(WAIT):
            while True:
                task = await self.get(task_id)
                if task["status"] in wanted:
                    return task
                await anyio.sleep(0.01)
