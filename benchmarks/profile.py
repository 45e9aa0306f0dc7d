"""``python -m benchmarks.profile``: where one ``tools/call`` spends its time.

Profiles the per-call workload of :mod:`benchmarks.mcp_call_suite` with
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
import cProfile
import pstats
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.mcp_workload import ARGUMENTS, LEGACY, MODERN, TOOL, handler_names, open_client

GROUPS = (
    ("this adapter", "/src/mcp_adapter/"),
    ("container", "/src/container/"),
    ("schemas", "/src/schemas/"),
    ("mcp SDK", "/site-packages/mcp/"),
    ("mcp_types", "/site-packages/mcp_types/"),
    ("pydantic", "/site-packages/pydantic"),
    ("anyio", "/site-packages/anyio/"),
    ("asyncio", "/asyncio/"),
    ("jsonschema", "/site-packages/jsonschema"),
    ("benchmark workload", "/benchmarks/"),
)


def _group(filename: str) -> str:
    for name, marker in GROUPS:
        if marker in filename:
            return name
    if filename == "~":
        return "builtins (C)"
    return "other"


def by_group(stats: pstats.Stats, per: int) -> list[tuple[str, float]]:
    """Own (``tottime``) microseconds per operation, by package group."""
    totals: dict[str, float] = {}
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, _, _), (_, _, tottime, _, _) in table.items():
        group = _group(filename)
        totals[group] = totals.get(group, 0.0) + tottime
    return sorted(((g, t * 1e6 / per) for g, t in totals.items()), key=lambda x: -x[1])


def top(stats: pstats.Stats, per: int, key: int, count: int, only: str = "") -> list[str]:
    """The ``count`` functions with the largest ``key`` (2: own, 3: cumulative time)."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = sorted(table.items(), key=lambda item: -item[1][key])
    lines = []
    for (filename, line, function), values in rows:
        if only and only not in filename:
            continue
        ncalls, _, tottime, cumtime, _ = values
        short = filename.split("site-packages/")[-1].split("/work/main/")[-1]
        lines.append(
            f"{tottime * 1e6 / per:8.1f} {cumtime * 1e6 / per:8.1f} {ncalls / per:6.1f}  "
            f"{short}:{line}({function})"
        )
        if len(lines) == count:
            break
    return lines


async def _profile_calls(server: Any, mode: str, calls: int) -> pstats.Stats:
    import mcp

    client, close = await open_client(lambda: mcp.Client(server, mode=mode))
    try:
        await client.list_tools()
        for _ in range(200):  # warm up
            await client.call_tool(TOOL, ARGUMENTS)
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(calls):
            await client.call_tool(TOOL, ARGUMENTS)
        profiler.disable()
    finally:
        await close()
    return pstats.Stats(profiler)


async def _profile_handler(server: Any, calls: int) -> pstats.Stats:
    names = handler_names(lambda: server)()
    handler, ctx, params = names["handler"], names["ctx"], names["params"]
    for _ in range(200):
        await handler(ctx, params)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(calls):
        await handler(ctx, params)
    profiler.disable()
    return pstats.Stats(profiler)


async def _profile_listing(server: Any, pages: int) -> pstats.Stats:
    import mcp

    client, close = await open_client(lambda: mcp.Client(server, mode=MODERN))
    try:
        await client.list_tools(cache_mode="bypass")
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(pages):
            await client.list_tools(cache_mode="bypass")
        profiler.disable()
    finally:
        await close()
    return pstats.Stats(profiler)


def report(title: str, stats: pstats.Stats, per: int, count: int) -> None:
    print(f"\n## {title}: µs per operation (cProfile, CPU time; {per:,} operations)\n")
    total = sum(t for _, t in by_group(stats, per))
    for group, micros in by_group(stats, per):
        print(f"  {group:<20} {micros:8.1f}  ({micros / total:5.1%})")
    print(f"  {'total':<20} {total:8.1f}")
    print("\n  own µs   cum µs  calls  function (by own time)")
    for line in top(stats, per, 2, count):
        print("  " + line)
    print("\n  own µs   cum µs  calls  function in src/ (by cumulative time)")
    for line in top(stats, per, 3, count, only="/src/"):
        print("  " + line)


def contenders() -> dict[str, Callable[[], Any]]:
    from benchmarks.mcp_call_suite import adapter_constructor, adapter_handle
    from benchmarks.mcp_workload import floor_server, mcpserver_resolve

    return {
        "floor": floor_server,
        "adapter": adapter_constructor,
        "adapter-handle": adapter_handle,
        "mcpserver": mcpserver_resolve,
    }


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
        "--contenders", nargs="*", default=["floor", "adapter"], help=", ".join(contenders())
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
        from benchmarks.scale_suite import compile_seconds, server

        declaration = server(args.compile, args.hooks)
        compile_seconds(server(2, args.hooks), collector=True)  # warm-up, as the suite does
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        compile_seconds(declaration, collector=True)
        profiler.disable()
        hooks = ", visibility hook" if args.hooks else ""
        title = f"cold compile_server, {args.compile:,} tools{hooks}, per tool"
        report(title, pstats.Stats(profiler), args.compile, args.top)
        return 0
    if args.scale:
        from benchmarks.scale_suite import serve

        pages = 50
        stats = asyncio.run(_profile_listing(serve(args.scale, args.hooks), pages))
        hooks = ", visibility hook" if args.hooks else ""
        report(f"tools/list first page, {args.scale:,} tools{hooks}", stats, pages, args.top)
        return 0
    made = contenders()
    for name in args.contenders:
        if args.mode == "handler":
            stats = asyncio.run(_profile_handler(made[name](), args.calls))
        else:
            mode = MODERN if args.mode == "modern" else LEGACY
            stats = asyncio.run(_profile_calls(made[name](), mode, args.calls))
        report(f"{name}, tools/call, {args.mode}", stats, args.calls, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
