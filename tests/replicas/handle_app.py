"""The server the state handle tests run as replicas behind haproxy (``serve --redis``).

A basket behind a state handle, kept the way docs/state.md says state shared by replicas
must be: its items in Redis (``REPLICA_RATE_REDIS``), under the handle. Beside it, a
session-lifetime ``Counter``: one per handle on each replica, built there on the first
call and finalized there once, so each answer says which replica served it and how many
calls of the handle that replica has served. ``report`` says how many counters this
replica built and finalized; ``until_finalized`` says it once this replica has finalized
as many as asked (or after ``WAIT`` seconds), with no handle of its own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import anyio
from redis.asyncio import Redis

from container import Container, Lifetime
from mcp_adapter import McpResponse, Server, StateHandle, StateHandles, Tool
from schemas import Schema
from tests.handles.cart import Drop
from tests.replicas.app import WhereTool, replica

BUILT: list[str] = []
FINALIZED: list[str] = []
"""The handles whose ``Counter`` this replica built and finalized."""
FINALIZING: list[anyio.Event] = []
"""The ``until_finalized`` calls waiting for this replica's next finalized counter."""
WAIT = 10.0
"""Seconds ``until_finalized`` waits at most (a hang, not a threshold)."""


class Counter:
    """Session-lifetime: the calls of one handle on this replica."""

    def __init__(self) -> None:
        self.calls = 0


async def counter(handle: StateHandle) -> AsyncIterator[Counter]:
    BUILT.append(handle)
    yield Counter()
    FINALIZED.append(handle)
    for waiting in FINALIZING:
        waiting.set()


class Basket:
    """The basket's items, in the Redis every replica shares."""

    def __init__(self, redis: Redis, handle: StateHandle) -> None:
        self.redis = redis
        self.key = f"tests:basket:{handle}"

    async def add(self, item: str) -> list[str]:
        await self.redis.rpush(self.key, item)
        await self.redis.expire(self.key, 3600)
        return [item.decode() for item in await self.redis.lrange(self.key, 0, -1)]


async def shared_redis() -> AsyncIterator[Redis]:
    client = Redis.from_url(os.environ["REPLICA_RATE_REDIS"])
    yield client
    await client.aclose()


class OpenBasket(Tool):
    name = "open_basket"

    def handle(self, handles: StateHandles) -> McpResponse:
        return McpResponse.text(handles.open())


class BasketInput(Schema):
    basket: StateHandle


class AddInput(BasketInput):
    item: str


class AddTool(Tool[AddInput]):
    """Answers ``replica calls items``: who served, its calls of the handle, the basket."""

    name = "add"

    async def handle(self, payload: AddInput, basket: Basket, count: Counter) -> McpResponse:
        count.calls += 1
        items = await basket.add(payload.item)
        return McpResponse.text(f"{replica()} {count.calls} {','.join(items)}")


def report() -> McpResponse:
    return McpResponse.text(f"{replica()} built={len(BUILT)} finalized={len(FINALIZED)}")


class ReportTool(Tool):
    name = "report"

    def handle(self) -> McpResponse:
        return report()


class UntilInput(Schema):
    finalized: int


class UntilFinalizedTool(Tool[UntilInput]):
    """The report, once this replica has finalized ``finalized`` counters (``WAIT`` s)."""

    name = "until_finalized"

    async def handle(self, payload: UntilInput) -> McpResponse:
        with anyio.move_on_after(WAIT):
            while len(FINALIZED) < payload.finalized:
                waiting = anyio.Event()
                FINALIZING.append(waiting)
                try:
                    await waiting.wait()
                finally:
                    FINALIZING.remove(waiting)
        return report()


class HandleReplicaServer(Server):
    name = "basket"
    tools = (OpenBasket, AddTool, Drop, ReportTool, UntilFinalizedTool, WhereTool)


def build_container() -> Container:
    container = Container()
    container.bind(Redis, shared_redis, Lifetime.SCOPED)
    container.bind(Basket, Basket, Lifetime.SCOPED)
    container.bind(Counter, counter, Lifetime.SESSION)
    return container
