"""A stalled Redis (``DEBUG SLEEP`` on a real ``redis-server``) holds no task request longer
than ``Tasks.store_timeout``: ``tools/call`` starting a task, ``tasks/get``,
``tasks/update`` and ``tasks/cancel`` each answer ``-32603`` naming the bound while
Redis still sleeps, over real HTTP; once it wakes, the tasks answer as before."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import MCPError
from redis.asyncio import Redis
from redis.exceptions import TimeoutError as RedisTimeout

from container import Container
from mcp_adapter import McpResponse, Server, Tasks, Tool, http_app
from tests.serving.harness import serve_app
from tests.tasks.helpers import over_http

pytestmark = pytest.mark.anyio

BOUND = 1.0
"""``Tasks.store_timeout`` here, in seconds."""
STALL = 12
"""Seconds Redis sleeps: long enough for every bounded request below to answer first."""
HEALTHY_TRIES = 5
"""A request to a healthy Redis may still pass the bound on a loaded machine (a CI run at
load 8 saw the first one take longer than 0.5 s): outside the stall, the test asks again."""


async def healthy(request: Callable[[], Awaitable[Any]]) -> Any:
    """``request()`` while Redis is awake, asked again when it only passed the bound."""
    for _ in range(HEALTHY_TRIES - 1):
        try:
            return await request()
        except MCPError as exc:
            if "did not answer within" not in exc.error.message:
                raise
    return await request()


class Quick(Tool):
    name = "quick"
    task_support = "required"

    async def handle(self) -> McpResponse:
        return McpResponse.text("quick")


def stalling_server(url: str) -> type[Server]:
    class OnRedis(Server):
        name = "on-redis"
        tools = (Quick,)
        tasks = Tasks(url=url, store_timeout=BOUND)

    return OnRedis


@asynccontextmanager
async def stalled(url: str) -> AsyncIterator[anyio.Event]:
    """Redis asleep for ``STALL`` seconds from the moment the block starts; the event is
    set when it has woken up (the ``DEBUG SLEEP`` answered)."""
    woke = anyio.Event()
    sleeper = Redis.from_url(url, socket_timeout=STALL * 2)
    probe = Redis.from_url(url, socket_timeout=0.1)

    async def sleep() -> None:
        await sleeper.execute_command("DEBUG", "SLEEP", STALL)
        woke.set()

    async with anyio.create_task_group() as group:
        group.start_soon(sleep)
        with anyio.fail_after(STALL):  # asleep once a PING gets no answer
            while True:
                try:
                    await probe.ping()
                except RedisTimeout:
                    break
                await anyio.sleep(0.01)
        yield woke
    await sleeper.aclose()
    await probe.aclose()


async def test_every_task_request_answers_the_bound_while_redis_stalls(redis_url: str) -> None:
    with serve_app(http_app(stalling_server(redis_url), Container())) as url:
        async with over_http(f"{url}/mcp") as tasks:
            done = (await healthy(lambda: tasks.call("quick")))["taskId"]
            assert (await healthy(lambda: tasks.until(done)))["status"] == "completed"
            async with stalled(redis_url) as woke:
                answers: list[tuple[int, str]] = []
                for request in (
                    tasks.get(done),
                    tasks.call("quick"),
                    tasks.update(done, {}),
                    tasks.cancel(done),
                ):
                    with pytest.raises(MCPError) as failed:
                        await request
                    answers.append((failed.value.code, failed.value.message))
                    assert not woke.is_set()  # answered while Redis still slept
            assert (
                answers
                == [(-32603, f"The task store did not answer within {BOUND:g} s; try again later")]
                * 4
            )
            awake = await healthy(lambda: tasks.get(done))
            assert awake["status"] == "completed"  # awake: as before
            again = (await healthy(lambda: tasks.call("quick")))["taskId"]
            assert (await healthy(lambda: tasks.until(again)))["status"] == "completed"
