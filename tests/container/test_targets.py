"""Every kind of binding target, Protocols and ABCs, autowiring, Annotated, Optional and
defaults."""

import abc
import functools
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from typing import Annotated, Optional, Protocol

import pytest

from container import AsyncResolutionRequired, Container, ProviderKind


class Config:
    def __init__(self) -> None:
        self.dsn = "sqlite://"


class Connection:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.closed = False


class Greeter(Protocol):
    def greet(self, name: str) -> str: ...


class English:
    def greet(self, name: str) -> str:
        return f"Hello, {name}!"


class Store(abc.ABC):
    @abc.abstractmethod
    def load(self) -> str: ...


class MemoryStore(Store):
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def load(self) -> str:
        return "loaded"


def test_class_target_is_built_from_its_constructor_annotations() -> None:
    container = Container()
    binding = container.scoped(Connection)
    assert binding.kind is ProviderKind.CLASS
    with container.scope() as scope:
        assert isinstance(scope.get(Connection).config, Config)


def test_protocol_binds_to_an_implementation() -> None:
    container = Container()
    container.singleton(Greeter, English)
    with container.scope() as scope:
        greeter = scope.get(Greeter)
    assert isinstance(greeter, English)
    assert greeter.greet("Ada") == "Hello, Ada!"


def test_abc_binds_to_an_implementation_with_its_own_dependencies() -> None:
    container = Container()
    container.scoped(Store, MemoryStore)
    with container.scope() as scope:
        store = scope.get(Store)
        assert isinstance(store, MemoryStore)
        assert store.load() == "loaded"
        assert isinstance(store.connection.config, Config)


def test_explicit_protocol_subclass_without_init_is_autowired() -> None:
    class Polite(Greeter):
        def greet(self, name: str) -> str:
            return f"Good day, {name}."

    container = Container()
    container.transient(Greeter, Polite)
    assert container.check() == ()
    assert container.get(Greeter).greet("Ada") == "Good day, Ada."


def test_sync_factory_function_receives_its_dependencies() -> None:
    def make(config: Config) -> Connection:
        connection = Connection(config)
        connection.config.dsn = "postgres://"
        return connection

    container = Container()
    assert container.scoped(Connection, make).kind is ProviderKind.FACTORY
    with container.scope() as scope:
        assert scope.get(Connection).config.dsn == "postgres://"


@pytest.mark.anyio
async def test_async_factory_function_is_awaited() -> None:
    async def make(config: Config) -> Connection:
        return Connection(config)

    container = Container()
    assert container.scoped(Connection, make).kind is ProviderKind.ASYNC_FACTORY
    async with container.scope() as scope:
        connection = await scope.aget(Connection)
        assert isinstance(connection, Connection)
        assert await scope.aget(Connection) is connection


def test_sync_generator_serves_the_yielded_value_and_finalizes_after_yield() -> None:
    events: list[str] = []

    def connect(config: Config) -> Iterator[Connection]:
        connection = Connection(config)
        events.append("open")
        yield connection
        connection.closed = True
        events.append("close")

    container = Container()
    assert container.scoped(Connection, connect).kind is ProviderKind.GENERATOR
    with container.scope() as scope:
        connection = scope.get(Connection)
        assert events == ["open"]
        assert not connection.closed
    assert connection.closed
    assert events == ["open", "close"]


@pytest.mark.anyio
async def test_async_generator_serves_the_yielded_value_and_finalizes_after_yield() -> None:
    events: list[str] = []

    async def connect(config: Config) -> AsyncIterator[Connection]:
        connection = Connection(config)
        events.append("open")
        yield connection
        connection.closed = True
        events.append("close")

    container = Container()
    assert container.scoped(Connection, connect).kind is ProviderKind.ASYNC_GENERATOR
    async with container.scope() as scope:
        connection = await scope.aget(Connection)
        assert events == ["open"]
    assert connection.closed
    assert events == ["open", "close"]


def test_contextmanager_function_is_entered_and_exited() -> None:
    events: list[str] = []

    @contextmanager
    def connect(config: Config) -> Iterator[Connection]:
        events.append("enter")
        try:
            yield Connection(config)
        finally:
            events.append("exit")

    container = Container()
    assert container.scoped(Connection, connect).kind is ProviderKind.CONTEXT_MANAGER
    with container.scope() as scope:
        assert isinstance(scope.get(Connection), Connection)
        assert events == ["enter"]
    assert events == ["enter", "exit"]


def test_function_returning_a_context_manager_is_entered() -> None:
    events: list[str] = []

    @contextmanager
    def opened() -> Iterator[Connection]:
        events.append("enter")
        yield Connection(Config())
        events.append("exit")

    def connect() -> AbstractContextManager[Connection]:
        return opened()

    container = Container()
    assert container.scoped(Connection, connect).kind is ProviderKind.CONTEXT_MANAGER
    with container.scope() as scope:
        assert isinstance(scope.get(Connection), Connection)
    assert events == ["enter", "exit"]


