"""Classifying handler parameters into trusted sources, once, and invoking by that plan."""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, cast

import anyio.to_thread
from starlette.requests import Request as HttpRequest

from container import (
    EMPTY,
    AnnotationError,
    Container,
    Param,
    Problem,
    ProviderKind,
    parameters,
    type_name,
)
from mcp_adapter.compiled import context as context_values
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import HttpRequestUnavailable, problem
from mcp_adapter.interrupts import in_thread


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


@dataclass(frozen=True, slots=True)
class Slot:
    """One classified parameter."""

    name: str
    source: Source
    key: Any = None
    or_none: bool = False
    """A service slot of a context type declared optional: ``None`` when not given."""


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
    needs_request: bool = field(init=False)
    sync: bool = field(init=False)
    """A sync method whose services are all sync: ``call_sync`` can run it on one thread."""

    def __post_init__(self) -> None:
        needs = bool(self.requests or self.http_requests or self.contexts)
        object.__setattr__(self, "needs_request", needs)
        object.__setattr__(self, "sync", not self.is_async and not self.async_services)

    async def invoke(
        self,
        instance: Any,
        scope: Any,
        request: McpRequest | None,
        payload: Any = None,
        arguments: dict[str, Any] | None = None,
    ) -> Any:
        """Fill the arguments from their sources and call the method."""
        kwargs = self._sync_arguments(scope, request, payload, arguments)
        for name, abuild in self.async_services:
            kwargs[name] = await abuild(scope)
        method = self.function if self.function is not None else getattr(instance, self.method)
        return await call_off_loop(method, self.is_async, kwargs)

    async def injected(self, scope: Any, request: McpRequest | None) -> dict[str, Any]:
        """Only the injected arguments (services, the requests): what middleware is given."""
        kwargs = self._sync_arguments(scope, request, None, None)
        for name, abuild in self.async_services:
            kwargs[name] = await abuild(scope)
        return kwargs

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
    function: Callable[..., Any], is_async: bool, kwargs: dict[str, Any]
) -> Awaitable[Any]:
    """What to await to call a handler as the adapter does: an async one on the loop, a
    sync one in a worker thread (so a blocking handler never stalls the server).

    A plain function returning the awaitable, so the call path gets no coroutine more.
    """
    if is_async:
        return cast(Awaitable[Any], function(**kwargs))
    return anyio.to_thread.run_sync(functools.partial(in_thread, function, kwargs))


def _is_subclass(annotation: Any, base: type) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, base)


def plan_handler(
    owner: type,
    method_name: str,
    container: Container,
    *,
    payload_type: Any = None,
    argument_names: Collection[str] = (),
    optional: bool = False,
) -> tuple[HandlerPlan | None, list[Problem]]:
    """Classify every parameter of ``owner.method_name``; report every problem.

    The payload is the parameter annotated with ``payload_type`` (or named
    ``payload`` without an annotation); named arguments are claimed by name;
    ``McpRequest`` and the Starlette ``Request`` by type; any other annotated
    type the container can build is a service; the rest must have defaults.
    """
    label = f"{owner.__qualname__}.{method_name}"
    function = getattr(owner, method_name, None)
    if function is None:
        if optional:
            return None, []
        return None, [
            problem(
                (owner.__qualname__,),
                f"{owner.__qualname__} has no {method_name}() method",
                f"define `async def {method_name}(self, ...)`",
            )
        ]
    if not callable(function):
        return None, [problem((label,), f"{label} is not callable")]
    return _plan(
        owner.__qualname__,
        method_name,
        function,
        container,
        payload_type=payload_type,
        argument_names=argument_names,
        skip_self=True,
    )


def plan_function(
    function: Callable[..., Any],
    container: Container,
    *,
    label: str | None = None,
    payload_type: Any = None,
    argument_names: Collection[str] = (),
) -> tuple[HandlerPlan | None, list[Problem]]:
    """Like ``plan_handler`` for a plain function or bound method, called directly."""
    name: str = label or str(getattr(function, "__qualname__", repr(function)))
    return _plan(
        name,
        "__call__",
        function,
        container,
        payload_type=payload_type,
        argument_names=argument_names,
        skip_self=False,
        direct=True,
    )


