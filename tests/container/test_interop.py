"""dependency-injector interop, against the real library."""

from collections.abc import AsyncIterator, Iterator
from typing import Protocol

import pytest
from dependency_injector import containers, providers, resources

from container import AsyncResolutionRequired, Container, Lifetime, ScopeError


class Settings:
    def __init__(self, dsn: str = "sqlite://") -> None:
        self.dsn = dsn


class Engine:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.disposed = False


class Repo(Protocol):
    def find(self, key: str) -> str: ...


class SqlRepo:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def find(self, key: str) -> str:
        return f"sql:{key}"


class FakeRepo:
    def find(self, key: str) -> str:
        return f"fake:{key}"


class Mailer:
    pass


class RequestContext:
    pass


class Clock:
    pass


class Pool:
    def __init__(self) -> None:
        self.open = True


class Handler:
    """A class of ours that depends on types the dependency-injector container provides."""

    def __init__(self, engine: Engine, mailer: Mailer, context: RequestContext) -> None:
        self.engine = engine
        self.mailer = mailer
        self.context = context


EVENTS: list[str] = []


def open_engine(settings: Settings) -> Iterator[Engine]:
    engine = Engine(settings)
    EVENTS.append("engine up")
    yield engine
    engine.disposed = True
    EVENTS.append("engine down")


def make_clock() -> Clock:
    return Clock()


class PoolResource(resources.Resource[Pool]):
    def init(self) -> Pool:
        EVENTS.append("pool up")
        return Pool()

    def shutdown(self, resource: Pool | None) -> None:
        EVENTS.append("pool down")


class Services(containers.DeclarativeContainer):
    config = providers.Configuration()
    settings = providers.Object(Settings("postgres://"))
    dsn = providers.Object("postgres://")
    engine = providers.Resource(open_engine, settings=settings)
    repo = providers.Factory(SqlRepo, engine=engine)
    mailer = providers.Singleton(Mailer)
    clock = providers.Callable(make_clock)
    context = providers.ContextLocalSingleton(RequestContext)
    pool = providers.Resource(PoolResource)
    anonymous = providers.Callable(lambda: object())


@pytest.fixture(autouse=True)
def clear_events() -> None:
    EVENTS.clear()


def test_include_binds_each_provider_by_the_type_it_reveals() -> None:
    source = Services()
    container = Container()
    made = {b.key: b.lifetime for b in container.include(source)}
    assert made == {
        Settings: Lifetime.SINGLETON,  # Object
        Engine: Lifetime.SINGLETON,  # Resource (function, Iterator[Engine])
        SqlRepo: Lifetime.TRANSIENT,  # Factory
        Mailer: Lifetime.SINGLETON,  # Singleton
        Clock: Lifetime.TRANSIENT,  # Callable (return annotation)
        RequestContext: Lifetime.SCOPED,  # ContextLocalSingleton
        Pool: Lifetime.SINGLETON,  # Resource class: its init() annotation
    }
    assert str not in made  # builtin values are never keyed by their type


def test_included_providers_resolve_with_their_lifetimes() -> None:
    source = Services()
    container = Container()
    container.include(source)
    with container.scope() as scope:
        assert scope.get(SqlRepo) is not scope.get(SqlRepo)
        assert scope.get(SqlRepo).engine is scope.get(Engine) is source.engine()
        assert scope.get(Mailer) is scope.get(Mailer) is source.mailer()
        assert scope.get(Settings).dsn == "postgres://"
        assert scope.get(Clock) is not scope.get(Clock)
        handler = scope.get(Handler)
        assert handler.context is scope.get(RequestContext)
        assert handler.mailer is source.mailer()


def test_context_local_provider_is_scoped() -> None:
    container = Container()
    container.include(Services())
    with pytest.raises(ScopeError, match="outside a scope"):
        container.get(RequestContext)
    with container.scope() as scope:
        assert scope.get(RequestContext) is scope.get(RequestContext)


def test_provider_that_does_not_reveal_the_protocol_needs_an_explicit_bind() -> None:
    source = Services()
    container = Container()
    container.include(source)
    assert not container.can_resolve(Repo)
    binding = container.transient(Repo, source.repo)
    assert binding.lifetime is Lifetime.TRANSIENT
    with container.scope() as scope:
        repo = scope.get(Repo)
        assert isinstance(repo, SqlRepo)
        assert repo.find("a") == "sql:a"
        assert scope.get(Repo) is not repo


def test_overrides_of_the_source_container_are_honoured() -> None:
    source = Services()
    container = Container()
    container.include(source)
    container.transient(Repo, source.repo)
    mailer = container.get(Mailer)
    fake_mailer = Mailer()
    with source.repo.override(providers.Factory(FakeRepo)), source.mailer.override(fake_mailer):
        assert container.get(Repo).find("a") == "fake:a"
        assert container.get(Mailer) is fake_mailer  # even after the singleton was resolved
    assert container.get(Repo).find("a") == "sql:a"
    assert container.get(Mailer) is mailer
    source.override_providers(settings=providers.Object(Settings("mysql://")))
    source.engine.shutdown()  # re-initialized with the overridden settings on next use
    assert container.get(Engine).settings.dsn == "mysql://"


