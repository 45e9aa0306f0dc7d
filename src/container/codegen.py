"""Turning an analysed node into a builder function, once.

A builder takes a resolution context (anything with ``cache`` and ``_exits``)
and returns the value. Its body is generated source in which the whole
subgraph below the key is inlined (up to a budget): one function call per
resolution, no signature inspection, no dispatch on lifetimes, no loops.
Keys, factories and deeper builders are bound as globals of the function.
Each function is named for its key (``build_Repository``) and its source is
put in ``linecache``, so a traceback through it shows the generated lines.
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from container.binding import ProviderKind
from container.cache import PENDING, keep, open_cache, salvage
from container.errors import AsyncResolutionRequired, ContextNotGiven
from container.finalizers import ASYNC_EXIT, ASYNC_GENERATOR, SYNC_EXIT, SYNC_GENERATOR
from container.graph import Node
from container.introspect import type_name
from container.lifetime import Lifetime

Builder = Callable[[Any], Any]
AsyncBuilder = Callable[[Any], Awaitable[Any]]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()


def _no_yield(factory: Any) -> RuntimeError:
    return RuntimeError(f"{type_name(factory)} finished without yielding a value")


def _needs_await(value: Any, key: Any) -> None:
    if isinstance(value, Coroutine):
        value.close()  # never awaited: close it instead of leaking a warning
    name = type_name(key)
    raise AsyncResolutionRequired(
        f"the provider of {name} returned an awaitable; use `await scope.aget({name})`"
    )


def _not_given(ctx: Any, key: Any) -> Any:
    name = type_name(key)
    raise ContextNotGiven(
        f"{name} is a context value and this scope was not given one; "
        f"open the scope with container.scope(context={{{name}: value}})"
    )


_HELPERS: dict[str, Any] = {
    "OPEN": open_cache,
    "PENDING": PENDING,
    "SALVAGE": salvage,
    "KEEP": keep,
    "NOT_GIVEN": _not_given,
    "NO_YIELD": _no_yield,
    "NEEDS_AWAIT": _needs_await,
    "ISAWAITABLE": inspect.isawaitable,
}


def function_name(prefix: str, key: Any) -> str:
    """``prefix`` and ``key``'s readable name as an identifier: ``build_Repository``."""
    words = re.sub(r"\W+", "_", type_name(key)).strip("_")[:60]
    name = f"{prefix}_{words}"
    return name if words and name.isidentifier() else prefix


def _source_file(name: str, source: str) -> str:
    """A file name for generated ``source``, registered in ``linecache`` for tracebacks.

    It is named after the source's digest: the same code (the same graph
    shape) has the same file, so recompiling adds no entry.
    """
    digest = hashlib.blake2b(source.encode(), digest_size=6).hexdigest()
    filename = f"<container {name} {digest}>"
    if filename not in linecache.cache:
        lines = source.splitlines(keepends=True)
        linecache.cache[filename] = (len(source), None, lines, filename)
    return filename


INLINE_BUDGET = 24
"""Nodes inlined into one builder; deeper ones are called through their own builder."""
_GENERATORS = {
    ProviderKind.GENERATOR: ("next(gen)", "StopIteration", SYNC_GENERATOR),
    ProviderKind.ASYNC_GENERATOR: ("await gen.__anext__()", "StopAsyncIteration", ASYNC_GENERATOR),
}
"""A generator provider's first value, the error that says it yielded none, and the kind of
finalizer that resumes it."""


