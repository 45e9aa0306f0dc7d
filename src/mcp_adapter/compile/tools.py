"""Tools, however declared, compiled into one form: ``CompiledTool``.

A ``Tool`` class binds its validated payload whole (``handle(self, payload)``);
a function tool (``@tool``, ``ToolSpec``) spreads it into named parameters, its
arguments model built from those parameters. Everything else is the same step:
the output contract, the hooks, the middleware layers, the ``tools/list``
entries of both eras, the toolset, the timeout.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any

import pydantic
from mcp import types

from container import EMPTY, Container, Problem, type_hints
from mcp_adapter.compile.apps import with_ui
from mcp_adapter.compile.arguments import arguments_model, split_parameters
from mcp_adapter.compile.handlers import plan_function, plan_handler
from mcp_adapter.compile.middleware import is_async_callable, plan_layers
from mcp_adapter.compile.outputs import output_annotation, to_outcome
from mcp_adapter.compile.parts import (
    Parts,
    checked_name,
    class_parts,
    contract,
    description_of,
    function_hooks,
    name_of,
    own_layers,
    owner_of,
    timeout_of,
)
from mcp_adapter.compile.resolvers import Resolvers
from mcp_adapter.compile.tasks import task_support_of
from mcp_adapter.compiled.catalog import CompiledTool, Hooks
from mcp_adapter.compiled.handlers import HandlerPlan
from mcp_adapter.compiled.legacy import wrap_schema
from mcp_adapter.declare.annotations import to_protocol_annotations
from mcp_adapter.declare.components import NoContract, Tool
from mcp_adapter.errors import problem
from schemas import Contract, ContractError, Schema


class _EmptyInput(Schema):
    """The input of a tool that declares none: only ``{}`` is accepted."""


NO_INPUT: Contract[Any] = Contract(
    _EmptyInput,
    Contract.of(_EmptyInput).adapter,
    {"type": "object", "properties": {}, "additionalProperties": False},
)
"""The published contract of a tool without input: an empty object, nothing else."""


def _generic_args(cls: type, base: type) -> tuple[Any, ...]:
    for klass in cls.__mro__:
        for orig in getattr(klass, "__orig_bases__", ()):
            if typing.get_origin(orig) is base:
                return typing.get_args(orig)
    return ()


def _declared(value: Any) -> bool:
    return value is not None and value is not NoContract and not isinstance(value, typing.TypeVar)


def contracts_of(cls: type[Tool[Any, Any]]) -> tuple[Any, Any]:
    """``(input, output)`` of a tool class; attributes win over generic arguments."""
    args = _generic_args(cls, Tool)
    generic_input = args[0] if args else None
    generic_output = args[1] if len(args) > 1 else None
    input_type = cls.input if cls.input is not None else generic_input
    output_type = cls.output if cls.output is not None else generic_output
    return (
        input_type if _declared(input_type) else None,
        output_type if _declared(output_type) else None,
    )


def fields_of(input_type: Any) -> Callable[[Any], dict[str, Any]]:
    """How middleware sees a validated payload: its fields by attribute name."""
    if isinstance(input_type, type) and issubclass(input_type, pydantic.BaseModel):
        # A model keeps exactly its fields in its __dict__, by attribute name (extra and
        # private attributes live elsewhere): one copy instead of a lookup per field.
        def of_model(payload: Any) -> dict[str, Any]:
            fields: dict[str, Any] = payload.__dict__.copy()
            return fields

        return of_model
    if not dataclasses.is_dataclass(input_type):  # a TypedDict or a mapping: a dict

        def as_dict(payload: Any) -> dict[str, Any]:
            return dict(payload)

        return as_dict

    names = tuple(f.name for f in dataclasses.fields(input_type))

    def by_name(payload: Any) -> dict[str, Any]:
        return {name: getattr(payload, name) for name in names}

    return by_name


@dataclasses.dataclass(frozen=True, slots=True)
class _Listing:
    """What clients read of a tool, before it is split into the two eras' entries."""

    name: str
    title: str | None
    description: str | None
    icons: Sequence[types.Icon] | None
    annotations: Any
    meta: dict[str, Any] | None


def _form(
    listing: _Listing,
    *,
    owner: type,
    parts: Parts,
    handler: HandlerPlan,
    input_contract: Contract[Any],
    output: Contract[Any] | None,
    toolset: str,
    spread: tuple[str, ...] = (),
    convert: Callable[[Any], Any] | None = None,
    task_support: str = "forbidden",
) -> CompiledTool:
    """The one compiled form of a tool."""
    common: dict[str, Any] = {
        "name": listing.name,
        "title": listing.title,
        "description": listing.description,
        "input_schema": input_contract.json_schema,
        "icons": list(listing.icons) if listing.icons else None,
        "annotations": to_protocol_annotations(listing.annotations),
        "meta": listing.meta or None,
    }
    if task_support != "forbidden":
        common["execution"] = types.ToolExecution(task_support=task_support)
    modern_output = output.json_schema if output is not None else None
    legacy_output = modern_output
    if output is not None and not output.is_object:
        legacy_output = wrap_schema(output.json_schema)
    return CompiledTool(
        name=listing.name,
        cls=owner,
        handler=handler,
        **parts.fields(),
        input=input_contract,
        output=output,
        modern=types.Tool(**common, output_schema=modern_output),
        legacy=types.Tool(**common, output_schema=legacy_output),
        spread=spread,
        toolset=toolset,
        fields=fields_of(input_contract.type),
        convert=convert,
        task_support=task_support,
    )


