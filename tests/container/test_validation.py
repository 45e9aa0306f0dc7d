"""validate()/check(): every problem at once, each with its dependency path and a hint."""

from typing import Protocol

import pytest

from container import Container, Problem, ProblemKind, ResolutionError, ValidationError


class Connection(Protocol):
    def execute(self, sql: str) -> None: ...


class Repo:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn


class Service:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo


class Session:
    pass


class Helper:
    def __init__(self, session: Session) -> None:
        self.session = session


class Cache:
    def __init__(self, helper: Helper) -> None:
        self.helper = helper


class Registry:
    def __init__(self, session: Session) -> None:
        self.session = session


class Ping:
    def __init__(self, pong: "Pong") -> None:
        self.pong = pong


class Pong:
    def __init__(self, ping: Ping) -> None:
        self.ping = ping


class Loose:
    def __init__(self, anything, *args: int, **options: str) -> None:  # type: ignore[no-untyped-def]
        self.anything = anything


def only(problems: tuple[Problem, ...], kind: ProblemKind) -> list[Problem]:
    return [p for p in problems if p.kind is kind]


def test_missing_binding_renders_the_path_to_the_parameter() -> None:
    container = Container()
    container.scoped(Service)
    (problem,) = container.check()
    assert problem.kind is ProblemKind.MISSING
    assert problem.path == ("Service", "Repo(conn)")
    rendered = problem.render()
    assert "path: Service -> Repo(conn) -> ???" in rendered
    assert "no binding for Connection" in rendered
    assert "hint: bind an implementation: container.scoped(Connection, Impl)" in rendered


def test_path_starts_at_the_root_that_was_asked_for() -> None:
    container = Container()
    container.scoped(Service)
    assert not container.can_resolve(Repo)  # analyses Repo first
    (problem,) = container.check(Service)
    assert problem.path == ("Service", "Repo(conn)")
    (problem,) = container.check(Repo)
    assert problem.path == ("Repo(conn)",)


def test_missing_root_is_reported_with_its_own_name() -> None:
    container = Container()
    (problem,) = container.check(Connection)
    assert problem.kind is ProblemKind.MISSING
    assert problem.render().splitlines()[1].strip() == "path: Connection -> ???"


def test_cycle_is_reported_with_the_loop() -> None:
    container = Container()
    container.scoped(Ping)
    container.scoped(Pong)
    (problem,) = container.check()  # the same cycle reached from both bindings: once
    assert problem.kind is ProblemKind.CYCLE
    assert problem.message == "Ping -> Pong -> Ping"
    assert problem.path == ("Ping", "Pong", "Ping")
    assert "break the cycle" in problem.hint
    (from_pong,) = container.check(Pong)
    assert from_pong.message == "Pong -> Ping -> Pong"


def test_singleton_capturing_a_scoped_service_is_captive() -> None:
    container = Container()
    container.scoped(Session)
    container.singleton(Registry)
    (problem,) = container.check()
    assert problem.kind is ProblemKind.CAPTIVE
    assert problem.path == ("Registry", "Session")
    assert problem.message == "singleton Registry would capture scoped Session"
    assert "make Registry scoped" in problem.hint


def test_singleton_capturing_a_transient_of_a_scoped_service_is_captive() -> None:
    container = Container()
    container.scoped(Session)
    container.transient(Helper)
    container.singleton(Cache)
    (problem,) = container.check()
    assert problem.kind is ProblemKind.CAPTIVE
    assert problem.path == ("Cache", "Helper", "Session")
    assert "through Helper" in problem.message


def test_singleton_of_singletons_and_scoped_of_scoped_are_fine() -> None:
    container = Container()
    container.singleton(Session)
    container.transient(Helper)
    container.singleton(Cache)
    container.scoped(Registry)
    assert container.check() == ()
    container.validate()


def test_unannotated_and_variadic_parameters_are_each_reported() -> None:
    container = Container()
    container.transient(Loose)
    problems = container.check()
    assert [p.kind for p in problems] == [
        ProblemKind.UNANNOTATED,
        ProblemKind.VARIADIC,
        ProblemKind.VARIADIC,
    ]
    assert [p.path for p in problems] == [
        ("Loose(anything)",),
        ("Loose(*args)",),
        ("Loose(**options)",),
    ]
    assert "annotate it: anything: SomeService" in problems[0].hint


def test_validate_reports_every_problem_at_once() -> None:
    container = Container()
    container.scoped(Service)
    container.scoped(Ping)
    container.scoped(Session)
    container.singleton(Registry)
    container.transient(Loose)
    with pytest.raises(ValidationError) as caught:
        container.validate()
    error = caught.value
    kinds = sorted(p.kind.name for p in error.problems)
    assert kinds == ["CAPTIVE", "CYCLE", "MISSING", "UNANNOTATED", "VARIADIC", "VARIADIC"]
    text = str(error)
    assert text.startswith("Container validation failed: 6 problems")
    assert "Service -> Repo(conn) -> ???" in text
    assert "Ping -> Pong -> Ping" in text
    assert "Registry -> Session" in text


def test_check_of_a_callable_root() -> None:
    def handler(service: Service, ping: Ping, limit: int = 5, *, name: str) -> None:
        pass

    container = Container()
    service, ping, name = container.check(handler)
    assert service.kind is ProblemKind.MISSING
    assert service.path == ("handler", "Service", "Repo(conn)")
    assert ping.kind is ProblemKind.CYCLE
    assert ping.path == ("handler", "Ping", "Pong", "Ping")
    assert name.kind is ProblemKind.MISSING
    assert name.path == ("handler(name)",)
    assert container.check(Session, lambda session, x=1: None)[0].kind is ProblemKind.UNANNOTATED


def test_check_of_a_callable_with_unresolvable_builtin_reports_it() -> None:
    def handler(name: str) -> None:
        pass

    container = Container()
    (problem,) = container.check(handler)
    assert problem.kind is ProblemKind.MISSING
    assert "builtin type" in problem.hint


def test_same_missing_binding_from_two_roots_keeps_the_longest_path() -> None:
    container = Container()
    container.scoped(Repo)
    container.scoped(Service)
    (problem,) = container.check()
    assert problem.path == ("Service", "Repo(conn)")


def test_resolving_a_broken_graph_raises_with_all_its_problems() -> None:
    class Broken:
        def __init__(self, service: Service, ping: Ping) -> None:
            pass

    container = Container()
    with pytest.raises(ResolutionError) as caught:
        container.get(Broken)
    assert len(caught.value.problems) == 2
    assert str(caught.value).startswith("Cannot resolve Broken: 2 problems")
    assert not container.can_resolve(Broken)
    container.instance(Connection, object())
    assert container.can_resolve(Service)


def test_parameters_with_defaults_or_optional_are_not_problems() -> None:
    class Tolerant:
        def __init__(self, conn: Connection | None, repo: Repo | None = None, n: int = 1) -> None:
            self.conn = conn
            self.repo = repo

    container = Container()
    container.transient(Tolerant)
    assert container.check() == ()
    tolerant = container.get(Tolerant)
    assert tolerant.conn is None
    assert tolerant.repo is None
