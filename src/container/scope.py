"""A scope: a cache of per-scope values and the finalizers to run when it ends."""

from __future__ import annotations

import collections
import inspect
import logging
import types
import typing
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator, Mapping
from types import TracebackType
from typing import Any, TypeVar, overload

import anyio

from container.errors import FinalizerError, ScopeError
from container.lifetime import SESSION as SESSION_LEVEL
from container.resolving import Resolving

T = TypeVar("T")
R = TypeVar("R")

logger = logging.getLogger("container")

Exit = tuple[int, Any]
"""A finalizer: ``(kind, target)``; ``kind`` is one of the four constants below."""

SYNC_EXIT = 0
"""``target(exc_type, exc, tb)``: a context manager's ``__exit__`` or a close hook."""
ASYNC_EXIT = 1
"""``await target(exc_type, exc, tb)``: an async context manager's ``__aexit__``."""
SYNC_GENERATOR = 2
"""A generator suspended at its ``yield``: resumed with the error (or ``None``) as its value."""
ASYNC_GENERATOR = 3
"""An async generator suspended at its ``yield``: resumed like a sync one."""

PENDING_ASYNC = "an async finalizer is pending: close with `async with` / `await ...aclose()`"


class _Unwinding:
    """Collects what goes wrong while finalizers run; every finalizer runs regardless."""

    __slots__ = ("error", "failures", "info", "interrupt")

    def __init__(self, error: BaseException | None) -> None:
        self.error = error
        self.info: tuple[Any, Any, Any] = (
            (type(error), error, error.__traceback__) if error else (None, None, None)
        )
        self.failures: list[Exception] = []
        self.interrupt: BaseException | None = None

    def failed(self, exc: BaseException) -> None:
        if exc is self.error:
            return  # a generator re-raised the error it was given: not a finalizer failure
        if not isinstance(exc, Exception):
            if self.interrupt is None:
                self.interrupt = exc
            return
        logger.error("finalizer failed", exc_info=exc)
        self.failures.append(exc)

    def finish(self) -> None:
        if self.interrupt is not None:
            raise self.interrupt
        failures = self.failures
        if not failures:
            return
        group = FinalizerError(f"{len(failures)} finalizer(s) failed", failures)
        if self.error is None:
            raise group
        self.error.add_note(f"while unwinding, {group}: {failures!r}")


def _generator_did_not_stop(gen: Any) -> RuntimeError:
    name = getattr(gen, "__qualname__", None) or type(gen).__name__
    return RuntimeError(f"{name} yielded more than once; a factory must yield exactly one value")


def _finalize_sync(kind: int, target: Any, unwinding: _Unwinding) -> None:
    if kind == SYNC_GENERATOR:
        try:
            target.send(unwinding.error)
        except StopIteration:
            return
        target.close()
        raise _generator_did_not_stop(target)
    result = target(*unwinding.info)
    if inspect.isawaitable(result):
        if isinstance(result, Coroutine):
            result.close()
        raise ScopeError(PENDING_ASYNC)


async def _finalize_async(kind: int, target: Any, unwinding: _Unwinding) -> None:
    if kind == ASYNC_GENERATOR:
        try:
            await target.asend(unwinding.error)
        except StopAsyncIteration:
            return
        await target.aclose()
        raise _generator_did_not_stop(target)
    if kind == SYNC_GENERATOR:
        _finalize_sync(kind, target, unwinding)
        return
    result = target(*unwinding.info)
    if inspect.isawaitable(result):
        await result


def run_exits_sync(exits: list[Exit], error: BaseException | None) -> None:
    """Run finalizers in reverse order; all of them run even when some fail.

    Async finalizers cannot run here: each is reported as a ``ScopeError``.
    """
    unwinding = _Unwinding(error)
    while exits:
        kind, target = exits.pop()
        if kind in (ASYNC_EXIT, ASYNC_GENERATOR):
            unwinding.failures.append(ScopeError(PENDING_ASYNC))
            continue
        try:
            _finalize_sync(kind, target, unwinding)
        except BaseException as exc:  # noqa: BLE001 - every finalizer runs; failures are reported
            unwinding.failed(exc)
    unwinding.finish()


