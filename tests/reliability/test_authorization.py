"""Hidden and forbidden components stay unreachable: by direct request, by guessed names,
by another caller's identity, through a toolset path or header, and without a token.

(tests/components/test_visibility.py covers every hook combination per kind;
this file attacks the boundary.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.serving import TOOLSETS_HEADER, BearerAuth, http_app
from mcp_adapter.testing import McpTestClient
from tests.reliability.conftest import BOUNDED, ERAS
from tests.reliability.fuzz import MODERN, envelope
from tests.reliability.loadapp import NamedTokens
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app

HIDDEN = "hidden-output-1c7e"
"""What a hidden or forbidden handler would answer; no response may contain it."""
RAN: list[str] = []


def _ran(name: str) -> McpResponse:
    RAN.append(name)
    return McpResponse.text(HIDDEN)


def _is_admin(request: McpRequest) -> bool:
    return request.identity is not None and request.identity.subject == "user-admin"


class OpenTool(Tool):
    name = "open"

    async def handle(self, request: McpRequest) -> McpResponse:
        who = request.identity.subject if request.identity else "anonymous"
        return McpResponse.text(f"open to {who}")


class SecretTool(Tool):
    name = "secret_tool"

    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return _ran(self.name)


class AdminTool(Tool):
    """Exists for everyone, usable by the admin only."""

    name = "admin_tool"

    def authorize(self, request: McpRequest) -> bool:
        return _is_admin(request)

    async def handle(self) -> McpResponse:
        return McpResponse.text("admin done")


class AdminOnlyListedTool(Tool):
    """Exists for the admin only."""

    name = "admin_listed"

    async def shouldRegister(self, request: McpRequest) -> bool:
        return _is_admin(request)

    async def handle(self) -> McpResponse:
        return McpResponse.text("admin listed")


class SecretResource(Resource):
    name = "secret_resource"
    uri = "vault://secret"

    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return _ran(self.name)


class SecretTemplate(Resource):
    name = "secret_template"
    uri_template = "vault://keys/{key}"

    def authorize(self, request: McpRequest) -> bool:
        return _is_admin(request)

    async def handle(self, key: str) -> McpResponse:
        return _ran(self.name)

    async def complete(self, argument: str, value: str) -> list[str]:
        RAN.append("secret completion")
        return [HIDDEN]


class SecretPrompt(Prompt):
    name = "secret_prompt"

    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return _ran(self.name)

    async def complete(self, argument: str, value: str) -> list[str]:
        RAN.append("secret prompt completion")
        return [HIDDEN]


class GuardedServer(Server):
    name = "guarded"
    tools = (OpenTool, SecretTool, AdminTool, AdminOnlyListedTool)
    resources = (SecretResource, SecretTemplate)
    prompts = (SecretPrompt,)


def _no_leak(message: dict[str, Any]) -> None:
    assert HIDDEN not in json.dumps(message)


# -- in process: direct calls and guessed names --------------------------------------------------


def _variants(name: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(name),
        st.sampled_from([name.upper(), name.title(), f" {name}", f"{name} ", f"{name}\x00"]),
        st.sampled_from([name.replace("_", "-"), name.replace("_", ""), f"{name}/", f"./{name}"]),
        st.builds(lambda a, b: f"{a}{name}{b}", st.text(max_size=3), st.text(max_size=3)),
    )


GUESSES = st.one_of(
    _variants("secret_tool").map(lambda n: ("tools/call", {"name": n})),
    _variants("admin_listed").map(lambda n: ("tools/call", {"name": n})),
    _variants("secret_prompt").map(lambda n: ("prompts/get", {"name": n})),
    _variants("vault://secret").map(lambda u: ("resources/read", {"uri": u})),
    st.sampled_from(["vault://secret", "vault://keys/", "VAULT://keys/a", "vault://keys/%2e%2e"])
    .flatmap(lambda u: st.builds(lambda s: u + s, st.text(max_size=8)))
    .map(lambda u: ("resources/read", {"uri": u})),
    st.builds(
        lambda kind, value: (
            "completion/complete",
            {
                "ref": kind,
                "argument": {"name": "key", "value": value},
            },
        ),
        st.sampled_from(
            [
                {"type": "ref/prompt", "name": "secret_prompt"},
                {"type": "ref/resource", "uri": "vault://keys/{key}"},
            ]
        ),
        st.text(max_size=4),
    ),
)


@pytest.mark.parametrize("era", ERAS)
def test_guessed_names_never_reach_a_hidden_or_forbidden_handler(era: str) -> None:
    client = McpTestClient(Container(), GuardedServer, protocol=era)  # type: ignore[arg-type]
    RAN.clear()

    @BOUNDED
    @given(guess=GUESSES)
    def attempt(guess: tuple[str, dict[str, Any]]) -> None:
        method, params = guess
        result = anyio.run(client.request, method, params)
        _no_leak(result.message)
        if result.error is not None:
            assert result.error["code"] in (-32602, -32002, -32003), result.message

    attempt()
    assert RAN == [], "a hidden or forbidden handler (or its completion) ran"


@pytest.mark.parametrize("era", ERAS)
def test_hidden_answers_exactly_like_absent_and_forbidden_says_so(era: str) -> None:
    async def run() -> None:
        client = McpTestClient(Container(), GuardedServer, protocol=era)  # type: ignore[arg-type]
        hidden = await client.tool("secret_tool")
        absent = await client.tool("no_such_tool")
        assert hidden.error is not None
        assert absent.error is not None
        assert hidden.error["code"] == absent.error["code"] == -32602
        assert hidden.error["message"].replace("secret_tool", "X") == absent.error[
            "message"
        ].replace("no_such_tool", "X")
        forbidden = await client.tool("admin_tool")
        assert forbidden.error is not None
        assert forbidden.error["code"] == -32003
        listed = await client.list_tools()
        assert [t["name"] for t in listed.result["tools"]] == ["open"]  # type: ignore[index]
        templates = await client.list_resource_templates()
        assert templates.result["resourceTemplates"] == []  # type: ignore[index]
        resources = await client.list_resources()
        assert resources.result["resources"] == []  # type: ignore[index]

    anyio.run(run)


# -- over HTTP: identities, tokens and toolsets ----------------------------------------------------


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    app = http_app(GuardedServer, Container(), json_response=True, auth=BearerAuth(NamedTokens()))
    with serve_app(app) as base:
        yield f"{base}/mcp"


def _post(url: str, era: str, method: str, params: dict[str, Any], token: str | None) -> Any:
    if era == MODERN:
        params = {**params, "_meta": envelope()}
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    headers = http_headers(text, era)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    with httpx2.Client(timeout=30) as http:
        return http.post(url, content=text, headers=headers)


@pytest.mark.parametrize("era", ERAS)
def test_authorization_follows_each_callers_own_identity(guarded: str, era: str) -> None:
    RAN.clear()
    for _ in range(3):  # interleave the two identities on the same server
        admin = decoded(_post(guarded, era, "tools/call", {"name": "admin_tool"}, "user-admin"))
        user = decoded(_post(guarded, era, "tools/call", {"name": "admin_tool"}, "user-7"))
        assert admin is not None
        assert user is not None
        assert admin["result"]["content"][0]["text"] == "admin done"
        assert user["error"]["code"] == -32003
        listed = decoded(_post(guarded, era, "tools/call", {"name": "admin_listed"}, "user-7"))
        assert listed is not None
        assert listed["error"]["code"] == -32602
        read = decoded(_post(guarded, era, "resources/read", {"uri": "vault://keys/a"}, "user-7"))
        assert read is not None
        assert read["error"]["code"] == -32003
    names = decoded(_post(guarded, era, "tools/list", {}, "user-admin"))
    assert names is not None
    assert sorted(t["name"] for t in names["result"]["tools"]) == [
        "admin_listed",
        "admin_tool",
        "open",
    ]
    assert RAN == []


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    "method", ["tools/list", "tools/call", "resources/read", "prompts/get", "ping"]
)
def test_every_method_needs_a_valid_token(guarded: str, era: str, method: str) -> None:
    params = {"name": "open", "uri": "vault://keys/a"}
    for token in (None, "not-a-user", "user"):
        response = _post(guarded, era, method, params, token)
        assert response.status_code == 401
        assert HIDDEN not in response.text


class PublicExtension(McpExtension):
    @tool(toolset="public")
    def greet(self, name: str) -> str:
        return f"hello {name}"


class AdminExtension(McpExtension):
    @tool(toolset="admin")
    def wipe(self, confirm: bool) -> str:
        RAN.append("wipe")
        return HIDDEN


@pytest.fixture(scope="module")
def toolsets() -> Iterator[str]:
    """Every toolset served; a client narrows per request."""
    platform = Platform([PublicExtension(), AdminExtension()])
    with serve_app(http_app(platform, Container(), json_response=True)) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def public_only() -> Iterator[str]:
    """The operator serves the public toolset only: admin tools are not on this server."""
    platform = Platform([PublicExtension(), AdminExtension()])
    app = http_app(platform, Container(), json_response=True, toolsets=["public"])
    with serve_app(app) as base:
        yield f"{base}/mcp"


WIPE = {"name": "wipe", "arguments": {"confirm": True}}


@pytest.mark.parametrize("era", ERAS)
def test_a_narrowed_toolset_path_or_header_never_reaches_another_toolset(
    toolsets: str, era: str
) -> None:
    RAN.clear()
    public = f"{toolsets}/x/public"
    listed = decoded(_post(public, era, "tools/list", {}, None))
    assert listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["greet"]
    wiped = decoded(_post(public, era, "tools/call", WIPE, None))
    assert wiped is not None
    assert wiped["error"]["code"] == -32602
    for path in ("x/nope", "x/ADMIN", "x/public,nope", "x/%2e%2e"):
        response = _post(f"{toolsets}/{path}", era, "tools/call", WIPE, None)
        assert response.status_code == 404, (path, response.text)
    params = {**WIPE, "_meta": envelope()} if era == MODERN else WIPE
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    with httpx2.Client(timeout=30) as http:
        for selection in ("public", "public , public", "public,,"):
            headers = {**http_headers(text, era), TOOLSETS_HEADER: selection}
            answer = decoded(http.post(toolsets, content=text, headers=headers))
            assert answer is not None
            assert answer["error"]["code"] == -32602
        unknown = {**http_headers(text, era), TOOLSETS_HEADER: "root"}
        assert http.post(toolsets, content=text, headers=unknown).status_code == 400
    assert RAN == []


@pytest.mark.parametrize("era", ERAS)
def test_a_toolset_the_operator_did_not_serve_is_unreachable(public_only: str, era: str) -> None:
    RAN.clear()
    direct = decoded(_post(public_only, era, "tools/call", WIPE, None))
    assert direct is not None
    assert direct["error"]["code"] == -32602
    for path in ("x/admin", "x/admin,public", "x/public,admin"):
        response = _post(f"{public_only}/{path}", era, "tools/call", WIPE, None)
        assert response.status_code == 404, (path, response.text)
        assert HIDDEN not in response.text
    params = {**WIPE, "_meta": envelope()} if era == MODERN else WIPE
    text = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    with httpx2.Client(timeout=30) as http:
        headers = {**http_headers(text, era), TOOLSETS_HEADER: "admin"}
        assert http.post(public_only, content=text, headers=headers).status_code == 400
    listed = decoded(_post(public_only, era, "tools/list", {}, None))
    assert listed is not None
    assert [t["name"] for t in listed["result"]["tools"]] == ["greet"]
    assert RAN == []
