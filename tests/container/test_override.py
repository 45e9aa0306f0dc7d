"""container.override(): a replacement inside the block, the original binding after."""

from collections.abc import Iterator
from typing import Protocol

import pytest

from container import Container, Lifetime


class Clock(Protocol):
    def now(self) -> str: ...


class RealClock:
    def now(self) -> str:
        return "real"


class FakeClock:
    def now(self) -> str:
        return "fake"


class Report:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock


@pytest.fixture
def container() -> Container:
    container = Container()
    container.singleton(Clock, RealClock)
    container.singleton(Report)
    return container


def test_override_with_an_instance_and_restore(container: Container) -> None:
    fake = FakeClock()
    with container.override(Clock, fake):
        assert container.get(Clock) is fake
        with container.scope() as scope:
            assert scope.get(Clock) is fake
    assert isinstance(container.get(Clock), RealClock)


def test_override_with_a_class_keeps_the_lifetime(container: Container) -> None:
    with container.override(Clock, FakeClock) as binding:
        assert binding.lifetime is Lifetime.SINGLETON
        assert container.get(Clock) is container.get(Clock)
        assert container.get(Clock).now() == "fake"
    assert container.get(Clock).now() == "real"


def test_override_with_a_factory_and_a_lifetime(container: Container) -> None:
    def make() -> Clock:
        return FakeClock()

    with container.override(Clock, factory=make, lifetime=Lifetime.TRANSIENT):
        assert container.get(Clock) is not container.get(Clock)
        assert container.get(Clock).now() == "fake"
    assert container.get(Clock) is container.get(Clock)


def test_singletons_built_before_the_override_come_back_after(container: Container) -> None:
    real = container.get(Clock)
    report = container.get(Report)
    with container.override(Clock, FakeClock()):
        assert container.get(Report).clock.now() == "fake"  # dependents see the replacement
        assert container.get(Report) is not report
    assert container.get(Clock) is real
    assert container.get(Report) is report


def test_singletons_built_during_the_override_are_dropped(container: Container) -> None:
    with container.override(Clock, FakeClock()):
        during = container.get(Report)
        assert during.clock.now() == "fake"
    after = container.get(Report)
    assert after is not during
    assert after.clock.now() == "real"


def test_override_of_an_unbound_key_is_removed_after() -> None:
    class Unbound(Protocol):
        pass

    container = Container()
    marker = object()
    with container.override(Unbound, marker):
        assert container.get(Unbound) is marker
    assert not container.can_resolve(Unbound)


def test_override_is_restored_when_the_block_raises(container: Container) -> None:
    def failing_test() -> None:
        with container.override(Clock, FakeClock()):
            raise AssertionError("test failed")

    with pytest.raises(AssertionError):
        failing_test()
    assert container.get(Clock).now() == "real"


def test_nested_overrides_unwind_in_order(container: Container) -> None:
    class Other:
        def now(self) -> str:
            return "other"

    with container.override(Clock, FakeClock()):
        with container.override(Clock, Other()):
            assert container.get(Report).clock.now() == "other"
        assert container.get(Report).clock.now() == "fake"
    assert container.get(Report).clock.now() == "real"


def test_override_of_a_scoped_generator_with_a_plain_value() -> None:
    closed: list[str] = []

    def session() -> Iterator[Clock]:
        yield RealClock()
        closed.append("real")

    container = Container()
    container.scoped(Clock, session)
    with container.override(Clock, FakeClock()), container.scope() as scope:
        assert scope.get(Clock).now() == "fake"
    assert closed == []
    with container.scope() as scope:
        assert scope.get(Clock).now() == "real"
    assert closed == ["real"]


def test_override_needs_a_replacement(container: Container) -> None:
    with pytest.raises(TypeError, match="replacement"), container.override(Clock):
        pass
