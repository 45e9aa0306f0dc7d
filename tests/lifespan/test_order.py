"""``serve_lifespan``: eager singletons, then ``Server.lifespan``; left in reverse; failures."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from container import Container
from mcp_adapter import McpResponse, Server, StartupError, Tool, compile_server, serve_lifespan
from mcp_adapter.testing import McpTestClient

pytestmark = pytest.mark.anyio


class Journal(list[str]):
    """What happened, in order (a service, so the lifespan can take it)."""


class Pool:
    def __init__(self) -> None:
        self.ready = False


class Cache:
    pass


class Clock:
    """Autowired into the server instance: ``self`` is built by the container."""


def journaled(events: Journal, fail: str = "") -> Container:
    def pool() -> Iterator[Pool]:
        events.append("pool up")
        yield Pool()
        events.append("pool down")

    async def cache(pool: Pool) -> AsyncIterator[Cache]:
        if fail == "cache":
            raise RuntimeError("cache is full")
        events.append("cache up")
        yield Cache()
        events.append("cache down")

    container = Container()
    container.singleton(Pool, pool, eager=True)
    container.singleton(Cache, cache, eager=True)
    container.singleton(Clock)
    container.instance(Journal, events)
    return container


class StatusTool(Tool):
    name = "status"

    async def handle(self, pool: Pool) -> McpResponse:
        return McpResponse.structured({"ready": pool.ready})


class Demo(Server):
    tools = (StatusTool,)
    fail = ""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def lifespan(self, pool: Pool, cache: Cache, events: Journal) -> AsyncIterator[None]:
        assert isinstance(self, Demo)
        assert isinstance(self.clock, Clock)
        events.append("lifespan up")
        if self.fail == "enter":
            raise RuntimeError("migration 0042 failed")
        pool.ready = True
        try:
            yield
        finally:
            pool.ready = False
            events.append("lifespan down")
            if self.fail == "exit":
                raise RuntimeError("could not flush")


class Failing(Demo):
    fail = "enter"


class FailingAtExit(Demo):
    fail = "exit"


ORDER_UP = ["pool up", "cache up", "lifespan up"]
ORDER_DOWN = ["lifespan down", "cache down", "pool down"]


async def test_start_up_then_shutdown_in_reverse_order() -> None:
    events = Journal()
    container = journaled(events)
    catalog = compile_server(Demo, container)
    async with serve_lifespan(catalog, container):
        assert events == ORDER_UP
        result = await McpTestClient(container, catalog).tool("status")
        assert result.structured == {"ready": True}
        events.append("served")
    assert events == [*ORDER_UP, "served", *ORDER_DOWN]


async def test_a_failing_eager_singleton_never_enters_the_lifespan() -> None:
    events = Journal()
    container = journaled(events, fail="cache")
    catalog = compile_server(Demo, container)
    with pytest.raises(StartupError, match="eager singletons failed: RuntimeError: cache is full"):
        async with serve_lifespan(catalog, container):
            pytest.fail("served after a failed start-up")
    assert events == ["pool up", "pool down"]


async def test_a_failing_lifespan_closes_the_eager_singletons() -> None:
    events = Journal()
    container = journaled(events)
    catalog = compile_server(Failing, container)
    expected = re.escape("Failing.lifespan failed: RuntimeError: migration")
    with pytest.raises(StartupError, match=expected) as caught:
        async with serve_lifespan(catalog, container):
            pytest.fail("served after a failed start-up")
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert events == [*ORDER_UP, "cache down", "pool down"]


async def test_a_failing_shutdown_still_finalizes_the_singletons_and_propagates() -> None:
    events = Journal()
    container = journaled(events)
    catalog = compile_server(FailingAtExit, container)
    with pytest.raises(RuntimeError, match="could not flush"):
        async with serve_lifespan(catalog, container):
            pass
    assert events == [*ORDER_UP, *ORDER_DOWN]


async def test_an_error_while_serving_reaches_the_lifespan_then_the_singletons() -> None:
    events = Journal()
    container = journaled(events)
    catalog = compile_server(Demo, container)
    with pytest.raises(KeyError):
        async with serve_lifespan(catalog, container):
            raise KeyError("boom")
    assert events == [*ORDER_UP, *ORDER_DOWN]


async def test_close_false_leaves_the_singletons_to_their_owner() -> None:
    events = Journal()
    container = journaled(events)
    catalog = compile_server(Demo, container)
    async with serve_lifespan(catalog, container, close_container=False):
        pass
    assert events == [*ORDER_UP, "lifespan down"]
    await container.aclose()
    assert events == [*ORDER_UP, *ORDER_DOWN]


async def test_a_server_without_lifespan_starts_the_eager_singletons_only() -> None:
    events = Journal()
    container = journaled(events)

    class Plain(Server):
        tools = (StatusTool,)

    async with serve_lifespan(compile_server(Plain, container), container):
        assert events == ["pool up", "cache up"]
    assert events == ["pool up", "cache up", "cache down", "pool down"]


class ManagerServer(Server):
    def lifespan(self, events: Journal) -> AbstractAsyncContextManager[None]:
        return _journal(events, "manager")


class NotAManager(Server):
    def lifespan(self) -> Any:
        return 42


@asynccontextmanager
async def _journal(events: Journal, name: str) -> AsyncIterator[None]:
    events.append(f"{name} up")
    yield
    events.append(f"{name} down")


async def test_a_method_returning_a_context_manager_is_entered_and_left() -> None:
    events = Journal()
    container = journaled(events)
    async with serve_lifespan(compile_server(ManagerServer, container), container):
        assert events[-1] == "manager up"
    assert events[2:] == ["manager up", "manager down", "cache down", "pool down"]


async def test_a_lifespan_returning_no_context_manager_fails_the_start_up() -> None:
    events = Journal()
    container = journaled(events)
    with pytest.raises(StartupError, match="returned int, not an async context manager"):
        async with serve_lifespan(compile_server(NotAManager, container), container):
            pytest.fail("served after a failed start-up")
    assert events == ["pool up", "cache up", "cache down", "pool down"]
