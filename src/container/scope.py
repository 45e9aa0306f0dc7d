"""A scope: a cache of per-scope values and the finalizers to run when it ends."""

from __future__ import annotations

import collections
import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, overload

import anyio

from container.cache import CLOSED, CLOSED_MESSAGE, open_cache
from container.errors import ScopeError
from container.finalizers import DONE, Exit, run_exits_async, run_exits_sync
from container.lifetime import SESSION as SESSION_LEVEL
from container.resolving import Resolving

T = TypeVar("T")
R = TypeVar("R")

NO_CONTEXT: Mapping[Any, Any] = types.MappingProxyType({})


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

    __slots__ = ("_builders", "_cache", "_container", "_exits", "_record", "_resolvers")

    context: Mapping[Any, Any] = NO_CONTEXT
    """The context values this scope was given (``container.scope(context=...)``)."""

    def __init__(self, container: Resolving) -> None:
        # Container.scope() sets the same attributes without calling this.
        self._container = container
        self._builders: dict[Any, Any] = container._sync
        self._resolvers: dict[Any, Any] = container._resolvers
        self._cache: Any = None
        """What ``cache`` is made of: see ``container.cache`` (``_record`` goes with it)."""
        self._exits: list[Exit] | None = None
        """The finalizers, made a list by the first one (most scopes never have one)."""

    @property
    def cache(self) -> dict[Any, Any]:
        """The scoped values built in this scope so far, by key (a closed scope's refuses)."""
        return open_cache(self)

    @property
    def exits(self) -> list[Exit]:
        """The finalizers registered in this scope so far, in order: ``(kind, target)``.

        They run in reverse order when the scope closes, which empties the list.
        """
        exits = self._exits
        if exits is None:
            exits = self._exits = []
        return exits

    @property
    def session(self) -> Scope:
        """The session this scope belongs to; a scope opened alone is its own session."""
        return self

    @property
    def closed(self) -> bool:
        return self._cache is CLOSED

    @property
    def container(self) -> Resolving:
        return self._container

    def __repr__(self) -> str:
        if self.closed:
            return "<Scope closed>"
        return f"<Scope open, {len(self.cache)} cached, {len(self._exits or ())} finalizers>"

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
        self._cache = self._builders = self._resolvers = CLOSED
        self._record = None
        if self._exits:
            run_exits_sync(self._exits, error)

    async def aclose(self, error: BaseException | None = None) -> None:
        """End the scope: run its finalizers in reverse order, shielded from cancellation."""
        self._cache = self._builders = self._resolvers = CLOSED
        self._record = None
        if self._exits:
            await run_exits_async(self._exits, error)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._cache = self._builders = self._resolvers = CLOSED
        self._record = None
        if self._exits:
            run_exits_sync(self._exits, exc)

    async def __aenter__(self) -> Self:
        return self

    def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Awaitable[None]:
        # Not a coroutine: the scope closes right here, and only finalizers need awaiting.
        self._cache = self._builders = self._resolvers = CLOSED
        self._record = None
        if self._exits:
            return run_exits_async(self._exits, exc)
        return DONE


class PlainScope(Scope):
    """The scope ``container.scope()`` opens: a ``Scope`` made by a bare type call.

    ``Container.scope()`` sets its attributes itself, as ``Scope.__init__``
    would: calling ``object.__new__`` or a Python ``__init__`` costs more than
    the rest of making a scope.
    """

    __slots__ = ()
    __init__ = object.__init__


class GivenScope(Scope):
    """A scope given context values, or opened in a session (a plain ``Scope`` is neither,
    so the common scope costs nothing for either)."""

    __slots__ = ("_session", "context")

    def __init__(
        self, container: Resolving, context: Mapping[Any, Any], session: Scope | None = None
    ) -> None:
        super().__init__(container)
        self.context = context
        self._session = session
        """``None``: its own session. Not ``self``: a scope that refers to itself is a
        reference cycle, which only a collection of the garbage collector frees (with
        its cache and context), after every request."""

    @property
    def session(self) -> Scope:
        return self if self._session is None else self._session


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
        return f"<SessionScope open, {len(self.cache)} cached, {len(self._exits or ())} finalizers>"

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
