"""``Server.lifespan`` is checked by ``compile_server``: every problem, with a path and a hint."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import pytest
from starlette.requests import Request

from container import Container
from mcp_adapter import CompileError, McpRequest, Server, compile_server


class Pool:
    pass


class Session:
    pass


class Repository:
    def __init__(self, session: Session) -> None:
        self.session = session


class Missing:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn


def test_a_server_without_lifespan_compiles_to_none() -> None:
    class Plain(Server):
        pass

    assert compile_server(Plain, Container()).lifespan is None


def test_an_async_generator_method_compiles_with_its_services() -> None:
    class Demo(Server):
        async def lifespan(self, pool: Pool, retries: int = 3) -> AsyncIterator[None]:
            yield

    container = Container()
    container.singleton(Pool)
    compiled = compile_server(Demo, container).lifespan
    assert compiled is not None
    assert compiled.generator
    assert compiled.services == (("pool", Pool),)
    assert compiled.label.endswith("Demo.lifespan")


def test_a_method_returning_an_async_context_manager_compiles() -> None:
    class Demo(Server):
        @asynccontextmanager
        async def lifespan(self, pool: Pool) -> AsyncIterator[None]:
            yield

    container = Container()
    container.singleton(Pool)
    compiled = compile_server(Demo, container).lifespan
    assert compiled is not None
    assert not compiled.generator


def _problems(server: type[Server], container: Container) -> list[str]:
    with pytest.raises(CompileError) as caught:
        compile_server(server, container)
    return [problem.render() for problem in caught.value.problems]


def test_request_parameters_have_no_value_at_start_up() -> None:
    class Demo(Server):
        async def lifespan(self, request: McpRequest, http: Request) -> AsyncIterator[None]:
            yield

    problems = _problems(Demo, Container())
    assert len(problems) == 2
    assert all("outside any request" in p for p in problems)
    assert "Demo.lifespan(request)" in problems[0]
    assert "Demo.lifespan(http)" in problems[1]


def test_a_scoped_service_is_refused_with_the_path_to_it() -> None:
    def session() -> Iterator[Session]:
        yield Session()

    class Demo(Server):
        async def lifespan(self, repository: Repository) -> AsyncIterator[None]:
            yield

    container = Container()
    container.scoped(Session, session)
    (problem,) = _problems(Demo, container)
    assert "Demo.lifespan(repository)" in problem
    assert "lives in a request" in problem
    assert "Session" in problem
    assert "singletons" in problem  # the hint


def test_an_unbound_service_is_a_compile_problem() -> None:
    class Demo(Server):
        async def lifespan(self, missing: Missing) -> AsyncIterator[None]:
            yield

    (problem,) = _problems(Demo, Container())
    assert "Demo.lifespan(missing)" in problem
    assert "dsn" in problem


def test_an_async_def_without_yield_and_a_sync_generator_are_refused() -> None:
    class NoYield(Server):
        async def lifespan(self) -> None:  # type: ignore[override]
            return None

    class SyncGenerator(Server):
        def lifespan(self) -> Iterator[None]:  # type: ignore[override]
            yield

    (no_yield,) = _problems(NoYield, Container())
    assert "does not yield" in no_yield
    assert "@asynccontextmanager" in no_yield
    (sync,) = _problems(SyncGenerator, Container())
    assert "sync generator" in sync


def test_the_server_instance_must_be_buildable_outside_any_scope() -> None:
    class Demo(Server):
        def __init__(self, session: Session) -> None:
            self.session = session

        def lifespan(self) -> AbstractAsyncContextManager[None]:
            return _nothing()

    container = Container()
    container.scoped(Session)
    (problem,) = _problems(Demo, container)
    assert "Demo.lifespan(self)" in problem
    assert "lives in a request" in problem


def test_every_problem_is_reported_with_those_of_the_components() -> None:
    class Demo(Server):
        tools = (object,)  # type: ignore[assignment]

        async def lifespan(self, request: McpRequest) -> AsyncIterator[None]:
            yield

    problems = _problems(Demo, Container())
    assert len(problems) == 2


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield


class Clock(Protocol):
    def now(self) -> float: ...


class EagerPool:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock


class PlainServer(Server):
    name = "plain"


def test_an_eager_singleton_that_cannot_be_built_is_a_compile_problem() -> None:
    container = Container()
    container.singleton(EagerPool, eager=True)
    with pytest.raises(CompileError) as caught:
        compile_server(PlainServer, container)
    (found,) = caught.value.problems
    assert found.path == ("EagerPool(clock)",)
    assert found.message == "no binding for Clock"
