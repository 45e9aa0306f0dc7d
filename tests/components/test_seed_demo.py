"""Seed 004's DemoServer and PrivateTool, run unchanged but for imports, in both eras."""

from __future__ import annotations

from typing import Any, ClassVar

import mcp
import pytest
from mcp import types

from container import Container
from mcp_adapter import Server
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, is_modern, sdk_client, signed_in
from tests.seed_examples import check_greet
from tests.seed_examples.demo_server import (
    DemoServer,
    GreetingService,
    GreetTool,
    NameFormatter,
)
from tests.seed_examples.private_tool import PrivateTool

pytestmark = pytest.mark.anyio


async def test_check_greet_program_runs_as_written() -> None:
    await check_greet.main()


# -- McpTestClient, both eras ------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_greet_tool(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    result = (await client.tool("greet", {"name": "  Ada "})).assertOk()
    expected = "Hello, Ada!" if is_modern(era) else {"result": "Hello, Ada!"}
    assert result.structured == expected
    result.assertTextContains("Hello, Ada!")


@pytest.mark.parametrize("era", ERAS)
async def test_injected_services_stay_out_of_every_schema(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    (tool,) = (await client.list_tools()).assertOk().result["tools"]  # type: ignore[index]
    assert set(tool["inputSchema"]["properties"]) == {"name"}
    (prompt,) = (await client.list_prompts()).assertOk().result["prompts"]  # type: ignore[index]
    assert prompt["arguments"] == [{"name": "name", "required": True}]


@pytest.mark.parametrize("era", ERAS)
async def test_greeting_resource_is_a_template(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    templates = (await client.list_resource_templates()).assertOk().result
    assert templates is not None
    assert templates["resourceTemplates"] == [
        {"name": "greeting", "uriTemplate": "demo://greetings/{name}", "mimeType": "text/plain"}
    ]
    listed = (await client.list_resources()).assertOk().result
    assert listed is not None
    assert listed["resources"] == []


@pytest.mark.parametrize("era", ERAS)
async def test_greeting_resource_reads_the_uri_variable(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    result = (await client.read_resource("demo://greetings/%20Ada%20")).assertOk().result
    assert result is not None
    assert result["contents"] == [
        {"uri": "demo://greetings/%20Ada%20", "mimeType": "text/plain", "text": "Hello, Ada!"}
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_greeting_prompt(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    result = (await client.prompt("greeting", {"name": " Ada "})).assertOk().result
    assert result is not None
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_greeting_prompt_requires_its_argument(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    error = (await client.prompt("greeting", {})).error
    assert error is not None
    assert error["code"] == types.INVALID_PARAMS
    assert "name" in error["message"]


@pytest.mark.parametrize("era", ERAS)
async def test_an_argument_cannot_replace_an_injected_service(era: str) -> None:
    client = McpTestClient(Container(), DemoServer, protocol=era)
    prompt = await client.prompt("greeting", {"name": "Ada", "names": "evil"})
    assert prompt.error is not None
    assert prompt.error["code"] == types.INVALID_PARAMS
    assert "names" in prompt.error["message"]
    tool = await client.tool("greet", {"name": "Ada", "names": "evil"})
    tool.assertError("Invalid tool arguments")


class RecordingGreetings(GreetingService):
    def __init__(self) -> None:
        self.greeted: list[str] = []

    def greet(self, name: str) -> str:
        self.greeted.append(name)
        return super().greet(name)


class CountingFormatter(NameFormatter):
    built: ClassVar[list[CountingFormatter]] = []

    def __init__(self) -> None:
        CountingFormatter.built.append(self)


@pytest.mark.parametrize("era", ERAS)
async def test_one_greeting_service_and_a_formatter_per_call(era: str) -> None:
    container = Container()
    greetings = RecordingGreetings()
    container.instance(GreetingService, greetings)
    container.bind(NameFormatter, CountingFormatter)
    CountingFormatter.built.clear()
    client = McpTestClient(container, DemoServer, protocol=era)
    (await client.tool("greet", {"name": "Tool"})).assertOk()
    (await client.read_resource("demo://greetings/Resource")).assertOk()
    (await client.prompt("greeting", {"name": "Prompt"})).assertOk()
    assert greetings.greeted == ["Tool", "Resource", "Prompt"]
    assert len(CountingFormatter.built) == 3
    assert len({id(f) for f in CountingFormatter.built}) == 3


# -- the SDK's own client, both eras ---------------------------------------------------------


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_demo_server_through_the_sdk_client(mode: str) -> None:
    async with sdk_client(DemoServer, Container(), mode) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["greet"]
        greeted = await client.call_tool("greet", {"name": " Ada "})
        assert not greeted.is_error
        expected: Any = "Hello, Ada!" if mode != "legacy" else {"result": "Hello, Ada!"}
        assert greeted.structured_content == expected

        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["demo://greetings/{name}"]
        read = await client.read_resource("demo://greetings/Grace")
        (contents,) = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert (contents.text, contents.mime_type) == ("Hello, Grace!", "text/plain")

        prompts = await client.list_prompts()
        (prompt,) = prompts.prompts
        assert prompt.arguments == [types.PromptArgument(name="name", required=True)]
        got = await client.get_prompt("greeting", {"name": "Alan"})
        (message,) = got.messages
        assert message.role == "user"
        assert message.content == types.TextContent(type="text", text="Hello, Alan!")


# -- PrivateTool --------------------------------------------------------------------------------


class PrivateServer(Server):
    name = "Private"
    tools = (GreetTool, PrivateTool)


class PublicOnly(Server):
    name = "Private"
    tools = (GreetTool,)


@pytest.mark.parametrize("era", ERAS)
async def test_private_tool_is_unknown_without_an_identity(era: str) -> None:
    client = McpTestClient(Container(), PrivateServer, protocol=era)
    listed = (await client.list_tools()).assertOk().result
    assert listed is not None
    assert [t["name"] for t in listed["tools"]] == ["greet"]
    hidden = await client.tool("private-message", {"message": "hi"})
    absent = await McpTestClient(Container(), PublicOnly, protocol=era).tool(
        "private-message", {"message": "hi"}
    )
    assert hidden.error is not None
    assert hidden.error == absent.error


@pytest.mark.parametrize("era", ERAS)
async def test_private_tool_with_an_identity(era: str) -> None:
    client = McpTestClient(Container(), PrivateServer, protocol=era)
    with signed_in():
        listed = (await client.list_tools()).assertOk().result
        called = await client.tool("private-message", {"message": "hi"})
    assert listed is not None
    assert [t["name"] for t in listed["tools"]] == ["greet", "private-message"]
    called.assertOk()
    assert called.texts == ["hi"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_private_tool_through_the_sdk_client(mode: str) -> None:
    async with sdk_client(PrivateServer, Container(), mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["greet"]
        with pytest.raises(mcp.MCPError) as raised:
            await client.call_tool("private-message", {"message": "hi"})
        assert raised.value.code == types.INVALID_PARAMS
        assert raised.value.message == "Unknown tool: private-message"
    with signed_in():
        async with sdk_client(PrivateServer, Container(), mode) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("private-message", {"message": "hi"})
    assert listed == ["greet", "private-message"]
    assert result.content == [types.TextContent(type="text", text="hi")]
