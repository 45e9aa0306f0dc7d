"""The container: bindings in, compiled builders and scopes out."""

from __future__ import annotations

import dataclasses
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar, overload

import anyio

from container.binding import Binding
from container.codegen import MISSING, AsyncBuilder, Builder, compile_builder
from container.errors import (
    AsyncResolutionRequired,
    Problem,
    ProblemKind,
    ResolutionError,
    ScopeError,
    ValidationError,
)
from container.graph import Graph, Node, cause, rooted
from container.interop import include_dependency_injector, provider_binding
from container.introspect import EMPTY, AnnotationError, parameters, type_name
from container.lifetime import Lifetime
from container.scope import (
    ASYNC_EXIT,
    NO_CONTEXT,
    SYNC_EXIT,
    Exit,
    GivenScope,
    Scope,
    SessionScope,
    run_exits_async,
    run_exits_sync,
)

T = TypeVar("T")

_new_scope = object.__new__

_KEYWORD_ONLY = 1 << 30
_CALL_PLAN_LIMIT = 4096
"""Call plans kept before the cache starts over (callables made per call would grow it)."""


class _NoScopeCache(dict[Any, Any]):
    """The cache of the root context: asking it for a scoped value is the error.

    It is never empty, so builders never take their fresh-scope path with it.
    """

    def __init__(self) -> None:
        super().__init__({_NoScopeCache: None})

    def get(self, key: Any, default: Any = None) -> Any:
        raise ScopeError(
            f"{type_name(key)} is scoped and was resolved outside a scope; "
            "resolve it inside `with container.scope() as scope:`"
        )


class _Root:
    """The resolution context outside any scope: singletons and transients only."""

    __slots__ = ("cache", "context", "exits", "session")

    def __init__(self, exits: list[Exit]) -> None:
        self.cache: dict[Any, Any] = _NoScopeCache()
        self.exits = exits
        self.context: Mapping[Any, Any] = NO_CONTEXT
        self.session = self