def test_resources_are_shut_down_when_the_container_closes() -> None:
    source = Services()
    container = Container()
    container.include(source)
    with container.scope() as scope:
        engine = scope.get(Engine)
        scope.get(Pool)
    assert not engine.disposed
    assert sorted(EVENTS) == ["engine up", "pool up"]
    container.close()
    assert engine.disposed
    assert sorted(EVENTS) == ["engine down", "engine up", "pool down", "pool up"]


def test_explicit_bind_of_a_factory_as_singleton_or_scoped_is_cached_here() -> None:
    source = Services()
    container = Container()
    container.singleton(SqlRepo, source.repo)
    container.scoped(Clock, source.clock)
    assert container.get(SqlRepo) is container.get(SqlRepo)
    with container.scope() as first, container.scope() as second:
        assert first.get(Clock) is first.get(Clock)
        assert first.get(Clock) is not second.get(Clock)


def test_explicit_bind_of_a_resource_shuts_it_down_with_the_container() -> None:
    source = Services()
    container = Container()
    container.singleton(Engine, source.engine)
    engine = container.get(Engine)
    container.close()
    assert engine.disposed


def test_existing_bindings_win_over_included_ones() -> None:
    mine = Mailer()
    container = Container()
    container.instance(Mailer, mine)
    made = container.include(Services())
    assert Mailer not in {b.key for b in made}
    assert container.get(Mailer) is mine


def test_nested_containers_are_included() -> None:
    class Outer(containers.DeclarativeContainer):
        services = providers.Container(Services)
        handler_clock = providers.Factory(Clock)

    container = Container()
    keys = {b.key for b in container.include(Outer())}
    assert {Mailer, Engine, Clock} <= keys
    assert isinstance(container.get(Mailer), Mailer)


class AsyncPool:
    def __init__(self) -> None:
        self.closed = False


async def open_pool() -> AsyncIterator[AsyncPool]:
    pool = AsyncPool()
    yield pool
    pool.closed = True


async def fetch_clock() -> Clock:
    return Clock()


class AsyncServices(containers.DeclarativeContainer):
    pool = providers.Resource(open_pool)
    clock = providers.Coroutine(fetch_clock)
    engine = providers.Factory(Engine, settings=providers.Factory(Settings))
    uses_pool = providers.Factory(Handler, engine=engine, mailer=pool, context=clock)


@pytest.mark.anyio
async def test_async_providers_are_awaited_and_async_resources_shut_down_on_aclose() -> None:
    source = AsyncServices()
    container = Container()
    container.include(source)
    async with container.scope() as scope:
        pool = await scope.aget(AsyncPool)
        assert isinstance(pool, AsyncPool)
        assert await scope.aget(AsyncPool) is pool
        assert isinstance(await scope.aget(Clock), Clock)
        assert isinstance(await scope.aget(Engine), Engine)
    assert not pool.closed
    await container.aclose()
    assert pool.closed


@pytest.mark.anyio
async def test_provider_injecting_an_async_one_is_async_too() -> None:
    source = AsyncServices()
    container = Container()
    container.transient(Handler, source.uses_pool)
    async with container.scope() as scope:
        handler = await scope.aget(Handler)
        assert isinstance(handler.mailer, AsyncPool)
        with pytest.raises(AsyncResolutionRequired):
            scope.get(Handler)
    await container.aclose()


def test_async_provider_through_sync_get_requires_await() -> None:
    container = Container()
    container.include(AsyncServices())
    with pytest.raises(AsyncResolutionRequired, match="aget"):
        container.get(Clock)
    with pytest.raises(AsyncResolutionRequired):
        container.get(AsyncPool)


class Transaction:
    def __init__(self) -> None:
        self.done = False


def begin() -> Iterator[Transaction]:
    transaction = Transaction()
    yield transaction
    transaction.done = True


def test_context_local_resource_is_scoped_and_shut_down_with_the_scope() -> None:
    class PerRequest(containers.DeclarativeContainer):
        transaction = providers.ContextLocalResource(begin)

    container = Container()
    (binding,) = container.include(PerRequest())
    assert binding.lifetime is Lifetime.SCOPED
    with container.scope() as scope:
        transaction = scope.get(Transaction)
        assert scope.get(Transaction) is transaction
        assert not transaction.done
    assert transaction.done
    with container.scope() as scope:
        assert scope.get(Transaction) is not transaction


def test_a_provider_given_to_override_is_called_like_a_bound_one() -> None:
    source = Services()
    container = Container()
    container.singleton(Mailer)
    with container.override(Mailer, factory=source.mailer) as binding:
        assert binding.caches_itself
        assert container.get(Mailer) is source.mailer()
        fake = Mailer()
        with source.mailer.override(fake):
            assert container.get(Mailer) is fake  # called each time: the source's override shows
    assert container.get(Mailer) is not source.mailer()
