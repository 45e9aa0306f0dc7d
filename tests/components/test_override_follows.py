"""``container.override(...)`` reaches every catalog compiled from that container, for the
length of the block, and ends with it: servers built before, inside and after the block."""

from __future__ import annotations

import pytest

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class Repository:
    def name(self) -> str:
        return "real"


class FakeRepository(Repository):
    def name(self) -> str:
        return "fake"


class NameTool(Tool):
    name = "repo"

    def __init__(self, repository: Repository) -> None:
        self.repository = repository

    async def handle(self) -> McpResponse:
        return McpResponse.text(self.repository.name())


class Shop(Server):
    tools = (NameTool,)


def shop() -> Container:
    container = Container()
    container.scoped(Repository)
    return container


@pytest.mark.parametrize("era", ERAS)
async def test_an_override_reaches_a_server_compiled_before_it(era: str) -> None:
    container = shop()
    client = McpTestClient(container, Shop, protocol=era)
    assert (await client.tool("repo")).texts == ["real"]
    with container.override(Repository, FakeRepository()):
        assert (await client.tool("repo")).texts == ["fake"]
    assert (await client.tool("repo")).texts == ["real"]


async def test_a_server_compiled_inside_the_block_drops_the_fake_after_it() -> None:
    container = shop()
    with container.override(Repository, FakeRepository()):
        client = McpTestClient(container, Shop)
        assert (await client.tool("repo")).texts == ["fake"]
    assert (await client.tool("repo")).texts == ["real"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_sees_the_override_too(mode: str) -> None:
    container = shop()
    async with sdk_client(Shop, container, mode) as client:
        with container.override(Repository, FakeRepository):
            fake = await client.call_tool("repo", {})
        real = await client.call_tool("repo", {})
    assert fake.content[0].text == "fake"  # type: ignore[union-attr]
    assert real.content[0].text == "real"  # type: ignore[union-attr]


class Catalogue(McpExtension):
    @tool(toolset="shop")
    async def look(self, repository: Repository) -> str:
        return repository.name()


async def test_a_platform_and_a_toolset_selection_follow_the_override() -> None:
    container = shop()
    platform = Platform([Catalogue()])
    selected = platform.compile(container).select(["shop"])
    client = McpTestClient(container, selected)
    assert (await client.tool("look")).texts == ["real"]
    with container.override(Repository, FakeRepository()):
        assert (await client.tool("look")).texts == ["fake"]
    assert (await client.tool("look")).texts == ["real"]
