"""McpRequest: injected everywhere, every field, frozen, per-request capabilities."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import pytest
from mcp import types
from mcp.types import CLIENT_CAPABILITIES_META_KEY
from pydantic import Field
from starlette.requests import Request

from container import Container
from mcp_adapter import (
    CompileError,
    Identity,
    McpRequest,
    McpResponse,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS, LEGACY, MODERN, SDK_MODES, sdk_client, signed_in

pytestmark = pytest.mark.anyio


class Seen:
    """Every McpRequest a handler or hook received, by where it was received."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, McpRequest]] = []

    def add(self, where: str, request: McpRequest) -> None:
        self.requests.append((where, request))

    def of(self, where: str) -> list[McpRequest]:
        return [request for at, request in self.requests if at == where]


class EchoInput(Schema):
    text: str
    tags: list[str] = Field(default_factory=list)
    nested: dict[str, Any] = Field(default_factory=dict)


class EchoTool(Tool[EchoInput]):
    name = "echo"

    def shouldRegister(self, request: McpRequest, seen: Seen) -> bool:
        seen.add("tool.shouldRegister", request)
        return True

    async def authorize(self, request: McpRequest, seen: Seen) -> bool:
        seen.add("tool.authorize", request)
        return True

    async def handle(self, payload: EchoInput, request: McpRequest, seen: Seen) -> McpResponse:
        seen.add("tool.handle", request)
        return McpResponse.text(payload.text)


class NoteResource(Resource):
    name = "note"
    uri_template = "notes://{user}/{note}"

    async def shouldRegister(self, request: McpRequest, seen: Seen) -> bool:
        seen.add("resource.shouldRegister", request)
        return True

    def authorize(self, request: McpRequest, seen: Seen) -> bool:
        seen.add("resource.authorize", request)
        return True

    def handle(self, user: str, note: int, request: McpRequest, seen: Seen) -> McpResponse:
        seen.add("resource.handle", request)
        return McpResponse.text(f"{user}/{note}")


class TopicPrompt(Prompt):
    name = "topic"
    arguments = (PromptArgument(name="topic", required=True),)

    def shouldRegister(self, request: McpRequest, seen: Seen) -> bool:
        seen.add("prompt.shouldRegister", request)
        return True

    def authorize(self, request: McpRequest, seen: Seen) -> bool:
        seen.add("prompt.authorize", request)
        return True

    async def handle(self, topic: str, request: McpRequest, seen: Seen) -> McpResponse:
        seen.add("prompt.handle", request)
        return McpResponse.text(topic)

    def complete(self, value: str, request: McpRequest, seen: Seen) -> list[str]:
        seen.add("prompt.complete", request)
        return [value]


class ContextServer(Server):
    name = "ctx-server"
    tools = (EchoTool,)
    resources = (NoteResource,)
    prompts = (TopicPrompt,)


def setup(era: str, **options: Any) -> tuple[McpTestClient, Seen]:
    container = Container()
    seen = Seen()
    container.instance(Seen, seen)
    return McpTestClient(container, ContextServer, protocol=era, **options), seen


def mutable(value: Any) -> bool:
    """Whether anything reachable from ``value`` is a mutable container."""
    if isinstance(value, dict | list | set | bytearray):
        return True
    if isinstance(value, Mapping):
        return any(mutable(v) for v in value.values())
    if isinstance(value, tuple | frozenset):
        return any(mutable(v) for v in value)
    return False


