"""``McpTestClient(token=...)`` and ``McpTestClient(identity=...)`` sign every call in.

Handlers and visibility hooks (``shouldRegister``, ``authorize``) see the caller,
listings follow the hooks, in both eras, and the SDK's auth context variable is
never set: the token reaches the dispatcher through ``build_sdk_server(caller=)``.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool
from mcp_adapter.declare.request import Identity
from mcp_adapter.errors import AUTHORIZATION_ERROR
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.testing import McpTestClient
from mcp_adapter.testing.client import token_for

pytestmark = pytest.mark.anyio

ERAS = ("2026-07-28", "2025-11-25")


class Seen:
    """What handlers and hooks saw, and whether the SDK's auth context was set then."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Identity | None, Any]] = []

    def saw(self, where: str, request: McpRequest) -> None:
        self.calls.append((where, request.identity, auth_context_var.get()))


class WhoAmITool(Tool):
    name = "whoami"

    async def handle(self, request: McpRequest, seen: Seen) -> McpResponse:
        seen.saw("handle", request)
        who = request.identity
        said = "anonymous" if who is None else f"{who.subject} via {who.client_id}"
        return McpResponse.text(said)


class MembersTool(Tool):
    """Listed for any signed-in caller; usable with the ``notes:write`` scope only."""

    name = "members"

    def shouldRegister(self, request: McpRequest, seen: Seen) -> bool:
        seen.saw("shouldRegister", request)
        return request.identity is not None

    async def authorize(self, request: McpRequest, seen: Seen) -> bool:
        seen.saw("authorize", request)
        return request.identity is not None and request.identity.has_scope("notes:write")

    async def handle(self, request: McpRequest, seen: Seen) -> McpResponse:
        seen.saw("handle", request)
        return McpResponse.text("members only")


class NotesServer(Server):
    name = "notes"
    tools = (WhoAmITool, MembersTool)


def signed(request: McpRequest) -> bool:
    return request.identity is not None


class Admin(McpExtension):
    name = "admin"

    @tool(should_register=signed)
    async def audit(self, request: McpRequest) -> str:
        assert auth_context_var.get() is None
        return f"audited by {request.identity.subject if request.identity else None}"


@pytest.fixture
def seen() -> Seen:
    return Seen()


@pytest.fixture
def container(seen: Seen) -> Container:
    container = Container()
    container.instance(Seen, seen)
    return container


ADA = Identity(subject="ada", client_id="notes-cli", scopes=("notes:read", "notes:write"))
GRACE = Identity(subject="grace", client_id="notes-cli", scopes=("notes:read",))


def listed(result: Any) -> list[str]:
    return sorted(t["name"] for t in result.assertOk().result["tools"])


@pytest.mark.parametrize("era", ERAS)
async def test_identity_reaches_handlers_and_hooks(
    container: Container, seen: Seen, era: Any
) -> None:
    client = McpTestClient(container, NotesServer, protocol=era, identity=ADA)
    assert listed(await client.list_tools()) == ["members", "whoami"]
    (await client.tool("whoami")).assertOk().assertTextContains("ada via notes-cli")
    (await client.tool("members")).assertOk().assertTextContains("members only")
    where = [w for w, _, _ in seen.calls]
    assert {"shouldRegister", "authorize", "handle"} <= set(where)
    assert all(identity == ADA for _, identity, _ in seen.calls)
    assert all(var is None for _, _, var in seen.calls)  # no context variable was used
    assert auth_context_var.get() is None


@pytest.mark.parametrize("era", ERAS)
async def test_a_token_is_the_verified_caller(container: Container, seen: Seen, era: Any) -> None:
    token = AccessToken(
        token="opaque", client_id="notes-cli", subject="grace", scopes=["notes:read"]
    )
    client = McpTestClient(container, NotesServer, protocol=era, token=token)
    assert client.caller is token
    (await client.tool("whoami")).assertOk().assertTextContains("grace via notes-cli")
    assert seen.calls[-1][1] == GRACE
    assert seen.calls[-1][2] is None


@pytest.mark.parametrize("era", ERAS)
async def test_listings_and_calls_follow_the_caller(container: Container, era: Any) -> None:
    anonymous = McpTestClient(container, NotesServer, protocol=era)
    reader = McpTestClient(container, NotesServer, protocol=era, identity=GRACE)
    writer = McpTestClient(container, NotesServer, protocol=era, identity=ADA)

    assert listed(await anonymous.list_tools()) == ["whoami"]
    assert listed(await reader.list_tools()) == ["whoami"]  # listed only if authorized too
    assert listed(await writer.list_tools()) == ["members", "whoami"]

    (await anonymous.tool("whoami")).assertOk().assertTextContains("anonymous")
    unknown = await anonymous.tool("members")
    assert unknown.error is not None
    assert "Unknown tool" in unknown.error["message"]
    forbidden = await reader.tool("members")
    assert forbidden.error is not None
    assert forbidden.error["code"] == AUTHORIZATION_ERROR
    (await writer.tool("members")).assertOk()


@pytest.mark.parametrize("era", ERAS)
async def test_a_platform_sees_the_identity_too(container: Container, era: Any) -> None:
    platform = Platform([Admin()])
    assert listed(await McpTestClient(container, platform, protocol=era).list_tools()) == []
    client = McpTestClient(container, platform, protocol=era, identity=ADA)
    assert listed(await client.list_tools()) == ["audit"]
    (await client.tool("audit")).assertOk().assertTextContains("audited by ada")


@pytest.mark.mcp_protocols
async def test_the_fixture_passes_identity_through(
    mcp_client: Any, mcp_container: Container, seen: Seen
) -> None:
    mcp_container.instance(Seen, seen)
    client = mcp_client(NotesServer, identity=ADA)
    (await client.tool("whoami")).assertOk().assertTextContains("ada via notes-cli")


def test_token_and_identity_together_are_refused(container: Container) -> None:
    with pytest.raises(TypeError, match="token= or identity=, not both"):
        McpTestClient(container, NotesServer, token=token_for(ADA), identity=ADA)


def test_identity_becomes_an_opaque_token() -> None:
    first, second = token_for(ADA), token_for(ADA)
    assert (first.subject, first.client_id, first.scopes) == ("ada", "notes-cli", list(ADA.scopes))
    assert first.token != second.token  # opaque, never a fixed string a test could leak
    assert first.token.startswith("mcp-test-")
