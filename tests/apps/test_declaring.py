"""Declaring a view (``Tool.ui``, ``@tool(ui=...)``, ``ToolSpec(ui=...)``): what compiles,
what each client lists, and what a wrong declaration is told."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from container import Container
from mcp_adapter import (
    APP_MIME_TYPE,
    CompileError,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    PluginManifest,
    Resource,
    Server,
    Tool,
    ToolSpec,
    ToolUI,
    build_sdk_server,
    compile_server,
    supports_apps,
    tool,
)
from mcp_adapter.declare.request import McpRequest as Snapshot
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.serving.apps import tools_listing
from mcp_adapter.testing import McpTestClient

pytestmark = pytest.mark.anyio

ERAS = ("2026-07-28", "2025-11-25")
VIEW = "ui://board/view.html"
APPS = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME_TYPE]}}}


class BoardView(Resource):
    uri = VIEW
    mime_type = APP_MIME_TYPE

    def handle(self) -> McpResponse:
        return McpResponse.text("<!doctype html><p>board</p>")


class ScoreTool(Tool):
    name = "score"
    ui = ToolUI(VIEW, visibility=("model", "app"))
    meta: ClassVar[dict[str, Any]] = {"team": "games"}

    async def handle(self, request: McpRequest) -> McpResponse:
        return McpResponse.text("with a view" if supports_apps(request) else "text only")


class PlainTool(Tool):
    name = "plain"

    async def handle(self) -> McpResponse:
        return McpResponse.text("plain")


class Board(Server):
    tools = (ScoreTool, PlainTool)
    resources = (BoardView,)


class Games(McpExtension):
    def manifest(self) -> PluginManifest:
        return PluginManifest(name="games", version="1.0.0")

    @tool(ui=ToolUI(VIEW))
    def move(self, square: str) -> str:
        """Play a move."""
        return f"played {square}"

    def tools(self) -> list[ToolSpec]:
        return [*super().tools(), ToolSpec(name="undo", handler=lambda: "undone", ui=ToolUI(VIEW))]


class GamesHost(Server):
    resources = (BoardView,)


def listed(result: Any) -> dict[str, Any]:
    return {entry["name"]: entry.get("_meta") for entry in result.result["tools"]}


@pytest.mark.parametrize("era", ERAS)
async def test_a_class_tool_lists_its_view_to_a_client_with_apps_only(era: str) -> None:
    with_apps = McpTestClient(Container(), Board, protocol=era, capabilities=APPS)  # type: ignore[arg-type]
    without = McpTestClient(Container(), Board, protocol=era)  # type: ignore[arg-type]
    view = {"resourceUri": VIEW, "visibility": ["model", "app"]}
    assert listed(await with_apps.list_tools()) == {
        "score": {"team": "games", "ui": view},
        "plain": None,
    }
    assert listed(await without.list_tools()) == {"score": {"team": "games"}, "plain": None}
    (await with_apps.tool("score")).assertOk().assertTextContains("with a view")
    (await without.tool("score")).assertOk().assertTextContains("text only")


@pytest.mark.parametrize("era", ERAS)
async def test_tool_and_toolspec_declare_views_alike(era: str) -> None:
    platform = Platform([Games()], server=GamesHost)
    client = McpTestClient(Container(), platform, protocol=era, capabilities=APPS)  # type: ignore[arg-type]
    assert listed(await client.list_tools()) == {
        "move": {"ui": {"resourceUri": VIEW}},
        "undo": {"ui": {"resourceUri": VIEW}},
    }
    anonymous = McpTestClient(Container(), platform, protocol=era)  # type: ignore[arg-type]
    assert listed(await anonymous.list_tools()) == {"move": None, "undo": None}


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        {"extensions": {}},
        {"extensions": {"io.modelcontextprotocol/ui": {}}},
        {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}},
        {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": APP_MIME_TYPE}}},
        {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": {APP_MIME_TYPE: 1}}}},
    ],
    ids=["none", "no-ui", "no-mime-types", "other-mime", "a-string", "a-map"],
)
async def test_a_client_that_did_not_negotiate_apps_gets_no_view(
    capabilities: dict[str, Any],
) -> None:
    """Settings that only look like the extension's (a bare string that contains the MIME
    type, a map, no list) are not a negotiation, and nothing breaks on them."""
    client = McpTestClient(Container(), Board, capabilities=capabilities)
    assert listed(await client.list_tools())["score"] == {"team": "games"}
    (await client.tool("score")).assertOk().assertTextContains("text only")
    assert not supports_apps(Snapshot(client_capabilities=capabilities))


def test_supports_apps_reads_the_snapshot() -> None:
    """Capabilities the SDK refuses before any handler runs (extensions not a map of maps)
    are not a negotiation either, wherever a snapshot comes from."""
    assert supports_apps(Snapshot(client_capabilities=APPS))
    assert not supports_apps(Snapshot())
    for odd in ({"extensions": {"io.modelcontextprotocol/ui": "yes"}}, {"extensions": ["x"]}):
        assert not supports_apps(Snapshot(client_capabilities=odd))


def test_a_server_without_views_keeps_the_dispatchers_own_listing() -> None:
    """No view, nothing added: the ``tools/list`` handler is the dispatcher's method, and
    the server declares no extension."""

    class Plain(Server):
        tools = (PlainTool,)

    catalog = compile_server(Plain, Container())
    dispatcher = Dispatcher(catalog, Container())
    assert tools_listing(catalog, dispatcher) == dispatcher.list_tools
    assert build_sdk_server(catalog, Container()).extensions == {}
    assert build_sdk_server(compile_server(Board, Container()), Container()).extensions == {
        "io.modelcontextprotocol/ui": {}
    }


# -- what a wrong declaration is told -------------------------------------------------------


def problems_of(server: type[Server] | Platform) -> str:
    compile_it = server.compile if isinstance(server, Platform) else server_compiler(server)
    with pytest.raises(CompileError) as caught:
        compile_it(Container())
    return str(caught.value)


def server_compiler(server: type[Server]) -> Any:
    return lambda container: compile_server(server, container)


def test_a_view_the_server_does_not_serve_is_a_compile_error() -> None:
    class Viewless(Server):
        tools = (ScoreTool,)

    text = problems_of(Viewless)
    assert (
        "tool 'score' names the view 'ui://board/view.html', which this server does not serve"
        in text
    )
    assert (
        'hint: add a Resource with uri = "ui://board/view.html" and mime_type = APP_MIME_TYPE'
        in text
    )


def test_a_view_served_as_another_mime_type_is_a_compile_error() -> None:
    class HtmlView(Resource):
        uri = VIEW
        mime_type = "text/html"

        def handle(self) -> McpResponse:
            return McpResponse.text("<p>board</p>")

    class Wrong(Server):
        tools = (ScoreTool,)
        resources = (HtmlView,)

    text = problems_of(Wrong)
    assert "the view 'ui://board/view.html' is served as 'text/html'" in text
    assert "hint: set mime_type = APP_MIME_TYPE on" in text


def test_a_view_from_a_template_is_served() -> None:
    class Views(Resource):
        uri_template = "ui://board/{page}"
        mime_type = APP_MIME_TYPE

        def handle(self, page: str) -> McpResponse:
            return McpResponse.text(f"<p>{page}</p>")

    class Templated(Server):
        tools = (ScoreTool,)
        resources = (Views,)

    assert "score" in compile_server(Templated, Container()).tools


def test_every_wrong_ui_is_reported_at_once_with_a_hint() -> None:
    class NotUi(Tool):
        name = "not_ui"
        ui = ToolUI("https://example.com/view.html")

        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    class BadVisibility(Tool):
        name = "bad_visibility"
        ui = ToolUI(VIEW, visibility=("everyone",))  # type: ignore[arg-type]

        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    class Twice(Tool):
        name = "twice"
        ui = ToolUI(VIEW)
        meta: ClassVar[dict[str, Any]] = {"ui": {"resourceUri": VIEW}}

        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    class AString(Tool):
        name = "a_string"
        ui = VIEW  # type: ignore[assignment]

        async def handle(self) -> McpResponse:
            return McpResponse.text("x")

    class Wrong(Server):
        tools = (NotUi, BadVisibility, Twice, AString)
        resources = (BoardView,)

    text = problems_of(Wrong)
    assert "Cannot compile Wrong: 4 problems" in text
    assert "the view 'https://example.com/view.html' is not a ui:// URI" in text
    assert "the view's visibility ('everyone',) is not a non-empty sequence" in text
    assert "meta has a 'ui' key and ui= is given" in text
    assert "ui must be a ToolUI, not 'ui://board/view.html'" in text
    assert "NotUi.ui" in text


def test_a_toolspec_view_is_checked_as_a_class_tools() -> None:
    class Broken(McpExtension):
        def manifest(self) -> PluginManifest:
            return PluginManifest(name="broken", version="1.0.0")

        def tools(self) -> list[ToolSpec]:
            return [ToolSpec(name="undo", handler=lambda: "x", ui=ToolUI("ui://elsewhere"))]

    text = problems_of(Platform([Broken()], server=GamesHost))
    assert "tool 'undo' names the view 'ui://elsewhere', which this server does not serve" in text
