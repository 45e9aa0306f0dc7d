"""This adapter's side of the HTTP benchmark: the ``add`` tool, served by ``mcp-adapter serve``.

``mcp-adapter serve benchmarks.http_adapter:AddServer --container
benchmarks.http_adapter:build_container --http --json-response --workers N``
serves it (each worker imports this module and builds its own container). The
tool is the per-call workload of :mod:`benchmarks.mcp_workload`: ``add(a, b)``
with the singleton ``Clock`` injected into the constructor and a per-request
``Ledger(clock)`` injected into ``handle()``.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from benchmarks.mcp_workload import TOOL, Clock, Ledger
from container import Container
from mcp_adapter import McpResponse, Server, Tool, http_app
from schemas import Schema


class AddInput(Schema):
    a: int
    b: int


class AddOutput(Schema):
    sum: int


class AddTool(Tool[AddInput, AddOutput]):
    """Adds two integers."""

    name = TOOL

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def handle(self, payload: AddInput, ledger: Ledger) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + self.clock.offset)
        )


class AddServer(Server):
    name = "adapter-http-bench"
    tools = (AddTool,)


def build_container() -> Container:
    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    return container


def app() -> Starlette:
    """What ``mcp-adapter serve ... --http --json-response`` builds, for in-process checks."""
    return http_app(AddServer, build_container(), json_response=True)


def without_layer(served: Starlette, layer: str) -> bool:
    """Unlink the ASGI wrapper of type ``layer`` from the MCP route's chain; False if absent."""
    for route in served.routes:
        outer: Any = route
        inner: Any = getattr(route, "app", None)
        while inner is not None and hasattr(inner, "app"):
            if type(inner).__name__ == layer:
                outer.app = inner.app
                return True
            outer, inner = inner, inner.app
    return False


def app_lean() -> Starlette:
    """:func:`app` without the ``CancelOnDisconnect`` wrapper.

    A diagnostic of what that wrapper costs (see docs/performance-http.md): a
    client that disconnects mid-call is then no longer cancelled in
    JSON-response mode, so this is not a configuration to serve.
    """
    served = app()
    without_layer(served, "CancelOnDisconnect")
    return served
