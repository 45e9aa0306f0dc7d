"""The per-call MCP workload, shared by this environment and the contenders' own venvs.

It imports only the standard library, ``pydantic``, ``mcp`` and the harness (never
this project's packages), so the field suite (:mod:`benchmarks.suites.field`) can
import it inside another virtual environment.

The workload: a tool ``add(a: int, b: int)`` returning ``{"sum": a + b}`` as
structured content (and its JSON text), with two services injected into the
handler: ``Clock``, one per process (singleton), and ``Ledger(clock)``, one per
call (scoped). Every contender is driven by the SDK's own ``mcp.Client`` in
process, in either protocol era, with the same arguments.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

import mcp
from mcp import MCPError, types
from mcp.server import Server as SdkServer
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from benchmarks.harness.timing import held

MODERN = "2026-07-28"
LEGACY = "legacy"
"""``mcp.Client`` modes: direct dispatch at 2026-07-28, and JSON-RPC over memory
streams with the 2025-11-25 initialize handshake."""
MODES = (MODERN, LEGACY)

TOOL = "add"
ARGUMENTS: dict[str, Any] = {"a": 1, "b": 2}


class Clock:
    """The singleton service: one per process (or per container)."""

    created = 0

    def __init__(self) -> None:
        Clock.created += 1
        self.offset = 0


class Ledger:
    """The scoped service: one per call; depends on the singleton."""

    created = 0

    def __init__(self, clock: Clock) -> None:
        Ledger.created += 1
        self.clock = clock

    def add(self, a: int, b: int) -> int:
        return a + b + self.clock.offset


class AddArguments(BaseModel):
    """The floor's input model (what the adapter's ``Schema`` is: extra fields forbidden)."""

    model_config = ConfigDict(extra="forbid")
    a: int
    b: int


class AddResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sum: int


CLOCK = Clock()
"""The floor's (and the resolver-based contenders') singleton, built once."""


# -- the floor: a hand-written handler on the SDK's low-level Server -----------------

_ARGUMENTS = TypeAdapter(AddArguments)
_RESULT = TypeAdapter(AddResult)


def floor_server() -> SdkServer[Any]:
    """The least a correct server does for this tool on the low-level ``Server``.

    It lists the tool with the same input and output schemas as the others
    (``mcp.Client`` validates ``structuredContent`` against the listed output
    schema, and lists the tools itself when it has not seen the tool), validates
    the arguments with a prebuilt ``TypeAdapter``, builds the two services by
    hand and returns ``structuredContent`` plus its JSON text.
    """
    listing = types.ListToolsResult(
        tools=[
            types.Tool(
                name=TOOL,
                input_schema=AddArguments.model_json_schema(),
                output_schema=AddResult.model_json_schema(),
            )
        ]
    )

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        try:
            payload = _ARGUMENTS.validate_python(params.arguments or {})
        except ValidationError:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="Invalid tool arguments")],
                is_error=True,
            )
        ledger = Ledger(CLOCK)
        value = _RESULT.dump_python(
            AddResult(sum=ledger.add(payload.a, payload.b) + CLOCK.offset), mode="json"
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))],
            structured_content=value,
        )

    return SdkServer("floor", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


# -- the SDK's MCPServer with its Resolve injection ----------------------------------


# Module level: the annotations (strings here) are evaluated in this module's globals.


async def get_clock() -> Clock:
    """The singleton: the prebuilt ``CLOCK``."""
    return CLOCK


async def get_ledger(clock: Annotated[Clock, Resolve(get_clock)]) -> Ledger:
    """The scoped service: a new ``Ledger`` per call (resolvers are memoized per call)."""
    return Ledger(clock)


def mcpserver_resolve() -> MCPServer:
    """``MCPServer`` with async ``Resolve`` resolvers (mcp/server/mcpserver/resolve.py)."""
    app = MCPServer("mcpserver-resolve")

    @app.tool(name=TOOL)
    async def add(
        a: int,
        b: int,
        ledger: Annotated[Ledger, Resolve(get_ledger)],
        clock: Annotated[Clock, Resolve(get_clock)],
    ) -> AddResult:
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return app


# -- driving a server through mcp.Client ---------------------------------------------


async def connect(server: Any, mode: str, **options: Any) -> Mapping[str, Any]:
    """Harness setup: an open client (tools already listed) as ``client``, plus ``args``;
    ``options`` go to ``mcp.Client`` (an ``elicitation_callback``, ...)."""
    client, close = await held(mcp.Client(server, mode=mode, **options))
    await client.list_tools()
    return {"client": client, "args": ARGUMENTS, "_close": close}


def connected(
    make_server: Callable[[], Any], mode: str, **options: Any
) -> Callable[[], Awaitable[Mapping[str, Any]]]:
    """A harness ``setup``: build a fresh server and connect a client to it."""
    return lambda: connect(make_server(), mode, **options)


# -- one question per call: the cost of one elicitation round ------------------------


class Approval(BaseModel):
    ok: bool


async def approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The client's side of the elicitation rows: every question is approved at once."""
    return types.ElicitResult(action="accept", content={"ok": True})


