"""The one reader of type hints: what a callable takes and returns, however it is wrapped."""

import functools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Annotated, Any

import pytest

from container import AnnotationError, Container, ProblemKind, return_annotation, type_hints


class Db:
    pass


def plain(db: Db, label: Annotated[str, "marker"]) -> int:
    return 0


def decorated(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


class Handler:
    def __call__(self, db: Db) -> str:
        return ""


def broken(db: "Nowhere") -> Db:  # type: ignore[name-defined]  # noqa: F821
    return Db()


def unparsable(db: "not an expression") -> Db:  # type: ignore[valid-type]  # noqa: F722
    return Db()


PLAIN_HINTS = {"db": Db, "label": Annotated[str, "marker"], "return": int}


@pytest.mark.parametrize(
    "target",
    [
        plain,
        functools.partial(plain, Db()),
        functools.partial(functools.partial(plain), Db()),
        decorated(plain),
        functools.partial(decorated(plain), Db()),
    ],
    ids=["function", "partial", "partial of partial", "decorated", "partial of decorated"],
)
def test_hints_are_read_through_partials_and_decorators_with_extras(target: Any) -> None:
    assert type_hints(target) == PLAIN_HINTS


def test_a_callable_instance_is_read_through_its_class_call() -> None:
    assert type_hints(Handler()) == {"db": Db, "return": str}
    assert return_annotation(Handler()) is str


def test_an_unimportable_annotation_is_an_annotation_error_or_nothing() -> None:
    with pytest.raises(AnnotationError, match=r"broken.*Nowhere"):
        type_hints(broken)
    with pytest.raises(AnnotationError, match="unparsable"):
        type_hints(unparsable)
    assert type_hints(broken, strict=False) == {}
    assert type_hints(len) == {}


def test_return_annotation() -> None:
    def returns_none() -> None: ...

    def later() -> "Db":
        return Db()

    assert return_annotation(plain) is int
    assert return_annotation(later) is Db
    assert return_annotation(returns_none) is type(None)
    assert return_annotation(lambda: 0) is None
    assert return_annotation(len) is None
    # only the return annotation is evaluated: another one's failure does not hide it
    assert return_annotation(broken) is Db


def test_an_unparsable_annotation_is_reported_as_invalid_by_check() -> None:
    container = Container()
    container.transient(Db, unparsable)
    (problem,) = container.check(Db)
    assert problem.kind is ProblemKind.INVALID
    assert "unparsable" in problem.message


class Connection:
    def __init__(self) -> None:
        self.closed = False


@contextmanager
def _open() -> Iterator[Connection]:
    connection = Connection()
    yield connection
    connection.closed = True


def open_connection(dsn: str) -> "Annotated[AbstractContextManager[Connection], 'pooled']":
    return _open()


def test_a_partial_annotated_to_return_a_context_manager_is_entered() -> None:
    container = Container()
    container.scoped(Connection, functools.partial(open_connection, "sqlite://"))
    with container.scope() as scope:
        connection = scope.get(Connection)
        assert isinstance(connection, Connection)
        assert not connection.closed
    assert connection.closed
