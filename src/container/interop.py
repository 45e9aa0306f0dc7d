"""Importing the providers of a ``dependency_injector`` container as bindings.

The only module that knows ``dependency_injector``: a provider becomes an
ordinary :class:`Binding` of kind ``EXTERNAL`` (or ``ASYNC_EXTERNAL``) whose
fields say what the rest of the container needs to know (``caches_itself``,
``on_close``, ``release``). Resolving it calls the provider,
so the source container's overrides are honoured. Providers that keep their
own instance (``Singleton`` and friends, ``Object``, ``Resource``) are called
every time; a provider that does not (``Factory``, ``Callable``) bound with a
singleton or scoped lifetime is cached by this container like any factory.

``dependency_injector`` is imported lazily: nothing here needs it unless a
provider is bound.
"""

from __future__ import annotations

import builtins
import collections.abc
import contextlib
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from container.binding import Binding, ProviderKind
from container.introspect import return_annotation
from container.lifetime import Lifetime


class Registry(Protocol):
    """What including a source needs of a container (``Container`` is one)."""

    @property
    def bindings(self) -> Mapping[Any, Binding]: ...

    def bind(self, key: Any, target: Any = None, lifetime: Lifetime = ...) -> Binding: ...

    def on_close(self, callback: Callable[[], Any]) -> None: ...


_ITERATORS = frozenset(
    {
        collections.abc.Iterator,
        collections.abc.Iterable,
        collections.abc.Generator,
        collections.abc.AsyncIterator,
        collections.abc.AsyncIterable,
        collections.abc.AsyncGenerator,
        collections.abc.Awaitable,
        collections.abc.Coroutine,
    }
)


def _providers() -> Any:
    from dependency_injector import providers

    return providers


def _resources() -> Any:
    from dependency_injector import resources

    return resources


def _from_dependency_injector(target: Any) -> bool:
    """Whether ``target`` comes from ``dependency_injector`` (checked without importing it)."""
    return type(target).__module__.startswith("dependency_injector")


def is_provider(target: Any) -> bool:
    """Whether ``target`` is a ``dependency_injector`` provider."""
    return _from_dependency_injector(target) and isinstance(target, _providers().Provider)


def provider_binding(key: Any, target: Any, lifetime: Lifetime) -> Binding | None:
    """``key`` bound to ``target`` when it comes from ``dependency_injector``, else ``None``.

    The binding calls the provider, with nothing injected by this container.
    A provider that keeps its own instance is called on every resolution
    (``caches_itself``); a resource is shut down when the container closes
    (``on_close``), and a scoped one also when the scope that used it ends
    (``release``).
    """
    if not _from_dependency_injector(target):
        return None
    kind = ProviderKind.ASYNC_EXTERNAL if is_async_provider(target) else ProviderKind.EXTERNAL
    shutdown = resource_shutdown(target) if is_resource(target) else None
    return Binding(
        key,
        target,
        lifetime,
        kind,
        target,
        on_close=shutdown,
        caches_itself=caches_itself(target),
        release=shutdown if lifetime is Lifetime.SCOPED else None,
    )


def binding_of(key: Any, target: Any, lifetime: Lifetime) -> Binding:
    """``key`` bound to any ``target``: a provider as :func:`provider_binding` makes it,
    anything else as ``Binding.of`` does. The container binds every target through here."""
    return provider_binding(key, target, lifetime) or Binding.of(key, target, lifetime)


def _unwrap_result(returns: Any) -> Any:
    """``X`` for ``Iterator[X]``, ``AsyncIterator[X]``, ``Awaitable[X]``, ``Optional[X]``,
    ``Annotated[X, ...]`` ..."""
    origin = typing.get_origin(returns)
    if origin is typing.Annotated:
        return _unwrap_result(returns.__origin__)
    args = typing.get_args(returns)
    if origin in _ITERATORS and args:
        return _unwrap_result(args[-1] if origin is collections.abc.Coroutine else args[0])
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        return _unwrap_result(next(a for a in args if a is not type(None)))
    return returns


def _unwrap_annotated(returns: Any) -> Any:
    return returns.__origin__ if typing.get_origin(returns) is typing.Annotated else returns


def _resource_class_type(cls: Any) -> Any:
    returns = _unwrap_result(return_annotation(cls.init))
    if isinstance(returns, type):
        return returns
    for base in getattr(cls, "__orig_bases__", ()):
        args = typing.get_args(base)
        if args and isinstance(args[0], type):
            return args[0]
    return None