async def ask_approval() -> Elicit[Approval]:
    return Elicit("Add these two numbers?", Approval)


def mcpserver_resolve_elicit() -> MCPServer:
    """``MCPServer`` whose ``add`` first asks one question through a ``Resolve`` resolver."""
    app = MCPServer("mcpserver-resolve-elicit")

    @app.tool(name=TOOL)
    async def add(
        a: int,
        b: int,
        ledger: Annotated[Ledger, Resolve(get_ledger)],
        clock: Annotated[Clock, Resolve(get_clock)],
        approval: Annotated[Approval, Resolve(ask_approval)],
    ) -> AddResult:
        assert approval.ok
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return app


async def check_elicit(server: Any, who: str) -> None:
    """Both eras: the question is asked, the answer reaches the handler, the result is right."""
    for mode in MODES:
        async with mcp.Client(server, mode=mode, elicitation_callback=approve) as client:
            await client.list_tools()
            for _ in range(2):
                check_result(await client.call_tool(TOOL, ARGUMENTS), f"{who} ({mode})")


async def disconnect(names: Mapping[str, Any]) -> None:
    """Harness teardown for :func:`connect`."""
    await names["_close"]()


CALL = 'await client.call_tool("add", args)'
"""The statement every per-call case times."""

HANDLE = "await handler(ctx, params)"
"""The statement of the handler-only cases: the ``tools/call`` handler, awaited directly."""


def handler_of(server: Any) -> Callable[..., Awaitable[Any]]:
    """The ``tools/call`` handler a low-level ``Server`` registered."""
    entry = server.get_request_handler("tools/call")
    if entry is None:
        raise LookupError("the server has no tools/call handler")
    handler: Callable[..., Awaitable[Any]] = entry.handler
    return handler


def request_context(protocol_version: str = MODERN) -> ServerRequestContext[Any, Any]:
    """A ``ServerRequestContext`` as the SDK's runner builds one, without a session."""
    return ServerRequestContext(
        session=None,  # type: ignore[arg-type]  # nothing on this path sends to the client
        lifespan_context={},
        protocol_version=protocol_version,
        method="tools/call",
        params={"name": TOOL, "arguments": ARGUMENTS},
        request_id=1,
    )


def handler_names(make_server: Callable[[], Any]) -> Callable[[], Mapping[str, Any]]:
    """A harness ``setup`` for :data:`HANDLE`: the handler, a context and the params."""

    def setup() -> Mapping[str, Any]:
        return {
            "handler": handler_of(make_server()),
            "ctx": request_context(),
            "params": types.CallToolRequestParams(name=TOOL, arguments=dict(ARGUMENTS)),
        }

    return setup


async def check_handler(server: Any, who: str) -> None:
    """The handler alone gives the same answer as through the client."""
    names = handler_names(lambda: server)()
    check_result(await names["handler"](names["ctx"], names["params"]), f"{who} (handler)")


# -- checking that a contender does the work ----------------------------------------


def check_result(result: Any, who: str, total: int = 3) -> None:
    """The same answer from everyone: structured ``{"sum": total}`` and its JSON text, in a
    ``CallToolResult`` or as it is on the wire."""
    if isinstance(result, types.CallToolResult):
        result = result.model_dump(mode="json", by_alias=True)
    problems = []
    if result.get("isError"):
        problems.append(f"isError: {result.get('content')}")
    if result.get("structuredContent") != {"sum": total}:
        problems.append(f"structuredContent {result.get('structuredContent')!r}")
    texts = [b.get("text") for b in result.get("content", ()) if b.get("type") == "text"]
    if len(texts) != 1 or json.loads(texts[0]) != {"sum": total}:
        problems.append(f"text content {texts!r}")
    if problems:
        raise AssertionError(f"{who}: {'; '.join(problems)}")


async def check_calls(call: Callable[[], Awaitable[Any]], who: str, calls: int = 3) -> None:
    """``call()`` answers right every time, with one new ``Ledger`` per call and the
    singleton ``Clock`` never built again."""
    check_result(await call(), who)
    ledgers, clocks = Ledger.created, Clock.created
    for _ in range(calls):
        check_result(await call(), who)
    if Ledger.created - ledgers != calls:
        raise AssertionError(f"{who}: {Ledger.created - ledgers} Ledgers for {calls} calls")
    if Clock.created != clocks:
        raise AssertionError(f"{who}: the singleton Clock was built again")


async def check_server(server: Any, who: str) -> None:
    """:func:`check_calls` through a client in both eras, and an argument outside the schema
    refused, so no contender skips validation."""
    for mode in MODES:
        async with mcp.Client(server, mode=mode) as client:
            await client.list_tools()
            await check_calls(lambda: client.call_tool(TOOL, ARGUMENTS), f"{who} ({mode})")
            logging.disable(logging.WARNING)  # contenders may log the refusal
            try:
                refused = await client.call_tool(TOOL, {"a": "one", "b": 2})
            finally:
                logging.disable(logging.NOTSET)
            if not refused.is_error:
                raise AssertionError(f"{who} ({mode}): invalid arguments were accepted")
