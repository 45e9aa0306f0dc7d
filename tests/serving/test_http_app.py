"""``http_app`` in process: uvicorn in a thread on 127.0.0.1, mounting, modes, auth metadata."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from examples.demo.container import build_container
from examples.demo.server import DemoServer
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from container import Container
from mcp_adapter import (
    BearerAuth,
    Catalog,
    HttpLimits,
    compile_server,
    http_app,
    mcp_lifespan,
    run_mcp_apps,
)
from mcp_adapter.serving import NotServableError, catalog_of
from tests.serving.apps import StaticVerifier
from tests.serving.clients import CALL_TIMEOUT, MODES, connect, tool_names
from tests.serving.harness import serve_app

pytestmark = pytest.mark.anyio


def health(_: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


@pytest.mark.parametrize("mode", MODES)
async def test_mounted_with_mcp_lifespan(mode: str) -> None:
    mcp = http_app(DemoServer, build_container())
    parent = Starlette(
        routes=[Route("/health", health), Mount("/api", app=mcp)],
        lifespan=mcp_lifespan(mcp),
    )
    with serve_app(parent) as base:
        async with connect(f"{base}/api/mcp", mode) as client:
            greeting = await client.call_tool("greet", {"name": "Ada"})
            assert not greeting.is_error
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            assert (await http.get(f"{base}/health")).text == "ok"


async def test_mounted_inside_the_parents_own_lifespan() -> None:
    events: list[str] = []
    mcp = http_app(DemoServer, build_container(), path="/")

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        events.append("parent up")
        async with run_mcp_apps(mcp):
            yield
        events.append("parent down")

    parent = Starlette(routes=[Mount("/mcp", app=mcp)], lifespan=lifespan)
    with serve_app(parent) as base:
        async with connect(f"{base}/mcp/") as client:
            assert "greet" in await tool_names(client)
    assert events == ["parent up", "parent down"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "options",
    [{"stateless": False}, {"json_response": True}, {"stateless": False, "json_response": True}],
    ids=["stateful", "json", "stateful-json"],
)
async def test_modes(mode: str, options: dict[str, bool]) -> None:
    app = http_app(DemoServer, build_container(), **options)
    with serve_app(app) as base:
        async with connect(f"{base}/mcp", mode) as client:
            summary = await client.call_tool("summarize", {"values": [1, 2]})
            assert summary.structured_content == {"count": 2, "total": 3.0}


async def test_protected_resource_metadata_is_advertised() -> None:
    app = http_app(
        DemoServer,
        build_container(),
        auth=BearerAuth(
            StaticVerifier(),
            required_scopes=("read",),
            resource_server_url="http://127.0.0.1/mcp",
            issuer_url="https://auth.example.com",
        ),
    )
    with serve_app(app) as base:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            denied = await http.post(f"{base}/mcp", json={})
            metadata = await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")
    assert denied.status_code == 401
    expected = 'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"'
    assert expected in denied.headers["www-authenticate"]
    assert metadata.json()["authorization_servers"] == ["https://auth.example.com"]  # as given
    assert metadata.json()["scopes_supported"] == ["read"]


def test_resource_url_needs_an_issuer() -> None:
    with pytest.raises(ValueError, match="needs issuer_url"):
        BearerAuth(StaticVerifier(), resource_server_url="http://127.0.0.1/mcp")


def test_auth_needs_a_verifier_and_keeps_its_scopes_as_a_tuple() -> None:
    with pytest.raises(TypeError, match="verify_token"):
        BearerAuth(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not one string"):
        BearerAuth(StaticVerifier(), required_scopes="read")
    auth = BearerAuth(StaticVerifier(), required_scopes=["read", "write"])
    assert auth.required_scopes == ("read", "write")
    assert "required_scopes=('read', 'write'), anonymous=False" in repr(auth)
    assert auth == BearerAuth(auth.token_verifier, required_scopes=("read", "write"))


LIMIT = 2048


@pytest.mark.parametrize("mode", MODES)
async def test_the_body_limit_is_configurable(mode: str) -> None:
    """Bodies over ``max_body_size`` are 413, declared or streamed; smaller ones pass."""
    app = http_app(DemoServer, build_container(), limits=HttpLimits(max_body_size=LIMIT))
    assert app.state.mcp_session_manager.max_request_body_size == LIMIT
    pad = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
    over = pad + "p" * LIMIT + '"}}'

    async def streamed() -> AsyncIterator[bytes]:
        yield over[:100].encode()
        yield over[100:].encode()

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with serve_app(app) as base:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT, headers=headers) as http:
            declared = await http.post(f"{base}/mcp", content=over)
            chunked = await http.post(f"{base}/mcp", content=streamed())
        async with connect(f"{base}/mcp", mode) as client:  # a client's requests are smaller
            summary = await client.call_tool("summarize", {"values": [1, 2]})
    assert (declared.status_code, chunked.status_code) == (413, 413)
    assert "content-length" not in chunked.request.headers
    assert summary.structured_content == {"count": 2, "total": 3.0}


def test_the_body_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_body_size must be a positive number of bytes"):
        HttpLimits(max_body_size=0)


class Compiles:
    """Stands for an extensions ``Platform``: anything with ``compile(container)``."""

    def compile(self, container: Container) -> Catalog:
        return compile_server(DemoServer, container)


def test_servable_kinds() -> None:
    container = build_container()
    for servable in (DemoServer, compile_server(DemoServer, container), Compiles()):
        assert catalog_of(servable, container).name == "Demo"
    for wrong in (Compiles, object(), int):
        with pytest.raises(NotServableError):
            catalog_of(wrong, container)


async def test_compilable_served_over_http() -> None:
    with serve_app(http_app(Compiles(), build_container())) as base:
        async with connect(f"{base}/mcp") as client:
            assert await tool_names(client) == ["greet", "summarize"]
