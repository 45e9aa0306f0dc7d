"""``python -m benchmarks.profile``: where a ``tools/call`` spends its time, in process or on HTTP.

Profiles with ``cProfile`` (CPU time, so a busy machine skews it less than wall
time) and prints per operation: own time grouped by package (this adapter, the
container, schemas, the SDK, pydantic, asyncio/anyio, the rest), then the
functions with the most own and cumulative time. Profiling inflates Python-level
calls, so compare groups and rows, not totals, with the benchmarks' figures.
``--mode``:

- ``modern`` (default), ``legacy``: one ``tools/call`` through ``mcp.Client`` in
  either era, of the per-call suite's servers (``--contenders``: floor, adapter,
  adapter-handle, mcpserver);
- ``handler``: their ``tools/call`` handler awaited alone;
- ``asgi``: one stateless HTTP ``tools/call`` sent to the HTTP suite's app's ASGI
  callable in process, no socket (``--contenders``: mcpserver, adapter,
  adapter-lean);
- ``served``: the app under uvicorn in this process (a listener with ``TCP_NODELAY``),
  loaded by the load generator from a second process for ``--seconds``, so uvicorn,
  h11 and asyncio's transports are in the profile too;
- ``layers`` does not profile: it times (wall clock, the harness's interleaved
  rounds, medians) the same request sent to each ASGI layer of the app's MCP route,
  from the Starlette app down to the SDK's ``StreamableHTTPASGIApp``, so the
  difference between two neighbours is what one wrapper costs per request.

``--scale TOOLS`` profiles ``tools/list`` of a generated server of the scale suite,
``--compile TOOLS`` a cold ``compile_server`` of one (``--hooks``: with visibility
hooks).

    uv run --group bench python -m benchmarks.profile --mode legacy --calls 3000
    uv run --group bench python -m benchmarks.profile --mode handler --calls 20000
    uv run --group bench python -m benchmarks.profile --mode asgi --contenders mcpserver adapter
    uv run --group bench python -m benchmarks.profile --mode served --seconds 5
    uv run --group bench python -m benchmarks.profile --scale 1000 --hooks
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import pstats
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

import mcp

from benchmarks.harness import load
from benchmarks.harness.processes import HOST
from benchmarks.harness.timing import Case, Settings, held, run
from benchmarks.harness.venv import ROOT
from benchmarks.workloads.adapter import SERVERS
from benchmarks.workloads.http import (
    BODY,
    EXPECT,
    HEADERS,
    PATH,
    adapter_app,
    adapter_lean_app,
    caller,
    mcpserver_app,
    quiet_sdk_logs,
    running,
)
from benchmarks.workloads.mcp import (
    ARGUMENTS,
    LEGACY,
    MODERN,
    TOOL,
    floor_server,
    handler_names,
    mcpserver_resolve,
)
from benchmarks.workloads.scale import compile_seconds, serve, server

SERVED: dict[str, Callable[[], Any]] = {
    "floor": floor_server,
    "adapter": SERVERS["ours-constructor"],
    "adapter-handle": SERVERS["ours-handle"],
    "mcpserver": mcpserver_resolve,
}
"""The contenders of the modes in process (low-level servers)."""
APPS: dict[str, Callable[[], Any]] = {
    "mcpserver": mcpserver_app,
    "adapter": adapter_app,
    "adapter-lean": adapter_lean_app,
}
"""The contenders of the HTTP modes (Starlette apps)."""
HTTP_MODES = ("asgi", "served", "layers")

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
    found = next((name for name, marker in GROUPS if marker in filename), None)
    return found or ("builtins (C)" if filename == "~" else "other")


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
    for (filename, line, function), (ncalls, _, tottime, cumtime, _) in rows:
        if only in filename:
            short = filename.split("site-packages/")[-1].removeprefix(f"{ROOT}/")
            lines.append(
                f"{tottime * 1e6 / per:8.1f} {cumtime * 1e6 / per:8.1f} {ncalls / per:6.1f}  "
                f"{short}:{line}({function})"
            )
        if len(lines) == count:
            break
    return lines


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


@contextlib.contextmanager
def profiled() -> Iterator[cProfile.Profile]:
    """A profile (CPU time) of the ``with`` body; ``pstats.Stats(profile)`` reads it."""
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        yield profiler
    finally:
        profiler.disable()


async def repeated(operation: Callable[[], Awaitable[Any]], times: int, warm: int) -> pstats.Stats:
    """``times`` awaits of ``operation`` profiled, after ``warm`` not profiled."""
    for _ in range(warm):
        await operation()
    with profiled() as profiler:
        for _ in range(times):
            await operation()
    return pstats.Stats(profiler)


async def through_client(
    server: Any, mode: str, operation: Callable[[mcp.Client], Awaitable[Any]], times: int, warm: int
) -> pstats.Stats:
    client, close = await held(mcp.Client(server, mode=mode))
    try:
        await client.list_tools(cache_mode="bypass")
        return await repeated(lambda: operation(client), times, warm)
    finally:
        await close()


async def handler_alone(server: Any, calls: int) -> pstats.Stats:
    names = handler_names(lambda: server)()
    return await repeated(lambda: names["handler"](names["ctx"], names["params"]), calls, 200)


async def asgi_alone(app: Any, calls: int) -> pstats.Stats:
    close = await running(app)
    try:
        return await repeated(caller(app), calls, 300)
    finally:
        await close()


async def served(app: Any, seconds: float, connections: int) -> tuple[pstats.Stats, int]:
    import uvicorn

    count = 0

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        nonlocal count
        await app(scope, receive, send)
        count += scope["type"] == "http"

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((HOST, 0))
    sock.listen(2048)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(counting, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    warmup = 1.0
    command = load.command(
        port, BODY, EXPECT, HEADERS, connections=connections, warmup=warmup, duration=seconds + 1
    )
    generator = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.DEVNULL)
    await asyncio.sleep(warmup + 0.5)
    before = count
    with profiled() as profiler:
        await asyncio.sleep(seconds)
    requests = count - before
    await generator.wait()
    server.should_exit = True
    await serving
    sock.close()
    return pstats.Stats(profiler), requests


def layers(app: Any) -> list[tuple[str, Any]]:
    """``(name, ASGI callable)`` from the Starlette app down the MCP route's wrappers."""
    found: list[tuple[str, Any]] = [("Starlette app", app)]
    route = next(r for r in app.routes if getattr(r, "path", None) == PATH)
    layer: Any = route.app
    while layer is not None:
        found.append((type(layer).__name__, layer))
        layer = getattr(layer, "app", None)
        if not callable(layer) or hasattr(layer, "handle_request"):  # the SDK's manager
            break
    return found