# -- injection and fields, tools --------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_tool_handler_and_hooks_get_the_same_snapshot(era: str) -> None:
    client, seen = setup(era, capabilities={"sampling": {}})
    arguments = {"text": "hi", "tags": ["a", "b"], "nested": {"deep": [1, {"x": 2}]}}
    result = await client.request(
        "tools/call",
        {"name": "echo", "arguments": arguments, "_meta": {"trace": {"span": [1, 2]}}},
    )
    result.assertOk()
    (handled,) = seen.of("tool.handle")
    assert seen.of("tool.shouldRegister") == [handled]
    assert seen.of("tool.authorize") == [handled]
    assert handled.id == result.message["id"]
    assert handled.method == "tools/call"
    assert handled.server_id == "ctx-server"
    assert handled.transport == "memory"
    # lists arrive as tuples and mappings as read-only mappings: same values, frozen
    frozen = {"text": "hi", "tags": ("a", "b"), "nested": {"deep": (1, {"x": 2})}}
    assert handled.arguments == frozen
    assert handled.params["name"] == "echo"
    assert handled.params["arguments"] == frozen
    assert handled.meta["trace"] == {"span": (1, 2)}
    assert handled.params["_meta"]["trace"] == {"span": (1, 2)}
    assert handled.uri is None
    assert handled.uri_variables == {}
    assert handled.input_responses == {}
    assert handled.request_state is None
    assert handled.identity is None
    assert handled.authentication is None
    assert handled.client_capabilities == {"sampling": {}}
    assert handled.protocol_version == era


@pytest.mark.parametrize("era", ERAS)
async def test_the_snapshot_is_frozen_all_the_way_down(era: str) -> None:
    client, seen = setup(era, capabilities={"elicitation": {"form": {}}})
    arguments = {"text": "hi", "tags": ["a"], "nested": {"deep": [1, {"x": 2}]}}
    (await client.tool("echo", arguments)).assertOk()
    (request,) = seen.of("tool.handle")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.arguments = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        request.arguments["text"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        request.arguments["nested"]["deep"][1]["x"] = 3
    with pytest.raises(AttributeError):
        request.arguments["tags"].append("b")
    with pytest.raises(TypeError):
        request.client_capabilities["elicitation"]["form"]["x"] = 1
    with pytest.raises(TypeError):
        request.params["arguments"]["text"] = "changed"
    for field in ("arguments", "params", "meta", "uri_variables", "client_capabilities"):
        assert not mutable(getattr(request, field)), field
    assert request.arguments["nested"]["deep"] == (1, {"x": 2})


# -- resources and prompts ----------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_resource_handler_and_hooks_see_the_uri(era: str) -> None:
    client, seen = setup(era)
    result = (await client.read_resource("notes://ada/7")).assertOk()
    assert result.texts == ["ada/7"]
    (handled,) = seen.of("resource.handle")
    assert seen.of("resource.shouldRegister") == [handled]
    assert seen.of("resource.authorize") == [handled]
    assert handled.method == "resources/read"
    assert handled.uri == "notes://ada/7"
    assert handled.uri_variables == {"user": "ada", "note": "7"}
    assert handled.params["uri"] == "notes://ada/7"
    assert handled.arguments == {}
    assert handled.server_id == "ctx-server"


@pytest.mark.parametrize("era", ERAS)
async def test_prompt_handler_hooks_and_completion_see_the_request(era: str) -> None:
    client, seen = setup(era)
    (await client.prompt("topic", {"topic": "MCP"})).assertOk()
    (handled,) = seen.of("prompt.handle")
    assert seen.of("prompt.shouldRegister") == [handled]
    assert seen.of("prompt.authorize") == [handled]
    assert handled.method == "prompts/get"
    assert handled.arguments == {"topic": "MCP"}
    assert handled.uri is None
    completed = await client.request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "topic"},
            "argument": {"name": "topic", "value": "M"},
        },
    )
    assert completed.result is not None
    assert completed.result["completion"]["values"] == ["M"]
    (completing,) = seen.of("prompt.complete")
    assert completing.method == "completion/complete"


@pytest.mark.parametrize("era", ERAS)
async def test_hooks_see_the_listing_request(era: str) -> None:
    client, seen = setup(era)
    (await client.list_tools()).assertOk()
    (await client.list_resource_templates()).assertOk()
    (await client.list_prompts()).assertOk()
    assert [r.method for r in seen.of("tool.shouldRegister")] == ["tools/list"]
    assert [r.method for r in seen.of("resource.authorize")] == ["resources/templates/list"]
    assert [r.method for r in seen.of("prompt.authorize")] == ["prompts/list"]


