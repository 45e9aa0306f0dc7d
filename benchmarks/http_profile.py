"""``python -m benchmarks.http_profile``: where a ``tools/call`` over HTTP spends its CPU time.

Profiles (``cProfile``, CPU time) the apps of the HTTP suite, either

- ``--asgi`` (default): the Starlette app's ASGI callable awaited in process, the
  same request as the suite's, no socket; or
- ``--served``: the app under uvicorn in this process (a listener with
  ``TCP_NODELAY``), loaded by :mod:`benchmarks.harness.load` from a second process,
  so uvicorn, h11 and asyncio's transports are in the profile too;

and prints own time per request by package, then the top functions (the
layout of ``python -m benchmarks.profile``). Profiling inflates Python-level calls:
compare groups and rows, not totals, with the suite's figures.

``--layers`` does not profile: it times (wall clock, no profiler, the harness's
interleaved rounds, medians) the same request sent to each ASGI layer of the app's
MCP route, from the Starlette app down to the SDK's ``StreamableHTTPASGIApp``, so
the difference between two neighbours is what one wrapper costs per request.

    uv run --group bench python -m benchmarks.http_profile --apps mcpserver adapter
    uv run --group bench python -m benchmarks.http_profile --served --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.harness import load
from benchmarks.harness.processes import HOST
from benchmarks.harness.profiling import profiled, report
from benchmarks.harness.timing import Case, Settings, run
from benchmarks.workloads import apps
from benchmarks.workloads.http import (
    BODY,
    EXPECT,
    HEADERS,
    PATH,
    caller,
    quiet_sdk_logs,
    running,
)

APPS: dict[str, Callable[[], Any]] = {
    "mcpserver": apps.mcpserver_app,
    "adapter": apps.adapter_app,
    "adapter-lean": apps.adapter_lean_app,
}


async def profile_asgi(app: Any, calls: int) -> pstats.Stats:
    close = await running(app)
    try:
        call = caller(app)
        for _ in range(300):  # warm up
            await call()
        with profiled() as profiler:
            for _ in range(calls):
                await call()
    finally:
        await close()
    return pstats.Stats(profiler)


async def profile_served(app: Any, seconds: float, connections: int) -> tuple[pstats.Stats, int]:
    import uvicorn

    served = 0

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        nonlocal served
        await app(scope, receive, send)
        if scope["type"] == "http":
            served += 1

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
    before = served
    with profiled() as profiler:
        await asyncio.sleep(seconds)
    requests = served - before
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.http_profile", description=__doc__)
    parser.add_argument("--apps", nargs="*", default=list(APPS), help=", ".join(APPS))
    parser.add_argument("--served", action="store_true", help="under uvicorn, loaded over HTTP")
    parser.add_argument("--calls", type=int, default=3000, help="in-process calls (--asgi)")
    parser.add_argument("--seconds", type=float, default=5.0, help="profiled window (--served)")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--layers", action="store_true", help="time each ASGI layer, no profile")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (--layers)")
    args = parser.parse_args(argv)
    quiet_sdk_logs()
    for name in args.apps:
        app = APPS[name]()
        if args.layers:
            each = max(args.calls // args.rounds, 50)
            settings = Settings(args.rounds, target_seconds=0, min_number=each, clock="wall")
            timed = [(r.case.name, r.median_ns / 1000) for r in run(layer_cases(app), settings)]
            print(f"\n## {name}: µs per request sent to each layer (median of {args.rounds})\n")
            for (layer, micros), inner in zip(timed, [*timed[1:], None], strict=True):
                own = f"{micros - inner[1]:+8.1f}" if inner is not None else ""
                print(f"  {layer:<28} {micros:8.1f}  {own}")
        elif args.served:
            stats, requests = asyncio.run(profile_served(app, args.seconds, args.connections))
            report(f"{name}, tools/call under uvicorn", stats, max(requests, 1), args.top)
        else:
            stats = asyncio.run(profile_asgi(app, args.calls))
            report(f"{name}, tools/call, ASGI app alone", stats, args.calls, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
