"""Middleware compiled: each layer checked and planned once (``compiled.handlers.Layer``).

What a layer is, which stage it stands in, and who declares it, is said in
``declare.middleware``. A layer named by its class is built here, from the container,
when the server compiles.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

from container import AnnotationError, Container, Problem, ProviderKind, parameters, type_name
from mcp_adapter.compile.handlers import NO_RESOLVERS_HERE, app_level, plan_function
from mcp_adapter.compile.resolvers import Resolvers
from mcp_adapter.compiled.context import PROVIDED
from mcp_adapter.compiled.handlers import HandlerPlan, Layer, Source
from mcp_adapter.declare.middleware import REQUEST, STAGES, provides_of, stage_of
from mcp_adapter.errors import problem

REQUEST_STAGE_NEVER_ASKS = (
    "a request-stage layer runs before the component is known, and cannot ask; a call-stage "
    "layer can"
)

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
    middleware: Sequence[Any],
    owner: str,
    container: Container,
    problems: list[Problem],
    *,
    server_wide: bool = False,
) -> tuple[Layer, ...]:
    """Each middleware of ``owner`` (``"tool 'x'"``) compiled into a ``Layer``; what is
    wrong is appended to ``problems`` under ``middleware of <owner>``: not callable, not
    async, not taking ``(call, call_next)`` first, an injected parameter without a source,
    a request-stage layer that is not ``server_wide`` or injects what lives in a request.

    A class in ``middleware`` is built from ``container`` here (its configuration comes
    from the container: bind the class to a factory that reads your settings)."""
    layers: list[Layer] = []
    where = f"middleware of {owner}"
    for entry in middleware:
        layer = _built(entry, where, container, problems) if isinstance(entry, type) else entry
        if layer is None:
            continue
        planned = _plan(layer, owner, container, problems, server_wide)
        if planned is not None:
            layers.append(planned)
    return tuple(layers)


def _built(cls: type, where: str, container: Container, problems: list[Problem]) -> Any:
    """The layer ``cls`` names, built by the container once, now."""
    label = cls.__qualname__
    node = container.node(cls)
    if not node.ok:
        factory = re.sub(r"(?<!^)(?=[A-Z])", "_", label.rpartition(".")[2]).lower()
        bind = (
            "or bind the layer to a factory that reads your settings: "
            f"container.singleton({label}, {factory})"
        )
        problems.extend(
            dataclasses.replace(
                found,
                path=(where, *found.path),
                hint=f"{found.hint}; {bind}" if found.hint else bind,
            )
            for found in node.problems
        )
        return None
    before = len(problems)
    why = "a layer named by its class is built once, when the server compiles"
    app_level(cls, container, (where, label), problems, why=why)
    if node.is_async:
        problems.append(
            problem(
                (where, label),
                f"{label} is built by an async factory; {why}, synchronously",
                "bind it to a sync factory (or to an instance)",
            )
        )
    if len(problems) > before:
        return None
    try:
        return container.get(cls)
    except Exception as exc:  # noqa: BLE001 - reported as a compile problem, with its text
        problems.append(
            problem(
                (where, label),
                f"building {label} failed: {type(exc).__name__}: {exc}",
                "check the settings its factory reads",
            )
        )
        return None


def _plan(
    layer: Any, owner: str, container: Container, problems: list[Problem], server_wide: bool
) -> Layer | None:
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
    stage = _stage(layer, where, label, owner, server_wide, problems)
    provides = provides_of(layer)
    _check_provides(provides, stage, container, (where, label), problems)
    plan, found = plan_function(
        layer,
        container,
        label=label,
        argument_names=[p.name for p in passed],
        resolvers=Resolvers(container) if stage != REQUEST else None,
        why=REQUEST_STAGE_NEVER_ASKS if stage == REQUEST else NO_RESOLVERS_HERE,
    )
    problems.extend(dataclasses.replace(each, path=(where, *each.path)) for each in found)
    if plan is not None and stage == REQUEST:
        plan = _outside_requests(plan, container, (where, label), problems)
    if plan is None or len(problems) > before:
        return None
    return Layer(layer, plan, stage=stage, provides=provides)


def _stage(
    layer: Any, where: str, label: str, owner: str, server_wide: bool, problems: list[Problem]
) -> str:
    stage = stage_of(layer)
    if stage not in STAGES:
        problems.append(
            problem(
                (where, label),
                f"middleware {label} declares the stage {stage!r}",
                "a layer's stage is 'call' (the default) or 'request'",
            )
        )
        return "call"
    if stage == REQUEST and not server_wide:
        problems.append(
            problem(
                (where, label),
                f"middleware {label} stands in the request stage, which runs before the "
                f"component is known; {owner} can only have call-stage layers",
                "put it in Server.middleware (or the app's middleware), or make it a "
                "call-stage layer (the built-in layers take stage='call')",
            )
        )
    return str(stage)


def _check_provides(
    provides: frozenset[Any],
    stage: str,
    container: Container,
    where: tuple[str, ...],
    problems: list[Problem],
) -> None:
    if provides and stage != REQUEST:
        problems.append(
            problem(
                where,
                "only a request-stage layer gives context values (the scope is open when a "
                "call-stage layer runs)",
                "declare it with @request_stage(provides=...) in Server.middleware",
            )
        )
        return
    for key in sorted(provides, key=type_name):
        if key in PROVIDED:
            problems.append(
                problem(
                    where,
                    f"{type_name(key)} is given by the adapter to every call; a layer cannot "
                    "provide it",
                    f"provide a type of your own, derived from {type_name(key)}",
                )
            )
            continue
        binding = container.binding(key)
        if binding is None or binding.kind is not ProviderKind.CONTEXT:
            problems.append(
                problem(
                    where,
                    f"the layer provides {type_name(key)}, which the container does not "
                    "declare a context value (it would build its own instead)",
                    f"declare it: container.context({type_name(key)})",
                )
            )


def _outside_requests(
    plan: HandlerPlan, container: Container, where: tuple[str, ...], problems: list[Problem]
) -> HandlerPlan:
    """A request-stage layer's plan, its services resolved outside any scope (there is none
    yet); a service that lives in a session or a request, or the HTTP request, is a
    problem."""
    services: list[tuple[str, Callable[[Any], Any]]] = []
    async_services: list[tuple[str, Callable[[Any], Any]]] = []
    why = "a request-stage layer runs before the call's scope opens"
    for slot in plan.slots:
        here = (*where[:-1], f"{where[-1]}({slot.name})")
        if slot.source is Source.HTTP_REQUEST:
            problems.append(
                problem(
                    here,
                    f"parameter {slot.name}: the HTTP Request is not injected at the request stage",
                    "take McpRequest and read its http_request",
                )
            )
        elif slot.source is Source.SERVICE:
            binding = container.binding(slot.key)
            if binding is not None and binding.kind is ProviderKind.CONTEXT:
                problems.append(
                    problem(
                        here,
                        f"parameter {slot.name}: {type_name(slot.key)} is a context value of "
                        "the call's scope, which opens after the request stage",
                        "take McpRequest (its identity, authentication, http_request)",
                    )
                )
                continue
            if not app_level(slot.key, container, here, problems, why=why):
                continue
            if container.node(slot.key).is_async:
                async_services.append((slot.name, _outside(container.aget, slot.key)))
            else:
                services.append((slot.name, _outside(container.get, slot.key)))
    return dataclasses.replace(plan, services=tuple(services), async_services=tuple(async_services))


def _outside(get: Callable[[Any], Any], key: Any) -> Callable[[Any], Any]:
    def build(_scope: Any) -> Any:
        return get(key)

    return build
