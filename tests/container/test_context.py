"""Context values and sessions: what a scope is given, and what lives as long as a session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import anyio
import pytest

from container import Container, ContextNotGiven, Lifetime, ProblemKind, ScopeError

pytestmark = pytest.mark.anyio


class Tenant:
    def __init__(self, name: str) -> None:
        self.name = name


class Repo:
    def __init__(self, tenant: Tenant) -> None:
        self.tenant = tenant


class Cache:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo


class Connection:
    """Session-scoped: one per session."""


class Unit:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection


def tenant_container() -> Container:
    container = Container()
    container.context(Tenant)
    container.scoped(Repo)
    return container


def test_a_service_depends_on_the_context_value_its_scope_was_given() -> None:
    container = tenant_container()
    with container.scope(context={Tenant: Tenant("acme")}) as scope:
        assert scope.get(Repo).tenant.name == "acme"
        assert scope.get(Tenant) is scope.get(Repo).tenant
    with container.scope(context={Tenant: Tenant("globex")}) as scope:
        assert scope.get(Repo).tenant.name == "globex"


async def test_async_resolution_reads_the_context_too() -> None:
    container = tenant_container()

    async def audited(tenant: Tenant) -> AsyncIterator[Cache]:
        yield Cache(Repo(tenant))

    container.scoped(Cache, audited)
    async with container.scope(context={Tenant: Tenant("acme")}) as scope:
        assert (await scope.aget(Cache)).repo.tenant.name == "acme"


def test_a_context_value_is_never_built_or_autowired() -> None:
    container = tenant_container()
    with container.scope() as scope, pytest.raises(ContextNotGiven, match=r"Tenant is a context"):
        scope.get(Repo)
    with pytest.raises(ScopeError):
        container.get(Tenant)


def test_a_singleton_that_needs_a_context_value_is_captive() -> None:
    container = Container()
    container.context(Tenant)
    container.transient(Repo)
    container.singleton(Cache)
    (problem,) = container.check(Cache)
    assert problem.kind is ProblemKind.CAPTIVE
    assert problem.path == ("Cache", "Repo", "Tenant")
    assert problem.message == "singleton Cache would capture context value Tenant through Repo"
    assert "make Cache scoped" in problem.hint


def test_a_singleton_over_a_scoped_service_over_a_context_value_names_the_scoped_one() -> None:
    container = tenant_container()
    container.singleton(Cache)
    (problem,) = container.check(Cache)
    assert problem.message == "singleton Cache would capture scoped Repo"


def test_a_session_service_that_needs_a_request_value_is_captive() -> None:
    container = Container()
    container.context(Tenant)
    container.transient(Repo)
    container.bind(Cache, lifetime=Lifetime.SESSION)
    (problem,) = container.check(Cache)
    assert problem.kind is ProblemKind.CAPTIVE
    assert problem.message == "session Cache would capture context value Tenant through Repo"
    container.bind(Unit, lifetime=Lifetime.SESSION)
    container.scoped(Connection)
    (problem,) = container.check(Unit)
    assert problem.message == "session Unit would capture scoped Connection"
    assert problem.hint == "make Unit scoped, or make Connection session-scoped"


def test_a_session_context_value_may_be_used_by_session_services() -> None:
    container = Container()
    container.context(Tenant, Lifetime.SESSION)
    container.bind(Repo, lifetime=Lifetime.SESSION)
    assert container.check(Repo) == ()
    with (
        container.session(context={Tenant: Tenant("acme")}) as session,
        session.scope() as one,
        session.scope() as two,
    ):
        assert one.get(Repo) is two.get(Repo)
        assert one.get(Repo).tenant.name == "acme"


def test_context_values_must_belong_to_a_session_or_a_request() -> None:
    with pytest.raises(ValueError, match="session or request"):
        Container().context(Tenant, Lifetime.SINGLETON)


def session_container(closed: list[str]) -> Container:
    container = Container()

    def connection() -> Iterator[Connection]:
        yield Connection()
        closed.append("connection")

    def unit(connection: Connection) -> Iterator[Unit]:
        yield Unit(connection)
        closed.append("unit")

    container.bind(Connection, connection, Lifetime.SESSION)
    container.scoped(Unit, unit)
    return container


def test_session_values_are_shared_by_its_requests_and_finalized_with_it() -> None:
    closed: list[str] = []
    container = session_container(closed)
    with container.session() as session:
        with session.scope() as first:
            one = first.get(Unit)
        assert closed == ["unit"]
        with session.scope() as second:
            two = second.get(Unit)
        assert one is not two
        assert one.connection is two.connection
        assert closed == ["unit", "unit"]
    assert closed == ["unit", "unit", "connection"]


def test_a_scope_opened_alone_is_its_own_session() -> None:
    closed: list[str] = []
    container = session_container(closed)
    with container.scope() as first:
        one = first.get(Unit)
    assert closed == ["unit", "connection"]
    with container.scope() as second:
        assert second.get(Unit).connection is not one.connection


async def test_async_session_values_are_created_once_under_concurrent_requests() -> None:
    container = Container()
    made: list[Connection] = []

    async def connection() -> Connection:
        await anyio.sleep(0.01)
        made.append(Connection())
        return made[-1]

    container.bind(Connection, connection, Lifetime.SESSION)
    container.scoped(Unit)
    seen: list[Connection] = []
    async with container.session() as session:

        async def request() -> None:
            async with session.scope() as scope:
                seen.append((await scope.aget(Unit)).connection)

        async with anyio.create_task_group() as tasks:
            for _ in range(5):
                tasks.start_soon(request)
    assert len(made) == 1
    assert seen == made * 5


def test_a_session_does_not_resolve_request_values_itself() -> None:
    container = session_container([])
    with container.session() as session:
        assert isinstance(session.get(Connection), Connection)
        with pytest.raises(ScopeError, match="request scope"):
            session.get(Unit)


def test_request_context_is_layered_over_the_session_context() -> None:
    container = Container()
    container.context(Tenant, Lifetime.SESSION)

    class Caller:
        pass

    container.context(Caller)
    ada = Caller()
    with (
        container.session(context={Tenant: Tenant("acme")}) as session,
        session.scope(context={Caller: ada}) as scope,
    ):
        assert scope.get(Tenant).name == "acme"
        assert scope.get(Caller) is ada


class Lazy(Mapping[Any, Any]):
    """A context mapping that computes its value when first asked (as the adapter does)."""

    def __init__(self) -> None:
        self.built = 0

    def __getitem__(self, key: Any) -> Any:
        if key is not Tenant:
            raise KeyError(key)
        self.built += 1
        return Tenant("lazy")

    def __iter__(self) -> Iterator[Any]:
        return iter((Tenant,))

    def __len__(self) -> int:
        return 1


def test_a_context_mapping_is_only_read_for_what_is_resolved() -> None:
    container = tenant_container()

    class Plain:
        pass

    container.scoped(Plain)
    lazy = Lazy()
    with container.scope(context=lazy) as scope:
        scope.get(Plain)
        assert lazy.built == 0
        assert scope.get(Repo).tenant.name == "lazy"
        assert lazy.built == 1


async def test_session_values_are_refused_outside_a_scope() -> None:
    container = session_container([])
    with pytest.raises(ScopeError, match="outside a scope"):
        container.get(Unit)
    with pytest.raises(ScopeError, match="outside a scope"):
        container.get(Connection)
    with pytest.raises(ScopeError, match="outside a scope"):
        await container.aget(Connection)


def test_a_plain_scope_pays_nothing_for_contexts_or_sessions() -> None:
    from container import Scope

    container = Container()
    plain = type(container.scope())
    assert plain.__bases__ == (Scope,)
    assert plain.__slots__ == ()  # no context, no session: only what every scope has


def test_an_optional_context_parameter_is_none_when_the_scope_was_not_given_one() -> None:
    class Greeter:
        def __init__(self, tenant: Tenant | None) -> None:
            self.tenant = tenant

    container = Container()
    container.context(Tenant)
    container.scoped(Greeter)
    with container.scope() as scope:
        assert scope.get(Greeter).tenant is None
    acme = Tenant("acme")
    with container.scope(context={Tenant: acme}) as scope:
        assert scope.get(Greeter).tenant is acme
