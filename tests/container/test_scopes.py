"""Scopes, sync and async: finalizers run exactly once, in reverse order, on success,
error and cancellation; failures are reported; misuse is a ScopeError."""

import asyncio
import contextlib
import gc
import logging
import weakref
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import contextmanager

import anyio
import pytest

from container import (
    AsyncResolutionRequired,
    Container,
    FinalizerError,
    Scope,
    ScopeError,
)


class First:
    pass


class Second:
    pass


class Third:
    pass


class Needs:
    def __init__(self, first: First, second: Second, third: Third) -> None:
        self.parts = (first, second, third)


def tracked(events: list[str]) -> Container:
    """A container whose three scoped services log their setup and teardown."""

    def first() -> Iterator[First]:
        events.append("open first")
        yield First()
        events.append("close first")

    async def second() -> AsyncIterator[Second]:
        events.append("open second")
        await anyio.sleep(0)
        yield Second()
        await anyio.sleep(0)
        events.append("close second")

    @contextmanager
    def third() -> Iterator[Third]:
        events.append("open third")
        try:
            yield Third()
        finally:
            events.append("close third")

    container = Container()
    container.scoped(First, first)
    container.scoped(Second, second)
    container.scoped(Third, third)
    return container


def sync_tracked(events: list[str]) -> Container:
    container = tracked(events)

    def second() -> Iterator[Second]:
        events.append("open second")
        yield Second()
        events.append("close second")

    container.scoped(Second, second)
    return container


OPENED = ["open first", "open second", "open third"]
CLOSED = ["close third", "close second", "close first"]


def test_sync_scope_finalizes_in_reverse_order_of_creation() -> None:
    events: list[str] = []
    container = sync_tracked(events)
    with container.scope() as scope:
        scope.get(Needs)
        scope.get(Needs)
        assert events == OPENED
    assert events == OPENED + CLOSED


def test_order_follows_creation_not_binding() -> None:
    events: list[str] = []
    container = sync_tracked(events)
    with container.scope() as scope:
        scope.get(Third)
        scope.get(First)
    assert events == ["open third", "open first", "close first", "close third"]


@pytest.mark.anyio
async def test_async_scope_finalizes_in_reverse_order_of_creation() -> None:
    events: list[str] = []
    container = tracked(events)
    async with container.scope() as scope:
        await scope.aget(Needs)
        await scope.aget(Needs)
    assert events == OPENED + CLOSED


def test_finalizers_run_when_the_body_raises_and_the_error_propagates() -> None:
    events: list[str] = []
    container = sync_tracked(events)

    def request() -> None:
        with container.scope() as scope:
            scope.get(Needs)
            raise KeyError("body")

    with pytest.raises(KeyError):
        request()
    assert events == OPENED + CLOSED


@pytest.mark.anyio
async def test_finalizers_run_when_the_async_body_raises() -> None:
    events: list[str] = []
    container = tracked(events)

    async def request() -> None:
        async with container.scope() as scope:
            await scope.aget(Needs)
            raise KeyError("body")

    with pytest.raises(KeyError):
        await request()
    assert events == OPENED + CLOSED


@pytest.mark.anyio
async def test_finalizers_run_once_when_an_anyio_cancel_scope_cancels_the_body() -> None:
    events: list[str] = []
    container = tracked(events)
    with anyio.CancelScope() as cancel:
        async with container.scope() as scope:
            await scope.aget(Needs)
            cancel.cancel()
            await anyio.sleep(10)
            events.append("not reached")
    assert cancel.cancelled_caught
    assert events == OPENED + CLOSED


@pytest.mark.anyio
async def test_finalizers_run_when_the_task_is_cancelled_from_outside() -> None:
    events: list[str] = []
    container = tracked(events)
    resolved = anyio.Event()

    async def request() -> None:
        async with container.scope() as scope:
            await scope.aget(Needs)
            resolved.set()
            await anyio.sleep_forever()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(request)
        await resolved.wait()
        tasks.cancel_scope.cancel()
    assert events == OPENED + CLOSED


@pytest.mark.anyio
async def test_finalizers_run_when_asyncio_cancels_the_task() -> None:
    events: list[str] = []
    container = tracked(events)
    resolved = asyncio.Event()

    async def request() -> None:
        async with container.scope() as scope:
            await scope.aget(Needs)
            resolved.set()
            await asyncio.sleep(10)

    task = asyncio.ensure_future(request())
    await resolved.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert events == OPENED + CLOSED


@pytest.mark.anyio
async def test_async_exit_without_finalizers_closes_at_once_and_awaits_to_none() -> None:
    container = Container()
    container.scoped(First)
    async with container.scope() as scope:
        first = await scope.aget(First)
        assert scope.get(First) is first
        assert scope.exits == []
    assert scope.closed
    again = scope.__aexit__(None, None, None)  # nothing left to run: already over
    assert scope.closed
    assert await again is None
    assert await again is None  # the same finished awaitable, awaited again


