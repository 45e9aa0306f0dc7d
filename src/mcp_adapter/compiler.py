"""``compile_server``: a declaration and a container in, an immutable catalog out.

Every problem is collected and reported at once; a server that compiled cannot
fail later for a missing binding.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from mcp import types

from container import Container, Problem
from mcp_adapter.annotations import to_protocol_annotations
from mcp_adapter.catalog import Catalog, CompiledTool, Hooks
from mcp_adapter.components import NoContract, Server, Tool
from mcp_adapter.errors import CompileError, problem
from mcp_adapter.handlers import HandlerPlan, plan_handler
from mcp_adapter.naming import default_name, valid_name
from mcp_adapter.results import wrap_schema
from schemas import Contract, ContractError, Schema

SHOULD_REGISTER = "shouldRegister"
AUTHORIZE = "authorize"


class _EmptyInput(Schema):
    """The input of a tool that declares none: only ``{}`` is accepted."""


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


def description_of(cls: type, explicit: str | None) -> str | None:
    if explicit:
        return explicit
    doc = cls.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if doc else None


def _name_of(cls: type, suffix: str, problems: list[Problem]) -> str:
    explicit = cls.__dict__.get("name")
    name = explicit if explicit else default_name(cls.__name__, suffix)
    if not isinstance(name, str) or not valid_name(name):
        problems.append(
            problem(
                (cls.__qualname__,),
                f"invalid name {name!r}",
                "names match [A-Za-z0-9_.-]{1,128}",
            )
        )
    return str(name)


def _builder(cls: type, container: Container, problems: list[Problem]) -> tuple[Any, bool]:
    node = container.node(cls)
    if not node.ok:
        problems.extend(node.problems)
        return None, False
    if node.is_async:
        return container.async_builder(cls), True
    return container.builder(cls), False


def compile_hooks(cls: type, container: Container, problems: list[Problem]) -> Hooks:
    plans: dict[str, HandlerPlan | None] = {}
    for hook in (SHOULD_REGISTER, AUTHORIZE):
        plan, found = plan_handler(cls, hook, container, optional=True)
        problems.extend(found)
        plans[hook] = plan
    return Hooks(should_register=plans[SHOULD_REGISTER], authorize=plans[AUTHORIZE])


def _contract(tp: Any, where: tuple[str, ...], what: str, problems: list[Problem]) -> Any:
    try:
        return Contract.of(tp)
    except (ContractError, TypeError) as exc:
        problems.append(problem(where, f"the {what} contract is not valid: {exc}"))
        return None


def compile_tool(
    cls: type[Tool[Any, Any]], container: Container, problems: list[Problem]
) -> CompiledTool | None:
    """Compile one tool class, appending what is wrong to ``problems``."""
    before = len(problems)
    where = (cls.__qualname__,)
    name = _name_of(cls, "Tool", problems)
    input_type, output_type = contracts_of(cls)
    declared_input = input_type is not None
    input_contract = _contract(
        input_type if declared_input else _EmptyInput, where, "input", problems
    )
    if input_contract is not None and not input_contract.is_object:
        problems.append(
            problem(
                where,
                f"the input contract {input_type!r} does not describe a JSON object",
                "tool arguments are an object: use a Schema subclass",
            )
        )
    output_contract = None
    if output_type is not None:
        output_contract = _contract(output_type, where, "output", problems)
    handler, found = plan_handler(
        cls, "handle", container, payload_type=input_type if declared_input else None
    )
    problems.extend(found)
    hooks = compile_hooks(cls, container, problems)
    build, build_is_async = _builder(cls, container, problems)
    if len(problems) > before or handler is None or input_contract is None:
        return None
    description = description_of(cls, cls.description)
    annotations = to_protocol_annotations(cls.annotations)
    meta = dict(cls.meta) if cls.meta else {}
    if cls.cache:
        meta["cache"] = dict(cls.cache)
    common: dict[str, Any] = {
        "name": name,
        "title": cls.title,
        "description": description,
        "input_schema": input_contract.json_schema,
        "icons": list(cls.icons) if cls.icons else None,
        "annotations": annotations,
        "meta": meta or None,
    }
    modern_output = output_contract.json_schema if output_contract is not None else None
    legacy_output = modern_output
    if output_contract is not None and not output_contract.is_object:
        legacy_output = wrap_schema(output_contract.json_schema)
    return CompiledTool(
        name=name,
        cls=cls,
        build=build,
        build_is_async=build_is_async,
        handler=handler,
        hooks=hooks,
        input=input_contract,
        output=output_contract,
        modern=types.Tool(**common, output_schema=modern_output),
        legacy=types.Tool(**common, output_schema=legacy_output),
    )


def _unique(
    kind: str,
    compiled: list[Any],
    key: Callable[[Any], str],
    problems: list[Problem],
) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for item in compiled:
        name = key(item)
        if name in table:
            problems.append(
                problem(
                    (item.cls.__qualname__,),
                    f"duplicate {kind} name {name!r}, also used by {table[name].cls.__qualname__}",
                    "give one of them an explicit, different name",
                )
            )
            continue
        table[name] = item
    return table


def compile_server(
    server: type[Server],
    container: Container,
    *,
    extra_tools: Sequence[CompiledTool] = (),
) -> Catalog:
    """Compile ``server`` against ``container``; raise ``CompileError`` listing every problem.

    ``extra_tools`` are tools compiled elsewhere (extensions) served alongside.
    """
    problems: list[Problem] = []
    tools: list[CompiledTool] = []
    declared: tuple[Any, ...] = tuple(server.tools)
    for cls in declared:
        if not (isinstance(cls, type) and issubclass(cls, Tool)):
            problems.append(
                problem((server.__qualname__,), f"{cls!r} in tools is not a Tool class")
            )
            continue
        tool = compile_tool(cls, container, problems)
        if tool is not None:
            tools.append(tool)
    tools.extend(extra_tools)
    tool_table = _unique("tool", tools, lambda t: t.name, problems)
    server_name = server.name or server.__name__
    if problems:
        raise CompileError(server_name, problems)
    return Catalog(
        server=server,
        name=server_name,
        version=server.version,
        title=server.title,
        description=description_of(server, server.description),
        instructions=server.instructions,
        website_url=server.website_url,
        icons=tuple(server.icons) if server.icons else None,
        tools=MappingProxyType(tool_table),
    )
