"""What a built-in layer, or a sync tool, adds to a call: ``python -m benchmarks.layers_cost``.

The per-call workload (``add`` of :mod:`benchmarks.workloads.adapter`: a singleton
and a scoped service injected, structured output) served with ``Server.middleware``
empty, one pass-through layer at each stage (and one injecting ``McpRequest``: the
request snapshot it makes the dispatcher build), ``Timing()``, ``AccessLog()`` at
each stage (records made and handed to a handler that drops them; no formatting, no
I/O), ``AccessLog`` on a logger not enabled for its level, ``RateLimit`` (a limit
never reached) and ``ResponseLimit`` at each stage. The built-in layers stand in
the request stage unless said otherwise.

``--sync`` times the paths a sync tool's call can take instead: an ``async def
handle`` (the reference); a sync ``handle`` with sync services, thread-bound (one
thread hop per call); the same under ``AccessLog`` (a logger not enabled for its
level), which borrows a worker thread for the call and hands it each sync part;
the same with ``timeout = 30`` (never reached), which borrows too; and the
reference under the same layer.

Timed two ways with the harness (wall clock, so thread hops count; interleaved
rounds; medians, in microseconds per call): the ``tools/call`` handler awaited
directly (the adapter's own path) and one ``await client.call_tool`` through the
SDK's ``mcp.Client`` (2026-07-28, in process).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from typing import Any

from benchmarks.harness.timing import Case, Settings, run
from benchmarks.workloads.adapter import (
    AddHandleTool,
    AddSyncTimedTool,
    AddSyncTool,
    AddTool,
    logger,
    sdk_server,
)
from benchmarks.workloads.mcp import (
    CALL,
    HANDLE,
    MODERN,
    check_handler,
    connected,
    disconnect,
    handler_names,
)
from mcp_adapter import Call, McpRequest, Next, Tool, request_stage
from mcp_adapter.layers import AccessLog, RateLimit, ResponseLimit, Timing


async def passing(call: Call, call_next: Next) -> Any:
    return await call_next(call)


async def passing_with_request(call: Call, call_next: Next, request: McpRequest) -> Any:
    return await call_next(call)


async def passing_request(call: Call, call_next: Next) -> Any:
    return await call_next(call)


async def passing_request_with_request(call: Call, call_next: Next, request: McpRequest) -> Any:
    return await call_next(call)


def variants(sync: bool) -> dict[str, tuple[type[Tool[Any, Any]], tuple[Any, ...]]]:
    """Label -> the tool and the server's middleware; the first is the reference."""
    dropped, quiet = logger("bench.access"), logger("bench.quiet", enabled=False)
    if sync:
        return {
            "async": (AddHandleTool, ()),
            "sync": (AddSyncTool, ()),
            "sync + AccessLog": (AddSyncTool, (AccessLog(quiet),)),
            "sync + timeout": (AddSyncTimedTool, ()),
            "async + AccessLog": (AddHandleTool, (AccessLog(quiet),)),
        }
    layers: dict[str, tuple[Any, ...]] = {
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
    return {label: (AddTool, stack) for label, stack in layers.items()}


def cases(sync: bool) -> list[Case]:
    found = []
    for index, (label, (tool, layers)) in enumerate(variants(sync).items()):

        def make(tool: Any = tool, layers: tuple[Any, ...] = layers) -> Any:
            return sdk_server(tool, *layers)

        found += [
            Case("handler", label, HANDLE, handler_names(make), is_async=True, anchor=index == 0),
            Case(
                "mcp.Client",
                label,
                CALL,
                connected(make, MODERN),
                is_async=True,
                anchor=index == 0,
                teardown=disconnect,
            ),
        ]
    return found


async def verify(sync: bool) -> None:
    """Every variant's handler gives the workload's answer."""
    for label, (tool, layers) in variants(sync).items():
        await check_handler(sdk_server(tool, *layers), label)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.layers_cost", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed loop")
    parser.add_argument("--sync", action="store_true", help="a sync tool's paths instead")
    args = parser.parse_args(argv)
    asyncio.run(verify(args.sync))
    settings = Settings(args.rounds, target_seconds=0, min_number=args.calls, clock="wall")
    results = run(cases(args.sync), settings)
    for scenario in ("handler", "mcp.Client"):
        rows = [r for r in results if r.case.scenario == scenario]
        base = rows[0].median_ns / 1000
        print(f"\n{scenario}: median µs/call over {args.rounds} rounds of {args.calls}")
        for row in rows:
            median = row.median_ns / 1000
            print(f"  {row.case.name:26} {median:8.1f}  (+{median - base:6.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
