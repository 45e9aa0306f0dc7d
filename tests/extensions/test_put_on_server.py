"""``put_on_server`` next to what an SDK server already serves."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types
from mcp.server import Server as LowLevelServer
from mcp.server.mcpserver import MCPServer

from mcp_adapter import CompileError, McpExtension, ToolSpec, put_on_server, tool
from tests.extensions.seed_examples.offering import Sandboxes
from tests.extensions.support import ERAS, LEGACY, MODERN, sdk_call, sdk_tools

pytestmark = pytest.mark.anyio


class Clock:
    def now(self) -> str:
        return "noon"


class Timed(McpExtension):
    @tool()
    def what_time(self, clock: Clock) -> dict[str, str]:
        """Tell the time."""
        return {"time": clock.now()}


async def test_mcpserver_tools_and_put_tools_are_served_side_by_side() -> None:
    server = MCPServer("probe")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    put_on_server(server, [*Sandboxes().tools(), *Timed().tools()])
    for era in ERAS:
        names = [entry["name"] for entry in await sdk_tools(server, era)]
        assert names == ["add", "launch_sandbox", "what_time"]
        assert (await sdk_call(server, "add", {"a": 1, "b": 2}, era))["structuredContent"] == {
            "result": 3
        }
        timed = await sdk_call(server, "what_time", {}, era)
        assert timed["structuredContent"] == {"time": "noon"}  # an empty Container autowires Clock


async def test_mcpservers_own_api_calls_the_put_tool_outside_a_request() -> None:
    server = MCPServer("probe")
    put_on_server(server, Timed().tools())
    result = await server.call_tool("what_time", {})
    assert isinstance(result, types.CallToolResult)
    assert result.structured_content == {"time": "noon"}
    server.remove_tool("what_time")
    assert await server.list_tools() == []


def test_a_name_the_server_already_serves_is_refused() -> None:
    server = MCPServer("probe")

    @server.tool(name="launch_sandbox")
    def existing() -> str:
        return ""

    with pytest.raises(CompileError, match="probe already serves a tool named 'launch_sandbox'"):
        put_on_server(server, Sandboxes().tools())

    lowlevel: LowLevelServer = LowLevelServer("probe")
    put_on_server(lowlevel, Sandboxes().tools())
    with pytest.raises(CompileError, match="already serves a tool named 'launch_sandbox'"):
        put_on_server(lowlevel, Sandboxes().tools())


def test_specs_that_do_not_compile_are_reported_and_nothing_is_put() -> None:
    class Repository:
        def __init__(self, dsn: str) -> None:
            self.dsn = dsn

    def broken(repository: Repository) -> str:
        return repository.dsn

    server = MCPServer("probe")
    with pytest.raises(CompileError, match="Cannot compile probe"):
        put_on_server(server, [ToolSpec(name="broken", handler=broken), *Timed().tools()])
    assert server._tool_manager.list_tools() == []


async def test_low_level_handlers_already_there_keep_serving_their_tools() -> None:
    echo = types.Tool(name="echo", input_schema={"type": "object"})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[echo])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: LowLevelServer = LowLevelServer(
        "mixed", on_list_tools=list_tools, on_call_tool=call_tool
    )
    put_on_server(server, Sandboxes().tools())
    put_on_server(server, Timed().tools())
    for era in ERAS:
        names = [entry["name"] for entry in await sdk_tools(server, era)]
        assert names == ["echo", "launch_sandbox", "what_time"]
        echoed = await sdk_call(server, "echo", {"text": "hi"}, era)
        assert echoed["content"] == [{"type": "text", "text": "hi"}]
        launched = await sdk_call(server, "launch_sandbox", {"sandbox_name": "z"}, era)
        assert launched["structuredContent"]["sandbox"] == "z"
        assert (await sdk_call(server, "what_time", {}, era))["structuredContent"] == {
            "time": "noon"
        }


async def test_a_bare_low_level_server_gets_the_tools_capability_and_unknown_names_fail() -> None:
    server: LowLevelServer = LowLevelServer("bare")
    assert server.get_capabilities().tools is None
    put_on_server(server, Timed().tools())
    assert server.get_capabilities().tools is not None
    put_on_server(server, Sandboxes().tools())
    for era in (MODERN, LEGACY):
        assert [e["name"] for e in await sdk_tools(server, era)] == ["what_time", "launch_sandbox"]
        unknown = await sdk_call(server, "nope", {}, era)
        assert unknown["error"]["message"] == "Unknown tool: nope"
