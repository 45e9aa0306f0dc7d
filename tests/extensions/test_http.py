"""A ``Platform`` served over streamable HTTP: toolsets per request, the HTTP request injected."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from container import Container
from mcp_adapter import McpExtension, Platform, http_app, tool
from tests.extensions.seed_examples.offering import Sandboxes
from tests.serving.clients import connect, tool_names
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio


class Admin(McpExtension):
    @tool(toolset="sandbox-admin")
    def whoami(self, request: Request) -> dict:
        """Who is calling, as the HTTP request says."""
        return {"agent": request.headers.get("x-agent", "")}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_toolsets_over_http_and_the_http_request_injected(mode: str) -> None:
    app = http_app(Platform([Sandboxes(), Admin()]), Container())
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", mode, headers={"x-agent": "probe"}) as client:
            assert await tool_names(client) == ["launch_sandbox", "whoami"]
            result = await client.call_tool("whoami", {})
            assert result.structured_content == {"agent": "probe"}
        headers = {"X-MCP-Toolsets": "sandboxes"}
        async with connect(f"{base}/mcp", mode, headers=headers) as client:
            assert await tool_names(client) == ["launch_sandbox"]
        async with connect(f"{base}/mcp/x/sandbox-admin", mode) as client:
            assert await tool_names(client) == ["whoami"]
