"""How to call a handler, a hook or a middleware layer: a plan decided at compile time.

``compile.handlers`` makes a ``HandlerPlan`` for each method (where each parameter's
value comes from); the dispatcher invokes it, filling the arguments in the call's
scope. A sync method runs in a worker thread (``call_off_loop``), through the
``Offload`` the dispatcher gives: the server's own threads, or the one thread a call
borrowed.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from mcp_adapter.declare.middleware import Middleware
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import HttpRequestUnavailable
from mcp_adapter.interrupts import in_thread

T = TypeVar("T")


class Offload(Protocol):
    """Where a sync method runs: ``await offload.run(function, *args)`` calls it on a worker
    thread (``dispatch.threads``: the server's threads, or one a call borrowed)."""

    def run(self, function: Callable[..., T], /, *args: Any) -> Awaitable[T]: ...


class Source(enum.Enum):
    """Where a handler parameter's value comes from."""

    PAYLOAD = "payload"
    """The validated input contract."""
    ARGUMENT = "argument"
    """A named argument: a URI variable of a resource, an argument of a prompt."""
    SERVICE = "service"
    """Resolved from the container in the request's scope."""
    REQUEST = "request"
    """The ``McpRequest`` snapshot."""
    HTTP_REQUEST = "http request"
    """The Starlette request (HTTP transport only)."""
    DEFAULT = "default"
    """Left to the parameter's default."""
    RESOLVED = "resolved"
    """``Annotated[T, Resolve(fn)]``: filled by the input phase (``compiled.resolvers``)."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One classified parameter."""

    name: str
    source: Source
    key: Any = None
    or_none: bool = False
    """A service slot of a context type declared optional: ``None`` when not given."""
    resolver: Any = None
    """A resolved slot's ``compiled.resolvers.ResolverPlan``."""
    whole: bool = False
    """A resolved slot that takes the whole outcome (``ElicitationResult[T]`` and the
    like) rather than the accepted value."""


@dataclass(frozen=True, slots=True)
class HandlerPlan:
    """How to call one method: where each argument comes from, decided at compile time."""

    owner: str
    method: str
    is_async: bool
    slots: tuple[Slot, ...]
    payload: str | None
    services: tuple[tuple[str, Callable[[Any], Any]], ...]
    async_services: tuple[tuple[str, Callable[[Any], Any]], ...]
    requests: tuple[str, ...]
    http_requests: tuple[str, ...]
    arguments: tuple[str, ...]
    function: Callable[..., Any] | None = None
    """Called directly when set (a plain function handler); else ``instance.<method>``."""
    contexts: frozenset[Any] = frozenset()
    """The context values its services need (``McpRequest``, ``Identity``, ...)."""
    resolved: tuple[tuple[str, Any, bool], ...] = ()
    """``(parameter, resolver, whole outcome)`` of each resolved parameter: the input
    phase gives them (as ``arguments``)."""
    resolver: str | None = None
    """The ``module:qualname`` of the resolver this plan calls (``None``: a handler, a
    hook, a layer): its calls are traced as resolver spans, not handler ones."""
    needs_request: bool = field(init=False)
    sync: bool = field(init=False)
    """A sync method whose services are all sync: ``call_sync`` can run it on one thread."""
    scoped: bool = field(init=False)
    """It takes a service (context values included): it is called in a container scope.
    Without one (only the requests, defaults, the payload, arguments) it is called with
    no scope at all, and nothing can tell."""

    def __post_init__(self) -> None:
        needs = bool(self.requests or self.http_requests or self.contexts)
        object.__setattr__(self, "needs_request", needs)
        object.__setattr__(self, "scoped", bool(self.services or self.async_services))
        object.__setattr__(self, "sync", not self.is_async and not self.async_services)

    def invoke(
        self,
        instance: Any,
        scope: Any,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
        threads: Offload | None = None,
    ) -> Awaitable[Any]:
        """Fill the arguments from their sources and call the method (a sync one on
        ``threads``, which a sync plan needs): what to await for its value.

        Not a coroutine of its own when no service is async (the common case): the
        handler's own awaitable is returned, so a call's path has one frame less.
        """
        if self.async_services:
            return self._invoke_async(instance, scope, request, payload, arguments, threads)
        kwargs = self._sync_arguments(scope, request, payload, arguments)
        method = self.function if self.function is not None else getattr(instance, self.method)
        if self.is_async:  # ``call_off_loop``'s first case, without its frame
            called: Awaitable[Any] = method(**kwargs)
            return called
        return call_off_loop(method, False, kwargs, threads)

    async def _invoke_async(
        self,
        instance: Any,
        scope: Any,
        request: McpRequest | None,
        payload: Any,
        arguments: dict[str, Any] | None,
        threads: Offload | None,
    ) -> Any:
        """``invoke`` with async services, awaited before the method is called."""
        kwargs = self._sync_arguments(scope, request, payload, arguments)
        for name, abuild in self.async_services:
            kwargs[name] = await abuild(scope)
        method = self.function if self.function is not None else getattr(instance, self.method)
        return await call_off_loop(method, self.is_async, kwargs, threads)

    async def injected(self, scope: Any, request: McpRequest | None) -> dict[str, Any]:
        """Only the injected arguments (services, the requests): what middleware is given."""
        kwargs = self._sync_arguments(scope, request, None, None)
        for name, abuild in self.async_services:
            kwargs[name] = await abuild(scope)
        return kwargs

    def injected_sync(self, scope: Any, request: McpRequest | None) -> dict[str, Any]:
        """``injected`` for a plan without async services, on the calling thread."""
        return self._sync_arguments(scope, request, None, None)

    def call_sync(
        self,
        instance: Any,
        scope: Any,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
    ) -> Any:
        """Like ``invoke`` for a ``sync`` plan, on the calling thread (meant: a worker thread)."""
        kwargs = self._sync_arguments(scope, request, payload, arguments)
        method = self.function if self.function is not None else getattr(instance, self.method)
        return method(**kwargs)

    def _sync_arguments(
        self,
        scope: Any,
        request: McpRequest | None,
        payload: Any,
        arguments: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Every argument but the async services: those ``invoke`` awaits afterwards."""
        kwargs: dict[str, Any] = dict(arguments) if arguments else {}
        if self.payload is not None:
            kwargs[self.payload] = payload
        for name, build in self.services:
            kwargs[name] = build(scope)
        for name in self.requests:
            kwargs[name] = request
        if self.http_requests:
            http = self._http_request(request)
            for name in self.http_requests:
                kwargs[name] = http
        return kwargs

    def _http_request(self, request: McpRequest | None) -> Any:
        http = request.http_request if request is not None else None
        if http is None:
            raise HttpRequestUnavailable(
                f"{self.owner}.{self.method} needs the HTTP request, and this call did not "
                "come over HTTP; use McpRequest for components shared with stdio"
            )
        return http


def call_off_loop(
    function: Callable[..., Any],
    is_async: bool,
    kwargs: dict[str, Any],
    threads: Offload | None,
) -> Awaitable[Any]:
    """What to await to call a handler as the adapter does: an async one on the loop, a
    sync one on a worker thread of ``threads`` (so a blocking handler never stalls the
    server).

    A plain function returning the awaitable, so the call path gets no coroutine more.
    """
    if is_async:
        called: Awaitable[Any] = function(**kwargs)  # no cast(): a call and a subscript per call
        return called
    if threads is None:
        raise TypeError(f"{function!r} is sync: calling it needs the threads to run it on")
    return threads.run(functools.partial(in_thread, function, kwargs))


@dataclass(frozen=True, slots=True)
class Layer:
    """One compiled middleware: the callable, the plan of what it gets injected, and the
    stage it stands in (``declare.middleware``); a request-stage layer's ``provides`` are
    the context values it gives the call."""

    function: Middleware
    plan: HandlerPlan = field(repr=False)
    stage: str = "call"
    provides: frozenset[Any] = field(default=frozenset(), repr=False)
    injects: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        plan = self.plan
        injects = bool(
            plan.services
            or plan.async_services
            or plan.requests
            or plan.http_requests
            or plan.resolved
        )
        object.__setattr__(self, "injects", injects)