# -- identity -------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_identity_and_authentication_of_an_authenticated_caller(era: str) -> None:
    client, seen = setup(era)
    with signed_in(subject="ada", scopes=("notes:read", "notes:write")):
        (await client.tool("echo", {"text": "x"})).assertOk()
    (request,) = seen.of("tool.handle")
    assert request.identity == Identity(
        subject="ada", client_id="client-1", scopes=("notes:read", "notes:write")
    )
    assert request.identity.has_scope("notes:write")
    authentication = request.authentication
    assert authentication is not None
    assert authentication["scheme"] == "bearer"
    assert authentication["client_id"] == "client-1"
    assert authentication["scopes"] == ("notes:read", "notes:write")
    assert authentication["claims"] == {"iss": "https://issuer.example"}
    assert "secret-token" not in repr(request)
    with pytest.raises(TypeError):
        authentication["claims"]["iss"] = "forged"  # type: ignore[index]


# -- capabilities are the current request's --------------------------------------------------------


async def test_capabilities_come_from_each_request_in_2026() -> None:
    client, seen = setup(MODERN, capabilities={"sampling": {}})
    (await client.tool("echo", {"text": "1"})).assertOk()
    other = {"elicitation": {"form": {}}}
    (
        await client.request(
            "tools/call",
            {
                "name": "echo",
                "arguments": {"text": "2"},
                "_meta": {CLIENT_CAPABILITIES_META_KEY: other},
            },
        )
    ).assertOk()
    (await client.tool("echo", {"text": "3"})).assertOk()
    assert [r.client_capabilities for r in seen.of("tool.handle")] == [
        {"sampling": {}},
        other,
        {"sampling": {}},
    ]


async def test_capabilities_come_from_initialize_in_2025() -> None:
    client, seen = setup(LEGACY, capabilities={"roots": {"listChanged": True}})
    (await client.tool("echo", {"text": "1"})).assertOk()
    (request,) = seen.of("tool.handle")
    assert request.client_capabilities == {"roots": {"listChanged": True}}


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_capabilities_reach_the_handler(mode: str) -> None:
    container = Container()
    seen = Seen()
    container.instance(Seen, seen)

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with sdk_client(ContextServer, container, mode) as plain:
        await plain.call_tool("echo", {"text": "1"})
    async with sdk_client(ContextServer, container, mode, elicitation_callback=answer) as asking:
        await asking.call_tool("echo", {"text": "2"})
    without, with_elicitation = seen.of("tool.handle")
    assert "elicitation" not in without.client_capabilities
    assert "elicitation" in with_elicitation.client_capabilities
    for request in (without, with_elicitation):
        assert request.method == "tools/call"
        assert request.server_id == "ctx-server"
        assert request.transport == "memory"
        assert request.identity is None
    assert with_elicitation.arguments == {"text": "2"}


# -- the HTTP request ---------------------------------------------------------------------------


class HttpTool(Tool):
    name = "http-tool"

    async def handle(self, http: Request) -> McpResponse:
        return McpResponse.text(str(http.url))


class HttpResource(Resource):
    name = "http-resource"
    uri = "http://resource"

    def handle(self, http: Request) -> McpResponse:
        return McpResponse.text(str(http.url))


class HttpPrompt(Prompt):
    name = "http-prompt"

    def handle(self, http: Request) -> McpResponse:
        return McpResponse.text(str(http.url))


class HttpServer(Server):
    tools = (HttpTool,)
    resources = (HttpResource,)
    prompts = (HttpPrompt,)


REASON = "needs the HTTP request, and this call did not come over HTTP"


def logged_incident(caplog: pytest.LogCaptureFixture, incident: str) -> str:
    (record,) = [r for r in caplog.records if incident in r.getMessage()]
    assert record.exc_info is not None
    return str(record.exc_info[1])


