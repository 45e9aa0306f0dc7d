"""One caller's identity never reaches another request: over one keep-alive connection,
after large bodies, in both eras, through the handler, the hooks and the services.

The attack: with a token verifier and ``anonymous=True`` (README's main command),
an authenticated ``tools/call`` whose body is larger than 64 KiB (which makes the
server pause and resume reading the socket from inside that request), then a
request without ``Authorization`` on the same connection. The second request
must run as nobody.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from starlette.requests import Request

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool
from mcp_adapter.declare.request import Identity
from mcp_adapter.serving import BearerAuth, http_app
from schemas import Schema
from tests.reliability.conftest import ERAS
from tests.reliability.fuzz import MODERN
from tests.reliability.loadapp import NamedTokens
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app, serve_http

PADDING = "p" * (200 * 1024)
"""Over the 64 KiB that makes uvicorn pause reading the socket mid-request."""


class WhoInput(Schema):
    padding: str = ""


class WhoAmITool(Tool[WhoInput]):
    name = "whoami"

    async def handle(self, payload: WhoInput, request: McpRequest) -> McpResponse:
        who = request.identity.subject if request.identity else "anonymous"
        return McpResponse.text(who)


class MembersTool(Tool):
    """Listed and callable by authenticated callers only."""

    name = "members_only"

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is not None

    async def handle(self, request: McpRequest) -> McpResponse:
        assert request.identity is not None
        return McpResponse.text(f"members: {request.identity.subject}")


class CallerView:
    """A service that knows the request: the caller and the HTTP request, by type."""

    def __init__(self, identity: Identity | None, http: Request) -> None:
        self.who = identity.subject if identity else "anonymous"
        self.path = http.url.path


class ServiceWhoAmITool(Tool[WhoInput]):
    name = "service_whoami"

    async def handle(self, payload: WhoInput, view: CallerView) -> McpResponse:
        return McpResponse.text(f"{view.who} at {view.path}")


class IdentityServer(Server):
    name = "identity"
    tools = (WhoAmITool, MembersTool, ServiceWhoAmITool)


def _body(era: str, request_id: int, method: str, params: dict[str, Any]) -> str:
    if era == MODERN:
        from tests.reliability.fuzz import envelope

        params = {**params, "_meta": envelope()}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def _send(
    client: httpx2.Client, url: str, era: str, body: str, token: str | None
) -> dict[str, Any]:
    headers = http_headers(body, era)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    response = client.post(url, content=body, headers=headers)
    answer = decoded(response)
    assert answer is not None
    return answer


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    app = http_app(
        IdentityServer,
        Container(),
        auth=BearerAuth(NamedTokens(), anonymous=True),
        json_response=False,
    )
    with serve_app(app) as base:
        yield f"{base}/mcp"


def _text(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("first_size", [0, len(PADDING)], ids=["small", "large"])
def test_anonymous_request_after_authenticated_one_on_the_same_connection(
    served: str, era: str, first_size: int
) -> None:
    transport = httpx2.HTTPTransport(retries=0)
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx2.Client(transport=transport, limits=limits, timeout=30) as client:
        for round_ in range(3):
            call = {"name": "whoami", "arguments": {"padding": PADDING[:first_size]}}
            first = _send(client, served, era, _body(era, 1, "tools/call", call), "user-alice")
            assert _text(first) == "user-alice"
            anonymous = _send(
                client,
                served,
                era,
                _body(era, 2, "tools/call", {"name": "whoami", "arguments": {}}),
                None,
            )
            assert _text(anonymous) == "anonymous", f"round {round_}"
            call = {"name": "service_whoami", "arguments": {"padding": PADDING[:first_size]}}
            served_first = _send(client, served, era, _body(era, 6, "tools/call", call), "user-al")
            assert _text(served_first) == "user-al at /mcp"
            anonymous_service = _send(
                client,
                served,
                era,
                _body(era, 7, "tools/call", {"name": "service_whoami", "arguments": {}}),
                None,
            )
            assert _text(anonymous_service) == "anonymous at /mcp", f"round {round_}"
            listed = _send(client, served, era, _body(era, 3, "tools/list", {}), None)
            names = [t["name"] for t in listed["result"]["tools"]]
            assert names == ["whoami", "service_whoami"], f"round {round_}"
            hidden = _send(
                client,
                served,
                era,
                _body(era, 4, "tools/call", {"name": "members_only", "arguments": {}}),
                None,
            )
            assert "error" in hidden, hidden
            other = _send(
                client,
                served,
                era,
                _body(era, 5, "tools/call", {"name": "whoami", "arguments": {}}),
                "user-bob",
            )
            assert _text(other) == "user-bob"


DEMO = [
    "examples.demo.server:DemoServer",
    "--container",
    "examples.demo.container:build_container",
    "--auth",
    "examples.demo.auth:verifier",
    "--anonymous",
]


@pytest.mark.parametrize("era", ERAS)
def test_readme_command_keeps_callers_apart_on_one_connection(era: str) -> None:
    """README's main command: the private tool stays out of an anonymous caller's reach."""
    token = "demo-token-for-the-isolation-test"
    transport = httpx2.HTTPTransport(retries=0)
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    with (
        serve_http(DEMO, env={"MCP_DEMO_TOKEN": token}) as served,
        httpx2.Client(transport=transport, limits=limits, timeout=30) as client,
    ):
        for _ in range(3):
            private = {"name": "private-message", "arguments": {"message": PADDING}}
            first = _send(client, served.url, era, _body(era, 1, "tools/call", private), token)
            assert _text(first) == PADDING
            listed = _send(client, served.url, era, _body(era, 2, "tools/list", {}), None)
            assert "private-message" not in [t["name"] for t in listed["result"]["tools"]]
            again = {"name": "private-message", "arguments": {"message": "leak?"}}
            refused = _send(client, served.url, era, _body(era, 3, "tools/call", again), None)
            assert "error" in refused, refused
