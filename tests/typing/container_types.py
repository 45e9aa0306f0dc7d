"""What a type checker tells users of ``container``: resolving ``T`` gives a ``T``.

Checked by mypy (strict) and pyright in ``tests/test_typing.py``; importing this module
runs nothing but definitions. An unused ``type: ignore`` is an error under both, so a
line that must be refused proves the checker refuses it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Protocol, assert_type

from container import Container, Lifetime, Scope, SessionScope


class Clock(Protocol):
    def now(self) -> str: ...


class FixedClock:
    def now(self) -> str:
        return "noon"


class Database:
    pass


def open_database() -> Iterator[Database]:
    yield Database()


async def open_async_database() -> AsyncIterator[Database]:
    yield Database()


def bindings() -> Container:
    container = Container()
    container.singleton(Clock, FixedClock)
    container.scoped(Database, open_database)
    container.transient(FixedClock)
    container.instance(str, "config")
    container.bind(Database, open_async_database, Lifetime.SCOPED)
    return container


def resolving(container: Container) -> None:
    assert_type(container.get(FixedClock), FixedClock)
    # A Protocol or abstract class: mypy refuses it where ``type[T]`` is expected, so the
    # result is ``Any`` there (pyright infers ``Clock``); annotating the variable works in both.
    clock: Clock = container.get(Clock)
    assert_type(clock.now(), str)
    with container.scope() as scope:
        assert_type(scope, Scope)
        assert_type(scope.get(Database), Database)
        assert_type(scope.get(FixedClock), FixedClock)
    with container.session() as session:
        assert_type(session, SessionScope)
        with session.scope() as request:
            assert_type(request.get(Database), Database)
    print(container.get(Database).missing)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


async def resolving_async(container: Container) -> None:
    assert_type(await container.aget(FixedClock), FixedClock)
    async with container.session() as session, session.scope() as scope:
        assert_type(await scope.aget(Database), Database)
        assert_type(await scope.aget(FixedClock), FixedClock)
