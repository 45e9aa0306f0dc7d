"""What ``tools/list`` says about a tool: hints, title, description, icons, meta."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, types
from mcp.server.caching import CacheHint

from container import Container
from mcp_adapter import (
    Icon,
    McpResponse,
    Server,
    Tool,
    ToolAnnotations,
    build_sdk_server,
    compile_server,
)
from tests.tools.drivers import Driver

pytestmark = pytest.mark.anyio


def _tool(name: str, **attributes: Any) -> type[Tool[Any, Any]]:
    async def handle(self: Any) -> McpResponse:
        return McpResponse.text(name)

    namespace = {"name": name, "handle": handle, **attributes}
    return type(f"{name.title().replace('-', '')}Tool", (Tool,), namespace)


HINTS = [
    pytest.param(
        ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False),
        {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        id="all-set",
    ),
    pytest.param(
        ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=True),
        {
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": False,
            "openWorldHint": True,
        },
        id="all-set-the-other-way",
    ),
    pytest.param(ToolAnnotations(read_only=True), {"readOnlyHint": True}, id="only-read-only"),
    pytest.param(ToolAnnotations(destructive=False), {"destructiveHint": False}, id="only-false"),
    pytest.param(ToolAnnotations(idempotent=True), {"idempotentHint": True}, id="only-idempotent"),
    pytest.param(ToolAnnotations(open_world=False), {"openWorldHint": False}, id="only-open"),
    pytest.param(ToolAnnotations(title="Hinted"), {"title": "Hinted"}, id="only-title"),
    pytest.param(
        types.ToolAnnotations(read_only_hint=True),
        {"readOnlyHint": True},
        id="protocol-model",
    ),
]


@pytest.mark.parametrize(("hints", "wire"), HINTS)
async def test_annotations_map_to_protocol_hints_and_unset_stays_absent(
    driver: Driver, hints: Any, wire: dict[str, Any]
) -> None:
    server = type("HintServer", (Server,), {"tools": (_tool("hinted", annotations=hints),)})
    entry = await driver.tool_entry(Container(), server, "hinted")
    assert entry["annotations"] == wire


@pytest.mark.parametrize("hints", [None, ToolAnnotations()], ids=["none", "all-unset"])
async def test_no_hints_means_no_annotations_at_all(driver: Driver, hints: Any) -> None:
    server = type("PlainServer", (Server,), {"tools": (_tool("plain", annotations=hints),)})
    entry = await driver.tool_entry(Container(), server, "plain")
    assert "annotations" not in entry


class DocumentedTool(Tool):
    """Find a ticket by its number.

    Searches open and closed tickets.
    """

    title = "Find a ticket"

    async def handle(self) -> McpResponse:
        return McpResponse.text("ticket")


class ExplainedTool(Tool):
    """This docstring loses to the attribute."""

    description = "Explicit description."

    async def handle(self) -> McpResponse:
        return McpResponse.text("explained")


class UndocumentedTool(Tool):
    async def handle(self) -> McpResponse:
        return McpResponse.text("undocumented")


class UndocumentedChildTool(DocumentedTool):
    pass


ICON = Icon(src="https://example.com/ticket.png", mime_type="image/png", sizes=["48x48"])


class DecoratedTool(Tool):
    icons = (ICON,)
    meta = {"com.example/team": "support"}  # noqa: RUF012 - read once by the compiler
    cache = CacheHint(ttl_ms=60_000, scope="public")

    async def handle(self) -> McpResponse:
        return McpResponse.text("decorated")


class MetadataServer(Server):
    tools = (DocumentedTool, ExplainedTool, UndocumentedTool, UndocumentedChildTool, DecoratedTool)


async def test_title_and_docstring_description(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), MetadataServer, "documented")
    assert entry["title"] == "Find a ticket"
    description = "Find a ticket by its number.\n\nSearches open and closed tickets."
    assert entry["description"] == description


async def test_an_explicit_description_wins_over_the_docstring(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), MetadataServer, "explained")
    assert entry["description"] == "Explicit description."
    assert "title" not in entry


@pytest.mark.parametrize("name", ["undocumented", "undocumented-child"])
async def test_without_docstring_or_description_there_is_none(driver: Driver, name: str) -> None:
    entry = await driver.tool_entry(Container(), MetadataServer, name)
    assert "description" not in entry


async def test_icons_and_meta_are_listed_and_the_cache_is_no_meta(driver: Driver) -> None:
    entry = await driver.tool_entry(Container(), MetadataServer, "decorated")
    assert entry["icons"] == [
        {"src": "https://example.com/ticket.png", "mimeType": "image/png", "sizes": ["48x48"]}
    ]
    # the declared freshness is the listing's ttlMs/cacheScope (tests/tools/test_cache_hints.py)
    assert entry["_meta"] == {"com.example/team": "support"}


async def test_the_cache_declaration_does_not_memoize_results(driver: Driver) -> None:
    counted: list[int] = []

    class CountingTool(Tool):
        cache = CacheHint(ttl_ms=3_600_000, scope="public")

        async def handle(self) -> McpResponse:
            counted.append(1)
            return McpResponse.text(str(len(counted)))

    class CountingServer(Server):
        tools = (CountingTool,)

    catalog = compile_server(CountingServer, Container())
    first = await driver.call(Container(), catalog, "counting", {})
    second = await driver.call(Container(), catalog, "counting", {})
    assert (first.texts, second.texts) == (["1"], ["2"])


class IdentifiedServer(Server):
    name = "tickets"
    version = "2.1.0"
    title = "Ticket desk"
    instructions = "Call find-ticket before anything else."
    tools = (DocumentedTool,)


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_server_identity_reaches_the_client(mode: str) -> None:
    container = Container()
    sdk_server = build_sdk_server(compile_server(IdentifiedServer, container), container)
    async with Client(sdk_server, mode=mode) as client:
        result = await client.call_tool("documented", {})
        if mode == "legacy":
            info = client.server_info
            assert info is not None
            assert (info.name, info.version, info.title) == ("tickets", "2.1.0", "Ticket desk")
            assert client.instructions == "Call find-ticket before anything else."
            assert client.server_capabilities.tools is not None
    assert result.is_error is False


def test_server_identity_is_in_the_catalog() -> None:
    catalog = compile_server(IdentifiedServer, Container())
    assert (catalog.name, catalog.version, catalog.title, catalog.instructions) == (
        "tickets",
        "2.1.0",
        "Ticket desk",
        "Call find-ticket before anything else.",
    )
    unnamed = compile_server(type("Unnamed", (Server,), {"tools": ()}), Container())
    assert unnamed.name == "Unnamed"