async def run_exits_async(exits: list[Exit], error: BaseException | None) -> None:
    """Run finalizers in reverse order, shielded from cancellation, all of them."""
    unwinding = _Unwinding(error)
    with anyio.CancelScope(shield=True):
        while exits:
            kind, target = exits.pop()
            try:
                await _finalize_async(kind, target, unwinding)
            except BaseException as exc:  # noqa: BLE001 - every finalizer runs
                unwinding.failed(exc)
    unwinding.finish()


@types.coroutine
def _finished() -> Generator[None, None, None]:
    return
    yield  # a generator (never yielding), marked as a coroutine so that `await` takes it


def _exhausted() -> Awaitable[None]:
    gen = _finished()
    for _ in typing.cast(Iterator[None], gen):  # pragma: no cover - it yields nothing
        pass
    return gen


_DONE = _exhausted()
"""An awaitable that is already over: ``await _DONE`` is ``None`` at once, every time.

A generator that has run to its end returns ``None`` to each later
``yield from`` / ``await`` without suspending (PEP 380), so awaiting it
allocates nothing: the cheap result of an ``__aexit__`` with nothing to await.
"""


CLOSED_MESSAGE = "this scope is closed; open a new one with container.scope()"
NO_CONTEXT: Mapping[Any, Any] = types.MappingProxyType({})


