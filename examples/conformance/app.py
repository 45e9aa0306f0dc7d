"""The conformance server as an HTTP app: stateful (the 2025-11-25 suite uses sessions,
server-to-client requests and SSE resumption)."""

from __future__ import annotations

from examples.conformance.server import ConformanceServer
from starlette.applications import Starlette

from container import Container
from mcp_adapter import http_app
from mcp_adapter.serving import InMemoryEventStore, Resumability


def create_app(host: str = "127.0.0.1") -> Starlette:
    return http_app(
        ConformanceServer,
        Container(),
        stateless=False,
        resumability=Resumability(InMemoryEventStore(), retry_interval=500),
        host=host,
    )
