"""A scope's cache through its states: the values a new scope's first resolution keeps,
the dict made of them, a failure half way, session values, and closing."""

import gc
import weakref
from collections.abc import Iterator

import pytest

from container import Container, Lifetime


class D:
    pass


class E:
    pass


class B:
    def __init__(self, d: D) -> None:
        self.d = d


class C:
    def __init__(self, d: D, e: E) -> None:
        self.d = d
        self.e = e


class A:
    def __init__(self, b: B, c: C) -> None:
        self.b = b
        self.c = c


def graph() -> Container:
    container = Container()
    container.singleton(D)
    for cls in (E, B, C, A):
        container.scoped(cls)
    return container


def test_the_first_resolution_of_a_scope_caches_every_scoped_node_it_built() -> None:
    container = graph()
    with container.scope() as scope:
        a = scope.get(A)
        assert scope.get(B) is a.b  # a second resolution finds what the first one built
        assert scope.get(A) is a
        assert scope.cache == {A: a, B: a.b, C: a.c, E: a.c.e}
    with container.scope() as scope:
        a = scope.get(A)
        assert scope.cache == {A: a, B: a.b, C: a.c, E: a.c.e}  # read before anything else
        assert scope.get(E) is a.c.e


@pytest.mark.anyio
async def test_the_first_awaited_resolution_caches_them_too() -> None:
    container = graph()
    async with container.scope() as scope:
        a = await scope.aget(A)
        assert await scope.aget(C) is a.c
        assert scope.get(E) is a.c.e
        assert set(scope.cache) == {A, B, C, E}


def test_a_first_resolution_that_fails_keeps_what_it_built_before_the_failure() -> None:
    made: list[str] = []
    closed: list[str] = []

    def make_b(d: D) -> Iterator[B]:
        made.append("B")
        yield B(d)
        closed.append("B")

    failures = iter([RuntimeError("C is not ready")])

    def make_c(d: D, e: E) -> C:
        for failure in failures:
            raise failure
        return C(d, e)

    container = graph()
    container.scoped(B, make_b)
    container.scoped(C, make_c)
    with container.scope() as scope:
        with pytest.raises(RuntimeError, match="not ready"):
            scope.get(A)
        b = scope.get(B)  # built before C failed: cached, as it would be one by one
        a = scope.get(A)
        assert a.b is b
        assert made == ["B"]
        assert closed == []
    assert closed == ["B"]  # one B, finalized once


def test_a_scope_that_is_its_own_session_keeps_both_kinds_of_values() -> None:
    class Connection:
        pass

    class Unit:
        def __init__(self, connection: Connection, e: E) -> None:
            self.connection = connection
            self.e = e

    container = Container()
    container.bind(Connection, lifetime=Lifetime.SESSION)
    container.scoped(E)
    container.scoped(Unit)
    with container.scope() as scope:
        unit = scope.get(Unit)
        assert scope.get(Connection) is unit.connection
        assert scope.get(E) is unit.e
        assert scope.get(Unit) is unit
    with container.session() as session, session.scope() as request:
        unit = request.get(Unit)
        assert request.get(Connection) is unit.connection is session.get(Connection)
        assert request.get(Unit) is unit


def test_closing_a_scope_lets_go_of_its_values() -> None:
    container = graph()
    with container.scope() as scope:
        built = weakref.ref(scope.get(A))
    gc.collect()
    assert scope.closed
    assert built() is None  # the scope object is still here; its values are not
