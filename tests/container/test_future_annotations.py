"""String annotations (``from __future__ import annotations``) resolve like real ones."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Annotated, Protocol

import pytest

from container import Container, ProblemKind

if TYPE_CHECKING:
    from decimal import Decimal


class Clock(Protocol):
    def now(self) -> str: ...


class FixedClock:
    def now(self) -> str:
        return "noon"


class Settings:
    pass


class Session:
    def __init__(self, settings: Settings, clock: Clock) -> None:
        self.settings = settings
        self.clock = clock


class Audit:
    def __init__(self, session: Annotated[Session, "audit"], level: int | None = None) -> None:
        self.session = session
        self.level = level


def open_session(settings: Settings, clock: Clock) -> Iterator[Session]:
    yield Session(settings, clock)


async def open_async_session(settings: Settings, clock: Clock) -> AsyncIterator[Session]:
    yield Session(settings, clock)


class Priced:
    def __init__(self, price: Decimal) -> None:
        self.price = price


def test_string_annotations_on_constructors_and_factories_resolve() -> None:
    container = Container()
    container.singleton(Clock, FixedClock)
    container.scoped(Session, open_session)
    with container.scope() as scope:
        audit = scope.get(Audit)
        assert audit.session is scope.get(Session)
        assert audit.session.clock.now() == "noon"
        assert audit.level is None


@pytest.mark.anyio
async def test_string_annotations_on_async_generators_resolve() -> None:
    container = Container()
    container.singleton(Clock, FixedClock)
    container.scoped(Session, open_async_session)
    async with container.scope() as scope:
        assert isinstance((await scope.aget(Audit)).session.settings, Settings)


def test_call_with_string_annotations() -> None:
    def handler(session: Session, text: str) -> str:
        return f"{session.clock.now()}: {text}"

    container = Container()
    container.singleton(Clock, FixedClock)
    with container.scope() as scope:
        assert scope.call(handler, text="hi") == "noon: hi"


def test_annotation_that_cannot_be_evaluated_is_reported_not_raised() -> None:
    container = Container()
    container.transient(Priced)
    (problem,) = container.check()
    assert problem.kind is ProblemKind.INVALID
    assert "Decimal" in problem.message
    assert problem.path == ("Priced",)
