"""What a type checker tells users of ``mcp_adapter``: a tool's payload is its input
contract, responses are ``McpResponse``, ``@tool`` keeps the method's signature, and
``ToolSpec``, ``Platform`` and ``McpTestClient`` take what the docs show.

Checked by mypy (strict) and pyright in ``tests/test_typing.py``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any, assert_type

from mcp import types

from container import Container
from mcp_adapter import (
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    PluginManifest,
    Server,
    Tool,
    ToolAnnotations,
    ToolSpec,
    ToolUI,
    compile_server,
    http_app,
    tool,
)
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.layers import AccessRecord, Outcome
from mcp_adapter.testing import McpResult, McpTestClient, texts_of
from schemas import Schema


class GreetInput(Schema):
    name: str


class GreetOutput(Schema):
    message: str


class Greetings:
    def greet(self, name: str) -> str:
        return f"Hello, {name}!"


class GreetTool(Tool[GreetInput, GreetOutput]):
    annotations = ToolAnnotations(read_only=True, open_world=False)
    ui = ToolUI("ui://greeter/card.html", visibility=("model", "app"))

    async def handle(
        self, payload: GreetInput, greetings: Greetings, request: McpRequest
    ) -> McpResponse:
        assert_type(payload, GreetInput)
        assert_type(payload.name, str)
        print(payload.age)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
        response = McpResponse.structured(GreetOutput(message=greetings.greet(payload.name)))
        assert_type(response, McpResponse)
        assert_type(McpResponse.text("hi"), McpResponse)
        assert_type(McpResponse.error("no"), McpResponse)
        return response


class GreeterServer(Server):
    name = "greeter"
    tools = (GreetTool,)

    async def lifespan(self, greetings: Greetings) -> AsyncIterator[None]:  # a method overrides
        yield


class Sandboxes(McpExtension):
    def manifest(self) -> PluginManifest:
        return PluginManifest(name="sandboxes", version="1.0.0")

    @tool(title="Launch Sandbox")
    async def launch(self, sandbox_name: str, variant: str = "eval") -> dict[str, str]:
        """Launch a sandbox."""
        return {"sandbox": sandbox_name, "variant": variant}

    @tool
    def ping(self) -> str:
        return "pong"

    @tool(ui=ToolUI("ui://sandboxes/board.html"))
    def board(self, sandbox_name: str) -> dict[str, str]:
        return {"sandbox": sandbox_name}


async def extension_methods_keep_their_signature() -> None:
    sandboxes = Sandboxes()
    assert_type(await sandboxes.launch("scratch"), dict[str, str])
    assert_type(sandboxes.ping(), str)
    assert_type(sandboxes.board("scratch"), dict[str, str])
    await sandboxes.launch(42)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    assert_type(sandboxes.tools(), list[ToolSpec])


def specs_and_platforms(container: Container) -> None:
    def ping() -> str:
        return "pong"

    spec = ToolSpec(name="ping", handler=ping, description="Answer pong.", toolset="ops")
    ToolSpec(name="ping", handler=ping, ui=ToolUI("ui://ops/ping.html"))
    ToolUI("ui://ops/ping.html", visibility=("everyone",))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    assert_type(spec.name, str)
    platform = Platform([Sandboxes()], server=GreeterServer, name="host", version="1.0.0")
    assert_type(platform.register(Sandboxes), McpExtension)
    assert_type(platform.compile(container), Catalog)
    assert_type(compile_server(GreeterServer, container), Catalog)
    http_app(platform, container)
    http_app(GreeterServer, container)
    ToolSpec(name="ping")  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


async def testing(container: Container) -> None:
    client = McpTestClient(container, GreeterServer, protocol="2025-11-25")
    result = await client.tool("greet", {"name": "Ada"})
    assert_type(result, McpResult)
    assert_type(result.assertOk(), McpResult)
    assert_type(result.texts, list[str])
    assert_type(result.result, dict[str, Any])
    assert_type(result.result["content"], Any)
    assert_type(result.error, dict[str, Any] | None)
    assert_type(result.assertError("Unknown tool", code=-32602), McpResult)
    sdk_result = types.CallToolResult(content=[types.TextContent(type="text", text="hi")])
    assert_type(texts_of(sdk_result), list[str])
    McpTestClient(container, GreeterServer, protocol="2024")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def access_records(record: logging.LogRecord) -> None:
    access = AccessRecord.of(record)
    assert_type(access.outcome, Outcome)
    assert_type(access.component, str | None)
    assert_type(access.error_code, int | None)
