"""``python -m benchmarks.profile``: where one ``tools/call`` spends its time.

Profiles the per-call workload of :mod:`benchmarks.suites.mcp_call` with
``cProfile`` (CPU time, so a busy machine skews it less than wall time) for
the floor and this adapter, and prints per call: own time grouped by package
(this adapter, the container, schemas, the SDK, pydantic, asyncio/anyio, the
rest), then the functions with the most own and cumulative time. Profiling
inflates Python-level calls, so compare groups and rows, not totals, with the
benchmark's figures.

    uv run --group bench python -m benchmarks.profile --mode legacy --calls 3000
    uv run --group bench python -m benchmarks.profile --mode handler --calls 20000
    uv run --group bench python -m benchmarks.profile --scale 1000 --hooks
    uv run --group bench python -m benchmarks.profile --compile 1000
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import mcp

from benchmarks.harness.profiling import profiled, report
from benchmarks.harness.timing import held
from benchmarks.suites.scale import compile_seconds, serve, server
from benchmarks.workloads.adapter import SERVERS
from benchmarks.workloads.mcp import (
    ARGUMENTS,
    LEGACY,
    MODERN,
    TOOL,
    floor_server,
    handler_names,
    mcpserver_resolve,
)

CONTENDERS: dict[str, Callable[[], Any]] = {
    "floor": floor_server,
    "adapter": SERVERS["ours-constructor"],
    "adapter-handle": SERVERS["ours-handle"],
    "mcpserver": mcpserver_resolve,
}


async def _through_client(
    server: Any, mode: str, operation: Callable[[mcp.Client], Awaitable[Any]], times: int, warm: int
) -> pstats.Stats:
    """``times`` runs of ``operation`` on a client of ``server``, after ``warm`` unprofiled."""
    client, close = await held(mcp.Client(server, mode=mode))
    try:
        await client.list_tools(cache_mode="bypass")
        for _ in range(warm):
            await operation(client)
        with profiled() as profiler:
            for _ in range(times):
                await operation(client)
    finally:
        await close()
    return pstats.Stats(profiler)


async def _profile_handler(server: Any, calls: int) -> pstats.Stats:
    names = handler_names(lambda: server)()
    handler, ctx, params = names["handler"], names["ctx"], names["params"]
    for _ in range(200):
        await handler(ctx, params)
    with profiled() as profiler:
        for _ in range(calls):
            await handler(ctx, params)
    return pstats.Stats(profiler)


def _call(client: mcp.Client) -> Awaitable[Any]:
    return client.call_tool(TOOL, ARGUMENTS)


def _list(client: mcp.Client) -> Awaitable[Any]:
    return client.list_tools(cache_mode="bypass")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    parser.add_argument(
        "--mode",
        choices=("modern", "legacy", "handler"),
        default="modern",
        help="through mcp.Client in either era, or the tools/call handler alone",
    )
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument(
        "--contenders", nargs="*", default=["floor", "adapter"], help=", ".join(CONTENDERS)
    )
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--scale", type=int, metavar="TOOLS", help="profile tools/list of a generated server"
    )
    parser.add_argument(
        "--compile", type=int, metavar="TOOLS", help="profile a cold compile_server of TOOLS tools"
    )
    parser.add_argument(
        "--hooks", action="store_true", help="with --scale/--compile: visibility hooks"
    )
    args = parser.parse_args(argv)
    if args.compile:
        declaration = server(args.compile, args.hooks)
        compile_seconds(server(2, args.hooks), collector=True)  # warm-up, as the suite does
        with profiled() as profiler:
            compile_seconds(declaration, collector=True)
        hooks = ", visibility hook" if args.hooks else ""
        title = f"cold compile_server, {args.compile:,} tools{hooks}, per tool"
        report(title, pstats.Stats(profiler), args.compile, args.top)
        return 0
    if args.scale:
        pages = 50
        listing = asyncio.run(
            _through_client(serve(args.scale, args.hooks), MODERN, _list, pages, warm=0)
        )
        hooks = ", visibility hook" if args.hooks else ""
        report(f"tools/list first page, {args.scale:,} tools{hooks}", listing, pages, args.top)
        return 0
    for name in args.contenders:
        if args.mode == "handler":
            stats = asyncio.run(_profile_handler(CONTENDERS[name](), args.calls))
        else:
            mode = MODERN if args.mode == "modern" else LEGACY
            stats = asyncio.run(_through_client(CONTENDERS[name](), mode, _call, args.calls, 200))
        report(f"{name}, tools/call, {args.mode}", stats, args.calls, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
