"""Middleware compiled: each layer checked and planned once (``compiled.handlers.Layer``).

What a layer is, and who declares it, is said in ``declare.middleware``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

from container import AnnotationError, Container, Problem, parameters
from mcp_adapter.compile.handlers import plan_function
from mcp_adapter.compiled.handlers import HandlerPlan, Layer
from mcp_adapter.errors import problem

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