@pytest.mark.anyio
async def test_async_exit_passes_the_body_error_to_finalizers_and_reraises_it() -> None:
    seen: list[BaseException | None] = []

    def first() -> Generator[First, BaseException | None, None]:
        seen.append((yield First()))  # resumed with the body's error as the value

    container = Container()
    container.scoped(First, first)
    scope = container.scope()

    async def request() -> None:
        async with scope:
            await scope.aget(First)
            raise KeyError("body")

    with pytest.raises(KeyError, match="body"):
        await request()
    assert scope.closed
    assert [type(exc) for exc in seen] == [KeyError]


def failing_request(container: Container, error: Exception) -> None:
    with container.scope() as scope:
        scope.get(First)
        raise error


def test_generator_receives_the_body_error_as_the_value_of_yield() -> None:
    seen: list[BaseException | None] = []

    def session() -> Iterator[First]:
        error = yield First()
        seen.append(error)

    container = Container()
    container.scoped(First, session)
    with container.scope() as scope:
        scope.get(First)
    boom = ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        failing_request(container, boom)
    assert seen == [None, boom]


def test_generator_may_reraise_the_body_error_without_it_counting_as_a_failure() -> None:
    def session() -> Iterator[First]:
        error = yield First()
        if error is not None:
            raise error

    container = Container()
    container.scoped(First, session)
    with pytest.raises(ValueError) as caught:
        failing_request(container, ValueError("boom"))
    assert not getattr(caught.value, "__notes__", None)


def test_contextmanager_sees_the_body_error_like_a_with_block() -> None:
    seen: list[str] = []

    @contextmanager
    def session() -> Iterator[First]:
        try:
            yield First()
        except ValueError as error:
            seen.append(f"rollback: {error}")
            raise

    container = Container()
    container.scoped(First, session)
    with pytest.raises(ValueError):
        failing_request(container, ValueError("boom"))
    assert seen == ["rollback: boom"]


def failing(events: list[str]) -> Container:
    def first() -> Iterator[First]:
        yield First()
        events.append("close first")

    def second() -> Iterator[Second]:
        yield Second()
        raise RuntimeError("second failed")

    def third() -> Iterator[Third]:
        yield Third()
        raise OSError("third failed")

    container = Container()
    container.scoped(First, first)
    container.scoped(Second, second)
    container.scoped(Third, third)
    return container


