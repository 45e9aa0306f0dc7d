"""``python -m benchmarks.http_profile``: where a ``tools/call`` over HTTP spends its CPU time.

Profiles (``cProfile``, CPU time) the apps of the HTTP suite, either

- ``--asgi`` (default): the Starlette app's ASGI callable awaited in process, the
  same request as the suite's, no socket; or
- ``--served``: the app under uvicorn in this process (a listener with
  ``TCP_NODELAY``), loaded by :mod:`benchmarks.http_load` from a second process,
  so uvicorn, h11 and asyncio's transports are in the profile too;

and prints own time per request by package, then the top functions (the
layout of :mod:`benchmarks.profile`). Profiling inflates Python-level calls:
compare groups and rows, not totals, with the suite's figures.

``--layers`` does not profile: it times (wall clock, no profiler, interleaved
rounds, medians) the same request sent to each ASGI layer of the app's MCP
route, from the Starlette app down to the SDK's ``StreamableHTTPASGIApp``, so
the difference between two neighbours is what one wrapper costs per request.

    uv run --group bench python -m benchmarks.http_profile --apps mcpserver adapter
    uv run --group bench python -m benchmarks.http_profile --served --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import socket
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks import http_asgi, http_request, http_serve, http_suite
from benchmarks.profile import report

APPS: dict[str, Callable[[], Any]] = {
    "mcpserver": http_serve.mcpserver_app,
    "adapter": http_serve.adapter_app,
    "adapter-lean": http_serve.adapter_lean_app,
}


async def profile_asgi(app: Any, calls: int) -> pstats.Stats:
    close = await http_asgi.running(app)
    try:
        call = http_asgi.caller(app, http_request.PATH, http_request.HEADERS, http_request.BODY)
        for _ in range(300):  # warm up
            await call()
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(calls):
            await call()
        profiler.disable()
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
    sock.bind((http_request.HOST, 0))
    sock.listen(2048)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(counting, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    warmup = 1.0
    command = [
        sys.executable,
        "-m",
        "benchmarks.http_load",
        "--port",
        str(port),
        "--body",
        http_request.BODY.decode(),
        "--expect",
        http_request.EXPECT,
        "--connections",
        str(connections),
        "--warmup",
        str(warmup),
        "--duration",
        str(seconds + 1.0),
    ]
    for name, value in http_request.HEADERS:
        command += ["--header", f"{name}: {value}"]
    generator = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.DEVNULL)
    await asyncio.sleep(warmup + 0.5)
    profiler = cProfile.Profile(time.process_time)
    before = served
    profiler.enable()
    await asyncio.sleep(seconds)
    profiler.disable()
    requests = served - before
    await generator.wait()
    server.should_exit = True
    await serving
    sock.close()
    return pstats.Stats(profiler), requests


def layers(app: Any) -> list[tuple[str, Any]]:
    """``(name, ASGI callable)`` from the Starlette app down the MCP route's wrappers."""
    found: list[tuple[str, Any]] = [("Starlette app", app)]
    route = next(r for r in app.routes if getattr(r, "path", None) == http_request.PATH)
    layer: Any = route.app
    while layer is not None:
        found.append((type(layer).__name__, layer))
        layer = getattr(layer, "app", None)
        if not callable(layer) or hasattr(layer, "handle_request"):  # the SDK's manager
            break
    return found


async def time_layers(app: Any, calls: int, rounds: int) -> list[tuple[str, float]]:
    close = await http_asgi.running(app)
    try:
        found = layers(app)
        callers = [
            http_asgi.caller(layer, http_request.PATH, http_request.HEADERS, http_request.BODY)
            for _, layer in found
        ]
        for call in callers:
            status, body = await call()
            if status != 200 or http_request.EXPECT.encode() not in body:
                raise AssertionError(f"a layer answered {status}: {body[:200]!r}")
            for _ in range(200):
                await call()
        samples: list[list[float]] = [[] for _ in callers]
        order = list(range(len(callers)))
        for number in range(rounds):
            order.reverse() if number % 2 else order.sort()
            for index in order:
                call = callers[index]
                started = time.perf_counter()
                for _ in range(calls):
                    await call()
                samples[index].append((time.perf_counter() - started) / calls * 1e6)
    finally:
        await close()
    medians = [statistics.median(times) for times in samples]
    return [(name, median) for (name, _), median in zip(found, medians, strict=True)]


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
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    http_suite.quiet_sdk_logs()
    for name in args.apps:
        app = APPS[name]()
        if args.layers:
            timed = asyncio.run(time_layers(app, max(args.calls // args.rounds, 50), args.rounds))
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
