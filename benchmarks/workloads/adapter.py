"""This adapter's side of the per-call workload: the ``add`` tool, written each way a user can.

The tool of :mod:`benchmarks.workloads.mcp`: ``add(a, b)`` with the singleton
``Clock`` and a per-call ``Ledger(clock)`` injected, structured output
``{"sum": a + b}``; as a class tool with the singleton by constructor
(:class:`AddTool`) or both services by ``handle()`` parameter, with a sync
``handle()``, as a ``@tool`` function, behind one pass-through middleware layer,
and asking the client one question first. :data:`SERVERS` makes each, by the tag
of its rows, as the SDK's low-level ``Server`` that serves it.

Over HTTP, ``mcp-adapter serve benchmarks.workloads.adapter:AddServer --container
benchmarks.workloads.adapter:services --http --json-response`` serves
:class:`AddServer`; each worker process imports this module and builds its own
container.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import Server as SdkServer
from mcp.server.mcpserver.resolve import Elicit, Resolve  # the same as mcp_adapter's

from benchmarks.workloads.mcp import TOOL, Approval, Clock, Ledger
from container import Container
from mcp_adapter import (
    Call,
    McpExtension,
    McpResponse,
    Next,
    Platform,
    Server,
    Tool,
    build_sdk_server,
    compile_server,
    request_stage,
    tool,
)
from mcp_adapter.layers import AccessLog, RateLimit, ResponseLimit, Timing
from schemas import Schema


class AddInput(Schema):
    a: int
    b: int


class AddOutput(Schema):
    sum: int


class AddTool(Tool[AddInput, AddOutput]):
    """Adds two integers (singleton by constructor, scoped by handle parameter)."""

    name = TOOL

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def handle(self, payload: AddInput, ledger: Ledger) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + self.clock.offset)
        )


class AddHandleTool(Tool[AddInput, AddOutput]):
    """Adds two integers (both services as handle parameters)."""

    name = TOOL

    async def handle(self, payload: AddInput, ledger: Ledger, clock: Clock) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + clock.offset)
        )


class AddSyncTool(Tool[AddInput, AddOutput]):
    """A sync handle(): thread-bound, so its whole call runs on one worker thread."""

    name = TOOL

    def handle(self, payload: AddInput, ledger: Ledger, clock: Clock) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + clock.offset)
        )


class AddSyncTimedTool(AddSyncTool):
    """``AddSyncTool`` with a timeout it never reaches."""

    name = TOOL
    timeout = 30


async def passthrough(call: Call, call_next: Next) -> Any:
    """One middleware layer that only passes the call on."""
    return await call_next(call)


@request_stage
async def request_passthrough(call: Call, call_next: Next) -> Any:
    """One request-stage layer that only passes the request on."""
    return await call_next(call)


class AddLayeredTool(AddHandleTool):
    """``AddHandleTool`` with one middleware layer of its own."""

    name = TOOL
    middleware = (passthrough,)


class Adder(McpExtension):
    @tool
    async def add(self, a: int, b: int, ledger: Ledger, clock: Clock) -> AddOutput:
        """Adds two integers (both services as parameters)."""
        return AddOutput(sum=ledger.add(a, b) + clock.offset)


class LayeredAdder(McpExtension):
    @tool(middleware=[passthrough])
    async def add(self, a: int, b: int, ledger: Ledger, clock: Clock) -> AddOutput:
        """Adds two integers, through one middleware layer."""
        return AddOutput(sum=ledger.add(a, b) + clock.offset)


async def approval_of(payload: AddInput) -> Elicit[Approval]:
    return Elicit(f"Add {payload.a} and {payload.b}?", Approval)


class AddElicitTool(Tool[AddInput, AddOutput]):
    """``AddHandleTool`` that first asks the client one question (a resolved parameter)."""

    name = TOOL

    async def handle(
        self,
        payload: AddInput,
        ledger: Ledger,
        clock: Clock,
        approval: Annotated[Approval, Resolve(approval_of)],
    ) -> McpResponse:
        assert approval.ok
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + clock.offset)
        )


class AddServer(Server):
    """What ``mcp-adapter serve`` serves over HTTP."""

    name = "adapter-http-bench"
    tools = (AddTool,)


def services() -> Container:
    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    return container


def sdk_server(add: type[Tool[Any, Any]], *layers: Any) -> SdkServer[Any]:
    """``add`` alone, behind ``layers`` (the server's middleware), on the low-level Server."""
    declared = type(
        f"{add.__name__}Server",
        (Server,),
        {"__module__": __name__, "name": "adapter-bench", "tools": (add,), "middleware": layers},
    )
    container = services()
    return build_sdk_server(compile_server(declared, container), container)


def function_server(extension: McpExtension) -> SdkServer[Any]:
    container = services()
    return build_sdk_server(Platform([extension]).compile(container), container)


class _Dropped(logging.Handler):
    """Takes a logger's records and drops them: the layer's work, no I/O."""

    def emit(self, record: logging.LogRecord) -> None:
        del record


def logger(name: str, *, enabled: bool = True) -> logging.Logger:
    """A logger whose INFO records are made and dropped, or (not ``enabled``) never made."""
    found = logging.getLogger(name)
    found.propagate = False
    found.setLevel(logging.INFO if enabled else logging.WARNING)
    if not found.handlers:
        found.addHandler(_Dropped())
    return found


def builtin_layers() -> tuple[Any, ...]:
    """The four built-in layers at their default (request) stage: ``AccessLog`` (records
    made and dropped), ``Timing``, ``RateLimit`` (a limit never reached), ``ResponseLimit``."""
    return (
        AccessLog(logger("benchmarks.access")),
        Timing(lambda call, ms: None),
        RateLimit(10**9),
        ResponseLimit(10**6),
    )


SERVERS: dict[str, Callable[[], SdkServer[Any]]] = {
    "ours-constructor": lambda: sdk_server(AddTool),
    "ours-handle": lambda: sdk_server(AddHandleTool),
    "ours-handle-layer": lambda: sdk_server(AddLayeredTool),
    "ours-function": lambda: function_server(Adder()),
    "ours-function-layer": lambda: function_server(LayeredAdder()),
    "ours-sync": lambda: sdk_server(AddSyncTool),
    "ours-elicit": lambda: sdk_server(AddElicitTool),
    "ours-handle-request-layer": lambda: sdk_server(AddHandleTool, request_passthrough),
    "ours-handle-builtin": lambda: sdk_server(AddHandleTool, *builtin_layers()),
}
"""Row tag -> the server of that row (the per-call suite's tags)."""
