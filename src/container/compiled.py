"""Compiled resolution: a builder per key, generated once, and the stores it fills.

What a container derives from its bindings lives here, so that a binding
change forgets it in one call (:meth:`Compiled.reset`): the dependency graph,
the sync and async builders, the call plans, and the singletons and session
values those builders create under locks.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from container.binding import Binding
from container.cache import NoScopeCache, open_cache
from container.codegen import MISSING, AsyncBuilder, Builder, compile_builder
from container.errors import AsyncResolutionRequired, ResolutionError
from container.finalizers import Exit
from container.graph import Graph, Node, rooted
from container.introspect import type_name
from container.plans import CallPlan, plan_call
from container.scope import NO_CONTEXT

CALL_PLAN_LIMIT = 4096
"""Call plans kept before the cache starts over (callables made per call would grow it)."""


class _Root:
    """The resolution context outside any scope: singletons and transients only."""

    __slots__ = ("_cache", "_exits", "context", "session")

    def __init__(self, exits: list[Exit]) -> None:
        self._cache: dict[Any, Any] = NoScopeCache()
        self._exits = exits
        self.context: Mapping[Any, Any] = NO_CONTEXT
        self.session = self


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


class Compiled:
    """The compiled side of one container; its dicts are cleared in place, never replaced
    (scopes and the container's own fast paths hold them)."""

    def __init__(self, bindings: Mapping[Any, Binding], lock: threading.RLock, exits: list[Exit]):
        self.bindings = bindings
        self.lock = lock
        self.singletons: dict[Any, Any] = {}
        self.root = _Root(exits)
        self.async_locks: dict[Any, anyio.Lock] = {}
        self.sync: dict[Any, Builder] = {}
        self.async_: dict[Any, AsyncBuilder] = {}
        self.resolvers: dict[Any, tuple[bool, Callable[[Any], Any]]] = {}
        self.call_plans: dict[Any, CallPlan] = {}
        self.graph = Graph(bindings)

    def reset(self) -> None:
        """Forget every analysed node and compiled builder (singletons are kept)."""
        self.graph = Graph(self.bindings)
        self.sync.clear()
        self.async_.clear()
        self.resolvers.clear()
        self.call_plans.clear()

    def node(self, key: Any) -> Node:
        with self.lock:
            return self.graph.node(key)

    def builder(self, key: Any) -> Builder:
        """The compiled synchronous builder for ``key``."""
        found = self.sync.get(key)
        if found is not None:
            return found
        with self.lock:
            return self.compile_sync(key)

    def async_builder(self, key: Any) -> AsyncBuilder:
        """The compiled builder for ``key`` to await (sync graphs are wrapped)."""
        found = self.async_.get(key)
        if found is not None:
            return found
        with self.lock:
            node = self.ok_node(key)
            if not node.is_async:
                build = self.compile_sync(key)

                async def run_sync(ctx: Any) -> Any:
                    return build(ctx)

                self.async_[key] = run_sync
                return run_sync
            return self.compile_async(key)

    def resolver(self, key: Any) -> tuple[bool, Callable[[Any], Any]]:
        """``(is_async, builder)`` for ``key``: await the builder's result only when async.

        Unlike ``async_builder``, a synchronous graph is not wrapped in a
        coroutine, so ``await scope.aget(T)`` of a sync graph costs one call.
        """
        found = self.resolvers.get(key)
        if found is not None:
            return found
        with self.lock:
            node = self.ok_node(key)
            entry = (
                (True, self.compile_async(key))
                if node.is_async
                else (False, self.compile_sync(key))
            )
            self.resolvers[key] = entry
            return entry

    def ok_node(self, key: Any) -> Node:
        node = self.graph.node(key)
        if not node.ok:
            problems = rooted(node.problems, key)
            raise ResolutionError(problems, title=f"Cannot resolve {type_name(key)}")
        return node

    def compile_sync(self, key: Any) -> Builder:
        found = self.sync.get(key)
        if found is not None:
            return found
        node = self.ok_node(key)
        if node.is_async:
            name = type_name(key)

            def needs_await(ctx: Any) -> Any:
                raise AsyncResolutionRequired(
                    f"{name} has an async factory in its graph; use `await scope.aget({name})`"
                )

            self.sync[key] = needs_await
            return needs_await
        built = self._generate(node, is_async=False)
        self.sync[key] = built
        return built

    def compile_async(self, key: Any) -> AsyncBuilder:
        found = self.async_.get(key)
        if found is None:
            found = self.async_[key] = self._generate(self.ok_node(key), is_async=True)
        return found

    def _generate(self, node: Node, *, is_async: bool) -> Callable[..., Any]:
        return compile_builder(
            node,
            node_of=self.graph.node,
            builder_of=self._builder_of,
            is_async=is_async,
            singletons=self.singletons,
            singleton_slot=self._async_singleton_slot if is_async else self._singleton_slot,
            session_slots=(self._session_slot, self._async_session_slot),
            root=self.root,
        )

    def _builder_of(self, key: Any, is_async: bool) -> Any:
        return self.compile_async(key) if is_async else self.compile_sync(key)

    def _singleton_slot(self, key: Any, create: Builder, root: Any) -> Any:
        with self.lock:
            value = self.singletons.get(key, MISSING)
            if value is MISSING:
                value = create(root)
                self.singletons[key] = value
            return value

    async def _async_singleton_slot(
        self, key: Any, create: Callable[[Any], Awaitable[Any]], root: Any
    ) -> Any:
        return await _create_once(self.async_locks, self.singletons, key, create, root)

    def _session_slot(self, ctx: Any, key: Any, create: Builder) -> Any:
        """The session's value for ``key``, created once (under a lock) in the session."""
        session = ctx.session
        try:
            return session._cache[key]
        except (KeyError, TypeError):  # not cached, or no dict yet
            pass
        with self.lock:
            cache = open_cache(session)
            value = cache.get(key, MISSING)  # outside a scope, or closed: refused
            if value is MISSING:
                value = create(session)
                cache[key] = value
            return value

    async def _async_session_slot(
        self, ctx: Any, key: Any, create: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        session = ctx.session
        try:
            return session._cache[key]
        except (KeyError, TypeError):  # not cached, or no dict yet
            pass
        cache = open_cache(session)
        locks: dict[Any, anyio.Lock] | None = getattr(session, "_locks", None)
        if locks is None:  # a scope that is its own session: created like a scoped value
            cache.get(key)  # outside a scope, or closed: refused
            value = await create(session)
            cache[key] = value
            return value
        return await _create_once(locks, cache, key, create, session)

    def call_plan(self, fn: Callable[..., Any]) -> CallPlan:
        """Which parameters of ``fn`` are injected; computed once per callable."""
        cache_key = getattr(fn, "__func__", fn), getattr(fn, "__self__", None) is not None
        found = self.call_plans.get(cache_key)
        if found is not None:
            return found
        with self.lock:
            plan = plan_call(fn, self.graph, self.compile_sync, self.compile_async)
            if len(self.call_plans) >= CALL_PLAN_LIMIT:
                self.call_plans.clear()
            self.call_plans[cache_key] = plan
            return plan

    def dependents(self, key: Any) -> list[Any]:
        """The built singletons whose graph reaches ``key`` (they hold its current value)."""
        seen: dict[Any, bool] = {}

        def reaches(current: Any) -> bool:
            if current == key:
                return True
            if current in seen:
                return seen[current]
            seen[current] = False
            node = self.graph.node(current)
            found = any(reaches(dep.key) for dep in node.deps if not dep.is_constant)
            seen[current] = found
            return found

        return [k for k in self.singletons if k != key and reaches(k)]
