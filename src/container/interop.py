"""Importing the providers of a ``dependency_injector`` container as bindings.

Each provider becomes an external binding: resolving it calls the provider,
so the source container's overrides and its own lifetimes are honoured.
"""

from __future__ import annotations

import inspect
import typing
from typing import TYPE_CHECKING, Any

from container.binding import Binding, ProviderKind
from container.lifetime import Lifetime

if TYPE_CHECKING:
    from container.container import Container

_LIFETIMES = {
    "Singleton": Lifetime.SINGLETON,
    "ThreadSafeSingleton": Lifetime.SINGLETON,
    "ThreadLocalSingleton": Lifetime.SINGLETON,
    "Object": Lifetime.SINGLETON,
    "Resource": Lifetime.SINGLETON,
    "ContextLocalSingleton": Lifetime.SCOPED,
    "ContextLocalResource": Lifetime.SCOPED,
}


def provided_type(provider: Any) -> Any | None:
    """The type a provider reveals, or ``None`` when it does not say."""
    name = type(provider).__name__
    if name == "Object":
        value = provider.provides
        return None if value is None else type(value)
    provides = getattr(provider, "provides", None)
    if isinstance(provides, type):
        return provides
    if callable(provides):
        try:
            hints = typing.get_type_hints(provides)
        except Exception:  # noqa: BLE001 - an unreadable annotation just means "not revealed"
            return None
        returns = hints.get("return")
        origin = typing.get_origin(returns)
        if origin is not None and typing.get_args(returns) and name.endswith("Resource"):
            return typing.get_args(returns)[0]
        return returns if isinstance(returns, type) else None
    return None


def lifetime_of(provider: Any) -> Lifetime:
    return _LIFETIMES.get(type(provider).__name__, Lifetime.TRANSIENT)


def include_dependency_injector(container: Container, source: Any) -> list[Binding]:
    """Bind every provider of ``source`` whose type is known; return the bindings made.

    Providers that do not reveal their type (``Factory(SqlRepo)`` serving a
    ``Repo`` protocol, a callable without a return annotation) need an
    explicit ``container.transient(Repo, source.repo)``.
    """
    made: list[Binding] = []
    for _, provider in source.providers.items():
        key = provided_type(provider)
        if key is None or (inspect.isabstract(key) and key in container.bindings):
            continue
        binding = Binding(key, provider, lifetime_of(provider), ProviderKind.EXTERNAL, provider)
        container._set(key, binding)
        made.append(binding)
    if hasattr(source, "shutdown_resources"):
        container.on_close(_shutdown(source))
    return made


def _shutdown(source: Any) -> Any:
    def shutdown() -> Any:
        return source.shutdown_resources()

    return shutdown