def layer_cases(app: Any) -> list[Case]:
    """A case per layer: one request sent to it (checked once); the first case's setup
    enters the app's lifespan and its teardown leaves it."""

    async def setup(layer: Any, first: bool) -> Mapping[str, Any]:
        names: dict[str, Any] = {"_close": await running(app)} if first else {}
        call = names["call"] = caller(layer)
        status, body = await call()
        if status != 200 or EXPECT.encode() not in body:
            raise AssertionError(f"a layer answered {status}: {body[:200]!r}")
        return names

    async def teardown(names: Mapping[str, Any]) -> None:
        if "_close" in names:
            await names["_close"]()

    return [
        Case(
            "layers",
            name,
            "await call()",
            lambda layer=layer, first=index == 0: setup(layer, first),  # type: ignore[misc]
            is_async=True,
            anchor=index == 0,
            teardown=teardown,
        )
        for index, (name, layer) in enumerate(layers(app))
    ]


def time_layers(app: Any, calls: int, rounds: int) -> None:
    settings = Settings(rounds, target_seconds=0, min_number=calls, clock="wall")
    timed = [(r.case.name, r.median_ns / 1000) for r in run(layer_cases(app), settings)]
    for (layer, micros), inner in zip(timed, [*timed[1:], None], strict=True):
        own = f"{micros - inner[1]:+8.1f}" if inner is not None else ""
        print(f"  {layer:<28} {micros:8.1f}  {own}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    parser.add_argument(
        "--mode",
        choices=("modern", "legacy", "handler", *HTTP_MODES),
        default="modern",
        help="through mcp.Client in either era, the handler alone, or an HTTP app",
    )
    parser.add_argument("--contenders", nargs="*", help=f"{', '.join(SERVED)}; {', '.join(APPS)}")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--seconds", type=float, default=5.0, help="profiled window (served)")
    parser.add_argument("--connections", type=int, default=32, help="(served)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (layers)")
    parser.add_argument("--scale", type=int, metavar="TOOLS", help="tools/list of TOOLS tools")
    parser.add_argument("--compile", type=int, metavar="TOOLS", help="a cold compile_server")
    parser.add_argument("--hooks", action="store_true", help="--scale/--compile: with hooks")
    args = parser.parse_args(argv)
    hooks = ", visibility hook" if args.hooks else ""
    if args.compile:
        compile_seconds(server(2, args.hooks), on=True)  # warm-up, as the suite does
        declaration = server(args.compile, args.hooks)
        with profiled() as profiler:
            compile_seconds(declaration, on=True)
        title = f"cold compile_server, {args.compile:,} tools{hooks}, per tool"
        report(title, pstats.Stats(profiler), args.compile, args.top)
        return 0
    if args.scale:
        listing = through_client(
            serve(args.scale, args.hooks),
            MODERN,
            lambda c: c.list_tools(cache_mode="bypass"),
            50,
            0,
        )
        report(
            f"tools/list first page, {args.scale:,} tools{hooks}",
            asyncio.run(listing),
            50,
            args.top,
        )
        return 0
    http = args.mode in HTTP_MODES
    quiet_sdk_logs()
    for name in args.contenders or (list(APPS) if http else ["floor", "adapter"]):
        made = (APPS if http else SERVED)[name]()
        title = f"{name}, tools/call, {args.mode}"
        if args.mode == "layers":
            print(f"\n## {name}: µs per request sent to each layer (median of {args.rounds})\n")
            time_layers(made, max(args.calls // args.rounds, 50), args.rounds)
        elif args.mode == "served":
            stats, requests = asyncio.run(served(made, args.seconds, args.connections))
            report(f"{title} under uvicorn", stats, max(requests, 1), args.top)
        elif args.mode == "asgi":
            report(
                f"{title}, ASGI app alone",
                asyncio.run(asgi_alone(made, args.calls)),
                args.calls,
                args.top,
            )
        elif args.mode == "handler":
            report(title, asyncio.run(handler_alone(made, args.calls)), args.calls, args.top)
        else:
            mode = MODERN if args.mode == "modern" else LEGACY
            call = through_client(
                made, mode, lambda c: c.call_tool(TOOL, ARGUMENTS), args.calls, 200
            )
            report(title, asyncio.run(call), args.calls, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