class _ClosedCache(dict[Any, Any]):
    """Installed when a scope closes: any later resolution through it is an error.

    It is never empty, so builders never take their fresh-scope path with it.
    """

    def __init__(self) -> None:
        super().__init__({_ClosedCache: None})

    def get(self, key: Any, default: Any = None) -> Any:
        raise ScopeError(CLOSED_MESSAGE)

    def __getitem__(self, key: Any) -> Any:
        raise ScopeError(CLOSED_MESSAGE)

    def __setitem__(self, key: Any, value: Any) -> None:
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

    __slots__ = ("_builders", "_container", "_resolvers", "cache", "exits")

    context: Mapping[Any, Any] = NO_CONTEXT
    """The context values this scope was given (``container.scope(context=...)``)."""

    def __init__(self, container: Resolving) -> None:
        # Container.scope() sets the same attributes without calling this.
        self._container = container
        self._builders: dict[Any, Any] = container._sync
        self._resolvers: dict[Any, Any] = container._resolvers
        self.cache: dict[Any, Any] = {}
        self.exits: list[Exit] = []

    @property
    def session(self) -> Scope:
        """The session this scope belongs to; a scope opened alone is its own session."""
        return self

    @property
    def closed(self) -> bool:
        return self.cache is _CLOSED

    @property
    def container(self) -> Resolving:
        return self._container

    def __repr__(self) -> str:
        if self.closed:
            return "<Scope closed>"
        return f"<Scope open, {len(self.cache)} cached, {len(self.exits)} finalizers>"

    @overload
    def get(self, key: type[T]) -> T: ...
    @overload
    def get(self, key: Any) -> Any: ...
    def get(self, key: Any) -> Any:
        """Resolve ``key`` synchronously in this scope."""
        try:
            build = self._builders[key]
        except KeyError:
            build = self._container.builder(key)
        return build(self)

    @overload
    async def aget(self, key: type[T]) -> T: ...
    @overload
    async def aget(self, key: Any) -> Any: ...
    async def aget(self, key: Any) -> Any:
        """Resolve ``key``, awaiting async factories where the graph has them."""
        try:
            is_async, build = self._resolvers[key]
        except KeyError:
            is_async, build = self._container.resolver(key)
        if is_async:
            return await build(self)
        return build(self)

    def call(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """Call ``fn`` with its injectable parameters resolved here.

        Positional ``args`` fill the leading parameters and ``kwargs`` fill
        parameters by name; the container fills every other parameter it can
        resolve. A parameter left unfilled keeps its default.
        """
        self._check_open()
        extra, injected = self._container.call_plan(fn).resolve_sync(self, len(args), kwargs)
        return fn(*args, *extra, **injected, **kwargs)

    async def acall(
        self, fn: Callable[..., Awaitable[R]] | Callable[..., R], /, *args: Any, **kwargs: Any
    ) -> R:
        """Like ``call``; awaits async resolution and the result if it is awaitable."""
        self._check_open()
        plan = self._container.call_plan(fn)
        extra, injected = await plan.resolve_async(self, len(args), kwargs)
        result: Any = fn(*args, *extra, **injected, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return typing.cast(R, result)

    def _check_open(self) -> None:
        if self.closed:
            raise ScopeError(CLOSED_MESSAGE)

    def close(self, error: BaseException | None = None) -> None:
        """End the scope: run its finalizers (sync ones only) in reverse order."""
        self.cache = self._builders = self._resolvers = _CLOSED
        if self.exits:
            run_exits_sync(self.exits, error)

    async def aclose(self, error: BaseException | None = None) -> None:
        """End the scope: run its finalizers in reverse order, shielded from cancellation."""
        self.cache = self._builders = self._resolvers = _CLOSED
        if self.exits:
            await run_exits_async(self.exits, error)

    def __enter__(self) -> Scope:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cache = self._builders = self._resolvers = _CLOSED
        if self.exits:
            run_exits_sync(self.exits, exc)

    async def __aenter__(self) -> Scope:
        return self

    def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Awaitable[None]:
        # Not a coroutine: the scope closes right here, and only finalizers need awaiting.
        self.cache = self._builders = self._resolvers = _CLOSED
        if self.exits:
            return run_exits_async(self.exits, exc)
        return _DONE


class GivenScope(Scope):
    """A scope given context values, or opened in a session (a plain ``Scope`` is neither,
    so the common scope costs nothing for either)."""

    __slots__ = ("context", "session")

    def __init__(
        self, container: Resolving, context: Mapping[Any, Any], session: Scope | None = None
    ) -> None:
        super().__init__(container)
        self.context = context
        self.session = self if session is None else session  # type: ignore[misc]


class SessionScope(Scope):
    """A session: session-scoped values live here for as long as it is open.

    Open the session's request scopes with :meth:`scope`; they share its
    session-scoped values and see its context values. Request-scoped values
    cannot be resolved in the session itself.

    >>> from container import Container, Lifetime
    >>> class Connection: ...
    >>> class Unit: ...
    >>> container = Container()
    >>> _ = container.bind(Connection, lifetime=Lifetime.SESSION)
    >>> _ = container.scoped(Unit)
    >>> with container.session() as session:
    ...     with session.scope() as one, session.scope() as two:
    ...         one.get(Connection) is two.get(Connection), one.get(Unit) is two.get(Unit)
    (True, False)
    """

    __slots__ = ("_locks", "context")

    def __init__(self, container: Resolving, context: Mapping[Any, Any] | None = None) -> None:
        super().__init__(container)
        self.context = NO_CONTEXT if context is None else context
        self._locks: dict[Any, anyio.Lock] = {}
        """One lock per session-scoped key, so concurrent requests create it once."""

    def __repr__(self) -> str:
        if self.closed:
            return "<SessionScope closed>"
        return f"<SessionScope open, {len(self.cache)} cached, {len(self.exits)} finalizers>"

    def scope(self, context: Mapping[Any, Any] | None = None) -> Scope:
        """A request scope in this session, given ``context`` on top of the session's."""
        self._check_open()
        if not context:
            given = self.context
        elif not self.context:
            given = context
        else:
            given = collections.ChainMap(context, self.context)  # type: ignore[arg-type]
        return GivenScope(self._container, given, self)

    def get(self, key: Any) -> Any:
        self._check_level(key)
        return super().get(key)

    async def aget(self, key: Any) -> Any:
        self._check_level(key)
        return await super().aget(key)

    def _check_level(self, key: Any) -> None:
        node = self._container.node(key)
        if node.ok and node.level > SESSION_LEVEL:
            from container.introspect import type_name

            via = node.level_via
            through = f" (through {' -> '.join(via)})" if len(via) > 1 else ""
            raise ScopeError(
                f"{type_name(key)} lives in a request scope{through}; "
                "resolve it in one of this session's request scopes: session.scope()"
            )
