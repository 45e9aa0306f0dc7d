"""``McpTestClient`` and the ``mcp_client`` fixture serve anything servable.

A ``Server`` class, a compiled ``Catalog``, an extensions ``Platform`` and any
object with ``compile(container) -> Catalog``; anything else is a ``TypeError``
that says what was expected.
"""

from __future__ import annotations

from typing import Any

import pytest

from container import Container
from mcp_adapter import Catalog, McpResponse, Server, Tool, compile_server
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.serving.servable import NotServableError
from mcp_adapter.testing import McpTestClient
from schemas import Schema

pytestmark = pytest.mark.anyio


class Greeting:
    def __init__(self) -> None:
        self.word = "Hello"


class NameInput(Schema):
    name: str


class GreetTool(Tool[NameInput]):
    name = "greet"

    async def handle(self, payload: NameInput, greeting: Greeting) -> McpResponse:
        return McpResponse.text(f"{greeting.word}, {payload.name}!")


class GreeterServer(Server):
    name = "greeter"
    tools = (GreetTool,)


class Shouting(McpExtension):
    name = "shouting"

    @tool(title="Shout")
    async def shout(self, name: str, greeting: Greeting) -> McpResponse:
        return McpResponse.text(f"{greeting.word.upper()}, {name.upper()}!")


class Compiles:
    """Not a Platform: just an object with ``compile(container)``."""

    def compile(self, container: Container) -> Catalog:
        return compile_server(GreeterServer, container)


def greeting_container() -> Container:
    container = Container()
    container.scoped(Greeting, Greeting)
    return container


def servables() -> list[Any]:
    return [
        pytest.param(lambda c: GreeterServer, "greet", "Hello, Ada!", id="server-class"),
        pytest.param(
            lambda c: compile_server(GreeterServer, c), "greet", "Hello, Ada!", id="catalog"
        ),
        pytest.param(lambda c: Platform([Shouting()]), "shout", "HELLO, ADA!", id="platform"),
        pytest.param(lambda c: Compiles(), "greet", "Hello, Ada!", id="compilable"),
    ]


@pytest.mark.parametrize(("make", "name", "said"), servables())
@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_any_servable_is_served(make: Any, name: str, said: str, protocol: Any) -> None:
    container = greeting_container()
    client = McpTestClient(container, make(container), protocol=protocol)
    listed = await client.list_tools()
    assert [t["name"] for t in listed.assertOk().result["tools"]] == [name]  # type: ignore[index]
    (await client.tool(name, {"name": "Ada"})).assertOk().assertTextContains(said)


@pytest.mark.mcp_protocols
async def test_the_fixture_serves_a_platform(
    mcp_client: Any, mcp_container: Container, mcp_protocol: str
) -> None:
    mcp_container.scoped(Greeting, Greeting)
    client = mcp_client(Platform([Shouting()]))
    assert client.protocol == mcp_protocol
    (await client.tool("shout", {"name": "Ada"})).assertOk().assertTextContains("HELLO, ADA!")


class NotAServer:
    pass


class ReturnsNoCatalog:
    def compile(self, container: Container) -> object:
        return {"tools": []}


@pytest.mark.parametrize(
    ("thing", "says"),
    [
        (NotAServer, "NotAServer is a class but not a Server subclass"),
        (NotAServer(), "cannot serve NotAServer: expected a Server subclass, a Catalog"),
        (42, "cannot serve int"),
        (ReturnsNoCatalog(), "ReturnsNoCatalog.compile() returned dict, not a Catalog"),
    ],
    ids=["class", "instance", "int", "compile-returns-dict"],
)
def test_anything_else_is_a_clear_type_error(thing: Any, says: str) -> None:
    with pytest.raises(NotServableError) as raised:
        McpTestClient(Container(), thing)
    assert isinstance(raised.value, TypeError)
    assert says in str(raised.value)


def test_the_fixture_refuses_what_is_not_servable(mcp_client: Any) -> None:
    with pytest.raises(TypeError, match="cannot serve int"):
        mcp_client(42)
