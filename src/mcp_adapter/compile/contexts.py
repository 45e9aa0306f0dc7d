"""Every context value a server's calls need has a giver: the adapter, or a request-stage
layer that declares it in ``provides``.

A context value (``container.context(T)``) is never built by the container: the scope
the adapter opens for a call must be given it. The adapter gives ``McpRequest``,
``Identity``, ``AccessToken`` and the HTTP ``Request`` (``compiled.context.PROVIDED``);
a request-stage layer of ``Server.middleware`` gives what it declares
(``@request_stage(provides=[Tenant])``). Checked once the whole server is compiled,
since the layers that give values are known only then; each problem names the
dependency path from the parameter that needs the value to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from container import Container, Problem, type_name
from mcp_adapter.compiled.catalog import CompiledComponent, CompiledPrompt, CompiledResource
from mcp_adapter.compiled.context import PROVIDED
from mcp_adapter.compiled.handlers import HandlerPlan, Layer, Source
from mcp_adapter.errors import problem


def given_by(layers: Iterable[Layer]) -> frozenset[Any]:
    """What ``layers`` (request-stage ones) give every call, with what the adapter gives."""
    given = frozenset(PROVIDED)
    for layer in layers:
        given = given | layer.provides
    return given


def ungiven(
    components: Iterable[tuple[str, CompiledComponent]],
    given: frozenset[Any],
    container: Container,
    shared: tuple[Layer, ...] = (),
) -> list[Problem]:
    """A problem for each context value a component's calls need that nothing gives;
    ``components`` are ``(owner, component)`` pairs (``"tool 'add'"``); the ``shared``
    layers every component has (the server's) are checked by ``ungiven_layers``."""
    problems: list[Problem] = []
    for owner, component in components:
        missing = _needs(component, shared) - given
        if not missing:
            continue
        for where, key, target in _sources(component, shared, missing, container):
            found = _problem(owner, where, _path(container, key, target), target)
            if found not in problems:
                problems.append(found)
    return problems


def ungiven_layers(
    layers: Iterable[Layer], owner: str, given: frozenset[Any], container: Container
) -> list[Problem]:
    """The same check for layers that are not part of a component (the app's)."""
    problems: list[Problem] = []
    for layer in layers:
        missing = layer.plan.contexts - given
        for where, key, target in _plan_sources(layer.plan, missing, container):
            problems.append(_problem(owner, where, _path(container, key, target), target))
    return problems


def _needs(component: CompiledComponent, shared: tuple[Layer, ...]) -> frozenset[Any]:
    found = component.build_contexts
    for plan in _plans(component, shared):
        found = found | plan.contexts
    return found


def _plans(component: CompiledComponent, shared: tuple[Layer, ...]) -> Iterator[HandlerPlan]:
    yield component.handler
    yield from component.hooks.plans
    if isinstance(component, CompiledResource | CompiledPrompt) and component.completion:
        yield component.completion
    for layer in component.middleware:
        if layer not in shared:
            yield layer.plan


def _sources(
    component: CompiledComponent,
    shared: tuple[Layer, ...],
    missing: frozenset[Any],
    container: Container,
) -> Iterator[tuple[str, Any, Any]]:
    """``(where, key, target)``: the place that needs ``target`` through ``key``."""
    for target in sorted(missing & component.build_contexts, key=type_name):
        yield f"{component.cls.__qualname__}.__init__", component.cls, target
    for plan in _plans(component, shared):
        yield from _plan_sources(plan, missing, container)


def _plan_sources(
    plan: HandlerPlan, missing: frozenset[Any], container: Container
) -> Iterator[tuple[str, Any, Any]]:
    label = plan.owner if plan.method == "__call__" else f"{plan.owner}.{plan.method}"
    for slot in plan.slots:
        if slot.source is not Source.SERVICE:
            continue
        for target in sorted(container.node(slot.key).contexts & missing, key=type_name):
            yield f"{label}({slot.name})", slot.key, target


def _path(container: Container, key: Any, target: Any) -> tuple[str, ...]:
    """The types from ``key`` down to the context value ``target`` it needs."""
    steps = [type_name(key)]
    seen = {key}
    while key is not target:
        for dep in container.node(key).deps:
            if dep.is_constant or dep.key in seen:
                continue
            if target in container.node(dep.key).contexts:
                key = dep.key
                break
        else:
            break
        seen.add(key)
        steps.append(type_name(key))
    return tuple(steps)


def _problem(owner: str, where: str, path: tuple[str, ...], target: Any) -> Problem:
    name = type_name(target)
    return problem(
        (owner, where, *path),
        f"{name} is a context value, and nothing gives it to the scopes this server opens",
        "the adapter gives McpRequest, Identity, AccessToken, Progress, ClientLogger and the "
        "HTTP Request; give "
        f"{name} from a request-stage layer of Server.middleware "
        f"(@request_stage(provides=[{name}]) and call.with_context({{{name}: ...}})), or bind "
        f"{name} with a scoped factory that derives it from those",
    )
