"""``mcp-adapter serve --http`` in a real subprocess on 127.0.0.1, driven by ``mcp.Client``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import MCPError
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from mcp_adapter.cli import build_parser, main
from mcp_adapter.cli.options import ENV_VAR, ServeOptions
from mcp_adapter.cli.serve import build_app, options_of
from tests.serving.apps import AUDIT_FILE_ENV
from tests.serving.clients import CALL_TIMEOUT, MODES, connect, tool_names
from tests.serving.harness import Served, serve_http

pytestmark = pytest.mark.anyio

DEMO = [
    "examples.demo.server:DemoServer",
    "--container",
    "examples.demo.container:build_container",
]
DEMO_TOKEN = "demo-secret"
AUDIT = ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"]
VERIFIER = ["--auth", "tests.serving.apps:StaticVerifier"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
POST_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def demo() -> Iterator[Served]:
    """The demo as README command one serves it: a token is optional, private-message needs one."""
    args = [*DEMO, "--auth", "examples.demo.auth:verifier", "--anonymous"]
    with serve_http(args, {"MCP_DEMO_TOKEN": DEMO_TOKEN}) as served:
        yield served


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    audit = tmp_path_factory.mktemp("audit") / "audit.log"
    with serve_http([*AUDIT, *VERIFIER, "--scope", "read"], {AUDIT_FILE_ENV: str(audit)}) as served:
        yield served, audit


@pytest.mark.parametrize("mode", MODES)
async def test_demo_anonymously(demo: Served, mode: str) -> None:
    async with connect(demo.url, mode) as client:
        assert await tool_names(client) == ["greet", "summarize"]
        greeting = await client.call_tool("greet", {"name": "Ada"})
        expected = {"result": "Hello, Ada!"} if mode == "legacy" else "Hello, Ada!"
        assert greeting.structured_content == expected
        resource = await client.read_resource("demo://greetings/Bob")
        assert [getattr(c, "text", None) for c in resource.contents] == ["Hello, Bob!"]
        prompt = await client.get_prompt("greeting", {"name": "Cy"})
        assert getattr(prompt.messages[0].content, "text", None) == "Hello, Cy!"
        with pytest.raises(MCPError, match="Unknown tool: private-message"):
            await client.call_tool("private-message", {"message": "psst"})


@pytest.mark.parametrize("mode", MODES)
async def test_demo_private_tool_with_a_real_token(demo: Served, mode: str) -> None:
    async with connect(demo.url, mode, token=DEMO_TOKEN) as client:
        assert await tool_names(client) == ["greet", "summarize", "private-message"]
        result = await client.call_tool("private-message", {"message": "psst"})
        assert not result.is_error
        assert [getattr(c, "text", None) for c in result.content] == ["psst"]


async def test_demo_rejects_a_wrong_token_with_401(demo: Served) -> None:
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
        response = await http.post(
            demo.url,
            json=INITIALIZE,
            headers={**POST_HEADERS, "Authorization": "Bearer not-the-token"},
        )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


async def test_missing_token_is_401_with_www_authenticate(audited: tuple[Served, Path]) -> None:
    served, _ = audited
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
        response = await http.post(served.url, json=INITIALIZE, headers=POST_HEADERS)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert response.json()["error"] == "invalid_token"


@pytest.mark.parametrize("mode", MODES)
async def test_identity_comes_from_the_token(audited: tuple[Served, Path], mode: str) -> None:
    served, _ = audited
    async with connect(served.url, mode, token="admin-token") as client:
        result = await client.call_tool("whoami", {})
    assert result.structured_content == {
        "subject": "admin",
        "scopes": ["read", "admin"],
        "scheme": "bearer",
    }


async def test_required_scope_is_enforced() -> None:
    with serve_http([*AUDIT, *VERIFIER, "--scope", "admin"]) as served:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            response = await http.post(
                served.url,
                json=INITIALIZE,
                headers={**POST_HEADERS, "Authorization": "Bearer reader-token"},
            )
        assert response.status_code == 403
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
        async with connect(served.url, token="admin-token") as client:
            assert not (await client.call_tool("whoami", {})).is_error


@pytest.mark.parametrize("mode", MODES)
async def test_scoped_service_finalizer_runs_per_http_call(
    audited: tuple[Served, Path], mode: str
) -> None:
    served, audit = audited
    async with connect(served.url, mode, token="reader-token") as client:
        result = await client.call_tool("record", {"text": f"over {mode}"})
    content = result.structured_content
    assert isinstance(content, dict)
    assert content["transport"] == "http"
    number = content["log"]
    assert f"opened {number} | over {mode} via http | closed {number}" in audit.read_text()


async def test_dns_rebinding_protection_on_loopback(demo: Served) -> None:
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
        response = await http.post(
            demo.url, json=INITIALIZE, headers={**POST_HEADERS, "Host": "evil.example"}
        )
    assert response.status_code == 421


@pytest.mark.parametrize("mode", MODES)
async def test_several_workers_serve_one_stateless_deployment(mode: str, tmp_path: Path) -> None:
    audit = tmp_path / "audit.log"
    args = [*AUDIT, "--workers", "2"]
    with serve_http(args, {AUDIT_FILE_ENV: str(audit)}) as served:
        assert "2 workers" in "".join(served.output)
        for turn in range(4):
            async with connect(served.url, mode) as client:
                result = await client.call_tool("record", {"text": f"turn {turn}"})
                assert not result.is_error
    lines = audit.read_text().splitlines()
    assert len(lines) == 4
    assert all(line.endswith(f"closed {line.split()[1]}") for line in lines)


TOOLSETS = "tests.serving.apps:toolset_catalog"


@pytest.fixture(scope="module")
def toolsets() -> Iterator[Served]:
    with serve_http([TOOLSETS]) as served:
        yield served


class TestToolsets:
    @pytest.mark.parametrize("mode", MODES)
    async def test_header_selects(self, toolsets: Served, mode: str) -> None:
        headers = {"X-MCP-Toolsets": "issues, users"}
        async with connect(toolsets.url, mode, headers=headers) as client:
            assert await tool_names(client) == ["list-issues", "me"]
            assert not (await client.call_tool("me", {})).is_error
            with pytest.raises(MCPError, match="Unknown tool: get-repo"):
                await client.call_tool("get-repo", {})

    @pytest.mark.parametrize("mode", MODES)
    async def test_path_selects(self, toolsets: Served, mode: str) -> None:
        async with connect(f"{toolsets.url}/x/repos", mode) as client:
            assert await tool_names(client) == ["list-repos", "get-repo"]
            with pytest.raises(MCPError, match="Unknown tool: me"):
                await client.call_tool("me", {})

    async def test_no_selection_serves_everything(self, toolsets: Served) -> None:
        async with connect(toolsets.url) as client:
            assert await tool_names(client) == ["list-repos", "get-repo", "list-issues", "me"]

    async def test_unknown_toolsets_are_rejected(self, toolsets: Served) -> None:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            by_header = await http.post(
                toolsets.url, json=INITIALIZE, headers={**POST_HEADERS, "X-MCP-Toolsets": "wiki"}
            )
            by_path = await http.post(
                f"{toolsets.url}/x/wiki", json=INITIALIZE, headers=POST_HEADERS
            )
        assert by_header.status_code == 400
        assert by_path.status_code == 404
        assert "unknown toolset(s): wiki" in by_header.json()["error_description"]

    async def test_operator_selection_narrows_what_clients_can_pick(self) -> None:
        with serve_http([TOOLSETS, "--toolsets", "repos,users"]) as served:
            async with connect(served.url) as client:
                assert await tool_names(client) == ["list-repos", "get-repo", "me"]
            async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
                response = await http.post(
                    f"{served.url}/x/issues", json=INITIALIZE, headers=POST_HEADERS
                )
            assert response.status_code == 404


async def test_max_body_size_lowers_the_body_limit() -> None:
    with serve_http([*AUDIT, "--max-body-size", "2048"]) as served:
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT) as http:
            padded = {**INITIALIZE, "params": {**INITIALIZE["params"], "pad": "p" * 2048}}
            refused = await http.post(served.url, json=padded, headers=POST_HEADERS)
        assert refused.status_code == 413
        async with connect(served.url, "legacy") as client:
            assert not (await client.call_tool("whoami", {})).is_error


def test_max_body_size_reaches_every_worker() -> None:
    """``--workers`` rebuild the app from the options in the environment: the limit survives."""
    args = ["serve", *AUDIT, "--http", "--workers", "2", "--max-body-size", "4096"]
    options = options_of(build_parser().parse_args(args))
    assert options.max_body_size == 4096
    restored = ServeOptions.from_env({ENV_VAR: options.to_env()})
    assert restored == options
    app = build_app(restored)
    assert app.state.mcp_session_manager.max_request_body_size == 4096
    default = build_app(dataclasses.replace(restored, max_body_size=None))
    assert default.state.mcp_session_manager.max_request_body_size == (
        DEFAULT_MAX_REQUEST_BODY_SIZE
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*AUDIT, "--max-body-size", "1024"], "error: --max-body-size only applies to HTTP"),
        ([*AUDIT, "--http", "--max-body-size", "0"], "error: --max-body-size 0 is not a positive"),
    ],
)
def test_max_body_size_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *args]) == 2
    assert message in capsys.readouterr().err
