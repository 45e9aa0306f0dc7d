"""What a key is bound to, and how that target produces a value."""

from __future__ import annotations

import contextlib
import enum
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from container.lifetime import Lifetime


class ProviderKind(enum.Enum):
    """How a binding's target is turned into a value."""

    INSTANCE = "instance"
    CLASS = "class"
    FACTORY = "factory"
    ASYNC_FACTORY = "async factory"
    CONTEXT_MANAGER = "context manager"
    ASYNC_CONTEXT_MANAGER = "async context manager"
    EXTERNAL = "external provider"
    """A zero-argument callable whose own dependencies are managed elsewhere."""

    @property
    def is_async(self) -> bool:
        return self in (ProviderKind.ASYNC_FACTORY, ProviderKind.ASYNC_CONTEXT_MANAGER)

    @property
    def finalizes(self) -> bool:
        return self in (ProviderKind.CONTEXT_MANAGER, ProviderKind.ASYNC_CONTEXT_MANAGER)


_CM_ORIGINS = (
    contextlib.AbstractContextManager,
    typing.ContextManager,
)
_ACM_ORIGINS = (
    contextlib.AbstractAsyncContextManager,
    typing.AsyncContextManager,
)


def _is_external(target: Any) -> bool:
    return type(target).__module__.startswith("dependency_injector")


def classify(target: Any) -> tuple[ProviderKind, Callable[..., Any]]:
    """The kind of a binding target, and the callable that produces its value.

    Generator functions become context managers (code after ``yield`` is the
    finalizer); functions decorated with ``@contextmanager`` or returning a
    context manager are entered.
    """
    if isinstance(target, type):
        return ProviderKind.CLASS, target
    if _is_external(target):
        return ProviderKind.EXTERNAL, target
    if not callable(target):
        raise TypeError(f"cannot bind to {target!r}: expected a class, a callable or an instance")
    if inspect.isasyncgenfunction(target):
        return ProviderKind.ASYNC_CONTEXT_MANAGER, contextlib.asynccontextmanager(target)
    if inspect.isgeneratorfunction(target):
        return ProviderKind.CONTEXT_MANAGER, contextlib.contextmanager(target)
    if inspect.iscoroutinefunction(target):
        return ProviderKind.ASYNC_FACTORY, target
    wrapped = inspect.unwrap(target)
    if wrapped is not target:
        if inspect.isasyncgenfunction(wrapped):
            return ProviderKind.ASYNC_CONTEXT_MANAGER, target
        if inspect.isgeneratorfunction(wrapped):
            return ProviderKind.CONTEXT_MANAGER, target
    returns: Any = inspect.get_annotations(wrapped, eval_str=False).get("return")
    if returns is not None and not isinstance(returns, str):
        origin: Any = typing.get_origin(returns) or returns
        if origin in _ACM_ORIGINS:
            return ProviderKind.ASYNC_CONTEXT_MANAGER, target
        if origin in _CM_ORIGINS:
            return ProviderKind.CONTEXT_MANAGER, target
    return ProviderKind.FACTORY, target


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

    @classmethod
    def of(cls, key: Any, target: Any, lifetime: Lifetime) -> Binding:
        kind, factory = classify(target)
        return cls(key, target, lifetime, kind, factory)

    @classmethod
    def instance(cls, key: Any, value: Any) -> Binding:
        return cls(key, value, Lifetime.SINGLETON, ProviderKind.INSTANCE, lambda: value)

    def __repr__(self) -> str:
        from container.introspect import type_name

        return (
            f"Binding({type_name(self.key)} -> {type_name(self.target)}, "
            f"{self.lifetime.value}, {self.kind.value})"
        )
