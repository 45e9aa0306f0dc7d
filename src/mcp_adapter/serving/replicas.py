"""Serving as one of N replicas: the Redis they share, and whether this one is ready.

``http_app(..., redis=...)`` / ``serve_stdio(..., redis=...)`` take a URL, a
``redis.asyncio.Redis`` or a :class:`~mcp_adapter.stores.SharedRedis`; the served
server's keys go under ``{prefix}:{server name}``. With it, change notifications
go through a :class:`~mcp_adapter.stores.RedisSubscriptionBus` (unless a bus is
given), a stateful app's resumable streams keep their events in a
:class:`~mcp_adapter.stores.RedisEventLog` (unless ``resumability`` is given), and the
answered rounds of input requests are recorded in :class:`~mcp_adapter.stores.RedisRounds`
(unless ``rounds`` is given): a ``requestState`` taken by one replica is refused by all;
and an HTTP app's state handles are kept in :class:`~mcp_adapter.stores.RedisHandles`:
a handle minted through one replica works through every other.

:class:`Readiness` answers ``GET /healthz`` (the process serves: always 200) and
``GET /readyz`` (200 once the app's lifespan has started and while Redis, when
configured, answers and the bus is subscribed; else 503), outside authentication,
for load balancers and orchestrators.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from container import Container
from mcp_adapter.compiled.handles import handle_sessions
from mcp_adapter.notifications.serve import BusChoice
from mcp_adapter.serving.events import Resumability, SessionEventStore
from mcp_adapter.stores.handles import HandleLimits, HandleStore, MemoryHandles
from mcp_adapter.stores.rounds import RoundLedger

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from mcp_adapter.stores.shared import SharedRedis

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"


def shared_redis(value: str | Redis | SharedRedis | None, server: str) -> SharedRedis | None:
    """``value`` as the Redis of the served ``server`` (keys under its name), or None."""
    if value is None:
        return None
    from mcp_adapter.stores.shared import SharedRedis

    return SharedRedis.of(value).for_server(server)


def bus_of(shared: SharedRedis | None, bus: BusChoice) -> BusChoice:
    """The subscription bus to serve: the one given, else Redis's when shared."""
    if bus is None and shared is not None:
        return shared.subscription_bus()
    return bus


def resumability_of(
    shared: SharedRedis | None, resumability: Resumability | None, *, stateless: bool
) -> Resumability | None:
    """A stateful app's resumable streams: as given, else in Redis when shared."""
    if resumability is None and shared is not None and not stateless:
        return Resumability(SessionEventStore(shared.event_log()))
    return resumability


def rounds_of(shared: SharedRedis | None, rounds: RoundLedger | None) -> RoundLedger | None:
    """Where answered input rounds are recorded: as given, else in Redis when shared
    (``None``: the server keeps its own, in memory)."""
    if rounds is None and shared is not None:
        return shared.rounds()
    return rounds


def handles_of(
    shared: SharedRedis | None, limits: HandleLimits, container: Container
) -> HandleStore:
    """Where state handles are kept: in Redis when shared (every replica serves them),
    else in this process."""
    if shared is None:
        return MemoryHandles(limits)
    return shared.handles(limits, handle_sessions(container))


def _redis_bus(bus: BusChoice) -> Any:
    """``bus`` if it is a Redis bus (whose receiving task must run), else None. The module
    is loaded only if something made such a bus, so serving without Redis never imports
    ``redis``."""
    module = sys.modules.get("mcp_adapter.stores.redis_bus")
    if module is not None and isinstance(bus, module.RedisSubscriptionBus):
        return bus
    return None


@dataclass(eq=False)
class Readiness:
    """Whether this replica can serve: started, and its Redis (when shared) reachable."""

    shared: SharedRedis | None = None
    bus: Any = None
    """A :class:`~mcp_adapter.stores.RedisSubscriptionBus`, whose subscription counts."""
    started: bool = field(default=False, init=False)

    @classmethod
    def of(cls, shared: SharedRedis | None, bus: BusChoice) -> Readiness:
        return cls(shared, _redis_bus(bus))

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """The app's lifespan part: the bus receives, the client closes at the end, and
        the replica is ready in between."""
        async with AsyncExitStack() as stack:
            if self.shared is not None:
                stack.push_async_callback(self.shared.aclose)
            if self.bus is not None:
                await stack.enter_async_context(self.bus.running())
            self.started = True
            try:
                yield
            finally:
                self.started = False

    async def problem(self) -> str | None:
        """Why this replica is not ready, or None when it is."""
        if not self.started:
            return "not started"
        if self.shared is not None and not await self.shared.reachable():
            return "redis unreachable"
        if self.bus is not None and not self.bus.subscribed:
            return "redis subscription lost"
        return None

    def routes(self) -> list[BaseRoute]:
        return [Route(HEALTH_PATH, endpoint=self._health), Route(READY_PATH, endpoint=self._ready)]

    async def _health(self, _: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def _ready(self, _: Request) -> JSONResponse:
        problem = await self.problem()
        if problem is None:
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "not ready", "reason": problem}, status_code=503)