def test_failing_finalizers_do_not_stop_the_others_and_are_raised_together(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events: list[str] = []
    container = failing(events)
    with pytest.raises(FinalizerError) as caught, container.scope() as scope:
        scope.get(Needs)
    assert events == ["close first"]
    assert [type(e) for e in caught.value.exceptions] == [OSError, RuntimeError]
    failures = [r for r in caplog.records if r.name == "container" and r.levelno == logging.ERROR]
    assert len(failures) == 2


def test_failing_finalizer_is_noted_on_the_body_error() -> None:
    events: list[str] = []
    container = failing(events)

    def request() -> None:
        with container.scope() as scope:
            scope.get(Needs)
            raise KeyError("body")

    with pytest.raises(KeyError) as caught:
        request()
    assert events == ["close first"]
    (note,) = caught.value.__notes__
    assert "2 finalizer(s) failed" in note
    assert "third failed" in note
    assert "second failed" in note


@pytest.mark.anyio
async def test_failing_async_finalizer_does_not_stop_the_others() -> None:
    events: list[str] = []

    async def second() -> AsyncIterator[Second]:
        yield Second()
        raise RuntimeError("async failed")

    container = failing(events)
    container.scoped(Second, second)
    with pytest.raises(FinalizerError) as caught:
        async with container.scope() as scope:
            await scope.aget(Needs)
    assert events == ["close first"]
    assert sorted(str(e) for e in caught.value.exceptions) == ["async failed", "third failed"]


def test_generator_that_yields_twice_is_closed_and_reported() -> None:
    events: list[str] = []

    def twice() -> Iterator[First]:
        try:
            yield First()
            yield First()
        finally:
            events.append("closed")

    container = Container()
    container.scoped(First, twice)
    with pytest.raises(FinalizerError) as caught, container.scope() as scope:
        scope.get(First)
    assert events == ["closed"]
    assert "more than once" in str(caught.value.exceptions[0])


def test_generator_that_does_not_yield_is_an_error() -> None:
    def never() -> Iterator[First]:
        return
        yield First()

    container = Container()
    container.scoped(First, never)
    with container.scope() as scope, pytest.raises(RuntimeError, match="without yielding"):
        scope.get(First)


def test_transient_finalizers_run_at_scope_exit_once_per_instance() -> None:
    closed: list[First] = []

    def first() -> Iterator[First]:
        value = First()
        yield value
        closed.append(value)

    container = Container()
    container.transient(First, first)
    with container.scope() as scope:
        made = [scope.get(First) for _ in range(3)]
    assert closed == made[::-1]


def test_singleton_finalizers_run_at_container_close() -> None:
    events: list[str] = []

    def first() -> Iterator[First]:
        yield First()
        events.append("close first")

    container = Container()
    container.singleton(First, first)
    with container.scope() as scope:
        scope.get(First)
    assert events == []
    container.close()
    assert events == ["close first"]
    container.close()
    assert events == ["close first"]


@pytest.mark.anyio
async def test_async_singleton_finalizers_run_at_container_aclose() -> None:
    events: list[str] = []

    async def first() -> AsyncIterator[First]:
        yield First()
        events.append("close first")

    container = Container()
    container.singleton(First, first)
    container.on_close(lambda: events.append("hook"))
    async with container:
        await container.aget(First)
    assert events == ["close first", "hook"]


@pytest.mark.anyio
async def test_sync_exit_cannot_run_an_async_finalizer_and_says_so() -> None:
    events: list[str] = []
    container = tracked(events)
    with pytest.raises(FinalizerError) as caught, container.scope() as scope:
        await scope.aget(Needs)
    (error,) = caught.value.exceptions
    assert isinstance(error, ScopeError)
    assert "async with" in str(error)
    assert events == [*OPENED, "close third", "close first"]


def test_scoped_service_outside_a_scope_is_a_scope_error() -> None:
    class Uses:
        def __init__(self, first: First) -> None:
            self.first = first

    container = Container()
    container.scoped(First)
    with pytest.raises(ScopeError, match=r"First is scoped.*outside a scope"):
        container.get(First)
    with pytest.raises(ScopeError, match="outside a scope"):
        container.get(Uses)


@pytest.mark.anyio
async def test_scoped_service_outside_a_scope_is_a_scope_error_async() -> None:
    container = Container()
    container.scoped(First)
    with pytest.raises(ScopeError, match="outside a scope"):
        await container.aget(First)


@pytest.mark.anyio
async def test_closed_scope_cannot_be_used() -> None:
    container = Container()
    container.scoped(First)
    container.transient(Second)
    with container.scope() as scope:
        scope.get(First)
    assert scope.closed
    for key in (First, Second, Third):
        with pytest.raises(ScopeError, match="closed"):
            scope.get(key)
        with pytest.raises(ScopeError, match="closed"):
            await scope.aget(key)
    with pytest.raises(ScopeError, match="closed"):
        scope.call(lambda: None)
    with pytest.raises(ScopeError, match="closed"):
        await scope.acall(lambda: None)


def test_async_graph_through_sync_get_is_async_resolution_required() -> None:
    events: list[str] = []
    container = tracked(events)
    with container.scope() as scope:
        with pytest.raises(AsyncResolutionRequired, match=r"await scope\.aget\(Needs\)"):
            scope.get(Needs)
        with pytest.raises(AsyncResolutionRequired):
            scope.get(Second)
        assert isinstance(scope.get(First), First)
    with pytest.raises(AsyncResolutionRequired):
        container.get(Second)


def test_scopes_are_independent() -> None:
    container = Container()
    container.scoped(First)
    with container.scope() as outer:
        with container.scope() as inner:
            assert inner.get(First) is not outer.get(First)
        assert not outer.closed
        assert inner.closed


def test_container_scope_starts_like_the_scope_constructor() -> None:
    container = Container()
    container.scoped(First)
    made, constructed = container.scope(), Scope(container)
    assert made.session is made
    assert constructed.session is constructed
    unset = object()  # a slot neither sets (the record of a fresh path) reads as this
    for name in Scope.__slots__:
        if name == "session":
            continue
        mine, theirs = getattr(made, name, unset), getattr(constructed, name, unset)
        assert mine == theirs, name
        assert type(mine) is type(theirs), name
    assert made.cache is not constructed.cache
    assert made.exits is not constructed.exits
    assert not made.closed
    with made as scope:
        assert scope.get(First) is scope.get(First)
    assert made.closed


@pytest.mark.parametrize("in_session", [False, True])
def test_a_dropped_scope_frees_its_context_without_the_cycle_collector(in_session: bool) -> None:
    """A request scope given context values is not a reference cycle: dropping it frees
    what it holds at once, not at the next collection (a delivery or a call opens one)."""

    class Marker:
        pass

    container = Container()
    container.scoped(First)
    marker = Marker()
    freed = weakref.ref(marker)
    collecting = gc.isenabled()
    gc.disable()
    try:
        with contextlib.ExitStack() as stack:
            opener = stack.enter_context(container.session()) if in_session else container
            with opener.scope({Marker: marker}) as scope:
                assert scope.get(First) is scope.get(First)
            del scope, marker
            assert freed() is None
    finally:
        if collecting:
            gc.enable()
