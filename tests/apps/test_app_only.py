"""A tool only its view calls (``ToolUI(..., visibility=("app",))``) exists only for clients
that negotiated MCP Apps: any other client neither lists it nor may call it (the call is
answered exactly as for a name the server does not serve), since its only "app only" mark,
``_meta.ui``, is not shown to them and nothing would keep their model from calling it.

Over real HTTP (uvicorn on 127.0.0.1) with the SDK's client, in both eras, for class
tools and the ``@tool`` functions of an extension; and for tools put on an ``MCPServer``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server.apps import EXTENSION_ID, Apps
from mcp.server.mcpserver import MCPServer

from container import Container
from mcp_adapter import (
    APP_MIME_TYPE,
    McpExtension,
    McpResponse,
    Platform,
    Server,
    Tool,
    ToolSpec,
    ToolUI,
    http_app,
    put_on_server,
    tool,
)
from mcp_adapter.testing import McpTestClient, texts_of
from tests.apps.test_declaring import VIEW, BoardView
from tests.apps.test_negotiation import APPS, MODES
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 60


class ScoreTool(Tool):
    """The model's tool: it shows the board."""

    name = "score"
    ui = ToolUI(VIEW)

    async def handle(self) -> McpResponse:
        return McpResponse.text("42 points")


class RefreshTool(Tool):
    """Only the board's button calls it."""

    name = "refresh"
    ui = ToolUI(VIEW, visibility=("app",))

    async def handle(self) -> McpResponse:
        return McpResponse.text("refreshed")


class BothTool(Tool):
    name = "both"
    ui = ToolUI(VIEW, visibility=("model", "app"))

    async def handle(self) -> McpResponse:
        return McpResponse.text("both")


class Board(McpExtension):
    @tool(ui=ToolUI(VIEW, visibility=("app",)))
    def reorder(self, column: str) -> str:
        """Only the board's drag and drop calls it."""
        return f"reordered {column}"


class Scores(Server):
    tools = (ScoreTool, RefreshTool, BothTool)
    resources = (BoardView,)


@asynccontextmanager
async def connect(url: str, mode: str, apps: bool) -> AsyncIterator[Client]:
    with anyio.fail_after(CALL_TIMEOUT):
        async with (
            httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http,
            Client(
                streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
                mode=mode,
                cache=None,
                extensions=[APPS] if apps else [],
            ) as client,
        ):
            yield client


async def names(client: Client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


async def refused(client: Client, name: str, arguments: dict[str, Any]) -> tuple[int, str]:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(name, arguments)
    return caught.value.code, caught.value.message


# a 2025-11-25 client negotiates once, at its handshake: over HTTP that takes a session
HTTP = [("auto", True), ("auto", False), ("legacy", False)]


@pytest.mark.parametrize(("mode", "stateless"), HTTP)
async def test_app_only_tools_exist_only_for_a_client_with_apps_over_http(
    mode: str, stateless: bool
) -> None:
    app = http_app(Platform([Board()], server=Scores), Container(), stateless=stateless)
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", mode, apps=True) as host:
            listed = {t.name: t for t in (await host.list_tools()).tools}
            assert sorted(listed) == ["both", "refresh", "reorder", "score"]
            assert listed["refresh"].meta == {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}
            assert texts_of(await host.call_tool("refresh", {})) == ["refreshed"]
            reordered = await host.call_tool("reorder", {"column": "done"})
            assert texts_of(reordered) == ["reordered done"]

        async with connect(f"{base}/mcp", mode, apps=False) as plain:
            assert await names(plain) == ["both", "score"]  # never offered to the model
            assert texts_of(await plain.call_tool("score", {})) == ["42 points"]
            # answered exactly as a name the server does not serve
            unknown = await refused(plain, "no-such-tool", {})
            assert unknown == (types.INVALID_PARAMS, "Unknown tool: no-such-tool")
            assert await refused(plain, "refresh", {}) == (
                types.INVALID_PARAMS,
                "Unknown tool: refresh",
            )
            assert await refused(plain, "reorder", {"column": "done"}) == (
                types.INVALID_PARAMS,
                "Unknown tool: reorder",
            )


async def test_a_handshake_client_on_stateless_http_negotiated_nothing() -> None:
    """Each request of stateless HTTP is a session of its own, with no handshake: a
    2025-11-25 client's capabilities are not known there, so it is a client without Apps."""
    app = http_app(Platform([Board()], server=Scores), Container(), stateless=True)
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", "legacy", apps=True) as client:
            assert await names(client) == ["both", "score"]
            assert await refused(client, "refresh", {}) == (
                types.INVALID_PARAMS,
                "Unknown tool: refresh",
            )


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_the_test_client_sees_what_an_http_client_sees(era: Any) -> None:
    capabilities = {"extensions": {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}}
    host = McpTestClient(Container(), Scores, protocol=era, capabilities=capabilities)
    assert len((await host.list_tools()).result["tools"]) == 3
    (await host.tool("refresh")).assertOk().assertTextContains("refreshed")
    plain = McpTestClient(Container(), Scores, protocol=era)
    assert [t["name"] for t in (await plain.list_tools()).result["tools"]] == ["score", "both"]
    (await plain.tool("refresh")).assertError("Unknown tool: refresh", code=types.INVALID_PARAMS)


@pytest.mark.parametrize("mode", MODES)
async def test_an_app_only_tool_put_on_an_mcpserver_follows_the_same_rule(mode: str) -> None:
    def refresh() -> str:
        return "refreshed"

    apps = Apps()
    apps.add_html_resource(VIEW, "<!doctype html>")
    server: MCPServer[Any] = MCPServer("host", extensions=[apps])
    spec = ToolSpec(name="refresh", handler=refresh, ui=ToolUI(VIEW, visibility=("app",)))
    put_on_server(server, [spec])
    async with Client(server, mode=mode, cache=None, extensions=[APPS]) as host:
        assert await names(host) == ["refresh"]
        assert texts_of(await host.call_tool("refresh", {})) == ["refreshed"]
    async with Client(server, mode=mode, cache=None) as plain:
        assert await names(plain) == []
        result = await plain.call_tool("refresh", {})  # MCPServer's answer to an unknown name
        assert result.is_error
        assert texts_of(result) == ["Unknown tool: refresh"]
