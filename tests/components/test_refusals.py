"""Safe answers a handler (or a service deep below it) gives by raising: ToolError,
NotFound and Forbidden, in every kind and both eras, without an incident."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from container import Container
from mcp_adapter import (
    Forbidden,
    McpResponse,
    NotFound,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    ToolError,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS

pytestmark = pytest.mark.anyio


ENDED: list[str] = []
"""What ended each call's scope, as its Stock factory saw it (reset per test)."""


class Stock:
    """Raises from deep below the handler; its scope's finalizer sees what ended it."""

    def reserve(self, sku: str) -> int:
        if sku == "gone":
            raise NotFound
        if sku == "locked":
            raise Forbidden
        if sku == "zero":
            raise ToolError("That item is out of stock.")
        return 1


def stock() -> Iterator[Stock]:
    ended: BaseException | None = yield Stock()
    ENDED.append(type(ended).__name__ if ended else "ok")


class ReserveInput(Schema):
    sku: str


class ReserveTool(Tool[ReserveInput]):
    name = "reserve"

    async def handle(self, payload: ReserveInput, stock: Stock) -> McpResponse:
        return McpResponse.text(str(stock.reserve(payload.sku)))


class SyncReserveTool(Tool[ReserveInput]):
    name = "reserve_sync"

    def handle(self, payload: ReserveInput, stock: Stock) -> McpResponse:
        return McpResponse.text(str(stock.reserve(payload.sku)))


class ItemResource(Resource):
    name = "item"
    uri_template = "items://{sku}"

    def handle(self, sku: str, stock: Stock) -> McpResponse:
        return McpResponse.text(str(stock.reserve(sku)))


class ShadowResource(Resource):
    """A static resource under the template: raising NotFound falls through to it."""

    name = "shadow"
    uri = "items://gone"

    def handle(self) -> McpResponse:
        raise NotFound


class ItemPrompt(Prompt):
    name = "item"
    arguments = (PromptArgument(name="sku", required=True),)

    def handle(self, sku: str, stock: Stock) -> McpResponse:
        return McpResponse.text(str(stock.reserve(sku)))


class Shop(Server):
    tools = (ReserveTool, SyncReserveTool)
    resources = (ItemResource,)
    prompts = (ItemPrompt,)


class ShadowShop(Server):
    resources = (ItemResource, ShadowResource)


def shop() -> Container:
    container = Container()
    container.scoped(Stock, stock)
    return container


@pytest.fixture(autouse=True)
def _reset() -> None:
    ENDED.clear()


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", ["reserve", "reserve_sync"])
async def test_tools(era: str, tool: str, caplog: pytest.LogCaptureFixture) -> None:
    client = McpTestClient(shop(), Shop, protocol=era)
    with caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        business = await client.tool(tool, {"sku": "zero"})
        gone = await client.tool(tool, {"sku": "gone"})
        locked = await client.tool(tool, {"sku": "locked"})
    assert business.texts == ["That item is out of stock."]
    assert business.result is not None
    assert business.result["isError"] is True
    unknown = await client.tool("no-such-tool")
    assert gone.error == unknown.error | {"message": f"Unknown tool: {tool}"}
    assert locked.error is not None
    assert locked.error["code"] == -32003
    assert not caplog.records  # no incident: these are answers
    assert ENDED == ["ToolError", "NotFound", "Forbidden"]  # a unit of work rolls back


@pytest.mark.parametrize("era", ERAS)
async def test_a_resource_that_is_not_found_answers_like_an_absent_one(era: str) -> None:
    client = McpTestClient(shop(), Shop, protocol=era)
    gone = await client.read_resource("items://gone")
    absent = await McpTestClient(Container(), Shop, protocol=era).read_resource("nothing://here")
    assert gone.error is not None
    assert absent.error is not None
    assert gone.error["code"] == absent.error["code"]
    assert gone.error["message"] == absent.error["message"]
    assert gone.error["data"] == {"uri": "items://gone"}
    locked = await client.read_resource("items://locked")
    assert locked.error is not None
    assert locked.error["code"] == -32003
    business = await client.read_resource("items://zero")
    assert business.error == {"code": -32603, "message": "That item is out of stock."}


async def test_a_static_resource_that_is_not_found_falls_through_to_the_template() -> None:
    client = McpTestClient(shop(), ShadowShop)
    # the template serves items://gone; its handler raises NotFound too: not found
    gone = await client.read_resource("items://gone")
    assert gone.error is not None
    assert gone.error["message"] == "Resource not found"
    assert ENDED == ["NotFound"]  # the template's handler ran after the static one


@pytest.mark.parametrize("era", ERAS)
async def test_prompts(era: str) -> None:
    client = McpTestClient(shop(), Shop, protocol=era)
    gone = await client.prompt("item", {"sku": "gone"})
    assert gone.error is not None
    assert gone.error["message"] == "Unknown prompt: item"
    business = await client.prompt("item", {"sku": "zero"})
    assert business.error == {"code": -32603, "message": "That item is out of stock."}