@pytest.mark.anyio
async def test_asynccontextmanager_function_is_entered_and_exited() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def connect(config: Config) -> AsyncIterator[Connection]:
        events.append("enter")
        try:
            yield Connection(config)
        finally:
            events.append("exit")

    container = Container()
    assert container.scoped(Connection, connect).kind is ProviderKind.ASYNC_CONTEXT_MANAGER
    async with container.scope() as scope:
        assert isinstance(await scope.aget(Connection), Connection)
        assert events == ["enter"]
    assert events == ["enter", "exit"]


def test_instance_is_shared_as_is() -> None:
    config = Config()
    container = Container()
    assert container.instance(Config, config).kind is ProviderKind.INSTANCE
    with container.scope() as scope:
        assert scope.get(Config) is config
        assert scope.get(Connection).config is config
    assert container.get(Config) is config


def test_callable_object_and_partial_are_factories() -> None:
    class MakeConnection:
        def __call__(self, config: Config) -> Connection:
            return Connection(config)

    def with_dsn(dsn: str, config: Config) -> Connection:
        config.dsn = dsn
        return Connection(config)

    container = Container()
    container.transient(Connection, MakeConnection())
    assert isinstance(container.get(Connection).config, Config)
    container.transient(Connection, functools.partial(with_dsn, "mysql://"))
    assert container.get(Connection).config.dsn == "mysql://"


@pytest.mark.anyio
async def test_callable_object_with_async_call_is_an_async_factory() -> None:
    class MakeConnection:
        async def __call__(self, config: Config) -> Connection:
            return Connection(config)

    container = Container()
    assert container.transient(Connection, MakeConnection()).kind is ProviderKind.ASYNC_FACTORY
    assert isinstance(await container.aget(Connection), Connection)


def test_non_callable_target_is_rejected() -> None:
    container = Container()
    with pytest.raises(TypeError, match="cannot bind"):
        container.scoped(Config, Config())  # a value needs container.instance()


def test_unbound_concrete_classes_are_autowired_through_the_whole_graph() -> None:
    class Repository:
        def __init__(self, connection: Connection) -> None:
            self.connection = connection

    class Handler:
        def __init__(self, repository: Repository, config: Config) -> None:
            self.repository = repository
            self.config = config

    container = Container()
    handler = container.get(Handler)
    assert isinstance(handler.repository.connection.config, Config)
    assert container.bindings == {}


def test_annotated_parameters_resolve_by_their_type() -> None:
    class Uses:
        def __init__(self, config: Annotated[Config, "primary"]) -> None:
            self.config = config

    config = Config()
    container = Container()
    container.instance(Config, config)
    assert container.get(Uses).config is config


def test_optional_parameter_resolves_when_the_type_can_be_built() -> None:
    class Uses:
        def __init__(self, greeter: Optional[Greeter], store: Store | None = None) -> None:  # noqa: UP045
            self.greeter = greeter
            self.store = store

    container = Container()
    container.singleton(Greeter, English)
    container.scoped(Store, MemoryStore)
    with container.scope() as scope:
        uses = scope.get(Uses)
    assert isinstance(uses.greeter, English)
    assert isinstance(uses.store, MemoryStore)


def test_optional_without_default_gets_none_when_the_type_cannot_be_built() -> None:
    class Uses:
        def __init__(self, greeter: Greeter | None, config: Config) -> None:
            self.greeter = greeter
            self.config = config

    container = Container()
    assert container.check(Uses) == ()
    uses = container.get(Uses)
    assert uses.greeter is None
    assert isinstance(uses.config, Config)


def test_unresolvable_parameter_with_a_default_keeps_its_default() -> None:
    fallback = English()

    class Uses:
        def __init__(
            self, config: Config, greeter: Greeter = fallback, retries: int = 3, *, name: str = "x"
        ) -> None:
            self.config = config
            self.greeter = greeter
            self.retries = retries
            self.name = name

    container = Container()
    assert container.check(Uses) == ()
    uses = container.get(Uses)
    assert uses.greeter is fallback
    assert (uses.retries, uses.name) == (3, "x")
    assert isinstance(uses.config, Config)


def test_resolvable_parameter_with_a_default_is_resolved() -> None:
    class Uses:
        def __init__(self, greeter: Greeter | None = None) -> None:
            self.greeter = greeter

    container = Container()
    container.singleton(Greeter, English)
    assert isinstance(container.get(Uses).greeter, English)


def test_positional_only_and_keyword_only_parameters() -> None:
    def make(config: Config, retries: int = 2, /, *, greeter: Greeter) -> Connection:
        connection = Connection(config)
        connection.config.dsn = f"{retries}:{greeter.greet('db')}"
        return connection

    container = Container()
    container.singleton(Greeter, English)
    container.transient(Connection, make)
    assert container.get(Connection).config.dsn == "2:Hello, db!"


def test_async_graph_through_sync_get_requires_await() -> None:
    async def make(config: Config) -> Connection:
        return Connection(config)

    class Repository:
        def __init__(self, connection: Connection) -> None:
            self.connection = connection

    container = Container()
    container.scoped(Connection, make)
    with container.scope() as scope, pytest.raises(AsyncResolutionRequired, match="aget"):
        scope.get(Repository)
