"""Eager singletons built at start-up, and containers derived with overrides."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from container import Container

pytestmark = pytest.mark.anyio


class Pool:
    pass


class Migrations:
    pass


class Lazy:
    pass


def test_start_builds_eager_singletons_in_order_and_close_finalizes_them() -> None:
    events: list[str] = []

    def pool() -> Iterator[Pool]:
        events.append("pool up")
        yield Pool()
        events.append("pool down")

    def migrations(pool: Pool) -> Migrations:
        events.append("migrated")
        return Migrations()

    container = Container()
    container.singleton(Pool, pool, eager=True)
    container.singleton(Migrations, migrations, eager=True)
    container.singleton(Lazy)
    container.start()
    assert events == ["pool up", "migrated"]
    assert container.get(Pool) is container.get(Pool)
    container.close()
    assert events == ["pool up", "migrated", "pool down"]


async def test_astart_awaits_async_factories() -> None:
    events: list[str] = []

    async def pool() -> AsyncIterator[Pool]:
        events.append("up")
        yield Pool()
        events.append("down")

    container = Container()
    container.singleton(Pool, pool, eager=True)
    await container.astart()
    assert events == ["up"]
    await container.aclose()
    assert events == ["up", "down"]


def test_a_failing_start_closes_what_it_built_and_raises() -> None:
    events: list[str] = []

    def pool() -> Iterator[Pool]:
        yield Pool()
        events.append("pool down")

    def migrations() -> Migrations:
        raise RuntimeError("database is read-only")

    container = Container()
    container.singleton(Pool, pool, eager=True)
    container.singleton(Migrations, migrations, eager=True)
    with pytest.raises(RuntimeError, match="read-only"):
        container.start()
    assert events == ["pool down"]


def test_with_overrides_derives_a_container_and_leaves_this_one_alone() -> None:
    class Repo:
        pass

    class FakeRepo(Repo):
        pass

    container = Container()
    container.scoped(Repo)
    fake = FakeRepo()
    derived = container.with_overrides({Repo: fake})
    with derived.scope() as scope:
        assert scope.get(Repo) is fake
    with container.scope() as scope:
        assert type(scope.get(Repo)) is Repo
    by_class = container.with_overrides({Repo: FakeRepo})
    with by_class.scope() as scope:
        assert type(scope.get(Repo)) is FakeRepo
        assert scope.get(Repo) is scope.get(Repo)  # still scoped
