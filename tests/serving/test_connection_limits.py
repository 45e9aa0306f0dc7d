"""Connection limits of ``mcp-adapter serve --http``: slow clients are cut off, others served.

A real subprocess on 127.0.0.1 with the header timeout lowered to keep the
test short; the default (10 s) is checked on the uvicorn config itself.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator

import httpx2
import pytest

from container import Container
from mcp_adapter.serving import http_app
from mcp_adapter.serving.internals import LimitedH11Protocol
from mcp_adapter.serving.limits import DEFAULT_HEADER_TIMEOUT, HttpLimits
from mcp_adapter.serving.uvicorn_config import uvicorn_config
from tests.serving.apps import AuditServer, build_container
from tests.serving.clients import connect, tool_names
from tests.serving.harness import Served, serve_http
from tests.serving.rawhttp import (
    address,
    open_slow_sockets,
    read_until_closed,
    wait_all_closed,
)

AUDIT = ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"]
HEADER_TIMEOUT = 2.0
BODY_TIMEOUT = 1.0
SLOW_CLIENTS = 1000


@pytest.fixture(scope="module")
def guarded() -> Iterator[Served]:
    args = [*AUDIT, "--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT)]
    with serve_http(args) as served:
        yield served


def test_the_default_config_carries_the_limits() -> None:
    app = http_app(AuditServer, build_container())
    config = uvicorn_config(app)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)  # raised to the hard limit by now
    assert app.state.mcp_http_limits == HttpLimits()
    assert config.mcp_header_timeout == DEFAULT_HEADER_TIMEOUT == 10.0
    assert config.http is LimitedH11Protocol
    assert config.limit_concurrency == config.mcp_max_connections
    assert SLOW_CLIENTS < config.mcp_max_connections < soft
    assert config.timeout_keep_alive == 5
    assert config.timeout_graceful_shutdown == 30.0


def test_explicit_limits_reach_the_config() -> None:
    limits = HttpLimits(header_timeout=3, max_connections=50, keep_alive_timeout=2)
    app = http_app(AuditServer, Container(), limits=limits)
    assert app.state.mcp_http_limits is limits
    config = uvicorn_config(app, log_level="warning")
    assert (config.mcp_header_timeout, config.mcp_max_connections) == (3, 50)
    assert (config.limit_concurrency, config.timeout_keep_alive) == (50, 2)


@pytest.mark.anyio
async def test_slow_clients_are_cut_off_while_a_client_is_served(guarded: Served) -> None:
    host, port = address(guarded.url)
    partial = f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: app".encode()
    slow = open_slow_sockets(host, port, SLOW_CLIENTS, partial)
    try:
        async with connect(guarded.url) as client:
            assert "record" in await tool_names(client)
        closed = wait_all_closed(slow, timeout=HEADER_TIMEOUT + 15)
        assert closed == SLOW_CLIENTS
    finally:
        for sock in slow:
            sock.close()


def test_a_trickled_body_is_cut_off(guarded: Served) -> None:
    host, port = address(guarded.url)
    slow = open_slow_sockets(host, port, 1, b"")[0]
    try:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
        )
        slow.sendall(head.encode() + b'{"jsonrpc": ')
        started = time.monotonic()
        answer = read_until_closed(slow, timeout=BODY_TIMEOUT + 10)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert time.monotonic() - started < BODY_TIMEOUT + 10  # closed, not left to time out
    finally:
        slow.close()


def test_a_stateless_get_is_405(guarded: Served) -> None:
    with httpx2.Client(timeout=10) as http:
        response = http.get(guarded.url, headers={"Accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