def compile_tool(
    cls: type[Tool[Any, Any]], container: Container, problems: list[Problem], *, toolset: str = ""
) -> CompiledTool | None:
    """Compile one tool class, appending what is wrong to ``problems``."""
    before = len(problems)
    where = cls.__qualname__
    name = name_of(cls, "Tool", problems)
    input_type, output_type = contracts_of(cls)
    declared_input = input_type is not None
    input_contract = contract(input_type, where, "input", problems) if declared_input else NO_INPUT
    if input_contract is not None and not input_contract.is_object:
        problems.append(
            problem(
                (where,),
                f"the input contract {input_type!r} does not describe a JSON object",
                "tool arguments are an object: use a Schema subclass",
            )
        )
    output = contract(output_type, where, "output", problems) if output_type is not None else None
    payload_type = input_type if declared_input else None
    resolvers = Resolvers(container, payload_type=payload_type)
    handler, found = plan_handler(
        cls, "handle", container, payload_type=payload_type, resolvers=resolvers
    )
    problems.extend(found)
    parts = class_parts(cls, "tool", name, container, problems, resolvers)
    task_support = task_support_of(cls.task_support, f"{where}.task_support", problems)
    own_toolset: Any = cls.toolset
    if own_toolset is not None:
        toolset = checked_name(own_toolset, f"{where}.toolset", problems, "toolset name")
    meta = with_ui(cls.meta, cls.ui, f"{where}.ui", problems)
    if len(problems) > before or handler is None or input_contract is None:
        return None
    listing = _Listing(
        name, cls.title, description_of(cls, cls.description), cls.icons, cls.annotations, meta
    )
    return _form(
        listing,
        owner=cls,
        parts=parts,
        handler=handler,
        input_contract=input_contract,
        output=output,
        toolset=toolset,
        task_support=task_support,
    )


def _label(handler: Callable[..., Any], name: str) -> str:
    return str(getattr(handler, "__qualname__", None) or f"tool {name!r}")


def spec_description(spec: Any) -> str | None:
    """``spec.description``, else the handler's docstring (cleaned), else ``None``."""
    if spec.description:
        return str(spec.description)
    target: Any = spec.handler
    while isinstance(target, functools.partial):
        target = target.func
    return inspect.getdoc(target) or None


def _output(
    handler: Callable[..., Any], label: str, problems: list[Problem]
) -> Contract[Any] | None:
    declared = output_annotation(type_hints(handler, strict=False).get("return", EMPTY))
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


def compile_function_tool(
    spec: Any,
    container: Container,
    problems: list[Problem],
    *,
    toolset: str = "",
    owner: type | None = None,
    middleware: Sequence[Any] = (),
    governing: Hooks | None = None,
) -> CompiledTool | None:
    """Compile one ``ToolSpec``; ``middleware`` (extensions') runs outside its own, and
    the rules of ``governing`` (its extension's policies) are asked before its own."""
    before = len(problems)
    handler: Any = spec.handler
    if not callable(handler):
        problems.append(
            problem((f"tool {spec.name!r}",), f"the handler {handler!r} is not callable")
        )
        return None
    label = _label(handler, spec.name)
    name = checked_name(spec.name, label, problems, "tool name")
    layers = (
        *plan_layers(middleware, f"tool {name!r}", container, problems),
        *own_layers(spec, "tool", name, container, problems),
    )
    timeout = timeout_of(spec, f"tool {name!r}", problems)
    reported: list[str] = []
    params = split_parameters(handler, label, container, problems, reported)
    model = arguments_model(f"{name}Arguments", params, label, problems)
    names = tuple(param.name for param in params)
    arguments = (*names, *reported)
    resolvers = Resolvers(container, argument_names=arguments)
    plan, found = plan_function(
        handler, container, label=label, argument_names=arguments, resolvers=resolvers
    )
    problems.extend(found)
    output = _output(handler, label, problems)
    hooks = function_hooks(spec, name, container, problems, resolvers)
    task_support = task_support_of(spec.task_support, f"tool {name!r}.task_support", problems)
    if governing is not None:
        hooks = hooks.within(governing)
    meta = with_ui(spec.meta, spec.ui, f"tool {name!r}", problems)
    if len(problems) > before or plan is None or model is None:
        return None
    listing = _Listing(name, spec.title, spec_description(spec), spec.icons, spec.annotations, meta)
    return _form(
        listing,
        owner=owner or owner_of(handler),
        parts=Parts(_no_instance, False, frozenset(), hooks, layers, timeout),
        handler=dataclasses.replace(plan, is_async=is_async_callable(handler)),
        input_contract=Contract.of(model),
        output=output,
        toolset=toolset,
        spread=names,
        convert=functools.partial(to_outcome, structured=output is not None),
        task_support=task_support,
    )


def _no_instance(scope: Any) -> None:
    """Function tools have no component instance: the plan calls the function."""
