"""Singleton once per container (also under concurrent first access), scoped once per
scope, transient every time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

from container import Container, Lifetime


class Counter:
    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def tick(self) -> int:
        with self.lock:
            self.calls += 1
            return self.calls


class Service:
    pass


class Leaf:
    pass


class Branch:
    def __init__(self, leaf: Leaf) -> None:
        self.leaf = leaf


def test_singleton_is_built_once_per_container() -> None:
    container = Container()
    container.singleton(Service)
    with container.scope() as first, container.scope() as second:
        assert first.get(Service) is second.get(Service)
    assert container.get(Service) is container.get(Service)
    assert Container().get(Service) is not container.get(Service)  # autowired: transient


def test_singleton_built_in_a_scope_is_shared_with_the_root() -> None:
    container = Container()
    container.singleton(Service)
    with container.scope() as scope:
        inside = scope.get(Service)
    assert container.get(Service) is inside


def test_scoped_is_built_once_per_scope() -> None:
    container = Container()
    container.scoped(Service)
    with container.scope() as first:
        a = first.get(Service)
        assert first.get(Service) is a
    with container.scope() as second:
        b = second.get(Service)
        assert second.get(Service) is b
    assert a is not b


def test_scoped_dependency_is_shared_by_everything_in_the_scope() -> None:
    container = Container()
    container.scoped(Leaf)
    container.transient(Branch)
    with container.scope() as scope:
        one, two = scope.get(Branch), scope.get(Branch)
        assert one is not two
        assert one.leaf is two.leaf is scope.get(Leaf)


def test_transient_is_new_every_time() -> None:
    container = Container()
    container.transient(Service)
    with container.scope() as scope:
        assert scope.get(Service) is not scope.get(Service)
    assert container.get(Service) is not container.get(Service)


def test_unbound_concrete_class_is_transient() -> None:
    container = Container()
    with container.scope() as scope:
        assert isinstance(scope.get(Branch).leaf, Leaf)
        assert scope.get(Leaf) is not scope.get(Leaf)


def test_bind_takes_a_lifetime() -> None:
    container = Container()
    binding = container.bind(Service, Service, Lifetime.SCOPED)
    assert binding.lifetime is Lifetime.SCOPED
    with container.scope() as scope:
        assert scope.get(Service) is scope.get(Service)


def test_singleton_factory_runs_once_under_concurrent_first_access_from_threads() -> None:
    counter = Counter()
    started = threading.Barrier(8)

    def make() -> Service:
        counter.tick()
        time.sleep(0.01)  # a slow constructor: the other threads arrive meanwhile
        return Service()

    container = Container()
    container.singleton(Service, make)
    container.scoped(Branch)

    def resolve(_: int) -> Service:
        started.wait()
        with container.scope() as scope:
            return scope.get(Service)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(resolve, range(8)))
    assert counter.calls == 1
    assert all(result is results[0] for result in results)


def test_slow_singleton_is_still_built_once_when_threads_pile_up() -> None:
    counter = Counter()
    entered = threading.Event()
    release = threading.Event()

    def make() -> Service:
        counter.tick()
        entered.set()
        release.wait(5)
        return Service()

    container = Container()
    container.singleton(Service, make)
    results: list[Service] = []

    def resolve() -> None:
        results.append(container.get(Service))

    threads = [threading.Thread(target=resolve) for _ in range(6)]
    threads[0].start()
    assert entered.wait(5)
    for thread in threads[1:]:
        thread.start()
    time.sleep(0.05)  # let them reach the singleton while it is being built
    release.set()
    for thread in threads:
        thread.join(5)
    assert counter.calls == 1
    assert len(results) == 6
    assert all(result is results[0] for result in results)


@pytest.mark.anyio
async def test_async_singleton_factory_runs_once_under_concurrent_tasks() -> None:
    counter = Counter()

    async def make() -> Service:
        counter.tick()
        await anyio.sleep(0.01)  # every other task arrives while this one is suspended
        return Service()

    container = Container()
    container.singleton(Service, make)
    results: list[Service] = []

    async def resolve() -> None:
        async with container.scope() as scope:
            results.append(await scope.aget(Service))

    async with anyio.create_task_group() as tasks:
        for _ in range(50):
            tasks.start_soon(resolve)
    assert counter.calls == 1
    assert len(results) == 50
    assert all(result is results[0] for result in results)


@pytest.mark.anyio
async def test_async_singleton_below_a_scoped_service_is_built_once() -> None:
    counter = Counter()

    async def make() -> Leaf:
        counter.tick()
        await anyio.sleep(0.01)
        return Leaf()

    container = Container()
    container.singleton(Leaf, make)
    container.scoped(Branch)
    leaves: list[Leaf] = []

    async def resolve() -> None:
        async with container.scope() as scope:
            leaves.append((await scope.aget(Branch)).leaf)

    async with anyio.create_task_group() as tasks:
        for _ in range(20):
            tasks.start_soon(resolve)
    assert counter.calls == 1
    assert {id(leaf) for leaf in leaves} == {id(leaves[0])}


@pytest.mark.anyio
async def test_async_scoped_is_once_per_scope_and_transient_every_time() -> None:
    async def make() -> Service:
        await anyio.sleep(0)
        return Service()

    container = Container()
    container.scoped(Service, make)
    container.transient(Leaf)
    async with container.scope() as first:
        a = await first.aget(Service)
        assert await first.aget(Service) is a
        assert await first.aget(Leaf) is not await first.aget(Leaf)
    async with container.scope() as second:
        assert await second.aget(Service) is not a


class OnePerContainer:
    """Autowired as a singleton: one per container, bound or not."""

    __lifetime__ = Lifetime.SINGLETON


def test_a_class_may_say_it_is_autowired_as_a_singleton() -> None:
    container = Container()
    one = container.get(OnePerContainer)
    assert container.get(OnePerContainer) is one
    with container.scope() as scope:
        assert scope.get(OnePerContainer) is one
    assert Container().get(OnePerContainer) is not one
    container.transient(OnePerContainer)  # a binding's own lifetime wins
    assert container.get(OnePerContainer) is not container.get(OnePerContainer)


def test_a_lifetime_that_is_no_lifetime_is_refused() -> None:
    class Odd:
        __lifetime__ = "singleton"

    with pytest.raises(TypeError, match=r"Odd.__lifetime__ must be a Lifetime, not 'singleton'"):
        Container().get(Odd)
