"""What one built-in layer adds to a ``tools/call``: ``python -m benchmarks.layers_cost``.

The per-call workload (``add`` of ``benchmarks.mcp_call_suite``, a singleton and a scoped
service injected, structured output) served with ``Server.middleware`` empty, one
pass-through layer at each stage (and one injecting ``McpRequest``: the request snapshot
it makes the dispatcher build), ``Timing()``, ``AccessLog()`` at each stage (records
made and handed to a handler that drops them; no formatting, no I/O), ``AccessLog`` on a
logger not enabled for its level, ``RateLimit`` (a limit never reached) and
``ResponseLimit`` at each stage. The built-in layers stand in the request stage unless
said otherwise. Timed two ways: the ``tools/call`` handler awaited directly (the adapter's
own path) and one ``await client.call_tool`` through the SDK's ``mcp.Client``
(2026-07-28, in process). Medians of interleaved rounds, in microseconds per call.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import mcp
from mcp import types

from benchmarks.mcp_call_suite import AddTool
from benchmarks.mcp_workload import ARGUMENTS, TOOL, Clock, Ledger, handler_of, request_context
from container import Container
from mcp_adapter import McpRequest, Server, build_sdk_server, compile_server, request_stage
from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.layers import AccessLog, RateLimit, ResponseLimit, Timing


async def passing(call: Call, call_next: Next) -> Any:
    return await call_next(call)


async def passing_with_request(call: Call, call_next: Next, request: McpRequest) -> Any:
    return await call_next(call)


async def passing_request(call: Call, call_next: Next) -> Any:
    return await call_next(call)


async def passing_request_with_request(call: Call, call_next: Next, request: McpRequest) -> Any:
    return await call_next(call)


class Drop(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        del record


def variants() -> dict[str, tuple[Any, ...]]:
    dropped = logging.getLogger("bench.access")
    dropped.propagate = False
    dropped.setLevel(logging.INFO)
    dropped.addHandler(Drop())
    quiet = logging.getLogger("bench.quiet")
    quiet.propagate = False
    quiet.setLevel(logging.WARNING)
    return {
        "no middleware": (),
        "pass-through layer": (passing,),
        "pass-through + McpRequest": (passing_with_request,),
        "pass-through (request)": (request_stage(passing_request),),
        "+ McpRequest (request)": (request_stage(passing_request_with_request),),
        "Timing()": (Timing(lambda call, ms: None),),
        "AccessLog() (logging)": (AccessLog(dropped),),
        "AccessLog(stage=call)": (AccessLog(dropped, stage="call"),),
        "AccessLog() (logger off)": (AccessLog(quiet),),
        "RateLimit(10**9)": (RateLimit(10**9),),
        "ResponseLimit()": (ResponseLimit(10**6),),
        "ResponseLimit(stage=call)": (ResponseLimit(10**6, stage="call"),),
    }


def sdk_server(layers: tuple[Any, ...]) -> Any:
    class Adder(Server):
        name = "adder"
        tools = (AddTool,)
        middleware: ClassVar = layers

    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    return build_sdk_server(compile_server(Adder, container), container)


async def per_call(run: Callable[[], Awaitable[Any]], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await run()
    return (time.perf_counter() - started) / calls * 1e6


async def main(rounds: int, calls: int) -> None:
    cases = variants()
    handlers: dict[str, Callable[[], Awaitable[Any]]] = {}
    clients: dict[str, Callable[[], Awaitable[Any]]] = {}
    stack = []
    for label, layers in cases.items():
        handler = handler_of(sdk_server(layers))
        ctx = request_context()
        params = types.CallToolRequestParams(name=TOOL, arguments=dict(ARGUMENTS))
        handlers[label] = lambda h=handler, c=ctx, p=params: h(c, p)
        client = mcp.Client(sdk_server(layers), mode="2026-07-28")
        await client.__aenter__()
        stack.append(client)
        clients[label] = lambda c=client: c.call_tool(TOOL, dict(ARGUMENTS))
    try:
        for title, runs in (("handler", handlers), ("mcp.Client", clients)):
            times: dict[str, list[float]] = {label: [] for label in runs}
            for run in runs.values():
                await per_call(run, calls // 10)  # warm up
            for _ in range(rounds):
                for label, run in runs.items():
                    times[label].append(await per_call(run, calls))
            base = statistics.median(times["no middleware"])
            print(f"\n{title}: median us/call over {rounds} rounds of {calls}")
            for label, measured in times.items():
                median = statistics.median(measured)
                print(f"  {label:26} {median:8.1f}  (+{median - base:6.1f})")
    finally:
        for client in reversed(stack):
            await client.__aexit__(None, None, None)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.calls))
