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

import pydantic
from mcp import types

from container import Container, Problem
from container.introspect import EMPTY, AnnotationError, parameters
from mcp_adapter.annotations import to_protocol_annotations
from mcp_adapter.catalog import CompiledTool, Hooks
from mcp_adapter.errors import problem
from mcp_adapter.extensions.amend import Amendment
from mcp_adapter.extensions.returns import output_annotation
from mcp_adapter.extensions.runner import (
    PAYLOAD_KEY,
    Extended,
    Injected,
    injected_key,
    make_method_runner,
    make_runner,
)
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


def _qualname(target: Any) -> str:
    """How a problem names a callable: its qualified name, else its type's."""
    return str(getattr(target, "__qualname__", None) or type(target).__qualname__)


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
        label = _qualname(hook)
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
    label = _qualname(layer)
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


def plan_middleware(
    middleware: Sequence[Middleware],
    tool: str,
    label: str,
    container: Container,
    problems: list[Problem],
) -> list[HandlerPlan | None]:
    """Each layer's plan of what it gets injected (``None`` where a problem was reported).

    Middleware comes from other extensions than the tool's, so it is checked
    here: callable, async, ``(call, call_next)`` first, every other parameter
    with a source. ``label`` names the tool's handler in the problems.
    """
    layers: list[HandlerPlan | None] = []
    given: Sequence[Any] = middleware
    for layer in given:
        if not callable(layer):
            where = (f"middleware of tool {tool!r}",)
            problems.append(problem(where, f"the middleware {layer!r} is not callable"))
            layers.append(None)
            continue
        if not _is_async(layer):
            problems.append(
                problem(
                    (label,),
                    f"middleware {getattr(layer, '__qualname__', layer)!r} of tool {tool!r} "
                    "is not async",
                    "define it as `async def middleware(call, call_next)`",
                )
            )
        layers.append(_plan_middleware(layer, tool, container, problems))
    return layers


def fold_middleware(
    plan: HandlerPlan, layers: Sequence[HandlerPlan | None]
) -> tuple[HandlerPlan, list[Injected]]:
    """``plan`` that also fills every layer's injected parameters (``handlers.fold``, under
    ``injected_key``), and what the runner hands each layer. Every layer must be planned."""
    injected: list[Injected] = []
    for index, layer_plan in enumerate(layers):
        if layer_plan is None:  # pragma: no cover - callers return on the reported problem
            raise ValueError(f"middleware {index} was not planned")
        rename = functools.partial(injected_key, index)
        plan = fold(plan, layer_plan, rename)
        injected.append(tuple((rename(name), name) for name in injected_names(layer_plan)))
    return plan, injected


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
    layers = plan_middleware(middleware, spec.name, label, container, problems)
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
    plan, injected = fold_middleware(plan, layers)
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


def _fields_of(input_type: Any) -> Callable[[Any], dict[str, Any]]:
    """How middleware sees a validated payload: its fields by attribute name."""
    if isinstance(input_type, type) and issubclass(input_type, pydantic.BaseModel):
        names: tuple[str, ...] = tuple(input_type.model_fields)
    elif dataclasses.is_dataclass(input_type):
        names = tuple(f.name for f in dataclasses.fields(input_type))
    else:  # a TypedDict or a mapping: the payload is a dict

        def as_dict(payload: Any) -> dict[str, Any]:
            return dict(payload)

        return as_dict

    def by_name(payload: Any) -> dict[str, Any]:
        return {name: getattr(payload, name) for name in names}

    return by_name


def extend_class_tool(
    tool: CompiledTool, amendment: Amendment, container: Container, problems: list[Problem]
) -> CompiledTool | None:
    """A class tool of a ``Server`` declaration, as extensions extend it by name.

    Amendments change its ``tools/list`` entries as they change a spec
    (``description``, ``title``, ``annotations`` replace; ``meta`` is merged).
    Middleware is planned and folded into the tool's handler plan exactly as
    for a function tool (``plan_middleware``, ``fold_middleware``), so one
    scope serves middleware and ``handle``; the plan then calls
    ``runner.Extended.handle``, the chain around the component's ``handle``.
    A class tool nobody extends never gets here: it is served as compiled.
    """
    before = len(problems)
    label = tool.cls.__qualname__
    layers = plan_middleware(amendment.middleware, tool.name, label, container, problems)
    update = dict(amendment.changes)
    if "annotations" in update:
        update["annotations"] = to_protocol_annotations(update["annotations"])
    if "meta" in update:
        update["meta"] = {**(tool.modern.meta or {}), **update["meta"]}
    if len(problems) > before:
        return None
    extended = dataclasses.replace(
        tool,
        modern=tool.modern.model_copy(update=update),
        legacy=tool.legacy.model_copy(update=update),
    )
    if not amendment.middleware:
        return extended
    plan, injected = fold_middleware(tool.handler, layers)
    run = make_method_runner(
        tool=tool.name,
        is_async=tool.handler.is_async,
        payload=tool.handler.payload,
        fields=_fields_of(tool.input.type),
        validate=functools.partial(tool.input.adapter.validate_python, by_alias=True, by_name=True),
        middleware=amendment.middleware,
        injected=injected,
    )
    component = tool.build  # hooks get the Extended too: it forwards them to the component

    async def build_async(scope: Any) -> Extended:
        return Extended(await component(scope), run)

    def build_sync(scope: Any) -> Extended:
        return Extended(component(scope), run)

    build: Callable[[Any], Any] = build_async if tool.build_is_async else build_sync
    return dataclasses.replace(
        extended,
        build=build,
        handler=dataclasses.replace(plan, payload=PAYLOAD_KEY, is_async=True),
    )


def _no_instance(scope: Any) -> None:
    """Function tools have no component instance: the plan calls the function."""
