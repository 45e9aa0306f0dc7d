"""Compiled builders: graphs deeper than the inline budget, scopes that already hold
values, and caches that must refuse every lookup."""

import re
import traceback
from typing import Any

import pytest

from container import Container, ScopeError


def chain(length: int) -> list[type]:
    """``C0 <- C1 <- ...``: each class takes the previous one and, from C2 on, C0 too."""
    classes: list[type] = []
    for i in range(length):
        if i == 0:
            cls = type("C0", (), {"__init__": lambda self: None})
        else:

            def init(self: Any, prev: Any, root: Any = None) -> None:
                self.prev = prev
                self.root = root

            init.__annotations__ = {"prev": classes[-1], "root": classes[0] if i > 1 else int}
            cls = type(f"C{i}", (), {"__init__": init})
        cls.__module__ = __name__
        classes.append(cls)
    return classes


@pytest.mark.parametrize("length", [3, 40])
def test_deep_scoped_chain_shares_each_node_within_a_scope(length: int) -> None:
    classes = chain(length)
    container = Container()
    for cls in classes:
        container.scoped(cls)
    with container.scope() as scope:
        top = scope.get(classes[-1])
        node, seen = top, []
        while hasattr(node, "prev"):
            seen.append(node)
            node = node.prev
        assert node is scope.get(classes[0])
        assert len(seen) == length - 1
        assert all(n.root is node for n in seen[:-1])  # C0 built once, shared by everyone
        assert all(scope.get(type(n)) is n for n in seen)
    with container.scope() as other:
        assert other.get(classes[0]) is not node


def test_scope_that_already_holds_values_reuses_them() -> None:
    classes = chain(5)
    container = Container()
    for cls in classes:
        container.scoped(cls)
    with container.scope() as scope:
        middle = scope.get(classes[2])  # the cache is no longer empty
        top = scope.get(classes[4])
        assert top.prev.prev is middle
        assert top.root is middle.prev.prev is scope.get(classes[0])


def test_builders_called_directly_refuse_closed_scopes_and_the_root() -> None:
    classes = chain(3)
    container = Container()
    for cls in classes:
        container.scoped(cls)
    build = container.builder(classes[-1])
    with container.scope() as scope:
        pass
    with pytest.raises(ScopeError, match="closed"):
        build(scope)
    with pytest.raises(ScopeError, match="outside a scope"):
        container.get(classes[-1])
    assert scope.exits == []


def test_transient_root_of_scoped_nodes_in_a_fresh_scope() -> None:
    classes = chain(4)
    container = Container()
    for cls in classes[:-1]:
        container.scoped(cls)
    container.transient(classes[-1])
    with container.scope() as scope:
        first, second = scope.get(classes[-1]), scope.get(classes[-1])
        assert first is not second
        assert first.prev is second.prev
        assert first.root is second.root is scope.get(classes[0])


def test_singleton_read_by_a_builder_is_created_once_and_again_after_close() -> None:
    made: list[object] = []

    class Shared:
        def __init__(self) -> None:
            made.append(self)

    class Uses:
        def __init__(self, shared: Shared) -> None:
            self.shared = shared

    container = Container()
    container.singleton(Shared)
    container.scoped(Uses)
    with container.scope() as scope:
        first = scope.get(Uses).shared
    with container.scope() as scope:
        assert scope.get(Uses).shared is first
    container.close()  # forgets the singleton; the same builder creates it again
    with container.scope() as scope:
        assert scope.get(Uses).shared is not first
    assert len(made) == 2


def test_failing_singleton_factory_error_carries_no_lookup_error() -> None:
    class Broken:
        def __init__(self) -> None:
            raise ValueError("broken")

    class Uses:
        def __init__(self, broken: Broken) -> None:
            self.broken = broken

    container = Container()
    container.singleton(Broken)
    container.transient(Uses)
    for key in (Uses, Broken):
        with pytest.raises(ValueError, match="broken") as caught:
            container.get(key)
        assert caught.value.__context__ is None


class Settings:
    pass


class Exploding:
    def __init__(self, settings: Settings) -> None:
        raise RuntimeError("no connection")


class Service:
    def __init__(self, exploding: Exploding) -> None:
        self.exploding = exploding


async def open_exploding(settings: Settings) -> Exploding:
    raise RuntimeError("no connection")


def _builder_frame(error: BaseException, name: str) -> traceback.FrameSummary:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.name == name]
    assert len(frames) == 1, [f.name for f in traceback.extract_tb(error.__traceback__)]
    return frames[0]


def test_a_traceback_through_a_builder_names_it_and_shows_its_generated_line() -> None:
    container = Container()
    container.singleton(Settings)
    container.scoped(Exploding)
    container.scoped(Service)
    with container.scope() as scope, pytest.raises(RuntimeError) as raised:
        scope.get(Service)
    text = "".join(traceback.format_exception(raised.value))
    frame = _builder_frame(raised.value, "build_Service")
    assert frame.filename.startswith("<container build_Service ")
    source = container.builder(Service).__source__
    assert source.startswith("def build_Service(ctx):")
    call = source.splitlines()[(frame.lineno or 0) - 1].strip()
    assert frame.line == call
    assert "_Exploding(" in call  # the factory's global is named for it
    assert f"in build_Service\n    {call}\n" in text


@pytest.mark.anyio
async def test_an_async_builder_and_a_singleton_creator_are_named_too() -> None:
    container = Container()
    container.singleton(Settings)
    container.singleton(Exploding, open_exploding)
    container.scoped(Service)
    async with container.scope() as scope:
        with pytest.raises(RuntimeError) as raised:
            await scope.aget(Service)
    text = "".join(traceback.format_exception(raised.value))
    frame = _builder_frame(raised.value, "create_Exploding")
    assert "in create_Exploding" in text
    assert re.fullmatch(r"return await F\d+_open_exploding\(v\d+\)", frame.line or "")
