"""What a key is bound to, and how that target produces a value."""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from container.introspect import return_annotation, type_name
from container.lifetime import Lifetime


class ProviderKind(enum.Enum):
    """How a binding's target is turned into a value."""

    INSTANCE = "instance"
    CLASS = "class"
    FACTORY = "factory"
    ASYNC_FACTORY = "async factory"
    GENERATOR = "generator"
    """A generator function: the yielded value is served, the code after ``yield`` finalizes."""
    ASYNC_GENERATOR = "async generator"
    CONTEXT_MANAGER = "context manager"
    """A callable returning a context manager (e.g. ``@contextmanager``): it is entered."""
    ASYNC_CONTEXT_MANAGER = "async context manager"
    EXTERNAL = "external provider"
    """A zero-argument callable whose own dependencies are managed elsewhere (another
    container's provider: see ``container.interop``)."""
    ASYNC_EXTERNAL = "async external provider"
    """An external provider whose value must be awaited."""
    CONTEXT = "context value"
    """Never built: the scope of its level is given the value (``container.scope(context=...)``)."""

    @property
    def is_async(self) -> bool:
        return self in _ASYNC_KINDS

    @property
    def finalizes(self) -> bool:
        return self in _FINALIZING_KINDS

    @property
    def is_external(self) -> bool:
        return self in (ProviderKind.EXTERNAL, ProviderKind.ASYNC_EXTERNAL)


_ASYNC_KINDS = frozenset(
    {
        ProviderKind.ASYNC_FACTORY,
        ProviderKind.ASYNC_GENERATOR,
        ProviderKind.ASYNC_CONTEXT_MANAGER,
        ProviderKind.ASYNC_EXTERNAL,
    }
)
_FINALIZING_KINDS = frozenset(
    {
        ProviderKind.GENERATOR,
        ProviderKind.ASYNC_GENERATOR,
        ProviderKind.CONTEXT_MANAGER,
        ProviderKind.ASYNC_CONTEXT_MANAGER,
    }
)

_CM_ORIGINS = (
    contextlib.AbstractContextManager,
    typing.ContextManager,
)
_ACM_ORIGINS = (
    contextlib.AbstractAsyncContextManager,
    typing.AsyncContextManager,
)


def classify(target: Any) -> tuple[ProviderKind, Callable[..., Any]]:
    """The kind of a binding target, and the callable that produces its value.

    A generator function serves what it yields; the code after ``yield`` is
    its finalizer and always runs (the error that ended the scope, or
    ``None``, is the value of the ``yield`` expression). A function decorated
    with ``@contextmanager``, or annotated to return a context manager, is
    entered and exited like a ``with`` block.
    """
    if isinstance(target, type):
        return ProviderKind.CLASS, target
    if not callable(target):
        raise TypeError(f"cannot bind to {target!r}: expected a class, a callable or an instance")
    kind = _function_kind(target)
    if kind is not None:
        return kind, target
    wrapped = inspect.unwrap(target)
    if wrapped is not target:
        if inspect.isasyncgenfunction(wrapped):
            return ProviderKind.ASYNC_CONTEXT_MANAGER, target
        if inspect.isgeneratorfunction(wrapped):
            return ProviderKind.CONTEXT_MANAGER, target
    if not inspect.isroutine(wrapped) and not isinstance(wrapped, functools.partial):
        kind = _function_kind(type(wrapped).__call__)
        if kind is not None:
            return kind, target
    returns: Any = return_annotation(target)
    if typing.get_origin(returns) is typing.Annotated:
        returns = returns.__origin__
    if returns is not None:
        origin: Any = typing.get_origin(returns) or returns
        if origin in _ACM_ORIGINS:
            return ProviderKind.ASYNC_CONTEXT_MANAGER, target
        if origin in _CM_ORIGINS:
            return ProviderKind.CONTEXT_MANAGER, target
    return ProviderKind.FACTORY, target


def _function_kind(function: Any) -> ProviderKind | None:
    """What calling ``function`` gives, when it is a coroutine or generator function:
    one it awaits (an async factory), or one that yields (a finalized value)."""
    if inspect.isasyncgenfunction(function):
        return ProviderKind.ASYNC_GENERATOR
    if inspect.isgeneratorfunction(function):
        return ProviderKind.GENERATOR
    if inspect.iscoroutinefunction(function):
        return ProviderKind.ASYNC_FACTORY
    return None


def _never_built(key: Any) -> Callable[[], Any]:
    def build() -> Any:
        raise TypeError(f"{type_name(key)} is a context value: scopes are given it")

    return build


@dataclass(frozen=True, slots=True)
class Binding:
    """A key bound to a target with a lifetime.

    >>> class Repo: ...
    >>> Binding.of(Repo, Repo, Lifetime.SCOPED)
    Binding(Repo -> Repo, scoped, class)
    """

    key: Any
    target: Any
    lifetime: Lifetime
    kind: ProviderKind
    factory: Callable[..., Any] = field(repr=False)
    on_close: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    """Run when the container closes, registered by ``container.bind()`` (an external
    provider's resource is shut down so)."""
    eager: bool = field(default=False, repr=False)
    """A singleton built by ``container.start()``, before any request needs it."""
    caches_itself: bool = field(default=False, repr=False)
    """The target keeps its one instance itself (and honours its own overrides): bound as a
    singleton, it is called on every resolution instead of being cached here."""
    release: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    """Called with the exit triple when the scope that built a value with it ends."""

    @classmethod
    def of(cls, key: Any, target: Any, lifetime: Lifetime) -> Binding:
        kind, factory = classify(target)
        return cls(key, target, lifetime, kind, factory)

    @classmethod
    def instance(cls, key: Any, value: Any) -> Binding:
        return cls(key, value, Lifetime.SINGLETON, ProviderKind.INSTANCE, lambda: value)

    @classmethod
    def context(cls, key: Any, lifetime: Lifetime) -> Binding:
        """``key`` is a value the scopes of ``lifetime``'s level are given, never built."""
        if lifetime not in (Lifetime.SESSION, Lifetime.SCOPED):
            raise ValueError(
                f"a context value belongs to session or request scopes, not {lifetime.value}; "
                "bind a value shared by everyone with container.instance()"
            )
        return cls(key, key, lifetime, ProviderKind.CONTEXT, _never_built(key))

    def __repr__(self) -> str:
        return (
            f"Binding({type_name(self.key)} -> {type_name(self.target)}, "
            f"{self.lifetime.value}, {self.kind.value})"
        )
