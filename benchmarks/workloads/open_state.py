"""The open-state workload: a counter kept across calls, by state handle or by session.

The adapter's side (docs/state.md): ``open_counter`` mints a state handle
(``StateHandles.open()``) and ``bump(counter)`` adds one to the handle's
``Tally``, a ``Lifetime.SESSION`` service built on the handle's first use, and
answers ``{"count": n}``. The peer is the SDK's ``MCPServer`` with the same two
tools written by hand: ``open_counter`` keeps a ``Tally`` in a dict under a
``secrets.token_urlsafe(24)`` string, ``bump`` looks it up (the least a server
that keeps state across 2026-07-28 calls can do: no owner check, no expiry, no
limits).

2025-11-25 sessions: the same apps served over stateful streamable HTTP (JSON
answers), driven in process through their ASGI callables (no socket), each session
opened by ``initialize`` and ``notifications/initialized`` and left open.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import secrets
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp
from mcp.server.mcpserver import MCPServer

from benchmarks.harness.processes import HOST
from benchmarks.harness.timing import held
from benchmarks.workloads.http import running, scope_for
from benchmarks.workloads.mcp import MODERN
from container import Container, Lifetime
from mcp_adapter import (
    HttpLimits,
    McpResponse,
    Server,
    StateHandle,
    StateHandles,
    Tool,
    build_sdk_server,
    compile_server,
    http_app,
)
from mcp_adapter.stores import HandleLimits, MemoryHandles
from schemas import Schema

OPEN = "open_counter"
BUMP = "bump"
PATH = "/mcp"
LEGACY_PROTOCOL = "2025-11-25"
UNLIMITED = HandleLimits(max_per_client=None, max_handles=None)
"""The benchmark opens up to 10,000 handles from one client (defaults: 100 and 10,000)."""


class Tally:
    """The state one handle keeps: built on its first use, one per handle."""

    def __init__(self) -> None:
        self.count = 0


class OpenCounter(Tool):
    """Start a counter; pass the handle it returns to bump."""

    name = OPEN

    def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


class BumpInput(Schema):
    counter: StateHandle


class BumpOutput(Schema):
    count: int


class Bump(Tool[BumpInput, BumpOutput]):
    """Add one to the counter of a handle and answer its count."""

    name = BUMP

    async def handle(self, payload: BumpInput, tally: Tally) -> McpResponse:
        tally.count += 1
        return McpResponse.structured(BumpOutput(count=tally.count))


class Counters(Server):
    name = "counters"
    tools = (OpenCounter, Bump)


def services() -> Container:
    container = Container()
    container.bind(Tally, Tally, Lifetime.SESSION)
    return container


def adapter_server(store: MemoryHandles) -> Any:
    """The low-level SDK server of :class:`Counters`, its handles kept in ``store``."""
    container = services()
    return build_sdk_server(compile_server(Counters, container), container, handles=store)


def mcpserver_counters() -> MCPServer:
    """``MCPServer`` with the same tools, its state in a dict written by hand."""
    app = MCPServer("counters")
    tallies: dict[str, Tally] = {}

    @app.tool(name=OPEN)
    async def open_counter() -> str:
        """Start a counter; pass the handle it returns to bump."""
        handle = secrets.token_urlsafe(24)
        tallies[handle] = Tally()
        return handle

    @app.tool(name=BUMP)
    async def bump(counter: str) -> BumpOutput:
        """Add one to the counter of a handle and answer its count."""
        tally = tallies[counter]
        tally.count += 1
        return BumpOutput(count=tally.count)

    return app


def count_of(result: Any) -> int:
    """The ``count`` a ``bump`` answered (``AssertionError`` for an error or another shape)."""
    if result.is_error:
        raise AssertionError(f"bump failed: {result.content}")
    structured = result.structured_content
    if not isinstance(structured, dict) or not isinstance(structured.get("count"), int):
        raise AssertionError(f"bump answered {structured!r}")
    count: int = structured["count"]
    return count


def handle_of(result: Any) -> str:
    """The handle an ``open_counter`` answered."""
    if result.is_error or not result.content:
        raise AssertionError(f"open_counter failed: {result.content}")
    text: str = result.content[0].text
    return text


# -- 2025-11-25 sessions over stateful streamable HTTP, in process ------------------------


SESSION_LIMITS = HttpLimits(max_sessions=None, max_sessions_per_client=None)


def adapter_session_app() -> Any:
    """The adapter's stateful app, its session limits lifted."""
    return http_app(
        Counters, services(), stateless=False, json_response=True, limits=SESSION_LIMITS
    )


def quiet_session_app() -> Any:
    """:func:`adapter_session_app` without change notifications (``subscription_bus=False``):
    no session runs a delivery task."""
    return http_app(
        Counters,
        services(),
        stateless=False,
        json_response=True,
        limits=SESSION_LIMITS,
        subscription_bus=False,
    )


def mcpserver_session_app() -> Any:
    """``MCPServer``'s own stateful streamable HTTP app, its session limit lifted."""
    return mcpserver_counters().streamable_http_app(
        streamable_http_path=PATH, json_response=True, max_sessions=None, host=HOST
    )


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "open-state-bench", "version": "1"},
        },
    }
).encode()
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()


