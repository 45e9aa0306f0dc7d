"""Bearer policy at the edges: required scopes with anonymous callers allowed, and the
protected-resource metadata publishing the issuer exactly as configured.

With ``--scope X --anonymous`` anonymous callers pass (with no identity); a valid
token without ``X`` is served exactly as anonymous (not refused, not identified); a
token with ``X`` is identified; an invalid token is ``401``. Without
``--anonymous``, a token without ``X`` is ``403`` and no token is ``401``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp.server.auth.provider import AccessToken

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool
from mcp_adapter.serving import BearerAuth, http_app
from tests.reliability.conftest import ERAS
from tests.reliability.fuzz import MODERN, envelope
from tests.reliability.transports import decoded, http_headers
from tests.serving.harness import serve_app


class ScopedTokens:
    """``<subject>:<scope>,<scope>`` is a valid token; anything else is not."""

    async def verify_token(self, token: str) -> AccessToken | None:
        subject, _, scopes = token.partition(":")
        if not subject.startswith("user-"):
            return None
        return AccessToken(
            token=token, client_id="c", subject=subject, scopes=[s for s in scopes.split(",") if s]
        )


class WhoTool(Tool):
    name = "who"

    async def handle(self, request: McpRequest) -> McpResponse:
        identity = request.identity
        return McpResponse.text(identity.subject if identity else "anonymous")


class AdminsTool(Tool):
    name = "admins"

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is not None and request.identity.has_scope("admin")

    async def handle(self) -> McpResponse:
        return McpResponse.text("admin area")


class Guarded(Server):
    name = "guarded"
    tools = (WhoTool, AdminsTool)


def _call(url: str, era: str, token: str | None, name: str = "who") -> httpx2.Response:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if era == MODERN:
        params["_meta"] = envelope()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = http_headers(body, era)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx2.post(url, content=body, headers=headers, timeout=30)


def _text(response: httpx2.Response) -> str:
    answer = decoded(response)
    assert answer is not None, response.text
    return str(answer["result"]["content"][0]["text"])


@pytest.fixture(scope="module", params=[True, False], ids=["anonymous", "required"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, bool]]:
    app = http_app(
        Guarded,
        Container(),
        auth=BearerAuth(ScopedTokens(), required_scopes=("admin",), anonymous=request.param),
    )
    with serve_app(app) as base:
        yield f"{base}/mcp", request.param


@pytest.mark.parametrize("era", ERAS)
def test_required_scopes_with_and_without_anonymous_callers(
    served: tuple[str, bool], era: str
) -> None:
    url, anonymous = served
    assert _text(_call(url, era, "user-ann:admin")) == "user-ann"
    assert _text(_call(url, era, "user-ann:admin", "admins")) == "admin area"
    assert _call(url, era, "not-a-token").status_code == 401
    if anonymous:
        assert _text(_call(url, era, None)) == "anonymous"
        assert _text(_call(url, era, "user-bob:work")) == "anonymous"  # as if it had no token
        hidden = decoded(_call(url, era, "user-bob:work", "admins"))
        assert hidden is not None
        assert "error" in hidden
    else:
        assert _call(url, era, None).status_code == 401
        assert _call(url, era, "user-bob:work").status_code == 403


@pytest.mark.parametrize(
    "issuer",
    ["https://auth.example.com", "https://auth.example.com/", "https://auth.example.com/tenant-1"],
)
def test_the_issuer_is_published_exactly_as_configured(issuer: str) -> None:
    app = http_app(
        Guarded,
        Container(),
        auth=BearerAuth(
            ScopedTokens(), resource_server_url="http://127.0.0.1/mcp", issuer_url=issuer
        ),
    )
    with serve_app(app) as base:
        metadata = httpx2.get(f"{base}/.well-known/oauth-protected-resource/mcp", timeout=30)
        preflight = httpx2.options(
            f"{base}/.well-known/oauth-protected-resource/mcp",
            headers={"origin": "http://x.example", "access-control-request-method": "GET"},
            timeout=30,
        )
    assert metadata.status_code == 200
    assert metadata.json()["authorization_servers"] == [issuer]
    assert metadata.json()["resource"] == "http://127.0.0.1/mcp"
    assert metadata.headers["cache-control"] == "public, max-age=3600"
    assert preflight.status_code == 200
