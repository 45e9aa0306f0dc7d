"""Services that know the request: McpRequest, Identity, AccessToken and the HTTP Request are
context values every request scope is given, so a service takes them by type like any other.

The bug this guards: a repository taking ``McpRequest`` used to be autowired with an
empty ``McpRequest()`` (identity ``None``, method ``''``) while the handler beside it
got the real one.
"""

from __future__ import annotations

import mcp
import pytest
from mcp.server.auth.provider import AccessToken
from starlette.requests import Request

from container import Container, ContextNotGiven, ProviderKind
from mcp_adapter import CompileError, McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.declare.request import Identity
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client, signed_in

pytestmark = pytest.mark.anyio


class Repository:
    """Per-caller: records who asked, through the request it was built for."""

    def __init__(self, request: McpRequest) -> None:
        self.method = request.method
        self.owner = request.identity.subject if request.identity else "anonymous"


class Audit:
    def __init__(self, identity: Identity | None, token: AccessToken | None) -> None:
        self.who = identity.subject if identity else "nobody"
        self.scopes = token.scopes if token else []


class Notes:
    def __init__(self, repository: Repository) -> None:
        self.repository = repository


class WhoTool(Tool):
    name = "who"

    def __init__(self, notes: Notes) -> None:
        self.notes = notes

    async def handle(self, audit: Audit, request: McpRequest) -> McpResponse:
        repository = self.notes.repository
        return McpResponse.text(
            f"{repository.method} {repository.owner} {audit.who} {audit.scopes} "
            f"{request.identity.subject if request.identity else '-'}"
        )


class WhoResource(Resource):
    name = "who"
    uri = "who://me"

    def handle(self, repository: Repository) -> McpResponse:
        return McpResponse.text(f"{repository.method} {repository.owner}")


class WhoPrompt(Prompt):
    name = "who"

    def handle(self, repository: Repository) -> McpResponse:
        return McpResponse.text(f"{repository.method} {repository.owner}")


class Who(Server):
    name = "who"
    tools = (WhoTool,)
    resources = (WhoResource,)
    prompts = (WhoPrompt,)


def container() -> Container:
    built = Container()
    built.scoped(Repository)
    built.scoped(Notes)
    built.scoped(Audit)
    return built


@pytest.mark.parametrize("era", ERAS)
async def test_services_get_the_real_request_in_every_kind(era: str) -> None:
    client = McpTestClient(container(), Who, protocol=era)
    assert (await client.tool("who")).texts == ["tools/call anonymous nobody [] -"]
    assert (await client.read_resource("who://me")).texts == ["resources/read anonymous"]
    assert (await client.prompt("who")).texts == ["prompts/get anonymous"]
    with signed_in("ada", ("notes:read",)):
        signed = McpTestClient(container(), Who, protocol=era)
        assert (await signed.tool("who")).texts == ["tools/call ada ada ['notes:read'] ada"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_sees_the_same(mode: str) -> None:
    with signed_in("bob"):
        async with sdk_client(Who, container(), mode) as client:
            result = await client.call_tool("who", {})
    assert result.content == [
        mcp.types.TextContent(type="text", text="tools/call bob bob ['notes:read'] bob")
    ]


class NeedsHttp:
    def __init__(self, request: Request) -> None:
        self.path = request.url.path


class HttpTool(Tool):
    name = "http"

    async def handle(self, needs: NeedsHttp) -> McpResponse:
        return McpResponse.text(needs.path)


class HttpServer(Server):
    tools = (HttpTool,)


async def test_a_service_needing_the_http_request_fails_off_http_as_an_incident() -> None:
    built = Container()
    built.scoped(NeedsHttp)
    result = await McpTestClient(built, HttpServer).tool("http")
    result.assertError("Tool execution failed")


def test_a_singleton_that_needs_the_request_is_a_compile_problem() -> None:
    built = container()
    built.singleton(Repository)
    with pytest.raises(CompileError) as caught:
        McpTestClient(built, Who)
    rendered = "\n".join(p.render() for p in caught.value.problems)
    assert "singleton Repository would capture context value McpRequest" in rendered
    assert "WhoTool" in rendered


class Tenant:
    pass


class TenantRepo:
    def __init__(self, tenant: Tenant) -> None:
        self.tenant = tenant


class TenantTool(Tool):
    name = "tenant"

    async def handle(self, repo: TenantRepo) -> McpResponse:
        return McpResponse.text("?")


class TenantServer(Server):
    tools = (TenantTool,)


def test_a_context_value_nobody_gives_is_a_compile_problem() -> None:
    built = Container()
    built.context(Tenant)
    built.scoped(TenantRepo)
    with pytest.raises(CompileError) as caught:
        McpTestClient(built, TenantServer)
    (found,) = caught.value.problems
    assert "Tenant is a context value" in found.message
    assert "derives it" in found.hint


def test_context_types_are_never_autowired() -> None:
    from mcp_adapter import compile_server
    from mcp_adapter.compiled.context import PROVIDED

    compiled = container()
    compile_server(Who, compiled)
    for key in PROVIDED:
        binding = compiled.binding(key)
        assert binding is not None
        assert binding.kind is ProviderKind.CONTEXT
    with compiled.scope() as scope, pytest.raises(ContextNotGiven, match="McpRequest"):
        scope.get(Repository)  # no empty McpRequest() is made up