@pytest.mark.parametrize("era", ERAS)
async def test_an_http_request_parameter_off_http_fails_the_tool_clearly(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = McpTestClient(Container(), HttpServer, protocol=era)
    with caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        result = await client.tool("http-tool")
    result.assertError("Tool execution failed")
    assert result.result is not None
    incident = result.result["_meta"]["incident"]
    assert incident in result.texts[0]
    why = logged_incident(caplog, incident)
    assert "HttpTool.handle" in why
    assert REASON in why
    assert "use McpRequest" in why


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("method", "params", "owner"),
    [
        ("resources/read", {"uri": "http://resource"}, "HttpResource.handle"),
        ("prompts/get", {"name": "http-prompt"}, "HttpPrompt.handle"),
    ],
)
async def test_an_http_request_parameter_off_http_fails_resources_and_prompts_clearly(
    era: str, method: str, params: dict[str, Any], owner: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = McpTestClient(Container(), HttpServer, protocol=era)
    with caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        result = await client.request(method, params)
    assert result.error is not None
    assert result.error["code"] == types.INTERNAL_ERROR
    incident = result.error["message"].rsplit("incident ", 1)[1].rstrip(")")
    why = logged_incident(caplog, incident)
    assert owner in why
    assert REASON in why


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_an_http_request_parameter_off_http_through_the_sdk_client(mode: str) -> None:
    async with sdk_client(HttpServer, Container(), mode) as sdk:
        result = await sdk.call_tool("http-tool", {})
    assert result.is_error
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text.startswith("Tool execution failed (incident ")


# -- parameters without a source fail compilation -----------------------------------------------


class Mystery:
    """Cannot be built: it needs an unbound primitive."""

    def __init__(self, secret: str) -> None:
        self.secret = secret


class UnsourcedTool(Tool):
    name = "unsourced"

    async def handle(self, count: int) -> McpResponse:
        return McpResponse.text(str(count))


class UnsourcedHook(Tool):
    name = "unsourced-hook"

    def shouldRegister(self, flag: bool) -> bool:
        return flag

    async def handle(self) -> McpResponse:
        return McpResponse.text("x")


class UnbuildableService(Tool):
    name = "unbuildable"

    async def handle(self, mystery: Mystery) -> McpResponse:
        return McpResponse.text(mystery.secret)


class Variadic(Tool):
    name = "variadic"

    async def handle(self, *args: Any) -> McpResponse:
        return McpResponse.text("x")


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        (UnsourcedTool, "parameter count: int of UnsourcedTool.handle has no valid source"),
        (UnsourcedHook, "parameter flag: bool of UnsourcedHook.shouldRegister has no valid source"),
        (UnbuildableService, "secret"),
        (Variadic, "handlers cannot accept *args or **kwargs"),
    ],
)
def test_a_parameter_with_no_valid_source_fails_compilation(
    tool: type[Tool[Any, Any]], expected: str
) -> None:
    server = type("Srv", (Server,), {"tools": (tool,)})
    with pytest.raises(CompileError) as raised:
        compile_server(server, Container())
    assert expected in str(raised.value)


def test_all_missing_sources_are_reported_together() -> None:
    server = type("Srv", (Server,), {"tools": (UnsourcedTool, UnsourcedHook, UnbuildableService)})
    with pytest.raises(CompileError) as raised:
        compile_server(server, Container())
    message = str(raised.value)
    for owner in ("UnsourcedTool", "UnsourcedHook", "UnbuildableService"):
        assert owner in message


@pytest.mark.parametrize("era", ERAS)
async def test_meta_keeps_the_wire_names(era: str) -> None:
    client, seen = setup(era)
    (
        await client.request(
            "tools/call",
            {"name": "echo", "arguments": {"text": "x"}, "_meta": {"progressToken": "tok-1"}},
        )
    ).assertOk()
    (request,) = seen.of("tool.handle")
    assert request.params["_meta"]["progressToken"] == "tok-1"
    assert request.meta["progressToken"] == "tok-1"
    assert request.meta == request.params["_meta"]