@dataclass
class _Emitter:
    node_of: Callable[[Any], Node]
    builder_of: Callable[[Any, bool], Callable[..., Any]]
    singleton_slot: Callable[..., Any]
    is_async: bool
    namespace: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    budget: int = field(default_factory=lambda: INLINE_BUDGET)
    counter: int = 0
    fresh: dict[Any, str] | None = None
    """In the fresh-scope path: the local holding each scoped key built so far."""
    fresh_singletons: dict[Any, str] = field(default_factory=dict)
    """In the fresh-scope path (straight-line code): the local of each singleton read."""
    delegated: bool = False
    """Whether a non-singleton node was left to another builder (it checks the cache)."""
    sessioned: bool = False
    """Whether the fresh-scope path resolves a session-scoped node (it may make the dict)."""
    fresh_path: bool = False
    """Whether the builder starts with a fresh-scope path (which also opens the cache)."""

    def bind(self, prefix: str, value: Any, *, named_for: Any = MISSING) -> str:
        """A new global holding ``value``; ``named_for`` (a key or factory) makes it readable:
        ``F3_Repository``."""
        self.counter += 1
        name = f"{prefix}{self.counter}"
        if named_for is not MISSING:
            name = function_name(name, named_for)
        self.namespace[name] = value
        return name

    def emit(self, line: str, depth: int) -> None:
        self.lines.append("    " * depth + line)

    def value(self, key: Any, depth: int, *, top: bool = False) -> str:
        """Emit code that leaves the value of ``key`` in a fresh local; return its name."""
        node = self.node_of(key)
        binding = node.binding
        lifetime = binding.lifetime
        if binding.kind is ProviderKind.INSTANCE:
            return self.bind("V", binding.target)
        local = self.bind("v", None)
        if binding.kind is ProviderKind.CONTEXT:
            k = self.bind("K", key)
            self.emit("try:", depth)
            self.emit(f"    {local} = ctx.context[{k}]", depth)
            self.emit("except KeyError:", depth)
            self.emit(f"    {local} = NOT_GIVEN(ctx, {k})", depth)
            return local
        if binding.kind.is_external and (
            lifetime is Lifetime.TRANSIENT
            or (lifetime is Lifetime.SINGLETON and binding.caches_itself)
        ):
            # the provider keeps its own instance (and honours its overrides): call it each time
            self.construct(node, local, depth)
            return local
        use_async = self.is_async and node.is_async
        aw = "await " if use_async else ""
        if not top and lifetime is Lifetime.SINGLETON:
            if self.fresh is not None:  # straight-line code: a singleton read once is reused
                known = self.fresh_singletons.get(key)
                if known is not None:
                    return known
                self.fresh_singletons[key] = local
            k = self.bind("K", key)
            builder = self.bind("B", self.builder_of(key, use_async), named_for=key)
            self.read_singleton(local, k, depth)
            self.emit(f"if {local} is MISSING:", depth)
            self.emit(f"    {local} = {aw}{builder}(ctx)", depth)
            return local
        if lifetime is Lifetime.SESSION:
            # built once per session, in the session scope (a lone request scope is its own)
            k = self.bind("K", key)
            create = self.bind("C", self.creator(node))
            slot = "ASESSION" if use_async else "SESSION"
            self.emit(f"{local} = {aw}{slot}(ctx, {k}, {create})", depth)
            self.sessioned = self.fresh is not None
            return local
        if not top and self.budget <= 0:
            self.delegated = True
            builder = self.bind("B", self.builder_of(key, use_async), named_for=key)
            self.emit(f"{local} = {aw}{builder}(ctx)", depth)
            return local
        self.budget -= 1
        if lifetime is Lifetime.SINGLETON:
            k = self.bind("K", key)
            self.read_singleton(local, k, depth)
            self.emit(f"if {local} is MISSING:", depth)
            create = self.bind("C", self.creator(node))
            self.emit(f"    {local} = {aw}SLOT({k}, {create}, ROOT)", depth)
            return local
        if lifetime is Lifetime.SCOPED and self.fresh is not None:
            # nothing is cached yet: nothing to look up, only locals to reuse (kept at the end)
            known = self.fresh.get(key)
            if known is not None:
                return known
            self.construct(node, local, depth)
            self.fresh[key] = local
            return local
        if lifetime is Lifetime.SCOPED:
            k = self.bind("K", key)
            self.emit(f"{local} = cache.get({k}, MISSING)", depth)
            self.emit(f"if {local} is MISSING:", depth)
            self.construct(node, local, depth + 1)
            self.emit(f"    cache[{k}] = {local}", depth)
            return local
        self.construct(node, local, depth)
        return local

    def read_singleton(self, local: str, k: str, depth: int) -> None:
        """Emit ``local = SINGLETONS[k]``, ``MISSING`` when not created yet.

        A subscript in a ``try`` costs less than ``SINGLETONS.get(k, MISSING)``
        (a method call) on the path that matters: the singleton exists. The
        ``KeyError`` is dropped before the singleton is built, so a failing
        factory's error does not carry it as its context.
        """
        self.emit("try:", depth)
        self.emit(f"    {local} = SINGLETONS[{k}]", depth)
        self.emit("except KeyError:", depth)
        self.emit(f"    {local} = MISSING", depth)

    def creator(self, node: Node) -> Callable[..., Any]:
        """A separate function that builds ``node`` fresh (used for singletons)."""
        sub = _Emitter(
            self.node_of, self.builder_of, self.singleton_slot, self.is_async and node.is_async
        )
        sub.namespace.update(self.namespace_base())
        local = sub.bind("v", None)
        sub.construct(node, local, 1)
        return sub.finish(local, name=function_name("create", node.key))

    def namespace_base(self) -> dict[str, Any]:
        keep = ("SINGLETONS", "MISSING", "ROOT", "SLOT", "SESSION", "ASESSION", *_HELPERS)
        return {k: self.namespace[k] for k in keep if k in self.namespace}

    def construct(self, node: Node, local: str, depth: int) -> None:
        args = []
        for dep in node.deps:
            if dep.is_constant:
                value = self.bind("D", dep.value)
            elif dep.or_none:
                value = self.bind("v", None)
                self.emit(f"{value} = ctx.context.get({self.bind('K', dep.key)})", depth)
            else:
                value = self.value(dep.key, depth)
            args.append(value if dep.positional else f"{dep.name}={value}")
        binding = node.binding
        factory = self.bind("F", binding.factory, named_for=binding.target)
        call = f"{factory}({', '.join(args)})"
        kind = binding.kind
        emit = self.emit
        if kind is ProviderKind.ASYNC_FACTORY:
            emit(f"{local} = await {call}", depth)
        elif kind in _GENERATORS:
            first, stop, finalizer = _GENERATORS[kind]
            emit(f"gen = {call}", depth)
            emit("try:", depth)
            emit(f"    {local} = {first}", depth)
            emit(f"except {stop}:", depth)
            emit(f"    raise NO_YIELD({factory}) from None", depth)
            self.finalize_with(f"({finalizer}, gen)", depth)
        elif kind is ProviderKind.CONTEXT_MANAGER:
            emit(f"cm = {call}", depth)
            emit(f"{local} = cm.__enter__()", depth)
            self.finalize_with(f"({SYNC_EXIT}, cm.__exit__)", depth)
        elif kind is ProviderKind.ASYNC_CONTEXT_MANAGER:
            emit(f"cm = {call}", depth)
            emit(f"{local} = await cm.__aenter__()", depth)
            self.finalize_with(f"({ASYNC_EXIT}, cm.__aexit__)", depth)
        elif kind.is_external:
            emit(f"{local} = {call}", depth)
            emit(f"if ISAWAITABLE({local}):", depth)
            if self.is_async:
                emit(f"    {local} = await {local}", depth)
            else:
                emit(f"    NEEDS_AWAIT({local}, {self.bind('K', node.key)})", depth)
        else:
            emit(f"{local} = {call}", depth)
        if binding.release is not None:
            release = self.bind("S", binding.release)
            self.finalize_with(f"({SYNC_EXIT}, {release})", depth)

    def finalize_with(self, exit_: str, depth: int) -> None:
        """Emit code that registers a finalizer; a scope's list is made by its first one."""
        self.emit("if ctx._exits is None:", depth)
        self.emit("    ctx._exits = []", depth)
        self.emit(f"ctx._exits.append({exit_})", depth)

    def fresh_scope_path(self, key: Any) -> None:
        """Put first a path for a scope that has cached nothing yet, when it saves lookups.

        In a new scope no scoped key can be cached: the path builds every
        scoped node of the graph once, without looking anything up, and keeps
        the values as one tuple (``container.cache`` says how the scope's cache
        goes from that tuple to a dict). If it fails, what it built so far is
        cached, as if each value had been stored when made. It is only emitted
        when the whole graph is inlined (a delegated builder might cache a key
        this path builds again) and the graph has scoped nodes at all.
        """
        general, budget = self.lines, self.budget
        self.lines, self.budget, self.fresh, self.delegated = [], INLINE_BUDGET, {}, False
        self.fresh_singletons, self.sessioned = {}, False
        try:
            result = self.value(key, 4, top=True)
            fast, fresh = self.lines, self.fresh
            useful = bool(fresh) and not self.delegated
        finally:
            self.lines, self.budget, self.fresh = general, budget, None
        if not useful:
            return
        record = ", ".join([*fresh.values(), self.bind("KEYS", tuple(fresh))])
        names = self.bind("LOCALS", tuple(zip(fresh.values(), fresh, strict=True)))
        if self.sessioned:  # it may have made the dict of a scope that is its own session
            keep = [f"KEEP(ctx, ({record}))"]
        else:
            keep = [f"ctx._record = ({record})", "ctx._cache = PENDING"]
        self.fresh_path = True
        self.lines = [
            "    if not cache:",
            "        if cache is None:",
            "            try:",
            *fast,
            "            except BaseException:",
            f"                SALVAGE(ctx, {names}, locals())",
            "                raise",
            *(f"            {line}" for line in keep),
            f"            return {result}",
            "        cache = OPEN(ctx)",
            *general,
        ]

    def finish(self, result: str, *, name: str = "build") -> Callable[..., Any]:
        head = f"{'async def' if self.is_async else 'def'} {name}(ctx):"
        lines = list(self.lines)
        if any(re.search(r"\bcache\b", line) for line in lines):
            opened = [] if self.fresh_path else ["    if not cache:", "        cache = OPEN(ctx)"]
            lines[:0] = ["    cache = ctx._cache", *opened]
        assign = f"    {result} = "
        if lines and lines[-1].startswith(assign):
            lines[-1] = "    return " + lines[-1][len(assign) :]  # no local for the last value
        else:
            lines.append(f"    return {result}")
        source = "\n".join([head, *lines])
        exec(compile(source, _source_file(name, source), "exec"), self.namespace)
        function: Callable[..., Any] = self.namespace[name]
        function.__source__ = source  # type: ignore[attr-defined]
        return function