@dataclass(frozen=True, slots=True)
class CallPlan:
    """Which parameters of a callable the container fills, decided once.

    ``params`` holds ``(name, index, sync_builder, async_builder)`` for
    parameters passed by keyword: ``index`` is the parameter's position (a
    huge number for keyword-only ones), so a caller who passes that many
    positional arguments, or the name as a keyword, fills it instead.
    ``positional`` holds ``(index, sync_builder, async_builder, default)``
    for positional-only parameters, which must be passed in order: one the
    container cannot build is passed its default. ``unresolved`` lists
    parameters the container cannot fill and that have no default, with the
    reasons; calling without giving them raises ``ResolutionError``.
    """

    params: tuple[tuple[str, int, Builder, AsyncBuilder | None], ...]
    positional: tuple[tuple[int, Builder | None, AsyncBuilder | None, Any], ...] = ()
    unresolved: tuple[tuple[str, int, tuple[Problem, ...]], ...] = ()
    owner: str = ""

    def _check_unresolved(self, given_positional: int, given: Mapping[str, Any]) -> None:
        problems: list[Problem] = []
        for name, index, reasons in self.unresolved:
            if name not in given and index >= given_positional:
                problems.extend(reasons)
        if problems:
            raise ResolutionError(problems, title=f"Cannot call {self.owner}")

    def resolve_sync(
        self, ctx: Any, given_positional: int, given: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        """The positional arguments to append to the caller's and the keywords to add."""
        if self.unresolved:
            self._check_unresolved(given_positional, given)
        extra = [
            default if build is None else build(ctx)
            for index, build, _, default in self.positional
            if index >= given_positional
        ]
        return extra, {
            name: build(ctx)
            for name, index, build, _ in self.params
            if index >= given_positional and name not in given
        }

    async def resolve_async(
        self, ctx: Any, given_positional: int, given: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        if self.unresolved:
            self._check_unresolved(given_positional, given)
        extra: list[Any] = []
        for index, build, abuild, default in self.positional:
            if index < given_positional:
                continue
            if abuild is not None:
                extra.append(await abuild(ctx))
            else:
                extra.append(default if build is None else build(ctx))
        values: dict[str, Any] = {}
        for name, index, build, abuild in self.params:
            if index < given_positional or name in given:
                continue
            values[name] = await abuild(ctx) if abuild is not None else build(ctx)
        return extra, values


def _more_telling(new: Problem, old: Problem) -> bool:
    """A longer path shows more context; a cycle reads best as the loop alone."""
    if new.kind is ProblemKind.CYCLE:
        return len(new.path) < len(old.path)
    return len(new.path) > len(old.path)


def _binding_of(key: Any, target: Any, lifetime: Lifetime) -> Binding:
    """``key`` bound to ``target``: another container's provider, or anything ``Binding.of``
    takes."""
    return provider_binding(key, target, lifetime) or Binding.of(key, target, lifetime)


async def _create_once(
    locks: dict[Any, anyio.Lock],
    store: dict[Any, Any],
    key: Any,
    create: Callable[[Any], Awaitable[Any]],
    ctx: Any,
) -> Any:
    """``store[key]``, awaiting ``create(ctx)`` once for it under the key's own lock."""
    lock = locks.get(key)
    if lock is None:
        lock = locks.setdefault(key, anyio.Lock())
    async with lock:
        value = store.get(key, MISSING)
        if value is MISSING:
            value = await create(ctx)
            store[key] = value
        return value


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
        self._singletons: dict[Any, Any] = {}
        self._exits: list[Exit] = []
        self._root = _Root(self._exits)
        self._lock = threading.RLock()
        self._async_locks: dict[Any, anyio.Lock] = {}
        self._sync: dict[Any, Builder] = {}
        self._async: dict[Any, AsyncBuilder] = {}
        self._resolvers: dict[Any, tuple[bool, Callable[[Any], Any]]] = {}
        self._call_plans: dict[Any, CallPlan] = {}
        self.generation = 0
        """Counts binding changes (overrides included): plans compiled elsewhere from this
        container are stale once it differs from the value they were compiled at."""
        self._reset()

    def _reset(self) -> None:
        """Forget every compiled plan (the dicts are cleared in place: scopes hold them)."""
        self.generation += 1
        self._graph = Graph(self._bindings)
        self._sync.clear()
        self._async.clear()
        self._resolvers.clear()
        self._call_plans.clear()

    def __repr__(self) -> str:
        return f"<Container {len(self._bindings)} bindings, {len(self._singletons)} singletons>"

    # -- binding -------------------------------------------------------------

    def bind(
        self, key: Any, target: Any = None, lifetime: Lifetime = Lifetime.TRANSIENT
    ) -> Binding:
        """Bind ``key`` to ``target`` (``key`` itself when omitted) with ``lifetime``."""
        binding = _binding_of(key, key if target is None else target, lifetime)
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
        kept_lifetime = lifetime or (previous.lifetime if previous else Lifetime.TRANSIENT)
        if factory is not None:
            binding = _binding_of(key, factory, kept_lifetime)
        elif isinstance(replacement, type):
            binding = _binding_of(key, replacement, kept_lifetime)
        elif replacement is MISSING:
            raise TypeError("override() needs a replacement value or factory=")
        else:
            binding = Binding.instance(key, replacement)
        with self._lock:
            snapshot = dict(self._singletons)
            for stale in self._dependents(key):
                self._singletons.pop(stale, None)
            self._set(key, binding)
        try:
            yield binding
        finally:
            with self._lock:
                self._set(key, previous)
                self._singletons.clear()
                self._singletons.update(snapshot)

    def _dependents(self, key: Any) -> list[Any]:
        """The built singletons whose graph reaches ``key`` (they hold its current value)."""
        seen: dict[Any, bool] = {}

        def reaches(current: Any) -> bool:
            if current == key:
                return True
            if current in seen:
                return seen[current]
            seen[current] = False
            node = self._graph.node(current)
            found = any(reaches(dep.key) for dep in node.deps if not dep.is_constant)
            seen[current] = found
            return found

        return [k for k in self._singletons if k != key and reaches(k)]

    def with_overrides(self, overrides: Mapping[Any, Any]) -> Container:
        """A new container with this one's bindings, each key of ``overrides`` bound to its
        value instead (a class is bound as an implementation, keeping the lifetime).

        Nothing is shared with this container: the copy builds its own singletons.
        """
        derived = Container()
        with self._lock:
            derived._bindings.update(self._bindings)
        for key, replacement in overrides.items():
            previous = derived._bindings.get(key)
            if isinstance(replacement, type):
                lifetime = previous.lifetime if previous is not None else Lifetime.TRANSIENT
                derived._bindings[key] = _binding_of(key, replacement, lifetime)
            else:
                derived._bindings[key] = Binding.instance(key, replacement)
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
        with self._lock:
            return self._graph.node(key)

    def can_resolve(self, key: Any) -> bool:
        return self.node(key).ok

    def check(self, *roots: Any) -> tuple[Problem, ...]:
        """Every problem under ``roots`` (types or callables); all bindings when none.

        Nothing stops at the first problem. One cause reached from several
        roots is reported once, with the longest path that leads to it.
        """
        problems: list[Problem] = []
        where: dict[Any, int] = {}
        with self._lock:
            for root in roots or tuple(self._bindings):
                for problem in self._root_problems(root):
                    known = where.get(cause(problem))
                    if known is None:
                        where[cause(problem)] = len(problems)
                        problems.append(problem)
                    elif _more_telling(problem, problems[known]):
                        problems[known] = problem
        return tuple(problems)

    def _root_problems(self, root: Any) -> list[Problem]:
        if root in self._bindings or isinstance(root, type) or not callable(root):
            return self._graph.all_problems(root)
        name = type_name(root)
        try:
            params = parameters(root)
        except (AnnotationError, ValueError, TypeError) as exc:
            return [Problem(ProblemKind.INVALID, (name,), str(exc), "check the signature")]
        _, problems = self._graph.dependencies(params, (name,), owner=root)
        return problems

    def validate(self, *roots: Any) -> None:
        """Raise ``ValidationError`` listing every problem under ``roots`` (or all bindings)."""
        problems = self.check(*roots)
        if problems:
            raise ValidationError(problems)

    # -- compiled resolution ---------------------------------------------------

    def builder(self, key: Any) -> Builder:
        """The compiled synchronous builder for ``key``."""
        found = self._sync.get(key)
        if found is not None:
            return found
        with self._lock:
            return self._compile_sync(key)

    def async_builder(self, key: Any) -> AsyncBuilder:
        """The compiled builder for ``key`` to await (sync graphs are wrapped)."""
        found = self._async.get(key)
        if found is not None:
            return found
        with self._lock:
            node = self._ok_node(key)
            if not node.is_async:
                build = self._compile_sync(key)

                async def run_sync(ctx: Any) -> Any:
                    return build(ctx)

                self._async[key] = run_sync
                return run_sync
            return self._compile_async(key)

    def resolver(self, key: Any) -> tuple[bool, Callable[[Any], Any]]:
        """``(is_async, builder)`` for ``key``: await the builder's result only when async.

        Unlike ``async_builder``, a synchronous graph is not wrapped in a
        coroutine, so ``await scope.aget(T)`` of a sync graph costs one call.
        """
        found = self._resolvers.get(key)
        if found is not None:
            return found
        with self._lock:
            node = self._ok_node(key)
            entry = (
                (True, self._compile_async(key))
                if node.is_async
                else (False, self._compile_sync(key))
            )
            self._resolvers[key] = entry
            return entry

    def _ok_node(self, key: Any) -> Node:
        node = self._graph.node(key)
        if not node.ok:
            problems = rooted(node.problems, key)
            raise ResolutionError(problems, title=f"Cannot resolve {type_name(key)}")
        return node

    def _compile_sync(self, key: Any) -> Builder:
        found = self._sync.get(key)
        if found is not None:
            return found
        node = self._ok_node(key)
        if node.is_async:
            name = type_name(key)

            def needs_await(ctx: Any) -> Any:
                raise AsyncResolutionRequired(
                    f"{name} has an async factory in its graph; use `await scope.aget({name})`"
                )

            self._sync[key] = needs_await
            return needs_await
        built = self._generate(node, is_async=False)
        self._sync[key] = built
        return built

    def _compile_async(self, key: Any) -> AsyncBuilder:
        found = self._async.get(key)
        if found is not None:
            return found
        node = self._ok_node(key)
        built = self._generate(node, is_async=True)
        self._async[key] = built
        return built

    def _generate(self, node: Node, *, is_async: bool) -> Callable[..., Any]:
        return compile_builder(
            node,
            node_of=self._graph.node,
            builder_of=self._builder_of,
            is_async=is_async,
            singletons=self._singletons,
            singleton_slot=self._async_singleton_slot if is_async else self._singleton_slot,
            session_slots=(self._session_slot, self._async_session_slot),
            root=self._root,
        )

    def _builder_of(self, key: Any, is_async: bool) -> Any:
        return self._compile_async(key) if is_async else self._compile_sync(key)

    def _singleton_slot(self, key: Any, create: Builder, root: Any) -> Any:
        with self._lock:
            value = self._singletons.get(key, MISSING)
            if value is MISSING:
                value = create(root)
                self._singletons[key] = value
            return value

    async def _async_singleton_slot(
        self, key: Any, create: Callable[[Any], Awaitable[Any]], root: Any
    ) -> Any:
        return await _create_once(self._async_locks, self._singletons, key, create, root)

    def _session_slot(self, ctx: Any, key: Any, create: Builder) -> Any:
        """The session's value for ``key``, created once (under a lock) in the session."""
        session = ctx.session
        try:
            return session.cache[key]
        except KeyError:
            pass
        with self._lock:
            value = session.cache.get(key, MISSING)  # outside a scope, or closed: refused
            if value is MISSING:
                value = create(session)
                session.cache[key] = value
            return value

    async def _async_session_slot(
        self, ctx: Any, key: Any, create: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        session = ctx.session
        try:
            return session.cache[key]
        except KeyError:
            pass
        locks: dict[Any, anyio.Lock] | None = getattr(session, "_locks", None)
        if locks is None:  # a scope that is its own session: created like a scoped value
            session.cache.get(key)  # outside a scope, or closed: refused
            value = await create(session)
            session.cache[key] = value
            return value
        return await _create_once(locks, session.cache, key, create, session)

    def call_plan(self, fn: Callable[..., Any]) -> CallPlan:
        """Which parameters of ``fn`` are injected; computed once per callable."""
        cache_key = getattr(fn, "__func__", fn), getattr(fn, "__self__", None) is not None
        found = self._call_plans.get(cache_key)
        if found is not None:
            return found
        with self._lock:
            name = type_name(fn)
            params: list[tuple[str, int, Builder, AsyncBuilder | None]] = []
            positional: list[tuple[int, Builder | None, AsyncBuilder | None, Any]] = []
            unresolved: list[tuple[str, int, tuple[Problem, ...]]] = []
            for index, param in enumerate(parameters(fn)):
                if param.variadic:
                    continue
                position = _KEYWORD_ONLY if param.kind is inspect.Parameter.KEYWORD_ONLY else index
                positional_only = param.kind is inspect.Parameter.POSITIONAL_ONLY
                if param.key is EMPTY or not self._graph.resolvable(param.key):
                    if param.has_default or param.optional:
                        if positional_only:
                            default = param.default if param.has_default else None
                            positional.append((index, None, None, default))
                        continue
                    _, problems = self._graph.dependencies([param], (name,), owner=fn)
                    unresolved.append((param.name, position, tuple(problems)))
                    if positional_only:
                        positional.append((index, None, None, None))
                    continue
                sync_builder = self._compile_sync(param.key)
                is_async = self._graph.node(param.key).is_async
                async_builder = self._compile_async(param.key) if is_async else None
                if positional_only:
                    positional.append((index, sync_builder, async_builder, None))
                else:
                    params.append((param.name, position, sync_builder, async_builder))
            plan = CallPlan(tuple(params), tuple(positional), tuple(unresolved), name)
            if len(self._call_plans) >= _CALL_PLAN_LIMIT:
                self._call_plans.clear()
            self._call_plans[cache_key] = plan
            return plan

    # -- scopes and lifecycle -------------------------------------------------------

    def scope(self, context: Mapping[Any, Any] | None = None) -> Scope:
        """A new (request) scope, given ``context`` values; use it with ``with`` or
        ``async with``. Opened outside a session, it is its own session."""
        if context is not None:
            return GivenScope(self, context)
        # What Scope(self) does, without calling Scope.__init__ (a call per scope);
        # keep the two in step (tests/container/test_scopes.py compares them).
        scope = _new_scope(Scope)
        scope._container = self
        scope._builders = self._sync
        scope._resolvers = self._resolvers
        scope.cache = {}
        scope.exits = []
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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Container:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def include(self, source: Any) -> list[Binding]:
        """Import the providers of a ``dependency_injector`` container as bindings."""
        return include_dependency_injector(self, source)
