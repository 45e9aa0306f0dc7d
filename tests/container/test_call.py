"""scope.call / scope.acall: injectable parameters are filled, the caller gives the rest."""

from typing import Protocol

import pytest

from container import Container, ResolutionError


class Clock(Protocol):
    def now(self) -> str: ...


class Noon:
    def now(self) -> str:
        return "12:00"


class Db:
    pass


class Greeter:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def greet(self, name: str) -> str:
        return f"Hello, {name}, it is {self.clock.now()}"


@pytest.fixture
def container() -> Container:
    container = Container()
    container.singleton(Clock, Noon)
    container.scoped(Db)
    return container


def test_call_fills_injectable_parameters_and_takes_the_rest_by_keyword(
    container: Container,
) -> None:
    def handler(name: str, greeter: Greeter, db: Db, punctuation: str = "!") -> tuple[str, Db]:
        return greeter.greet(name) + punctuation, db

    with container.scope() as scope:
        text, db = scope.call(handler, name="Ada")
        assert text == "Hello, Ada, it is 12:00!"
        assert db is scope.get(Db)
        assert scope.call(handler, name="Bo", punctuation="?")[0].endswith("?")


def test_call_takes_leading_positional_arguments_from_the_caller(container: Container) -> None:
    def handler(name: str, greeter: Greeter, /) -> str:
        return greeter.greet(name)

    def handler2(db: Db, clock: Clock) -> tuple[Db, str]:
        return db, clock.now()

    mine = Db()
    with container.scope() as scope:
        assert scope.call(handler, "Ada") == "Hello, Ada, it is 12:00"
        got, now = scope.call(handler2, mine)
        assert got is mine
        assert now == "12:00"


def test_caller_keyword_replaces_an_injectable_parameter(container: Container) -> None:
    def handler(db: Db, clock: Clock) -> Db:
        return db

    mine = Db()
    with container.scope() as scope:
        assert scope.call(handler, db=mine) is mine
        assert scope.call(handler) is scope.get(Db)


def test_call_keeps_defaults_of_parameters_it_cannot_fill(container: Container) -> None:
    def handler(db: Db, limit: int = 10, *, label: str = "x") -> tuple[int, str]:
        return limit, label

    with container.scope() as scope:
        assert scope.call(handler) == (10, "x")
        assert scope.call(handler, limit=3, label="y") == (3, "y")


def test_call_bound_method_and_class(container: Container) -> None:
    class Handler:
        def run(self, clock: Clock, suffix: str) -> str:
            return clock.now() + suffix

    with container.scope() as scope:
        assert scope.call(Handler().run, suffix="h") == "12:00h"
        assert scope.call(Handler().run, suffix="!") == "12:00!"
        greeter = scope.call(Greeter)
        assert greeter.greet("Ada").startswith("Hello, Ada")


def test_missing_parameter_with_no_default_is_a_resolution_error(container: Container) -> None:
    class Unbound(Protocol):
        pass

    def handler(thing: Unbound, name: str) -> str:
        return name

    with container.scope() as scope:
        with pytest.raises(ResolutionError) as caught:
            scope.call(handler, name="x")
        text = str(caught.value)
        assert "Cannot call " in text
        assert "handler(thing) -> ???" in text
        assert "name" not in {p.path[-1] for p in caught.value.problems}
        assert scope.call(handler, object(), name="x") == "x"
        assert scope.call(handler, thing=object(), name="y") == "y"


@pytest.mark.anyio
async def test_acall_awaits_async_dependencies_and_the_result(container: Container) -> None:
    async def make_db() -> Db:
        return Db()

    container.scoped(Db, make_db)

    async def handler(db: Db, greeter: Greeter, name: str) -> tuple[Db, str]:
        return db, greeter.greet(name)

    def sync_handler(db: Db) -> Db:
        return db

    async with container.scope() as scope:
        db, text = await scope.acall(handler, name="Ada")
        assert db is await scope.aget(Db)
        assert text.startswith("Hello, Ada")
        assert await scope.acall(sync_handler) is db
        mine = Db()
        assert (await scope.acall(handler, mine, name="Bo"))[0] is mine


def test_call_with_async_dependency_needs_acall(container: Container) -> None:
    from container import AsyncResolutionRequired

    async def make_db() -> Db:
        return Db()

    container.scoped(Db, make_db)

    def handler(db: Db) -> Db:
        return db

    with container.scope() as scope, pytest.raises(AsyncResolutionRequired):
        scope.call(handler)


def test_plans_for_callables_made_per_call_do_not_pile_up(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    import container.compiled as module

    monkeypatch.setattr(module, "CALL_PLAN_LIMIT", 3)
    with container.scope() as scope:
        for i in range(10):

            def handler(db: Db, value: int = i) -> int:
                return value

            assert scope.call(handler) == i
    assert len(container._compiled.call_plans) <= 3