def provided_type(provider: Any) -> Any | None:
    """The type a provider reveals, or ``None`` when it does not say.

    ``Factory(cls)``/``Singleton(cls)`` reveal ``cls``; ``Callable``,
    ``Coroutine`` and ``Resource`` reveal their function's return annotation
    (``Iterator[X]`` and ``AsyncIterator[X]`` reveal ``X``); ``Object(value)``
    reveals ``type(value)``. Builtin types (``str``, ``dict`` ...) are never
    revealed: binding every ``str`` parameter to one value is not what anyone
    wants; bind those explicitly under a ``NewType``.
    """
    found = _provided_type(provider)
    if isinstance(found, type) and found.__module__ == builtins.__name__:
        return None
    return found


def _provided_type(provider: Any) -> Any | None:
    providers = _providers()
    if isinstance(provider, providers.Configuration | providers.DependenciesContainer):
        return None
    if isinstance(provider, providers.Object):
        value = provider.provides
        return None if value is None else type(value)
    if not isinstance(
        provider,
        providers.Factory | providers.BaseSingleton | providers.Callable | providers.BaseResource,
    ):
        return None
    provides = provider.provides
    if isinstance(provides, type):
        if isinstance(provider, providers.BaseResource):
            resources = _resources()
            if issubclass(provides, resources.Resource | resources.AsyncResource):
                return _resource_class_type(provides)
            return None
        return provides
    if callable(provides):
        returns = _unwrap_result(return_annotation(provides))
        return returns if isinstance(returns, type) else None
    return None


def lifetime_of(provider: Any) -> Lifetime:
    """The lifetime a provider implies.

    Factory/Callable -> transient; Singleton/Object/Resource -> singleton;
    ContextLocal* -> scoped.
    """
    providers = _providers()
    if isinstance(provider, providers.ContextLocalSingleton | providers.ContextLocalResource):
        return Lifetime.SCOPED
    if isinstance(provider, providers.BaseSingleton | providers.Object | providers.BaseResource):
        return Lifetime.SINGLETON
    return Lifetime.TRANSIENT


def caches_itself(provider: Any) -> bool:
    """Whether calling ``provider`` twice returns the same instance by its own design."""
    if not is_provider(provider):
        return False
    providers = _providers()
    return isinstance(provider, providers.BaseSingleton | providers.Object | providers.BaseResource)


def is_resource(provider: Any) -> bool:
    return is_provider(provider) and isinstance(provider, _providers().BaseResource)


def resource_shutdown(provider: Any) -> Callable[..., Any]:
    """A finalizer (called with the exit triple) that shuts a resource provider down."""

    def shutdown(*_exc_info: Any) -> Any:
        return provider.shutdown()

    return shutdown


def _async_resource(provides: Any) -> bool:
    """Whether a ``Resource`` provider's target initializes asynchronously."""
    if isinstance(provides, type):
        return issubclass(provides, _resources().AsyncResource)
    if not callable(provides):
        return False
    if inspect.iscoroutinefunction(provides) or inspect.isasyncgenfunction(provides):
        return True
    # generator functions are kept wrapped as (async) context managers: look through that
    if inspect.isasyncgenfunction(inspect.unwrap(provides)):
        return True
    returns = typing.get_origin(_unwrap_annotated(return_annotation(provides)))
    return returns in (
        collections.abc.AsyncIterator,
        collections.abc.AsyncGenerator,
        collections.abc.AsyncIterable,
        contextlib.AbstractAsyncContextManager,
    )


def is_async_provider(provider: Any) -> bool:
    """Whether calling ``provider`` (as it is wired now) returns an awaitable.

    True for ``Coroutine`` providers, async resources, and any provider that
    injects one of those (``dependency_injector`` then returns a future).
    """
    providers = _providers()
    calling = providers.Factory | providers.BaseSingleton | providers.Callable
    for each in (provider, *provider.traverse()):
        if isinstance(each, providers.Coroutine) or each.is_async_mode_enabled():
            return True
        if isinstance(each, providers.BaseResource) and _async_resource(each.provides):
            return True
        if isinstance(each, calling) and inspect.iscoroutinefunction(each.provides):
            return True
    return False


def include_dependency_injector(container: Registry, source: Any) -> list[Binding]:
    """Bind every provider of ``source`` whose type is known; return the bindings made.

    Keys that are bound already keep their binding (explicit binds win, and
    the first provider revealing a type wins over later ones). Providers of
    nested ``providers.Container`` are included too. Providers that do not
    reveal their type (``Factory(SqlRepo)`` serving a ``Repo`` protocol, a
    callable without a return annotation) need an explicit
    ``container.transient(Repo, source.repo)``. The source's resources are
    shut down when ``container`` closes.
    """
    providers = _providers()
    made: list[Binding] = []
    for provider in source.providers.values():
        if isinstance(provider, providers.Container):
            made.extend(include_dependency_injector(container, provider.container))
            continue
        key = provided_type(provider)
        if key is None or key in container.bindings:
            continue
        made.append(container.bind(key, provider, lifetime_of(provider)))
    if hasattr(source, "shutdown_resources"):
        container.on_close(source.shutdown_resources)
    return made
