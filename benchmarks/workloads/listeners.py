"""Listeners: the resources one change is announced for, and the apps that serve them.

Three resources, each a static URI a listener subscribes to with
``subscriptions/listen`` (2026-07-28): one whose ``shouldRegister`` is ``async def``,
one whose ``shouldRegister`` is a plain ``def`` (it runs in a worker thread, as
docs/visibility.md says), and one without hooks. Both hooks read the listener's
``McpRequest``, as the docs write them.

The apps, each stateless streamable HTTP with SSE answers (a listen answer is a
stream) at :data:`PATH`, plus two routes of the benchmark's own in front of it:

- ``POST /bench/publish?uri=U`` announces that ``U`` changed: through the
  container's ``Notifier`` for this adapter (the documented way), on the
  ``SubscriptionBus`` ``MCPServer`` was given for the SDK (what its
  ``ctx.notify_resource_updated`` does). It answers once the bus has taken the
  event, before any listener has it.
- ``GET /bench/listeners`` answers how many listeners the bus has (so a run
  starts only once the streams of the previous one have ended).

``python -m benchmarks.workloads.listeners KIND --port P`` serves ``KIND``
(``adapter`` or ``mcpserver``) under uvicorn with one worker, as
:mod:`benchmarks.workloads.http` serves its apps. With ``BENCH_LISTEN_PROFILE=FILE``
in its environment it runs under ``cProfile`` (the event loop's thread) and writes
the statistics to ``FILE`` when it stops: what a delivery costs, function by function.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated, ServerEvent

from benchmarks.harness.processes import HOST
from benchmarks.workloads.http import PATH, quiet_sdk_logs
from container import Container
from mcp_adapter import (
    McpRequest,
    McpResponse,
    Notifier,
    Resource,
    Server,
    SubscriptionLimits,
    http_app,
)

ASYNC_HOOK = "notes://async-hook"
SYNC_HOOK = "notes://sync-hook"
NO_HOOK = "notes://no-hook"
URIS = (ASYNC_HOOK, SYNC_HOOK, NO_HOOK)
PUBLISH = "/bench/publish"
LISTENERS = "/bench/listeners"
MAX_LISTENERS = 5_000
"""Both servers admit this many streams (the load comes from one address)."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class CountingBus(InMemorySubscriptionBus):
    """The SDK's in-memory bus, which also says how many listeners it has."""

    def __len__(self) -> int:
        return len(self._listeners)


def with_bench_routes(
    app: Asgi, publish: Callable[[str], Awaitable[None]], bus: CountingBus
) -> Asgi:
    """``app`` behind :data:`PUBLISH` and :data:`LISTENERS` (everything else passes)."""

    async def answer(send: Send, status: int, body: bytes) -> None:
        headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path == PUBLISH:
            uris = parse_qs(scope["query_string"].decode()).get("uri", [])
            if len(uris) != 1 or uris[0] not in URIS:
                await answer(send, 400, b"one uri of the workload's, please")
                return
            await publish(uris[0])
            await answer(send, 200, str(len(bus)).encode())
        elif path == LISTENERS:
            await answer(send, 200, str(len(bus)).encode())
        else:
            await app(scope, receive, send)

    return served


# -- this adapter ---------------------------------------------------------------------


class AsyncHooked(Resource):
    uri = ASYNC_HOOK

    async def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is None or request.identity.has_scope("notes:read")

    def handle(self) -> McpResponse:
        return McpResponse.text("async hook")


class SyncHooked(Resource):
    uri = SYNC_HOOK

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is None or request.identity.has_scope("notes:read")

    def handle(self) -> McpResponse:
        return McpResponse.text("sync hook")


class NoHook(Resource):
    uri = NO_HOOK

    def handle(self) -> McpResponse:
        return McpResponse.text("no hook")


class ListenersServer(Server):
    name = "listeners"
    resources = (AsyncHooked, SyncHooked, NoHook)


def adapter_app() -> Asgi:
    """``http_app`` (stateless, SSE answers) serving the three resources."""
    quiet_sdk_logs()
    container = Container()
    bus = CountingBus()
    limits = SubscriptionLimits(max_listeners=MAX_LISTENERS, max_listeners_per_client=MAX_LISTENERS)
    app = http_app(
        ListenersServer, container, subscription_bus=bus, subscription_limits=limits, host=HOST
    )
    notifier = container.get(Notifier)

    async def publish(uri: str) -> None:
        await notifier.resource_updated(uri)

    return with_bench_routes(app, publish, bus)


# -- the SDK's MCPServer --------------------------------------------------------------


def mcpserver_app() -> Asgi:
    """``MCPServer`` with its ``ListenHandler`` on a bus of its own (no hooks: it has none)."""
    from mcp.server.mcpserver import MCPServer

    quiet_sdk_logs()
    bus = CountingBus()
    server = MCPServer("listeners", subscriptions=bus)
    for uri in URIS:
        server.resource(uri, name=uri.rsplit("/", 1)[1])(_reader(uri))

    async def publish(uri: str) -> None:
        event: ServerEvent = ResourceUpdated(uri=uri)
        await bus.publish(event)

    app = server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, host=HOST)
    return with_bench_routes(app, publish, bus)


def _reader(text: str) -> Callable[[], str]:
    def read() -> str:
        return text

    return read


APPS: dict[str, Callable[[], Asgi]] = {"adapter": adapter_app, "mcpserver": mcpserver_app}


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads.listeners")
    parser.add_argument("kind", choices=sorted(APPS))
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    target = f"benchmarks.workloads.listeners:{APPS[args.kind].__name__}"
    profile = os.environ.get("BENCH_LISTEN_PROFILE")
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        # uvicorn raises the signal it stopped on again once stopped: exit, not die, then.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        profiler.enable()
    try:
        uvicorn.run(
            target, host=HOST, port=args.port, factory=True, log_level="warning", lifespan="on"
        )
    finally:
        if profiler is not None and profile:
            profiler.disable()
            profiler.dump_stats(profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
