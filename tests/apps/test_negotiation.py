"""Views follow the negotiation of MCP Apps: a client that lists the extension in its
capabilities sees a tool's ``_meta.ui`` and the ``ui://`` views in ``resources/list`` and
``resources/templates/list``; any other client sees neither, and may still read a view
(the extension lets a server leave views out of its listings; it forbids no read). Through
the SDK's own client in both eras, on a server of this package and on SDK servers that
tools were put on with ``put_on_server``."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, types
from mcp.client.extension import advertise
from mcp.server import Server as SdkServer
from mcp.server.apps import EXTENSION_ID, Apps
from mcp.server.mcpserver import MCPServer

from container import Container
from mcp_adapter import (
    APP_MIME_TYPE,
    McpRequest,
    McpResponse,
    Resource,
    Server,
    Tool,
    ToolSpec,
    ToolUI,
    build_sdk_server,
    compile_server,
    put_on_server,
    supports_apps,
)
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.serving.apps import resources_listing
from mcp_adapter.testing import texts_of

pytestmark = pytest.mark.anyio

APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
MODES = ["auto", "legacy"]  # 2026-07-28 (discovered), then the 2025-11-25 handshake
VIEW = "ui://board/view.html"
PAGE = "<!doctype html><p>board</p>"


class BoardView(Resource):
    uri = VIEW
    mime_type = APP_MIME_TYPE

    def handle(self) -> McpResponse:
        return McpResponse.text(PAGE)


class TeamView(Resource):
    """A view served from a template."""

    name = "team_view"
    uri_template = "ui://teams/{team}.html"
    mime_type = APP_MIME_TYPE

    def handle(self, team: str) -> McpResponse:
        return McpResponse.text(f"<!doctype html><p>{team}</p>")


class Rules(Resource):
    uri = "docs://rules"
    mime_type = "text/plain"

    def handle(self) -> McpResponse:
        return McpResponse.text("be nice")


class Member(Resource):
    name = "member"
    uri_template = "members://{name}"

    def handle(self, name: str) -> McpResponse:
        return McpResponse.text(name)


class ScoreTool(Tool):
    name = "score"
    ui = ToolUI(VIEW)

    async def handle(self, request: McpRequest) -> McpResponse:
        return McpResponse.text("on the board" if supports_apps(request) else "42 points")


class Board(Server):
    tools = (ScoreTool,)
    resources = (BoardView, TeamView, Rules, Member)


def board() -> Any:
    return build_sdk_server(compile_server(Board, Container()), Container())


async def listings(client: Client) -> tuple[Any, list[str], list[str]]:
    (tool,) = (await client.list_tools()).tools
    resources = [str(r.uri) for r in (await client.list_resources()).resources]
    templates = [
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    ]
    return tool.meta, resources, templates


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_with_apps_lists_the_views(mode: str) -> None:
    async with Client(board(), mode=mode, cache=None, extensions=[APPS]) as client:
        meta, resources, templates = await listings(client)
        assert meta == {"ui": {"resourceUri": VIEW}}
        assert resources == [VIEW, "docs://rules"]
        assert templates == ["ui://teams/{team}.html", "members://{name}"]
        assert texts_of(await client.call_tool("score", {})) == ["on the board"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_apps_lists_no_view_and_may_still_read_one(mode: str) -> None:
    async with Client(board(), mode=mode, cache=None) as client:
        meta, resources, templates = await listings(client)
        assert meta is None
        assert resources == ["docs://rules"]
        assert templates == ["members://{name}"]
        assert texts_of(await client.call_tool("score", {})) == ["42 points"]
        (contents,) = (await client.read_resource(VIEW)).contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == PAGE
        (team,) = (await client.read_resource("ui://teams/red.html")).contents
        assert isinstance(team, types.TextResourceContents)
        assert team.text == "<!doctype html><p>red</p>"


def test_a_server_without_views_keeps_the_dispatchers_own_resource_listings() -> None:
    class Plain(Server):
        resources = (Rules, Member)

    catalog = compile_server(Plain, Container())
    dispatcher = Dispatcher(catalog, Container())
    assert resources_listing(catalog, dispatcher) == (
        dispatcher.list_resources,
        dispatcher.list_resource_templates,
    )


# -- tools put on SDK servers ------------------------------------------------------------------


def score(request: McpRequest) -> str:
    return "on the board" if supports_apps(request) else "42 points"


SPECS = [ToolSpec(name="score", handler=score, ui=ToolUI(VIEW))]


def on_mcpserver() -> MCPServer[Any]:
    """The view is the host's (the SDK's ``Apps`` extension); the tool is put on it."""
    apps = Apps()
    apps.add_html_resource(VIEW, PAGE)
    server: MCPServer[Any] = MCPServer("host", extensions=[apps])
    put_on_server(server, SPECS)
    return server


def on_lowlevel() -> SdkServer[Any]:
    server: SdkServer[Any] = SdkServer("host")
    put_on_server(server, SPECS)
    return server


def on_lowlevel_with_its_own_tools() -> SdkServer[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="own", input_schema={"type": "object"})]
        )

    server: SdkServer[Any] = SdkServer("host", on_list_tools=list_tools)
    put_on_server(server, SPECS)
    return server


HOSTS = [on_mcpserver, on_lowlevel, on_lowlevel_with_its_own_tools]


def put_tool(tools: list[types.Tool]) -> types.Tool:
    (tool,) = [t for t in tools if t.name == "score"]
    return tool


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("host", HOSTS)
async def test_a_put_tool_shows_its_view_only_to_a_client_with_apps(mode: str, host: Any) -> None:
    server = host()
    async with Client(server, mode=mode, cache=None, extensions=[APPS]) as client:
        tool = put_tool((await client.list_tools()).tools)
        assert (tool.meta or {}).get("ui") == {"resourceUri": VIEW}
        assert texts_of(await client.call_tool("score", {})) == ["on the board"]
    async with Client(server, mode=mode, cache=None) as client:
        tool = put_tool((await client.list_tools()).tools)
        assert "ui" not in (tool.meta or {})
        assert texts_of(await client.call_tool("score", {})) == ["42 points"]


def hidden_score() -> str:
    return "never listed"


HOOKED = [
    *SPECS,
    ToolSpec(name="hidden", handler=hidden_score, ui=ToolUI(VIEW), should_register=lambda: False),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["mcpserver", "lowlevel"])
async def test_a_put_tool_its_hooks_hide_stays_hidden_whatever_the_negotiation(
    mode: str, kind: str
) -> None:
    server: Any = MCPServer("host") if kind == "mcpserver" else SdkServer("host")
    put_on_server(server, HOOKED)
    for extensions in ([APPS], []):
        async with Client(server, mode=mode, cache=None, extensions=extensions) as client:
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["score"]
            assert ("ui" in (tools[0].meta or {})) is bool(extensions)