def compile_builder(
    node: Node,
    *,
    node_of: Callable[[Any], Node],
    builder_of: Callable[[Any, bool], Callable[..., Any]],
    is_async: bool,
    singletons: dict[Any, Any],
    singleton_slot: Callable[..., Any],
    session_slots: tuple[Callable[..., Any], Callable[..., Any]],
    root: Any,
) -> Callable[..., Any]:
    """The builder for ``node``: sync, or async when ``is_async``.

    ``builder_of(key, is_async)`` returns the compiled builder of a key that
    is not inlined. Singletons are created against ``root`` (their
    dependencies never see a request scope) through
    ``singleton_slot(key, create, root)``, which makes the first
    construction happen once under a lock. ``session_slots`` (sync, async) do
    the same for session-scoped keys, in the session scope of the context.
    """
    emitter = _Emitter(node_of, builder_of, singleton_slot, is_async)
    emitter.namespace.update(SINGLETONS=singletons, MISSING=MISSING, ROOT=root, SLOT=singleton_slot)
    emitter.namespace.update(SESSION=session_slots[0], ASESSION=session_slots[1])
    emitter.namespace.update(_HELPERS)
    result = emitter.value(node.key, 1, top=True)
    if node.binding.lifetime is not Lifetime.SINGLETON and not emitter.delegated:
        emitter.fresh_scope_path(node.key)
    return emitter.finish(result, name=function_name("build", node.key))