def _plan(
    owner: str,
    method_name: str,
    function: Any,
    container: Container,
    *,
    payload_type: Any,
    argument_names: Collection[str],
    skip_self: bool,
    direct: bool = False,
) -> tuple[HandlerPlan | None, list[Problem]]:
    label = owner if direct else f"{owner}.{method_name}"
    context_values.declare(container)
    try:
        params = parameters(function, skip_self=skip_self)
    except (AnnotationError, ValueError) as exc:
        return None, [problem((label,), str(exc), "annotate with importable types")]
    slots: list[Slot] = []
    problems: list[Problem] = []
    for param in params:
        slot, found = _classify(param, label, container, payload_type, argument_names)
        problems.extend(found)
        if slot is not None:
            slots.append(slot)
    if problems:
        return None, problems
    plan = _assemble(owner, method_name, function, slots, container)
    missing = context_values.unprovided(plan.contexts, (label,))
    if missing:
        return None, missing
    return (dataclasses.replace(plan, function=function) if direct else plan), []


def _classify(
    param: Param,
    label: str,
    container: Container,
    payload_type: Any,
    argument_names: Collection[str],
) -> tuple[Slot | None, list[Problem]]:
    here = (f"{label}({param.name})",)
    if param.variadic:
        return None, [
            problem(
                here,
                f"{label} takes {_stars(param)}{param.name}; "
                "handlers cannot accept *args or **kwargs",
                "declare each input as a named parameter",
            )
        ]
    key = param.key
    if key is McpRequest:
        return Slot(param.name, Source.REQUEST, key), []
    if _is_subclass(key, HttpRequest):
        return Slot(param.name, Source.HTTP_REQUEST, key), []
    if payload_type is not None and (
        key is payload_type or (key is EMPTY and param.name == "payload")
    ):
        return Slot(param.name, Source.PAYLOAD, payload_type), []
    if param.name in argument_names:
        return Slot(param.name, Source.ARGUMENT, key), []
    if key is not EMPTY:
        node = container.node(key)
        if node.ok:
            or_none = param.optional and node.binding.kind is ProviderKind.CONTEXT
            return Slot(param.name, Source.SERVICE, key, or_none), []
        if param.has_default or param.optional:
            return Slot(param.name, Source.DEFAULT, key), []
        if isinstance(key, type) and key.__module__ not in ("builtins", "typing"):
            return None, [reroot(p, here) for p in node.problems]
        return None, [
            problem(
                here,
                f"parameter {param.name}: {type_name(key)} of {label} has no valid source",
                "it is not the input contract, McpRequest, the HTTP Request, a named argument "
                "or a service the container can build; give it a default or bind the type",
            )
        ]
    if param.has_default:
        return Slot(param.name, Source.DEFAULT), []
    return None, [
        problem(
            here,
            f"parameter {param.name!r} of {label} has no annotation and no default",
            "annotate it with the input contract, McpRequest or a service type",
        )
    ]


def _stars(param: Param) -> str:
    return "**" if param.kind is inspect.Parameter.VAR_KEYWORD else "*"


def reroot(found: Problem, prefix: tuple[str, ...]) -> Problem:
    """Prefix a container problem's path with the handler parameter that led to it."""
    path = found.path if found.path[: len(prefix)] == prefix else (*prefix, *found.path)
    return dataclasses.replace(found, path=path)


def _assemble(
    owner: str,
    method_name: str,
    function: Any,
    slots: list[Slot],
    container: Container,
) -> HandlerPlan:
    services: list[tuple[str, Callable[[Any], Any]]] = []
    async_services: list[tuple[str, Callable[[Any], Any]]] = []
    for slot in slots:
        if slot.source is Source.SERVICE:
            if slot.or_none:
                services.append((slot.name, _given_or_none(slot.key)))
            elif container.node(slot.key).is_async:
                async_services.append((slot.name, container.async_builder(slot.key)))
            else:
                services.append((slot.name, container.builder(slot.key)))

    def names(source: Source) -> tuple[str, ...]:
        return tuple(slot.name for slot in slots if slot.source is source)

    payloads = names(Source.PAYLOAD)
    return HandlerPlan(
        owner=owner,
        method=method_name,
        is_async=inspect.iscoroutinefunction(inspect.unwrap(function)),
        slots=tuple(slots),
        payload=payloads[0] if payloads else None,
        services=tuple(services),
        async_services=tuple(async_services),
        requests=names(Source.REQUEST),
        http_requests=names(Source.HTTP_REQUEST),
        arguments=names(Source.ARGUMENT),
        contexts=context_values.needed(
            container, [slot.key for slot in slots if slot.source is Source.SERVICE]
        ),
    )


def _given_or_none(key: Any) -> Callable[[Any], Any]:
    """A builder for an optional context parameter: the scope's value, or ``None``."""

    def given(scope: Any) -> Any:
        return scope.context.get(key)

    return given
