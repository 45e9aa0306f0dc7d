"""Classifying handler parameters into trusted sources, once: the ``HandlerPlan`` the
dispatcher invokes."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Collection
from typing import Any, Protocol

from mcp.server.mcpserver.resolve import Resolve
from starlette.requests import Request as HttpRequest

from container import (
    APP,
    EMPTY,
    LEVEL_NAMES,
    AnnotationError,
    Container,
    Param,
    Problem,
    ProviderKind,
    parameters,
    type_name,
)
from mcp_adapter.compiled import context as context_values
from mcp_adapter.compiled.handlers import HandlerPlan, Slot, Source
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import problem


class Resolving(Protocol):
    """Plans a resolved parameter (``compile.resolvers.Resolvers``); where there is none,
    a resolved parameter is a problem (``resolved_here`` says why)."""

    def slot(self, param: Param, here: tuple[str, ...]) -> tuple[Slot | None, list[Problem]]: ...


NO_RESOLVERS_HERE = (
    "only a tool's, a resource's or a prompt's handle(), its authorize() hook and a resolver "
    "can take one"
)


def is_resolved(param: Param) -> bool:
    return any(isinstance(item, Resolve) for item in param.metadata)


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
    resolvers: Resolving | None = None,
    why: str = NO_RESOLVERS_HERE,
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
        resolvers=resolvers,
        why=why,
    )


def plan_function(
    function: Callable[..., Any],
    container: Container,
    *,
    label: str | None = None,
    payload_type: Any = None,
    argument_names: Collection[str] = (),
    resolvers: Resolving | None = None,
    why: str = NO_RESOLVERS_HERE,
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
        resolvers=resolvers,
        why=why,
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
    resolvers: Resolving | None = None,
    why: str = NO_RESOLVERS_HERE,
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
        if is_resolved(param):
            slot, found = _resolved(param, label, resolvers, why)
        else:
            slot, found = _classify(param, label, container, payload_type, argument_names)
        problems.extend(found)
        if slot is not None:
            slots.append(slot)
    if problems:
        return None, problems
    plan = _assemble(owner, method_name, function, slots, container)
    # the context values it needs are checked once the server knows who gives them
    # (compile.contexts): the adapter, or a request-stage layer
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


def _resolved(
    param: Param, label: str, resolvers: Resolving | None, why: str
) -> tuple[Slot | None, list[Problem]]:
    here = (f"{label}({param.name})",)
    if resolvers is None:
        return None, [
            problem(
                here,
                f"parameter {param.name} of {label} is resolved (Resolve(...)) and {label} "
                f"cannot ask for input: {why}",
                "take the value in the handler instead",
            )
        ]
    return resolvers.slot(param, here)


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
        resolved=tuple(
            (slot.name, slot.resolver, slot.whole)
            for slot in slots
            if slot.source is Source.RESOLVED
        ),
        contexts=context_values.needed(
            container, [slot.key for slot in slots if slot.source is Source.SERVICE]
        ),
    )


def _given_or_none(key: Any) -> Callable[[Any], Any]:
    """A builder for an optional context parameter: the scope's value, or ``None``."""

    def given(scope: Any) -> Any:
        return scope.context.get(key)

    return given


def app_level(
    key: Any, container: Container, here: tuple[str, ...], problems: list[Problem], *, why: str
) -> bool:
    """Whether ``key`` is built by the container outside any scope (a singleton, or a
    transient made of them); else a problem saying ``why`` that matters, with the path to
    what lives in a session or a request."""
    node = container.node(key)
    if not node.ok:
        problems.extend(dataclasses.replace(p, path=(*here, *p.path)) for p in node.problems)
        return False
    if node.level > APP:
        via = " -> ".join(node.level_via)
        problems.append(
            problem(
                here,
                f"{type_name(key)} lives in {LEVEL_NAMES[node.level]} (via {via}); {why}",
                "depend on singletons (or transients made of them), e.g. a pool rather than "
                "a connection per request",
            )
        )
        return False
    return True
