"""``X-Forwarded-For`` is trusted only from the proxies ``--forwarded-allow-ips`` names.

uvicorn on its own trusts forwarded headers from 127.0.0.1 and ::1, so any local
client could pick a new address per request and escape every per-client limit:
``RateLimit(per="client")``, the anonymous fallback of ``per="identity"`` and
``--max-sessions-per-client``. Real ``mcp-adapter serve`` subprocesses on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from mcp_adapter.cli import main
from tests.serving.clients import connect
from tests.serving.harness import Served, run_cli, serve_http
from tests.serving.rawhttp import SESSION, close_session, open_session, refusal

PEER = ["tests.serving.trust_apps:PeerServer"]
AUDIT = ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"]


@pytest.fixture(scope="module")
def untrusting() -> Iterator[Served]:
    with serve_http(PEER) as served:
        yield served


@pytest.fixture(scope="module")
def behind_proxy() -> Iterator[Served]:
    with serve_http([*PEER, "--forwarded-allow-ips", "127.0.0.1"]) as served:
        yield served


async def _peer(url: str, forwarded: str) -> dict[str, object]:
    headers = {"X-Forwarded-For": forwarded, "X-Forwarded-Proto": "https"}
    async with connect(url, headers=headers) as client:
        result = await client.call_tool("peer", {})
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def _limited(url: str, forwarded: str) -> bool:
    """Whether a call of the one-per-client tool, claiming ``forwarded``, went through."""
    async with connect(url, headers={"X-Forwarded-For": forwarded}) as client:
        result = await client.call_tool("limited", {})
    return not result.is_error


@pytest.mark.anyio
async def test_a_local_client_cannot_choose_its_address(untrusting: Served) -> None:
    seen = await _peer(untrusting.url, "203.0.113.7")
    assert seen == {"host": "127.0.0.1", "scheme": "http"}


@pytest.mark.anyio
async def test_a_new_forwarded_address_does_not_reset_a_per_client_rate_limit(
    untrusting: Served,
) -> None:
    assert await _limited(untrusting.url, "198.51.100.1")
    assert not await _limited(untrusting.url, "198.51.100.2")
    assert not await _limited(untrusting.url, "198.51.100.3")


@pytest.mark.anyio
async def test_a_trusted_proxy_gives_the_real_client(behind_proxy: Served) -> None:
    seen = await _peer(behind_proxy.url, "203.0.113.7")
    assert seen == {"host": "203.0.113.7", "scheme": "https"}
    # each real client behind the proxy has its own limit
    assert await _limited(behind_proxy.url, "198.51.100.1")
    assert await _limited(behind_proxy.url, "198.51.100.2")
    assert not await _limited(behind_proxy.url, "198.51.100.1")


def test_the_session_cap_per_client_holds_whatever_address_is_claimed() -> None:
    with (
        serve_http([*AUDIT, "--stateful", "--max-sessions-per-client", "1"]) as served,
        httpx2.Client(timeout=10) as http,
    ):
        first = open_session(http, served.url, {"X-Forwarded-For": "192.0.2.1"})
        assert first.status_code == 200
        second = open_session(http, served.url, {"X-Forwarded-For": "192.0.2.2"})
        assert second.status_code == 429
        assert refusal(second) == "Too many open sessions for this client"
        close_session(http, served.url, first.headers[SESSION])


@pytest.mark.anyio
async def test_the_variable_names_the_proxies_too() -> None:
    with serve_http(PEER, {"MCP_ADAPTER_FORWARDED_ALLOW_IPS": "127.0.0.1"}) as served:
        seen = await _peer(served.url, "203.0.113.9")
    assert seen["host"] == "203.0.113.9"


@pytest.mark.parametrize("value", ["localhost", "10.0.0.1,not-an-ip", " , "])
def test_a_bad_proxy_list_is_a_one_line_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["serve", *PEER, "--http", "--forwarded-allow-ips", value])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --forwarded-allow-ips")
    assert "Traceback" not in err


def test_the_proxy_list_applies_to_http_only() -> None:
    done = run_cli(["serve", *PEER, "--forwarded-allow-ips", "10.0.0.1"])
    assert done.returncode == 2
    assert "--forwarded-allow-ips only applies to HTTP" in done.stderr
