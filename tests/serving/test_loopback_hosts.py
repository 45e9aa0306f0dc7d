"""DNS-rebinding protection on every loopback address a server binds, not three names."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp.server.transport_security import TransportSecuritySettings

from mcp_adapter.serving import default_transport_security, http_app
from tests.serving.apps import AuditServer, build_container
from tests.serving.clients import connect, tool_names
from tests.serving.harness import serve_app, serve_http
from tests.serving.rawhttp import INITIALIZE, POST_HEADERS, address

AUDIT = ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"]


SPELLINGS = [
    "127.1",
    "2130706433",
    "0x7f.1",
    "0177.0.0.1",
    "127.000.000.001",
    "LOCALHOST",
    "localhost.",
    "app.localhost",
    "[::1]",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
]


@pytest.mark.parametrize("host", ["127.0.0.2", "127.255.0.9", "::1", "localhost", "127.0.0.1"])
def test_every_loopback_host_is_protected_and_allowed(host: str) -> None:
    settings = default_transport_security(host)
    assert settings is not None
    assert settings.enable_dns_rebinding_protection
    shown = f"[{host}]" if ":" in host else host
    assert f"{shown}:*" in settings.allowed_hosts
    assert f"http://{shown}:*" in settings.allowed_origins


@pytest.mark.parametrize("host", SPELLINGS)
def test_every_spelling_of_loopback_is_protected(host: str) -> None:
    settings = default_transport_security(host)
    assert settings is not None
    assert settings.enable_dns_rebinding_protection
    assert "127.0.0.1:*" in settings.allowed_hosts
    assert "rebound.example:*" not in settings.allowed_hosts


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "", "example.com", "10.0.0.1", "::ffff:10.0.0.1", "127.0.0.1 x", "::"]
)
def test_other_hosts_are_left_alone(host: str) -> None:
    assert default_transport_security(host) is None


@pytest.mark.anyio
@pytest.mark.parametrize("host", ["127.1", "2130706433"])
async def test_an_ipv4_shorthand_for_loopback_is_protected_when_served(host: str) -> None:
    """``--host 127.1`` binds 127.0.0.1: a rebound name is refused, the host as spelled
    and the address it binds are answered."""
    with serve_http([*AUDIT, "--host", host]) as served:
        _, port = address(served.url.replace(host, "127.0.0.1"))
        base = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(timeout=10) as http:
            statuses = {}
            for name in ("rebound.example", host, "127.0.0.1"):
                response = await http.post(
                    base,
                    content=json.dumps(INITIALIZE),
                    headers={**POST_HEADERS, "Host": f"{name}:{port}"},
                )
                statuses[name] = response.status_code
            evil_origin = await http.post(
                base,
                content=json.dumps(INITIALIZE),
                headers={**POST_HEADERS, "Origin": "http://rebound.example"},
            )
    assert statuses == {"rebound.example": 421, host: 200, "127.0.0.1": 200}
    assert evil_origin.status_code == 403


@pytest.mark.anyio
async def test_a_host_without_its_port_is_answered_and_a_foreign_one_refused() -> None:
    """A reverse proxy that sets ``Host: $host`` (nginx) sends the name without the port;
    a browser on port 80 sends its ``Origin`` the same way."""
    with serve_http([*AUDIT, "--host", "127.0.0.1"]) as served:
        async with httpx2.AsyncClient(timeout=10) as http:
            statuses = {}
            for host, origin in [
                ("127.0.0.1", None),
                ("localhost", "http://localhost"),
                ("rebound.example", None),
                ("127.0.0.1", "http://rebound.example"),
            ]:
                headers = {**POST_HEADERS, "Host": host}
                if origin is not None:
                    headers["Origin"] = origin
                response = await http.post(
                    served.url, content=json.dumps(INITIALIZE), headers=headers
                )
                statuses[(host, origin)] = response.status_code
    assert statuses == {
        ("127.0.0.1", None): 200,
        ("localhost", "http://localhost"): 200,
        ("rebound.example", None): 421,
        ("127.0.0.1", "http://rebound.example"): 403,
    }


@pytest.mark.anyio
async def test_serving_on_127_0_0_2_answers_it_and_refuses_a_foreign_host() -> None:
    with serve_http([*AUDIT, "--host", "127.0.0.2"]) as served:
        assert served.url.startswith("http://127.0.0.2:")
        async with connect(served.url, "legacy") as client:
            assert "record" in await tool_names(client)
        _, port = address(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            foreign = await http.post(
                served.url,
                content=json.dumps(INITIALIZE),
                headers={**POST_HEADERS, "Host": f"rebound.example:{port}"},
            )
            evil_origin = await http.post(
                served.url,
                content=json.dumps(INITIALIZE),
                headers={**POST_HEADERS, "Origin": "http://rebound.example"},
            )
        assert foreign.status_code == 421
        assert evil_origin.status_code == 403


@pytest.mark.anyio
async def test_given_settings_replace_the_hosts_default_and_the_app_keeps_its_own_copy() -> None:
    settings = TransportSecuritySettings(allowed_hosts=["mcp.example.com"])
    app = http_app(AuditServer, build_container(), host="127.0.0.1", transport_security=settings)
    settings.allowed_hosts.append("127.0.0.1:*")  # too late: the app has its copy
    assert app.state.mcp_session_manager.security_settings.allowed_hosts == ["mcp.example.com"]
    with serve_app(app) as base:
        async with httpx2.AsyncClient(timeout=10) as http:
            named = await http.post(
                f"{base}/mcp",
                content=json.dumps(INITIALIZE),
                headers={**POST_HEADERS, "Host": "mcp.example.com"},
            )
            loopback = await http.post(
                f"{base}/mcp", content=json.dumps(INITIALIZE), headers=POST_HEADERS
            )
    assert named.status_code == 200
    assert loopback.status_code == 421  # the loopback default is not added to the given lists