async def post(
    app: Any, body: bytes, headers: Mapping[str, str]
) -> tuple[int, dict[str, str], bytes]:
    """One POST of ``body`` to ``app``'s ASGI callable as uvicorn would send it: the
    status, the response headers (lower-case names) and the body."""
    accept = ("Accept", "application/json, text/event-stream")
    scope = scope_for(body, [accept, *headers.items()])
    status, found, chunks = 0, dict[str, str](), list[bytes]()
    done = asyncio.Event()
    sent = False

    async def receive() -> Mapping[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            found.update((k.decode().lower(), v.decode()) for k, v in message["headers"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    await app(scope, receive, send)
    return status, found, b"".join(chunks)


async def open_session(app: Any) -> str:
    """A 2025-11-25 session: ``initialize``, then ``notifications/initialized``; its id."""
    status, headers, body = await post(app, INITIALIZE, {})
    session = headers.get("mcp-session-id")
    if status != 200 or session is None or b'"serverInfo"' not in body:
        raise AssertionError(f"initialize: HTTP {status}, {body[:300]!r}")
    session_headers = {"mcp-session-id": session, "mcp-protocol-version": LEGACY_PROTOCOL}
    status, _, body = await post(app, INITIALIZED, session_headers)
    if status != 202:
        raise AssertionError(f"notifications/initialized: HTTP {status}, {body[:300]!r}")
    return session


async def call_in_session(
    app: Any, session: str, name: str, arguments: Mapping[str, Any], request_id: int
) -> dict[str, Any]:
    """``tools/call`` of ``name`` in ``session`` through the app: the call's result."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": dict(arguments)},
    }
    headers = {"mcp-session-id": session, "mcp-protocol-version": LEGACY_PROTOCOL}
    status, _, body = await post(app, json.dumps(message).encode(), headers)
    result = json.loads(body).get("result") if status == 200 else None
    if not isinstance(result, dict) or result.get("isError"):
        raise AssertionError(f"{name} in a session: HTTP {status}, {body[:300]!r}")
    return result


# -- opening many: handles and sessions, and the memory they hold ---------------------------

CALLS = "calls"
SESSION = "sessions"
OURS, QUIET, PEER = "ours", "ours_quiet", "mcpserver"
SESSION_APPS = {OURS: adapter_session_app, QUIET: quiet_session_app, PEER: mcpserver_session_app}
WARM_UP = 5


@dataclass(frozen=True)
class Opener:
    """Opens one more handle or session (its id), and closes everything at the end."""

    open: Callable[[], Awaitable[str]]
    close: Callable[[], Awaitable[None]]
    client: Any = None
    """The client the handles were opened through (``None`` for sessions)."""


async def handles(kind: str) -> Opener:
    """Handles of ``kind``, each opened and used once, through one in-process client."""
    store = MemoryHandles(UNLIMITED)
    server = adapter_server(store) if kind == OURS else mcpserver_counters()
    client, close = await held(mcp.Client(server, mode=MODERN))

    async def opened() -> str:
        handle = handle_of(await client.call_tool(OPEN, {}))
        if count_of(await client.call_tool(BUMP, {"counter": handle})) != 1:
            raise AssertionError(f"{kind}: a new handle's first bump is not 1")
        return handle

    async def closed() -> None:
        await close()
        await store.aclose()

    return Opener(opened, closed, client)


async def sessions(kind: str) -> Opener:
    app = SESSION_APPS[kind]()
    close = await running(app)
    return Opener(lambda: open_session(app), close)


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def grown(what: str, kind: str, counts: Sequence[int], traced: bool) -> list[dict[str, Any]]:
    """Open ``counts[-1]`` handles or sessions, reading memory at each count: bytes held
    per item (``tracemalloc`` when ``traced``, else RSS) and CPU seconds to open one."""
    opener = await (handles(kind) if what == CALLS else sessions(kind))
    for _ in range(WARM_UP):
        await opener.open()
    if traced:
        tracemalloc.start()
    gc.collect()
    base = tracemalloc.get_traced_memory()[0] if traced else rss()
    found, opened, cpu = [], 0, 0.0
    for count in counts:
        started = time.process_time()
        while opened < count:
            await opener.open()
            opened += 1
        cpu += time.process_time() - started
        gc.collect()
        held_now = tracemalloc.get_traced_memory()[0] if traced else rss()
        found.append({"count": count, "bytes": (held_now - base) / count, "cpu_s": cpu / count})
    if traced:
        tracemalloc.stop()
    await opener.close()
    return found


async def measured(what: str, kind: str, counts: Sequence[int]) -> dict[int, dict[str, float]]:
    """:func:`grown` by RSS first (CPU time too), then by ``tracemalloc`` on a fresh server
    (``tracemalloc`` counts allocations only: what the first pass freed does not move it)."""
    plain = await grown(what, kind, counts, traced=False)
    traced = await grown(what, kind, counts, traced=True)
    return {
        t["count"]: {"traced": t["bytes"], "rss": p["bytes"], "cpu_s": p["cpu_s"]}
        for t, p in zip(traced, plain, strict=True)
    }
