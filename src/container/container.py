"""The container: the public face that binds keys, opens scopes and resolves.

What it derives from its bindings (graph, builders, call plans, singletons)
lives in :mod:`container.compiled`; what an override puts in, in
:mod:`container.overrides`.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar, overload

from container.binding import Binding
from container.codegen import MISSING, AsyncBuilder, Builder
from container.compiled import Compiled
from container.errors import AsyncResolutionRequired, Problem, ValidationError
from container.finalizers import ASYNC_EXIT, SYNC_EXIT, Exit, run_exits_async, run_exits_sync
from container.graph import Node
from container.interop import binding_of, include_dependency_injector
from container.lifetime import Lifetime
from container.overrides import overridden, replacing
from container.plans import CallPlan
from container.scope import GivenScope, PlainScope, Scope, SessionScope

T = TypeVar("T")


class Container:
    """Bindings, lifetimes and compiled resolution.

    >>> from typing import Protocol
    >>> class Greeter(Protocol):
    ...     def greet(self, name: str) -> str: ...
    >>> class English:
    ...     def greet(self, name: str) -> str:
    ...         return f"Hello, {name}!"
    >>> container = Container()
    >>> container.singleton(Greeter, English)
    Binding(Greeter -> English, singleton, class)
    >>> with container.scope() as scope:
    ...     scope.get(Greeter).greet("Ada")
    'Hello, Ada!'
    """

    def __init__(self) -> None:
        self._bindings: dict[Any, Binding] = {}
        self._exits: list[Exit] = []
        self._lock = threading.RLock()
        self._compiled = Compiled(self._bindings, self._lock, self._exits)
        # the compiled side's dicts, held here too for the paths that run per resolution
        self._singletons = self._compiled.singletons
        self._sync = self._compiled.sync
        self._resolvers = self._compiled.resolvers
        self._root = self._compiled.root
        self.generation = 0
        """Counts binding changes (overrides included): plans compiled elsewhere from this
        container are stale once it differs from the value they were compiled at."""
        self._reset()

    def _reset(self) -> None:
        """Forget every compiled plan (the dicts are cleared in place: scopes hold them)."""
        self.generation += 1
        self._compiled.reset()

    def __repr__(self) -> str:
        return f"<Container {len(self._bindings)} bindings, {len(self._singletons)} singletons>"

    # -- binding -------------------------------------------------------------

    def bind(
        self, key: Any, target: Any = None, lifetime: Lifetime = Lifetime.TRANSIENT
    ) -> Binding:
        """Bind ``key`` to ``target`` (``key`` itself when omitted) with ``lifetime``."""
        binding = binding_of(key, key if target is None else target, lifetime)
        self._set(key, binding)
        if binding.on_close is not None:
            self.on_close(binding.on_close)
        return binding

    def singleton(self, key: Any, target: Any = None, *, eager: bool = False) -> Binding:
        """Bind a singleton; ``eager=True`` builds it in ``container.start()``."""
        binding = self.bind(key, target, Lifetime.SINGLETON)
        if eager:
            binding = dataclasses.replace(binding, eager=True)
            self._set(key, binding)
        return binding

    def scoped(self, key: Any, target: Any = None) -> Binding:
        return self.bind(key, target, Lifetime.SCOPED)

    def transient(self, key: Any, target: Any = None) -> Binding:
        return self.bind(key, target, Lifetime.TRANSIENT)

    def instance(self, key: Any, value: Any) -> Binding:
        """Bind ``key`` to an existing value, shared by everyone."""
        binding = Binding.instance(key, value)
        self._set(key, binding)
        return binding

    def context(self, key: Any, lifetime: Lifetime = Lifetime.SCOPED) -> Binding:
        """Declare ``key`` a context value: given to scopes, never built or autowired.

        Request scopes (``lifetime=Lifetime.SCOPED``) or sessions
        (``Lifetime.SESSION``) are given the value when they open:
        ``container.scope(context={Tenant: tenant})``. Services of that level or
        deeper may depend on it; a singleton (or a session-scoped service, for a
        request-level value) that does is a captive dependency, reported by
        ``check()``. Resolving it in a scope that was not given one raises
        ``ContextNotGiven``.
        """
        binding = Binding.context(key, lifetime)
        self._set(key, binding)
        return binding

    def on_close(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` when the container closes (after what was registered later).

        An async callback, or one that returns an awaitable, needs
        ``await container.aclose()``.
        """
        kind = ASYNC_EXIT if inspect.iscoroutinefunction(callback) else SYNC_EXIT

        def on_exit(*_exc_info: Any) -> Any:
            return callback()

        with self._lock:
            self._exits.append((kind, on_exit))

    def _set(self, key: Any, binding: Binding | None) -> None:
        with self._lock:
            if binding is None:
                self._bindings.pop(key, None)
            else:
                self._bindings[key] = binding
            self._singletons.pop(key, None)
            self._reset()

    @property
    def bindings(self) -> Mapping[Any, Binding]:
        return dict(self._bindings)

    @property
    def has_sessions(self) -> bool:
        """Whether any binding lives per session (a session-scoped service or context value)."""
        with self._lock:
            return any(b.lifetime is Lifetime.SESSION for b in self._bindings.values())

    def binding(self, key: Any) -> Binding | None:
        """What ``key`` is bound to (``None`` when unbound, even if it can be autowired)."""
        return self._bindings.get(key)

    @contextmanager
    def override(
        self,
        key: Any,
        replacement: Any = MISSING,
        *,
        factory: Any = None,
        lifetime: Lifetime | None = None,
    ) -> Iterator[Binding]:
        """Replace the binding of ``key`` inside the ``with`` block, then restore it.

        ``replacement`` is a value (a class passed here is bound as an
        implementation); ``factory=`` binds a factory instead. Singletons
        created during the override are dropped when it ends.
        """
        previous = self._bindings.get(key)
        binding = replacing(key, previous, replacement, factory, lifetime)
        with self._lock:
            snapshot = dict(self._singletons)
            for stale in self._compiled.dependents(key):
                self._singletons.pop(stale, None)
            self._set(key, binding)
        try:
            yield binding
        finally:
            with self._lock:
                self._set(key, previous)
                self._singletons.clear()
                self._singletons.update(snapshot)

    def with_overrides(self, overrides: Mapping[Any, Any]) -> Container:
        """A new container with this one's bindings, each key of ``overrides`` bound to its
        value instead (a class is bound as an implementation, keeping the lifetime).

        Nothing is shared with this container: the copy builds its own singletons.
        """
        derived = Container()
        with self._lock:
            bindings = dict(self._bindings)
        derived._bindings.update(overridden(bindings, overrides))
        derived._reset()
        return derived

    # -- start-up ----------------------------------------------------------------

    def _eager(self) -> list[Any]:
        with self._lock:
            return [key for key, binding in self._bindings.items() if binding.eager]

    def start(self) -> None:
        """Build every eager singleton now, in binding order (sync factories only).

        A failure closes what was built so far, in reverse order, and raises.
        """
        try:
            for key in self._eager():
                self.get(key)
        except AsyncResolutionRequired as exc:
            self.close()
            raise AsyncResolutionRequired(
                f"{exc}; an eager singleton needs awaiting: start with `await container.astart()`"
            ) from None
        except BaseException:
            self.close()
            raise

    async def astart(self) -> None:
        """Build every eager singleton now, awaiting async factories; see :meth:`start`."""
        try:
            for key in self._eager():
                await self.aget(key)
        except BaseException:
            await self.aclose()
            raise

    # -- analysis ------------------------------------------------------------

    def node(self, key: Any) -> Node:
        return self._compiled.node(key)

    def can_resolve(self, key: Any) -> bool:
        return self.node(key).ok

    def check(self, *roots: Any) -> tuple[Problem, ...]:
        """Every problem under ``roots`` (types or callables); all bindings when none.

        Nothing stops at the first problem. One cause reached from several
        roots is reported once, with the longest path that leads to it.
        """
        with self._lock:
            return self._compiled.graph.problems_under(roots or tuple(self._bindings))

    def validate(self, *roots: Any) -> None:
        """Raise ``ValidationError`` listing every problem under ``roots`` (or all bindings)."""
        problems = self.check(*roots)
        if problems:
            raise ValidationError(problems)

    # -- compiled resolution ---------------------------------------------------

    def builder(self, key: Any) -> Builder:
        """The compiled synchronous builder for ``key``."""
        return self._compiled.builder(key)

    def async_builder(self, key: Any) -> AsyncBuilder:
        """The compiled builder for ``key`` to await (sync graphs are wrapped)."""
        return self._compiled.async_builder(key)

    def resolver(self, key: Any) -> tuple[bool, Callable[[Any], Any]]:
        """``(is_async, builder)`` for ``key``: await the builder's result only when async.

        Unlike ``async_builder``, a synchronous graph is not wrapped in a
        coroutine, so ``await scope.aget(T)`` of a sync graph costs one call.
        """
        return self._compiled.resolver(key)

    def call_plan(self, fn: Callable[..., Any]) -> CallPlan:
        """Which parameters of ``fn`` are injected; computed once per callable."""
        return self._compiled.call_plan(fn)

    # -- scopes and lifecycle -------------------------------------------------------

    def scope(self, context: Mapping[Any, Any] | None = None) -> Scope:
        """A new (request) scope, given ``context`` values; use it with ``with`` or
        ``async with``. Opened outside a session, it is its own session."""
        if context is not None:
            return GivenScope(self, context)
        # What Scope(self) does, without calling Scope.__init__ (a call per scope);
        # keep the two in step (tests/container/test_scopes.py compares them).
        scope: Scope = PlainScope()
        scope._container = self
        scope._builders = self._sync
        scope._resolvers = self._resolvers
        scope._cache = None
        scope._exits = None
        return scope

    def session(self, context: Mapping[Any, Any] | None = None) -> SessionScope:
        """A new session: ``Lifetime.SESSION`` values live in it until it closes, shared by
        the request scopes opened in it with ``session.scope()``."""
        return SessionScope(self, context)

    @overload
    def get(self, key: type[T]) -> T: ...
    @overload
    def get(self, key: Any) -> Any: ...
    def get(self, key: Any) -> Any:
        """Resolve a singleton or transient outside any scope."""
        try:
            build = self._sync[key]
        except KeyError:
            build = self.builder(key)
        return build(self._root)

    @overload
    async def aget(self, key: type[T]) -> T: ...
    @overload
    async def aget(self, key: Any) -> Any: ...
    async def aget(self, key: Any) -> Any:
        return await self.async_builder(key)(self._root)

    def close(self) -> None:
        """Run singleton finalizers and close hooks, in reverse order."""
        run_exits_sync(self._exits, None)
        self._singletons.clear()

    async def aclose(self) -> None:
        await run_exits_async(self._exits, None)
        self._singletons.clear()

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Container:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def include(self, source: Any) -> list[Binding]:
        """Import the providers of a ``dependency_injector`` container as bindings."""
        return include_dependency_injector(self, source)
