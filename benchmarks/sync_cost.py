"""What a sync tool costs on each of its paths: ``python -m benchmarks.sync_cost``.

The per-call workload (``add`` of ``benchmarks.mcp_call_suite``: a singleton and a scoped
service injected, structured output), its ``tools/call`` handler awaited directly (the
adapter's own path, no client), on each path a call can take:

- ``async``: an ``async def handle`` (on the loop; the reference);
- ``sync``: a sync ``handle`` with sync services, thread-bound: one thread hop per call;
- ``sync + AccessLog``: the same under ``AccessLog`` (a logger not enabled for its level),
  which borrows a worker thread for the call and hands it each sync part;
- ``sync + timeout``: the same with ``timeout = 30`` (never reached), which borrows too;
- ``async + AccessLog``: the reference under the same layer.

Medians of interleaved rounds, in microseconds per call (wall time: the thread hops are
part of the cost). ``--only LABEL --calls N`` runs one path N times and prints nothing,
for an instruction count: ``valgrind --tool=cachegrind python -m benchmarks.sync_cost
--only sync --calls 2000`` (subtract a run with a smaller N to leave start-up out).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from mcp import types

from benchmarks.mcp_call_suite import AddHandleTool, AddSyncTool
from benchmarks.mcp_workload import ARGUMENTS, TOOL, Clock, Ledger, handler_of, request_context
from container import Container
from mcp_adapter import Server, build_sdk_server, compile_server
from mcp_adapter.layers import AccessLog


class AddSyncTimedTool(AddSyncTool):
    """``AddSyncTool`` with a timeout it never reaches."""

    name = "add"
    timeout = 30


def variants() -> dict[str, tuple[type, tuple[Any, ...]]]:
    quiet = logging.getLogger("bench.quiet")
    quiet.propagate = False
    quiet.setLevel(logging.WARNING)
    return {
        "async": (AddHandleTool, ()),
        "sync": (AddSyncTool, ()),
        "sync + AccessLog": (AddSyncTool, (AccessLog(quiet),)),
        "sync + timeout": (AddSyncTimedTool, ()),
        "async + AccessLog": (AddHandleTool, (AccessLog(quiet),)),
    }


def call_of(tool: type, layers: tuple[Any, ...]) -> Callable[[], Awaitable[Any]]:
    class Adder(Server):
        name = "adder"
        tools = (tool,)
        middleware: ClassVar = layers

    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    handler = handler_of(build_sdk_server(compile_server(Adder, container), container))
    ctx = request_context()
    params = types.CallToolRequestParams(name=TOOL, arguments=dict(ARGUMENTS))

    async def call() -> Any:
        result = await handler(ctx, params)
        assert not result.is_error, result
        return result

    return call


async def per_call(run: Callable[[], Awaitable[Any]], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await run()
    return (time.perf_counter() - started) / calls * 1e6


async def main(rounds: int, calls: int, only: str | None) -> None:
    cases = {label: call_of(*case) for label, case in variants().items()}
    if only is not None:
        run = cases[only]
        for _ in range(calls):
            await run()
        return
    times: dict[str, list[float]] = {label: [] for label in cases}
    for run in cases.values():
        await per_call(run, calls // 10)  # warm up
    for _ in range(rounds):
        for label, run in cases.items():
            times[label].append(await per_call(run, calls))
    base = statistics.median(times["async"])
    print(f"handler awaited directly: median us/call over {rounds} rounds of {calls}")
    for label, measured in times.items():
        median = statistics.median(measured)
        spread = statistics.quantiles(measured, n=4) if len(measured) > 1 else [median] * 3
        print(
            f"  {label:20} {median:8.1f}  (+{median - base:6.1f} over async; "
            f"IQR {spread[2] - spread[0]:.1f})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--only", choices=sorted(variants()), default=None)
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.calls, options.only))
