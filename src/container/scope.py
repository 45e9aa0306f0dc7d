"""A scope: a cache of per-scope values and the finalizers to run when it ends."""

from __future__ import annotations

import logging
import typing
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

import anyio

from container.errors import FinalizerError, ScopeError

if TYPE_CHECKING:
    from container.container import Container

T = TypeVar("T")
R = TypeVar("R")

logger = logging.getLogger("container")

Exit = tuple[bool, Callable[..., Any]]


def _failed(error: BaseException, failures: list[Exception]) -> None:
    if not isinstance(error, Exception):
        raise error
    logger.error("finalizer failed", exc_info=error)
    failures.append(error)


def _raise_failures(failures: list[Exception], body_error: BaseException | None) -> None:
    if not failures:
        return
    group = FinalizerError(f"{len(failures)} finalizer(s) failed", failures)
    if body_error is None:
        raise group
    body_error.add_note(f"while unwinding, {group}: {failures!r}")


def run_exits_sync(exits: list[Exit], error: BaseException | None) -> None:
    """Run finalizers in reverse order; all of them run even when some fail."""
    failures: list[Exception] = []
    info: tuple[Any, Any, Any] = (
        (type(error), error, error.__traceback__) if error else (None, None, None)
    )
    while exits:
        is_async, exit_ = exits.pop()
        if is_async:
            failures.append(
                ScopeError("an async finalizer is pending: close this scope with `async with`")
            )
            continue
        try:
            exit_(*info)
        except BaseException as exc:  # noqa: BLE001 - every finalizer runs; failures are reported
            _failed(exc, failures)
    _raise_failures(failures, error)


async def run_exits_async(exits: list[Exit], error: BaseException | None) -> None:
    """Run finalizers in reverse order, shielded from cancellation, all of them."""
    failures: list[Exception] = []
    info: tuple[Any, Any, Any] = (
        (type(error), error, error.__traceback__) if error else (None, None, None)
    )
    with anyio.CancelScope(shield=True):
        while exits:
            is_async, exit_ = exits.pop()
            try:
                if is_async:
                    await exit_(*info)
                else:
                    exit_(*info)
            except BaseException as exc:  # noqa: BLE001 - every finalizer runs
                _failed(exc, failures)
    _raise_failures(failures, error)


CLOSED_MESSAGE = "this scope is closed; open a new one with container.scope()"


class _ClosedCache(dict[Any, Any]):
    """Installed when a scope closes: any later resolution through it is an error."""

    def get(self, key: Any, default: Any = None) -> Any:
        raise ScopeError(CLOSED_MESSAGE)


_CLOSED = _ClosedCache()


class Scope:
    """One unit of work: scoped services are shared inside it and finalized at its end.

    >>> from container import Container
    >>> class Db: ...
    >>> container = Container()
    >>> _ = container.scoped(Db)
    >>> with container.scope() as scope:
    ...     scope.get(Db) is scope.get(Db)
    True
    """

    __slots__ = ("_builders", "_container", "cache", "exits")

    def __init__(self, container: Container) -> None:
        self._container = container
        self._builders = container._sync
        self.cache: dict[Any, Any] = {}
        self.exits: list[Exit] = []

    @property
    def closed(self) -> bool:
        return self.cache is _CLOSED

    @property
    def container(self) -> Container:
        return self._container

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<Scope {state}, {len(self.cache)} cached, {len(self.exits)} finalizers>"

    @overload
    def get(self, key: type[T]) -> T: ...
    @overload
    def get(self, key: Any) -> Any: ...
    def get(self, key: Any) -> Any:
        """Resolve ``key`` synchronously in this scope."""
        build = self._builders.get(key)
        if build is None:
            build = self._container.builder(key)
        return build(self)

    @overload
    async def aget(self, key: type[T]) -> T: ...
    @overload
    async def aget(self, key: Any) -> Any: ...
    async def aget(self, key: Any) -> Any:
        """Resolve ``key``, awaiting async factories where the graph has them."""
        return await self._container.async_builder(key)(self)

    def call(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """Call ``fn`` with its injectable parameters resolved here; ``args`` fill the rest."""
        self._check_open()
        injected = self._container.call_plan(fn).resolve_sync(self, kwargs)
        return fn(*args, **injected, **kwargs)

    async def acall(
        self, fn: Callable[..., Awaitable[R]] | Callable[..., R], /, *args: Any, **kwargs: Any
    ) -> R:
        """Like ``call``; awaits async resolution and the result if it is awaitable."""
        self._check_open()
        injected = await self._container.call_plan(fn).resolve_async(self, kwargs)
        result: Any = fn(*args, **injected, **kwargs)
        if isinstance(result, Awaitable):
            result = await result
        return typing.cast(R, result)

    def _check_open(self) -> None:
        if self.closed:
            raise ScopeError(CLOSED_MESSAGE)

    def _mark_closed(self) -> None:
        self.cache = _CLOSED

    def close(self, error: BaseException | None = None) -> None:
        if not self.closed:
            self._mark_closed()
            run_exits_sync(self.exits, error)

    async def aclose(self, error: BaseException | None = None) -> None:
        if not self.closed:
            self._mark_closed()
            await run_exits_async(self.exits, error)

    def __enter__(self) -> Scope:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cache = _CLOSED
        if self.exits:
            run_exits_sync(self.exits, exc)

    async def __aenter__(self) -> Scope:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._mark_closed()
        if self.exits:
            await run_exits_async(self.exits, exc)
