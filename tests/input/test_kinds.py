"""Every kind of question a resolver may ask, and the client's capabilities for each.

Sampling (with tools when the client declared ``sampling.tools``), roots, URL-mode
elicitation; a kind the client did not declare is ``-32021`` naming what is missing,
before the handler runs.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from mcp import MCPError, types

from container import Container
from mcp_adapter import (
    AcceptedUrlElicitation,
    ElicitUrl,
    ListRoots,
    McpResponse,
    Resolve,
    Sample,
    Server,
    Tool,
    UrlElicitationResult,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import LEGACY, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class Ledger:
    def __init__(self) -> None:
        self.handled: list[str] = []


class Topic(Schema):
    topic: str


def summarize(payload: Topic) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"Summarize {payload.topic}")
    )
    return Sample([message], max_tokens=50)


WEATHER = types.Tool(name="weather", input_schema={"type": "object"})


def with_tools() -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text="Use a tool")
    )
    return Sample([message], max_tokens=50, tools=[WEATHER])


def roots() -> ListRoots:
    return ListRoots()


def sign_in() -> ElicitUrl:
    return ElicitUrl("Sign in to continue", "https://auth.example/start", elicitation_id="e-1")


class SummaryTool(Tool[Topic]):
    name = "summary"

    async def handle(
        self, ledger: Ledger, sampled: Annotated[types.CreateMessageResult, Resolve(summarize)]
    ) -> McpResponse:
        ledger.handled.append("summary")
        assert isinstance(sampled.content, types.TextContent)
        return McpResponse.text(f"{sampled.model}: {sampled.content.text}")


class AgentTool(Tool):
    name = "agent"

    async def handle(
        self,
        ledger: Ledger,
        sampled: Annotated[types.CreateMessageResultWithTools, Resolve(with_tools)],
    ) -> McpResponse:
        ledger.handled.append("agent")
        return McpResponse.text(f"stop={sampled.stop_reason}")


class RootsTool(Tool):
    name = "roots"

    async def handle(
        self, ledger: Ledger, listed: Annotated[types.ListRootsResult, Resolve(roots)]
    ) -> McpResponse:
        ledger.handled.append("roots")
        return McpResponse.text(",".join(str(root.uri) for root in listed.roots))


class SignInTool(Tool):
    name = "sign_in"

    async def handle(
        self, ledger: Ledger, done: Annotated[UrlElicitationResult, Resolve(sign_in)]
    ) -> McpResponse:
        ledger.handled.append("sign_in")
        return McpResponse.text(f"sign in: {done.action}")


class PlainSignInTool(Tool):
    name = "plain_sign_in"

    async def handle(
        self, ledger: Ledger, done: Annotated[object, Resolve(sign_in)]
    ) -> McpResponse:
        """Not an outcome type: the user must accept, or the call ends."""
        ledger.handled.append("plain_sign_in")
        assert isinstance(done, AcceptedUrlElicitation)
        return McpResponse.text("signed in")


def unsaid():  # type: ignore[no-untyped-def]
    return ListRoots()


def plain(payload: Topic) -> str:
    return payload.topic.upper()


class UnsaidTool(Tool):
    """Its resolver does not say what it asks: ``check`` says it may ask anything."""

    name = "unsaid"

    async def handle(self, listed: Annotated[Any, Resolve(unsaid)]) -> McpResponse:
        return McpResponse.text(str(len(listed.roots)))


class PlainTool(Tool[Topic]):
    """Its resolver returns a value: it asks nothing, and runs in one round."""

    name = "plain"

    async def handle(self, shout: Annotated[str, Resolve(plain)]) -> McpResponse:
        return McpResponse.text(shout)


class Kinds(Server):
    tools = (SummaryTool, AgentTool, RootsTool, SignInTool, PlainSignInTool, UnsaidTool, PlainTool)


async def test_a_resolver_that_returns_a_value_asks_nothing() -> None:
    container, _ = kinds()
    result = (await McpTestClient(container, Kinds).tool("plain", {"topic": "tea"})).assertOk()
    assert result.texts == ["TEA"]


def kinds() -> tuple[Container, Ledger]:
    container = Container()
    ledger = Ledger()
    container.instance(Ledger, ledger)
    return container, ledger


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
    (message,) = params.messages
    if params.tools:
        return types.CreateMessageResultWithTools(
            role="assistant",
            content=[types.ToolUseContent(type="tool_use", id="t1", name="weather", input={})],
            model="m-1",
            stop_reason="toolUse",
        )
    assert isinstance(message.content, types.TextContent)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=message.content.text.upper()),
        model="m-1",
    )


async def list_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/a", name="a")])


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_sampling_answers_the_handler(mode: str) -> None:
    container, ledger = kinds()
    async with sdk_client(Kinds, container, mode, sampling_callback=sample) as sdk:
        result = await sdk.call_tool("summary", {"topic": "rust"})
    assert texts(result) == ["m-1: SUMMARIZE RUST"]
    assert ledger.handled == ["summary"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_sampling_with_tools_needs_sampling_tools(mode: str) -> None:
    container, ledger = kinds()
    async with sdk_client(Kinds, container, mode, sampling_callback=sample) as sdk:
        with pytest.raises(MCPError) as caught:
            await sdk.call_tool("agent", {})
    assert caught.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.error.data == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    assert ledger.handled == []
    capability = types.SamplingCapability(tools=types.SamplingToolsCapability())
    async with sdk_client(
        Kinds, container, mode, sampling_callback=sample, sampling_capabilities=capability
    ) as sdk:
        result = await sdk.call_tool("agent", {})
    assert texts(result) == ["stop=toolUse"]
    assert ledger.handled == ["agent"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_roots_answer_the_handler(mode: str) -> None:
    container, ledger = kinds()
    async with sdk_client(Kinds, container, mode, list_roots_callback=list_roots) as sdk:
        result = await sdk.call_tool("roots", {})
    assert texts(result) == ["file:///work/a"]
    assert ledger.handled == ["roots"]


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_url_elicitation(mode: str, action: str) -> None:
    container, _ledger = kinds()
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action)

    async with sdk_client(Kinds, container, mode, elicitation_callback=elicit) as sdk:
        branching = await sdk.call_tool("sign_in", {})
        plain = await sdk.call_tool("plain_sign_in", {})
    assert texts(branching) == [f"sign in: {action}"]
    (param,) = {type(p) for p in asked}
    assert param is types.ElicitRequestURLParams
    assert asked[0].url == "https://auth.example/start"  # type: ignore[union-attr]
    if action == "accept":
        assert texts(plain) == ["signed in"]
    else:
        assert plain.is_error
        assert "'done'" in texts(plain)[0]


@pytest.mark.parametrize("era", ["2026-07-28", LEGACY])
@pytest.mark.parametrize(
    ("tool", "arguments", "capabilities", "missing"),
    [
        ("summary", {"topic": "x"}, {}, {"sampling": {}}),
        ("agent", {}, {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("roots", {}, {"sampling": {}}, {"roots": {}}),
        ("sign_in", {}, {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
    ],
)
async def test_an_undeclared_kind_is_32021_before_the_handler(
    era: str, tool: str, arguments: dict[str, Any], capabilities: Any, missing: Any
) -> None:
    container, ledger = kinds()
    asked: list[str] = []

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(method)
        return {}

    client = McpTestClient(
        container, Kinds, protocol=era, capabilities=capabilities, on_server_request=on_request
    )
    result = await client.tool(tool, arguments)
    assert result.error is not None
    assert result.error["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert result.error["data"] == {"requiredCapabilities": missing}
    assert asked == []
    assert ledger.handled == []


def test_a_form_model_is_rendered_once_and_each_question_gets_its_own_copy() -> None:
    """Asking with the same form model again (each round of each call) reuses its
    rendered ``requestedSchema``: the model's JSON Schema is built once."""
    from mcp.server.mcpserver.resolve import Elicit

    from mcp_adapter.input.questions import render

    built: list[int] = []

    class Counted(Schema):
        confirm: bool

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            built.append(1)
            return super().model_json_schema(*args, **kwargs)

    first = render(Elicit("Sure?", Counted))
    assert isinstance(first, types.ElicitRequest)
    first.params.requested_schema["properties"].clear()  # type: ignore[union-attr]
    second = render(Elicit("Really sure?", Counted))
    assert isinstance(second, types.ElicitRequest)
    assert second.params.requested_schema["required"] == ["confirm"]  # type: ignore[union-attr]
    assert "confirm" in second.params.requested_schema["properties"]  # type: ignore[union-attr]
    assert len(built) == 1
