"""``Server.protocol_extensions``: SDK ``Extension``s advertised and served beside the
components; what the adapter declares its own way is refused when the server compiles."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import MCPError, types
from mcp.server.extension import Extension, MethodBinding, ToolBinding

from container import Container
from mcp_adapter import CompileError, Server, compile_server
from mcp_adapter.testing import TaskClient
from tests.tasks.fixtures import Ledger, TaskServer, container_with

pytestmark = pytest.mark.anyio


class Params(types.RequestParams):
    word: str


class Echoes(Extension):
    identifier = "com.example/echoes"

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("echoes/say", Params, self.say, frozenset({"2026-07-28"})),
        ]

    async def say(self, ctx: Any, params: Params) -> types.Result:
        return types.EmptyResult(_meta={"said": params.word})


class Served(Server):
    tools = ()
    protocol_extensions = (Echoes(),)


async def test_settings_are_advertised_and_methods_served_at_their_versions() -> None:
    async with TaskClient.connect(Container(), Served) as client:
        assert client.client.server_capabilities.extensions == {"com.example/echoes": {}}
        assert (await client.request("echoes/say", word="hi"))["_meta"]["said"] == "hi"
    async with TaskClient.connect(Container(), Served, protocol="2025-11-25") as old:
        with pytest.raises(MCPError) as unknown:
            await old.request("echoes/say", word="hi")
        assert unknown.value.code == -32601


async def test_they_sit_beside_the_tasks_extension() -> None:
    class Both(TaskServer):
        protocol_extensions = (Echoes(),)

    async with TaskClient.connect(container_with(Ledger()), Both) as client:
        extensions = client.client.server_capabilities.extensions or {}
        assert set(extensions) == {"com.example/echoes", "io.modelcontextprotocol/tasks"}


class Tooling(Extension):
    identifier = "com.example/tooling"

    def tools(self) -> list[ToolBinding]:
        return [ToolBinding(fn=lambda: "x")]


class Intercepting(Extension):
    identifier = "com.example/intercepting"

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)


class Stealing(Extension):
    identifier = "com.example/stealing"

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", Params, Echoes().say)]


def test_what_the_adapter_declares_its_own_way_is_refused() -> None:
    class Wrong(Server):
        tools = ()
        protocol_extensions = (Tooling(), Intercepting(), Stealing(), Echoes(), Echoes(), "no")

    with pytest.raises(CompileError) as failed:
        compile_server(Wrong, Container())
    text = str(failed.value)
    assert "contributes tools or resources" in text
    assert "intercepts tools/call" in text
    assert "the method 'tasks/get' is served already" in text
    assert "the extension 'com.example/echoes' is served already" in text
    assert "'no' is not an mcp.server.extension.Extension" in text
