"""The per-call benchmark: one ``tools/call`` through the SDK's ``mcp.Client``, in process.

The workload (see :mod:`benchmarks.mcp_workload`): ``add(a, b)`` with a
singleton ``Clock`` and a per-call ``Ledger(clock)`` injected, structured
output ``{"sum": a + b}``. Each contender is a fresh server with a client
connected to it once; the timed statement is one ``await client.call_tool(...)``.

In this process (this project's environment, ``mcp`` 2.3.0):

- the floor, a hand-written handler on the SDK's low-level ``Server``;
- this adapter, a class ``Tool[AddInput, AddOutput]``: singleton by constructor
  and scoped by ``handle()`` parameter, or both by ``handle()`` parameter; the
  same tool as a ``@tool`` function (both by parameter); each of the last two
  with one pass-through middleware layer;
- the SDK's ``MCPServer`` with async ``Resolve`` resolvers.

The ``tools/call`` handler alone (scenario ``handler``, awaited directly) is also
measured behind one call-stage layer, one request-stage layer and the four built-in
layers at their default stage: what each adds to the adapter's own path.

FastMCP with ``Depends`` and dishka-fastmcp run in their own virtual
environment (``benchmarks/field_venv.py``) with their own floor; those rows
come back as the ``field-*`` scenarios.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Annotated, Any

from mcp.server import Server as SdkServer
from mcp.server.mcpserver.resolve import Elicit, Resolve  # the same as mcp_adapter's

from benchmarks import field_venv
from benchmarks.harness import Case, Row, Settings, ratio
from benchmarks.mcp_workload import (
    CALL,
    HANDLE,
    LEGACY,
    MODERN,
    MODES,
    Approval,
    Clock,
    Ledger,
    approve,
    check_elicit,
    check_handler,
    check_server,
    connected,
    disconnect,
    floor_server,
    handler_names,
    mcpserver_resolve,
    mcpserver_resolve_elicit,
)
from benchmarks.suite import Column, Measured, RunOptions, Suite, Table, Target, find
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

ERA = {MODERN: "2026-07-28", LEGACY: "2025-11-25 (legacy)"}
ELICIT_NOTE = {
    MODERN: "two requests per call: input_required, then the retry with the answer",
    LEGACY: "one request per call, and the server's elicitation/create answered mid-call",
}
SCENARIO = {MODERN: "modern", LEGACY: "legacy"}
HANDLER = "handler"
FIELD = {MODERN: "field-modern", LEGACY: "field-legacy"}

TARGET_RATIO = 1.10
"""Issues 3 and 8: this adapter at most 1.10x the floor, in both eras."""
RESOLVE_SHARE = 0.7
"""Issue 8: at most 0.7x ``MCPServer`` + ``Resolve`` ..."""
DEPENDS_SHARE = 0.35
"""... and 0.35x FastMCP + ``Depends``, measured in the same run."""


# -- this adapter ---------------------------------------------------------------------


class AddInput(Schema):
    a: int
    b: int


class AddOutput(Schema):
    sum: int


class AddTool(Tool[AddInput, AddOutput]):
    """Adds two integers (singleton by constructor, scoped by handle parameter)."""

    name = "add"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def handle(self, payload: AddInput, ledger: Ledger) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + self.clock.offset)
        )


class AddHandleTool(Tool[AddInput, AddOutput]):
    """Adds two integers (both services as handle parameters)."""

    name = "add"

    async def handle(self, payload: AddInput, ledger: Ledger, clock: Clock) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + clock.offset)
        )


class AddSyncTool(Tool[AddInput, AddOutput]):
    """A sync handle(): thread-bound, so its whole call runs on one worker thread."""

    name = "add"

    def handle(self, payload: AddInput, ledger: Ledger, clock: Clock) -> McpResponse:
        return McpResponse.structured(
            AddOutput(sum=ledger.add(payload.a, payload.b) + clock.offset)
        )


async def passthrough(call: Call, call_next: Next) -> Any:
    """One middleware layer that only passes the call on."""
    return await call_next(call)


class AddLayeredTool(AddHandleTool):
    """``AddHandleTool`` with one middleware layer of its own."""

    name = "add"
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

    name = "add"

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


class ElicitServer(Server):
    name = "adapter-elicit"
    tools = (AddElicitTool,)


class ConstructorServer(Server):
    name = "adapter-constructor"
    tools = (AddTool,)


class HandleServer(Server):
    name = "adapter-handle"
    tools = (AddHandleTool,)


class SyncServer(Server):
    name = "adapter-sync"
    tools = (AddSyncTool,)


def services() -> Container:
    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    return container


def adapter(server: type[Server]) -> SdkServer[Any]:
    container = services()
    return build_sdk_server(compile_server(server, container), container)


def adapter_constructor() -> SdkServer[Any]:
    return adapter(ConstructorServer)


def adapter_handle() -> SdkServer[Any]:
    return adapter(HandleServer)


def adapter_sync() -> SdkServer[Any]:
    return adapter(SyncServer)


class LayeredServer(Server):
    name = "adapter-layered"
    tools = (AddLayeredTool,)


def adapter_elicit() -> SdkServer[Any]:
    return adapter(ElicitServer)


def adapter_layered() -> SdkServer[Any]:
    return adapter(LayeredServer)


@request_stage
async def request_passthrough(call: Call, call_next: Next) -> Any:
    """One request-stage layer that only passes the request on."""
    return await call_next(call)


class RequestLayeredServer(Server):
    """``AddHandleTool`` behind one pass-through request-stage layer (the server's)."""

    name = "adapter-request-layered"
    tools = (AddHandleTool,)
    middleware = (request_passthrough,)


def adapter_request_layered() -> SdkServer[Any]:
    return adapter(RequestLayeredServer)


class _Dropped(logging.Handler):
    """Takes the access log's records and drops them: the layer's work, no I/O."""

    def emit(self, record: logging.LogRecord) -> None:
        del record


def _access_logger() -> logging.Logger:
    logger = logging.getLogger("benchmarks.access")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    if not logger.handlers:
        logger.addHandler(_Dropped())
    return logger


def adapter_builtin_layers() -> SdkServer[Any]:
    """``AddHandleTool`` behind the four built-in layers at their default (request) stage:
    ``AccessLog`` (records made and dropped), ``Timing``, ``RateLimit`` (a limit never
    reached) and ``ResponseLimit``."""

    class BuiltinLayered(Server):
        name = "adapter-builtin-layers"
        tools = (AddHandleTool,)
        middleware = (
            AccessLog(_access_logger()),
            Timing(lambda call, ms: None),
            RateLimit(10**9),
            ResponseLimit(10**6),
        )

    return adapter(BuiltinLayered)


def _function(extension: McpExtension) -> SdkServer[Any]:
    container = services()
    return build_sdk_server(Platform([extension]).compile(container), container)


def adapter_function() -> SdkServer[Any]:
    return _function(Adder())


def adapter_function_layered() -> SdkServer[Any]:
    return _function(LayeredAdder())


# -- cases ----------------------------------------------------------------------------


def _case(mode: str, name: str, make: Any, tag: str, client: Any = None, **more: Any) -> Case:
    return Case(
        SCENARIO[mode],
        name,
        CALL,
        connected(make, mode, **(client or {})),
        is_async=True,
        tag=tag,
        teardown=disconnect,
        **more,
    )


def cases(options: RunOptions | None = None) -> list[Case]:
    found: list[Case] = []
    for mode in MODES:
        found += [
            _case(
                mode,
                "low-level Server, hand-written (floor)",
                floor_server,
                "floor",
                anchor=True,
                note="prebuilt TypeAdapter, services built by hand",
            ),
            _case(
                mode,
                "this adapter (singleton by constructor, scoped by handle())",
                adapter_constructor,
                "ours-constructor",
            ),
            _case(mode, "this adapter (both by handle())", adapter_handle, "ours-handle"),
            _case(
                mode,
                "this adapter, handle() + one middleware layer",
                adapter_layered,
                "ours-handle-layer",
            ),
            _case(
                mode,
                "this adapter, @tool function (both by parameter)",
                adapter_function,
                "ours-function",
            ),
            _case(
                mode,
                "this adapter, @tool function + one middleware layer",
                adapter_function_layered,
                "ours-function-layer",
            ),
            _case(
                mode,
                "this adapter, sync handle() (whole call on one worker thread)",
                adapter_sync,
                "ours-sync",
                note="thread-bound: services, handler and finalizers on the handler's thread",
            ),
            _case(
                mode,
                "MCPServer + Resolve",
                mcpserver_resolve,
                "resolve",
                note="async resolvers; the singleton resolver returns a prebuilt Clock",
            ),
            _case(
                mode,
                "this adapter, handle() asking one question (Resolve + Elicit)",
                adapter_elicit,
                "ours-elicit",
                client={"elicitation_callback": approve},
                note=ELICIT_NOTE[mode],
            ),
            _case(
                mode,
                "MCPServer + Resolve asking one question (Elicit)",
                mcpserver_resolve_elicit,
                "resolve-elicit",
                client={"elicitation_callback": approve},
                note=ELICIT_NOTE[mode],
            ),
        ]
    handler: list[tuple[str, Any, str, dict[str, Any]]] = [
        ("floor's handler", floor_server, "floor", {"anchor": True}),
        ("this adapter's handler (constructor)", adapter_constructor, "ours-constructor", {}),
        ("this adapter's handler (handle())", adapter_handle, "ours-handle", {}),
        (
            "this adapter's handler, handle() + one call-stage layer",
            adapter_layered,
            "ours-handle-layer",
            {},
        ),
        (
            "this adapter's handler, handle() + one request-stage layer",
            adapter_request_layered,
            "ours-handle-request-layer",
            {},
        ),
        (
            "this adapter's handler, handle() + the built-in layers",
            adapter_builtin_layers,
            "ours-handle-builtin",
            {"note": "AccessLog, Timing, RateLimit, ResponseLimit at their default stage"},
        ),
    ]
    found += [
        Case(HANDLER, name, HANDLE, handler_names(make), is_async=True, tag=tag, **more)
        for name, make, tag, more in handler
    ]
    return found


def verify(options: RunOptions | None = None) -> None:
    async def check() -> None:
        await check_server(floor_server(), "floor")
        await check_server(adapter_constructor(), "this adapter (constructor)")
        await check_server(adapter_handle(), "this adapter (handle)")
        await check_server(adapter_sync(), "this adapter (sync handle)")
        await check_server(adapter_layered(), "this adapter (handle + layer)")
        await check_server(adapter_function(), "this adapter (@tool)")
        await check_server(adapter_function_layered(), "this adapter (@tool + layer)")
        await check_server(mcpserver_resolve(), "MCPServer + Resolve")
        await check_elicit(adapter_elicit(), "this adapter (elicit)")
        await check_elicit(mcpserver_resolve_elicit(), "MCPServer + Resolve (elicit)")
        await check_handler(floor_server(), "floor")
        await check_handler(adapter_constructor(), "this adapter (constructor)")
        await check_handler(adapter_handle(), "this adapter (handle)")
        await check_handler(adapter_layered(), "this adapter (handle + call-stage layer)")
        await check_handler(adapter_request_layered(), "this adapter (handle + request layer)")
        await check_handler(adapter_builtin_layers(), "this adapter (handle + built-in layers)")

    asyncio.run(check())


def measure(options: RunOptions) -> Measured:
    """FastMCP and dishka-fastmcp rows, from their own virtual environment."""
    return field_venv.measure(options)


CALLS_PER_LOOP = 1000
ROUNDS = 11
"""Each figure: the median of 11 loops of 1,000 consecutive calls (11,000 timed calls)."""


def tune(settings: Settings, quick: bool) -> Settings:
    """Long loops (1,000 calls, a fraction of a second each) and fewer rounds."""
    if quick:
        return dataclasses.replace(settings, repeats=3, min_number=50)
    return dataclasses.replace(settings, repeats=ROUNDS, min_number=CALLS_PER_LOOP)


# -- targets --------------------------------------------------------------------------


def _floor_share(table: Table, scenario: str, rival: Row) -> str:
    """What the floor itself takes of ``rival``'s time: the best any server can do."""
    floor = find(table, scenario, "floor")
    if floor is None:
        return ""
    return f" (the floor itself: {ratio(floor.result, rival.result):.3f}x)"


OWN_SHARE = 0.10
"""DESIGN.md: the adapter's own cost per call is "a small fraction" of the SDK's dispatch."""


def _own_share(table: Table) -> list[Target]:
    """The adapter's own work per call (its handler minus the floor's) against a whole call.

    End to end, both sides run the same SDK code around the handler, so the
    handler-only difference is what the adapter adds to a call; it is measured
    far more precisely than the difference of two whole calls.
    """
    floor_handler = find(table, HANDLER, "floor")
    ours = find(table, HANDLER, "ours-constructor")
    if floor_handler is None or ours is None:
        return []
    extra_ns = ours.result.median_ns - floor_handler.result.median_ns
    shares = []
    for mode in MODES:
        floor_call = find(table, SCENARIO[mode], "floor")
        if floor_call is not None:
            shares.append((ERA[mode], extra_ns / floor_call.result.median_ns))
    if not shares:
        return []
    return [
        Target(
            "this adapter's own work per call (its handler minus the floor's) <= "
            f"{OWN_SHARE:.0%} of a floor call (DESIGN.md: a small fraction)",
            all(share <= OWN_SHARE for _, share in shares),
            f"+{extra_ns / 1000:.1f} µs = "
            + ", ".join(f"{share:.1%} of a {era} call" for era, share in shares),
        )
    ]


def targets(table: Table) -> list[Target]:
    found: list[Target] = []
    for mode in MODES:
        scenario, era = SCENARIO[mode], ERA[mode]
        resolve = find(table, scenario, "resolve")
        for tag, label in (
            ("ours-constructor", "constructor"),
            ("ours-handle", "handle()"),
            ("ours-handle-layer", "handle() + one layer"),
            ("ours-function", "@tool"),
            ("ours-function-layer", "@tool + one layer"),
        ):
            ours = find(table, scenario, tag)
            if ours is None:
                continue
            found.append(
                Target(
                    f"{era}: this adapter ({label}) <= {TARGET_RATIO:.2f}x the floor",
                    ours.ratio <= TARGET_RATIO,
                    f"{ours.ratio:.3f}x",
                )
            )
            if resolve is not None and tag in ("ours-constructor", "ours-handle"):
                share = ratio(ours.result, resolve.result)
                found.append(
                    Target(
                        f"{era}: this adapter ({label}) faster than MCPServer + Resolve",
                        share < 1.0,
                        f"{share:.3f}x of its time",
                    )
                )
                found.append(
                    Target(
                        f"{era}: this adapter ({label}) <= {RESOLVE_SHARE}x MCPServer + Resolve",
                        share <= RESOLVE_SHARE,
                        f"{share:.3f}x{_floor_share(table, scenario, resolve)}",
                    )
                )
    found += _own_share(table)
    for mode in MODES:
        scenario, era = FIELD[mode], ERA[mode]
        ours = find(table, scenario, "ours-constructor")
        depends = find(table, scenario, "fastmcp-depends")
        if ours is None or depends is None:
            continue
        share = ratio(ours.result, depends.result)
        found.append(
            Target(
                f"{era}, field venv: this adapter <= {DEPENDS_SHARE}x FastMCP + Depends",
                share <= DEPENDS_SHARE,
                f"{share:.3f}x of FastMCP + Depends{_floor_share(table, scenario, depends)}",
            )
        )
    return found


def _calls(row: Any) -> str:
    return f"{row.result.number * len(row.result.samples_ns):,}"


_COLUMNS = (Column("calls timed", _calls),)

SUITE = Suite(
    name="mcp_call",
    title="Per call: tools/call through mcp.Client, in process",
    scenarios={
        SCENARIO[MODERN]: "2026-07-28, direct dispatch (this environment)",
        SCENARIO[LEGACY]: "2025-11-25, JSON-RPC over memory streams (this environment)",
        FIELD[MODERN]: f"2026-07-28, field venv ({field_venv.VENV_LABEL}, its own floor)",
        FIELD[LEGACY]: f"2025-11-25, field venv ({field_venv.VENV_LABEL}, its own floor)",
        HANDLER: "The tools/call handler alone, awaited directly (no client, no SDK dispatch)",
    },
    cases=cases,
    verify=verify,
    targets=targets,
    packages=("mcp-adapter", "mcp", "pydantic"),
    limits=dict.fromkeys((*SCENARIO.values(), *FIELD.values()), TARGET_RATIO),
    tune=tune,
    measure=measure,
    units=dict.fromkeys((*SCENARIO.values(), *FIELD.values(), HANDLER), "us"),
    columns=dict.fromkeys((*SCENARIO.values(), *FIELD.values(), HANDLER), _COLUMNS),
    notes=(
        "Workload: `add(a: int, b: int)` returning structured `{sum}` and its JSON text, with "
        "a singleton `Clock` and a per-call `Ledger(clock)` injected. Every contender is "
        "checked first in both eras: same answer, one new Ledger per call, the Clock never "
        "rebuilt, and a string for `a` refused.",
        "Each contender gets its own server and one `mcp.Client(server, mode=...)` entered "
        "once; the timed statement is `await client.call_tool('add', {'a': 1, 'b': 2})`. "
        "The client also validates `structuredContent` against the listed output schema, "
        "for every contender alike.",
        "The floor lists the same tool and schemas, validates with a prebuilt pydantic "
        "`TypeAdapter`, builds `Ledger(CLOCK)` by hand and returns a `CallToolResult`.",
        "The handler table awaits each server's registered `tools/call` handler directly "
        "with a `ServerRequestContext` (2026-07-28, no session) and the same params: the "
        "server's own work, without the client, the SDK's dispatch and serialization. "
        "MCPServer's handler needs a live session, so it is not in that table.",
        "Field rows (`field-*`) run in another process, in the virtual environment "
        f"`{field_venv.VENV_DIR}` that the runner makes with `uv`; their ratios are to the "
        "floor measured in that process, and only ratios within one table compare. "
        "Absolute microseconds across tables are from different processes and moments.",
    ),
)
