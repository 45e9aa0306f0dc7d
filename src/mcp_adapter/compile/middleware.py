"""Middleware: ``async (call, call_next, ...) -> value`` around a component's call.

One stage of the dispatcher for every method. A layer is declared on the server
(``Server.middleware``: every method), by an extension for a tool named so
(``ToolExtension.middleware``), or on the component itself (``Tool.middleware``,
``Resource.middleware``, ``Prompt.middleware``, ``@tool(middleware=...)``); the
server's run outermost, the component's own innermost. Its parameters after
``(call, call_next)`` are injected like a handler's, planned at compile time and
resolved in the call's scope (a scoped service is the one the handler gets).

What ``call_next`` returns is what the rest of the chain returns: for a component
call (``tools/call``, ``resources/read``, ``prompts/get``) the handler's value
before it becomes a result, for a listing or ``completion/complete`` the protocol
result. A layer may return its own value instead; it is read as the handler's
would be.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from container import AnnotationError, Container, Problem, parameters
from mcp_adapter.compile.handlers import HandlerPlan, plan_function
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.errors import problem

_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Call:
    """A call as middleware sees it.

    ``method`` is the protocol method (``"tools/call"``, ``"resources/read"``,
    ``"prompts/get"``, ``"tools/list"``, ...); ``name`` the component's name (a
    resource's URI; empty for a listing); ``arguments`` the validated arguments by
    parameter name (a tool's payload fields, a resource's URI variables, a prompt's
    arguments; injected values are never in it). ``with_arguments`` returns a copy
    with some replaced: they are validated again into the component's input before
    the handler gets them (a value it refuses fails the call, as the middleware's
    error, not the client's).
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: _NO_ARGUMENTS)
    method: str = "tools/call"

    def with_arguments(self, **changes: Any) -> Call:
        return dataclasses.replace(self, arguments=MappingProxyType({**self.arguments, **changes}))


Next = Callable[[Call], Awaitable[Any]]
"""Calls the rest of the chain (finally the handler) and returns its value."""

Middleware = Callable[..., Awaitable[Any]]
"""``async (call, call_next, ...) -> value``; the parameters after the first two are injected."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One compiled middleware: the callable and the plan of what it gets injected."""

    function: Middleware
    plan: HandlerPlan = field(repr=False)
    injects: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        plan = self.plan
        injects = bool(plan.services or plan.async_services or plan.requests or plan.http_requests)
        object.__setattr__(self, "injects", injects)


async def through(
    layers: Sequence[Layer],
    call: Call,
    innermost: Next,
    scope: Any,
    request: McpRequest | None,
) -> Any:
    """Run ``call`` through ``layers`` (first outermost) and then ``innermost``."""
    chain = innermost
    for layer in reversed(layers):
        chain = _link(layer, chain, scope, request)
    return await chain(call)


def _link(layer: Layer, call_next: Next, scope: Any, request: McpRequest | None) -> Next:
    function = layer.function
    if not layer.injects:

        async def step(call: Call) -> Any:
            return await function(call, call_next)

        return step

    async def step_injected(call: Call) -> Any:
        return await function(call, call_next, **await layer.plan.injected(scope, request))

    return step_injected


PASSED = 2
"""The leading parameters the chain passes itself: ``call`` and ``call_next``."""
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def is_async_callable(function: Any) -> bool:
    """An ``async def`` function or method, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(inspect.unwrap(function)):
        return True
    call = inspect.getattr_static(type(function), "__call__", None)
    return not inspect.isroutine(function) and inspect.iscoroutinefunction(call)


def _label(layer: Any) -> str:
    return str(getattr(layer, "__qualname__", None) or type(layer).__qualname__)


def plan_layers(
    middleware: Sequence[Any], owner: str, container: Container, problems: list[Problem]
) -> tuple[Layer, ...]:
    """Each middleware of ``owner`` (``"tool 'x'"``) compiled into a ``Layer``; what is
    wrong is appended to ``problems`` under ``middleware of <owner>``: not callable, not
    async, not taking ``(call, call_next)`` first, an injected parameter without a source."""
    layers: list[Layer] = []
    for layer in middleware:
        planned = _plan(layer, owner, container, problems)
        if planned is not None:
            layers.append(Layer(layer, planned))
    return tuple(layers)


def _plan(
    layer: Any, owner: str, container: Container, problems: list[Problem]
) -> HandlerPlan | None:
    where = f"middleware of {owner}"
    if not callable(layer):
        problems.append(problem((where,), f"the middleware {layer!r} is not callable"))
        return None
    label = _label(layer)
    before = len(problems)
    if not is_async_callable(layer):
        problems.append(
            problem(
                (where, label),
                f"middleware {label!r} of {owner} is not async",
                "define it as `async def middleware(call, call_next)`",
            )
        )
    try:
        params = parameters(layer)
    except (AnnotationError, ValueError) as exc:
        problems.append(problem((where, label), str(exc), "annotate with importable types"))
        return None
    passed = params[:PASSED]
    if len(passed) < PASSED or any(p.kind not in _POSITIONAL for p in passed):
        problems.append(
            problem(
                (where, label),
                f"middleware {label} of {owner} does not take (call, call_next) as its first two "
                "parameters",
                "define it as `async def middleware(call, call_next, ...)`; the parameters "
                "after those two are injected",
            )
        )
        return None
    for param in params[PASSED:]:
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            problems.append(
                problem(
                    (where, f"{label}({param.name})"),
                    f"{param.name!r} of middleware {label} is positional-only; injected "
                    "parameters are passed by name",
                    "put the '/' right after call_next, or remove it",
                )
            )
    plan, found = plan_function(
        layer, container, label=label, argument_names=[p.name for p in passed]
    )
    problems.extend(dataclasses.replace(each, path=(where, *each.path)) for each in found)
    return plan if len(problems) == before else None
