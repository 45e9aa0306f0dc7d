"""The ways a test reaches a served tool, each through real SDK parts.

``McpTestClient`` sends JSON-RPC text over the SDK's memory streams (both eras);
``mcp.Client`` is the SDK's own client on the server ``build_sdk_server`` makes
(2026-07-28 direct dispatch, or the legacy handshake over JSON-RPC streams).
Either way a test gets an ``McpResult`` holding the wire form of the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcp import Client, MCPError

from container import Container
from mcp_adapter import Catalog, Server, build_sdk_server, compile_server
from mcp_adapter.testing import McpResult, McpTestClient

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (MODERN, LEGACY)

Via = Literal["test-client", "sdk-client"]


def _dump(model: Any) -> dict[str, Any]:
    value: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return value


@dataclass(frozen=True)
class Driver:
    """One client kind speaking one protocol era."""

    via: Via
    era: str

    @property
    def modern(self) -> bool:
        return self.era == MODERN

    @property
    def id(self) -> str:
        return f"{self.via}-{self.era}"

    def _catalog(self, container: Container, server: type[Server] | Catalog) -> Catalog:
        return server if isinstance(server, Catalog) else compile_server(server, container)

    def _sdk_client(self, container: Container, server: type[Server] | Catalog) -> Client:
        sdk_server = build_sdk_server(self._catalog(container, server), container)
        return Client(sdk_server, mode=MODERN if self.modern else "legacy")

    async def call(
        self,
        container: Container,
        server: type[Server] | Catalog,
        name: str,
        arguments: Mapping[str, Any] | None = None,
    ) -> McpResult:
        """``tools/call``; a protocol error comes back as a JSON-RPC error message."""
        if self.via == "test-client":
            client = McpTestClient(container, server, protocol=self.era)  # type: ignore[arg-type]
            return await client.tool(name, arguments)
        async with self._sdk_client(container, server) as sdk:
            try:
                result = await sdk.call_tool(name, dict(arguments or {}))
            except MCPError as exc:
                error = {"code": exc.code, "message": exc.message}
                return McpResult({"jsonrpc": "2.0", "id": 1, "error": error})
        return McpResult({"jsonrpc": "2.0", "id": 1, "result": _dump(result)})

    async def list_tools(
        self, container: Container, server: type[Server] | Catalog
    ) -> list[dict[str, Any]]:
        """The ``tools`` of a ``tools/list`` answer, in wire form."""
        if self.via == "test-client":
            client = McpTestClient(container, server, protocol=self.era)  # type: ignore[arg-type]
            answer = (await client.list_tools()).assertOk()
            assert answer.result is not None
            tools: list[dict[str, Any]] = answer.result["tools"]
            return tools
        async with self._sdk_client(container, server) as sdk:
            listed = await sdk.list_tools()
        return [_dump(tool) for tool in listed.tools]

    async def tool_entry(
        self, container: Container, server: type[Server] | Catalog, name: str
    ) -> dict[str, Any]:
        entries = {tool["name"]: tool for tool in await self.list_tools(container, server)}
        return entries[name]


DRIVERS = tuple(Driver(via, era) for via in ("test-client", "sdk-client") for era in ERAS)
