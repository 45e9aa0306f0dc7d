"""``ToolSpec`` -> ``CompiledTool``: the same catalog entry, plan and dispatcher as class tools.

The handler's arguments become a pydantic model (``pydantic.create_model``,
unknown fields rejected, defaults included) whose JSON Schema is the
``inputSchema``; the injected parameters are classified by
``handlers.plan_function``; the return annotation is the output contract. The
visibility hooks (``should_register``, ``authorize``) are planned by
``handlers.plan_function`` too: the classification a class tool's
``shouldRegister``/``authorize`` get.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from mcp import types

from container import Container, Problem
from container.introspect import EMPTY, AnnotationError, parameters
from mcp_adapter.annotations import to_protocol_annotations
from mcp_adapter.catalog import CompiledTool, Hooks
from mcp_adapter.errors import problem
from mcp_adapter.extensions.returns import output_annotation
from mcp_adapter.extensions.runner import Injected, injected_key, make_runner
from mcp_adapter.extensions.signature import arguments_model, split_parameters, type_hints
from mcp_adapter.extensions.spec import Middleware, ToolSpec
from mcp_adapter.handlers import HandlerPlan, fold, injected_names, plan_function
from mcp_adapter.naming import valid_name
from mcp_adapter.results import wrap_schema
from schemas import Contract, ContractError


class FunctionTool:
    """Stands for the class of a function tool whose handler belongs to none."""


def owner_of(handler: Callable[..., Any]) -> type:
    """The class a handler belongs to (a bound method's), else a named stand-in."""
    bound = getattr(handler, "__self__", None)
    if bound is not None:
        return bound if isinstance(bound, type) else type(bound)
    qualname = str(getattr(handler, "__qualname__", type(handler).__qualname__))
    return type(
        qualname,
        (FunctionTool,),
        {"__module__": getattr(handler, "__module__", __name__), "__qualname__": qualname},
    )


def _label(handler: Callable[..., Any], name: str) -> str:
    return str(getattr(handler, "__qualname__", None) or f"tool {name!r}")


def _is_async(handler: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(inspect.unwrap(handler)):
        return True
    call = inspect.getattr_static(type(handler), "__call__", None)
    return not inspect.isroutine(handler) and inspect.iscoroutinefunction(call)


HOOKS = ("should_register", "authorize")
"""The ``ToolSpec`` fields holding visibility hooks, in the order they are asked."""


def _under(where: str, found: Problem) -> Problem:
    return dataclasses.replace(found, path=(where, *found.path))


def compile_hooks(spec: ToolSpec, container: Container, problems: list[Problem]) -> Hooks:
    """The spec's visibility hooks, planned like a class tool's (``plan_function``).

    A hook's parameters are injected (``McpRequest``, the HTTP ``Request``,
    services, defaults); one that has no source is a problem whose path starts
    with the hook and the tool it belongs to.
    """
    plans: dict[str, HandlerPlan | None] = dict.fromkeys(HOOKS)
    for which in HOOKS:
        hook: Any = getattr(spec, which)
        if hook is None:
            continue
        where = f"{which} of tool {spec.name!r}"
        if not callable(hook):
            problems.append(
                problem(
                    (where,),
                    f"the {which} hook {hook!r} of tool {spec.name!r} is not callable",
                    "pass a function or method returning a bool",
                )
            )
            continue
        label = str(getattr(hook, "__qualname__", None) or type(hook).__qualname__)
        plan, found = plan_function(hook, container, label=label)
        problems.extend(_under(where, each) for each in found)
        if plan is not None:
            plans[which] = dataclasses.replace(plan, is_async=_is_async(hook))
    return Hooks(should_register=plans["should_register"], authorize=plans["authorize"])


MIDDLEWARE_ARGUMENTS = 2
"""Middleware's leading parameters the chain passes itself: ``call`` and ``call_next``."""


def _plan_middleware(
    layer: Any, tool: str, container: Container, problems: list[Problem]
) -> HandlerPlan | None:
    """The plan of what ``layer`` gets injected after ``(call, call_next)``.

    Classified like a hook's parameters (``plan_function``): ``McpRequest``, the
    HTTP ``Request``, services, defaults; ``call`` and ``call_next`` are named
    arguments the chain passes. Problems are reported under the tool's path.
    """
    where = f"middleware of tool {tool!r}"
    label = str(getattr(layer, "__qualname__", None) or type(layer).__qualname__)
    try:
        params = parameters(layer)
    except (AnnotationError, ValueError) as exc:
        problems.append(problem((where, label), str(exc), "annotate with importable types"))
        return None
    passed = params[:MIDDLEWARE_ARGUMENTS]
    if len(passed) < MIDDLEWARE_ARGUMENTS or any(p.kind not in _POSITIONAL for p in passed):
        problems.append(
            problem(
                (where, label),
                f"middleware {label} of tool {tool!r} does not take (call, call_next) as its "
                "first two parameters",
                "define it as `async def middleware(call, call_next, ...)`; the parameters "
                "after those two are injected",
            )
        )
        return None
    before = len(problems)
    for param in params[MIDDLEWARE_ARGUMENTS:]:
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
    problems.extend(_under(where, each) for each in found)
    return plan if len(problems) == before else None


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def description_of(spec: ToolSpec) -> str | None:
    """``spec.description``, else the handler's docstring (cleaned), else ``None``."""
    if spec.description:
        return spec.description
    target: Any = spec.handler
    while isinstance(target, functools.partial):
        target = target.func
    return inspect.getdoc(target) or None


def _output(
    handler: Callable[..., Any], label: str, problems: list[Problem]
) -> Contract[Any] | None:
    declared = output_annotation(type_hints(handler).get("return", EMPTY))
    if declared is None:
        return None
    try:
        return Contract.of(declared)
    except (ContractError, TypeError) as exc:
        problems.append(
            problem(
                (label,),
                f"the return annotation of {label} cannot be an output contract: {exc}",
                "annotate the return with a type pydantic can describe, or -> Any for "
                "unstructured content",
            )
        )
        return None


def compile_spec(
    spec: ToolSpec,
    container: Container,
    problems: list[Problem],
    *,
    toolset: str = "",
    owner: type | None = None,
    middleware: Sequence[Middleware] = (),
) -> CompiledTool | None:
    """Compile one spec, appending what is wrong to ``problems``."""
    before = len(problems)
    handler: Any = spec.handler
    if not callable(handler):
        where = (f"tool {spec.name!r}",)
        problems.append(problem(where, f"the handler {handler!r} is not callable"))
        return None
    label = _label(handler, spec.name)
    if not isinstance(spec.name, str) or not valid_name(spec.name):
        problems.append(
            problem(
                (label,), f"invalid tool name {spec.name!r}", "names match [A-Za-z0-9_.-]{1,128}"
            )
        )
    layers: list[HandlerPlan | None] = []
    given: Sequence[Any] = middleware  # contributed by other extensions: checked here
    for layer in given:
        if not callable(layer):
            where = (f"middleware of tool {spec.name!r}",)
            problems.append(problem(where, f"the middleware {layer!r} is not callable"))
            layers.append(None)
            continue
        if not _is_async(layer):
            problems.append(
                problem(
                    (label,),
                    f"middleware {getattr(layer, '__qualname__', layer)!r} of tool {spec.name!r} "
                    "is not async",
                    "define it as `async def middleware(call, call_next)`",
                )
            )
        layers.append(_plan_middleware(layer, spec.name, container, problems))
    reported: list[str] = []
    params = split_parameters(handler, label, container, problems, reported)
    model = arguments_model(f"{spec.name}Arguments", params, label, problems)
    names = tuple(param.name for param in params)
    plan, found = plan_function(handler, container, label=label, argument_names=(*names, *reported))
    problems.extend(found)
    output = _output(handler, label, problems)
    hooks = compile_hooks(spec, container, problems)
    if len(problems) > before or plan is None or model is None:
        return None
    injected: list[Injected] = []
    for index, layer_plan in enumerate(layers):
        if layer_plan is None:  # pragma: no cover - a problem was reported for it
            return None
        rename = functools.partial(injected_key, index)
        plan = fold(plan, layer_plan, rename)
        injected.append(tuple((rename(name), name) for name in injected_names(layer_plan)))
    runner, runner_is_async = make_runner(
        handler,
        is_async=_is_async(handler),
        tool=spec.name,
        argument_names=names,
        middleware=middleware,
        structured=output is not None,
        injected=injected,
    )
    plan = dataclasses.replace(plan, function=runner, is_async=runner_is_async)
    input_contract = Contract.of(model)
    common: dict[str, Any] = {
        "name": spec.name,
        "title": spec.title,
        "description": description_of(spec),
        "input_schema": input_contract.json_schema,
        "icons": list(spec.icons) if spec.icons else None,
        "annotations": to_protocol_annotations(spec.annotations),
        "meta": dict(spec.meta) if spec.meta else None,
    }
    modern_output = output.json_schema if output is not None else None
    legacy_output = modern_output
    if output is not None and not output.is_object:
        legacy_output = wrap_schema(output.json_schema)
    return CompiledTool(
        name=spec.name,
        cls=owner or owner_of(handler),
        build=_no_instance,
        build_is_async=False,
        handler=plan,
        hooks=hooks,
        input=input_contract,
        output=output,
        modern=types.Tool(**common, output_schema=modern_output),
        legacy=types.Tool(**common, output_schema=legacy_output),
        spread=names,
        toolset=toolset,
    )


def _no_instance(scope: Any) -> None:
    """Function tools have no component instance: the plan calls the function."""
