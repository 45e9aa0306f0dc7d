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
from mcp.server.mcpserver import ResourceSecurity
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from container import Container, Problem
from container.introspect import EMPTY
from mcp_adapter import scope_context
from mcp_adapter.annotations import to_protocol_annotations
from mcp_adapter.catalog import Catalog, CompiledPrompt, CompiledResource, CompiledTool, Hooks
from mcp_adapter.components import NoContract, Prompt, Resource, Server, Tool
from mcp_adapter.errors import CompileError, problem
from mcp_adapter.handlers import HandlerPlan, Source, plan_handler
from mcp_adapter.lifespan import compile_lifespan
from mcp_adapter.naming import default_name, valid_name
from mcp_adapter.results import wrap_schema
from mcp_adapter.uri_overlap import non_empty_variables, shared_uri
from schemas import Contract, ContractError, Schema

SHOULD_REGISTER = "shouldRegister"
AUTHORIZE = "authorize"


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


def description_of(cls: type, explicit: str | None) -> str | None:
    if explicit:
        return explicit
    doc = cls.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if doc else None


def declared_name(cls: type, suffix: str) -> Any:
    """The name a component class declares (``name`` in its own body), else its default."""
    explicit = cls.__dict__.get("name")
    return explicit if explicit is not None else default_name(cls.__name__, suffix)


def _name_of(cls: type, suffix: str, problems: list[Problem]) -> str:
    name = declared_name(cls, suffix)
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
    scope_context.declare(container)
    node = container.node(cls)
    if not node.ok:
        problems.extend(node.problems)
        return None, False
    missing = scope_context.unprovided(node.contexts, (cls.__qualname__,))
    if missing:
        problems.extend(missing)
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
    input_contract = _contract(input_type, where, "input", problems) if declared_input else NO_INPUT
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
        build_contexts=container.node(cls).contexts,
        handler=handler,
        hooks=hooks,
        input=input_contract,
        output=output_contract,
        modern=types.Tool(**common, output_schema=modern_output),
        legacy=types.Tool(**common, output_schema=legacy_output),
    )


COMPLETE = "complete"
COMPLETION_ARGUMENTS = ("argument", "value", "context")


def _converters(plan: HandlerPlan) -> dict[str, Contract[Any]]:
    """Contracts for named arguments annotated with something other than ``str``."""
    return {
        slot.name: Contract.of(slot.key)
        for slot in plan.slots
        if slot.source is Source.ARGUMENT and slot.key not in (EMPTY, str)
    }


def _completion(cls: type, container: Container, problems: list[Problem]) -> HandlerPlan | None:
    plan, found = plan_handler(
        cls, COMPLETE, container, argument_names=COMPLETION_ARGUMENTS, optional=True
    )
    problems.extend(found)
    return plan


def _template(cls: type[Resource], problems: list[Problem]) -> UriTemplate | None:
    where = (cls.__qualname__,)
    if (cls.uri is None) == (cls.uri_template is None):
        problems.append(problem(where, "a resource declares exactly one of uri or uri_template"))
        return None
    if cls.uri_template is None:
        return None
    try:
        return UriTemplate.parse(cls.uri_template)
    except InvalidUriTemplate as exc:
        problems.append(problem(where, f"invalid uri_template: {exc}"))
        return None


def _security(cls: type[Resource], variables: Sequence[str], problems: list[Problem]) -> None:
    where = (f"{cls.__qualname__}.security",)
    policy: object = cls.security  # declared, but a class body may say anything
    if not isinstance(policy, ResourceSecurity):
        problems.append(
            problem(
                where,
                f"security must be a ResourceSecurity, not {type(policy).__name__}",
                "use mcp.server.mcpserver.ResourceSecurity(exempt_params={...})",
            )
        )
        return
    unknown = sorted(set(policy.exempt_params) - set(variables))
    if unknown:
        problems.append(
            problem(
                where,
                f"exempt_params names no URI variable of this resource: {', '.join(unknown)}",
                f"URI variables: {', '.join(variables) or 'none'}",
            )
        )


def compile_resource(
    cls: type[Resource], container: Container, problems: list[Problem]
) -> CompiledResource | None:
    """Compile one resource class, appending what is wrong to ``problems``."""
    before = len(problems)
    name = _name_of(cls, "Resource", problems)
    template = _template(cls, problems)
    variables = template.variable_names if template is not None else []
    _security(cls, variables, problems)
    handler, found = plan_handler(cls, "handle", container, argument_names=variables)
    problems.extend(found)
    hooks = compile_hooks(cls, container, problems)
    completion = _completion(cls, container, problems)
    build, build_is_async = _builder(cls, container, problems)
    if len(problems) > before or handler is None:
        return None
    missing = [v for v in variables if v not in handler.arguments]
    common: dict[str, Any] = {
        "name": name,
        "title": cls.title,
        "description": description_of(cls, cls.description),
        "mime_type": cls.mime_type,
        "icons": list(cls.icons) if cls.icons else None,
        "meta": dict(cls.meta) if cls.meta else None,
    }
    entry: types.Resource | types.ResourceTemplate
    if template is not None:
        if missing:
            problems.append(
                problem(
                    (f"{cls.__qualname__}.handle",),
                    f"URI variables {', '.join(missing)} have no parameter in handle()",
                    "add a parameter named like each variable",
                )
            )
            return None
        entry = types.ResourceTemplate(uri_template=str(cls.uri_template), **common)
    else:
        entry = types.Resource(uri=str(cls.uri), size=cls.size, **common)
    return CompiledResource(
        name=name,
        cls=cls,
        build=build,
        build_is_async=build_is_async,
        build_contexts=container.node(cls).contexts,
        handler=handler,
        hooks=hooks,
        uri=cls.uri,
        template=template,
        mime_type=cls.mime_type,
        entry=entry,
        converters=_converters(handler),
        completion=completion,
        security=cls.security,
        non_empty=non_empty_variables(template) if template is not None else frozenset(),
    )


def compile_prompt(
    cls: type[Prompt], container: Container, problems: list[Problem]
) -> CompiledPrompt | None:
    """Compile one prompt class, appending what is wrong to ``problems``."""
    before = len(problems)
    name = _name_of(cls, "Prompt", problems)
    arguments = tuple(cls.arguments)
    names = [argument.name for argument in arguments]
    if len(set(names)) != len(names):
        problems.append(problem((cls.__qualname__,), "duplicate prompt argument names"))
    handler, found = plan_handler(cls, "handle", container, argument_names=names)
    problems.extend(found)
    hooks = compile_hooks(cls, container, problems)
    completion = _completion(cls, container, problems)
    build, build_is_async = _builder(cls, container, problems)
    if handler is not None:
        unreceived = [n for n in names if n not in handler.arguments]
        if unreceived:
            problems.append(
                problem(
                    (f"{cls.__qualname__}.handle",),
                    f"prompt arguments {', '.join(unreceived)} have no parameter in handle()",
                    "add a parameter named like each declared argument",
                )
            )
    if len(problems) > before or handler is None:
        return None
    entry = types.Prompt(
        name=name,
        title=cls.title,
        description=description_of(cls, cls.description),
        arguments=[argument.to_protocol() for argument in arguments] or None,
        icons=list(cls.icons) if cls.icons else None,
        meta=dict(cls.meta) if cls.meta else None,
    )
    return CompiledPrompt(
        name=name,
        cls=cls,
        build=build,
        build_is_async=build_is_async,
        build_contexts=container.node(cls).contexts,
        handler=handler,
        hooks=hooks,
        arguments=arguments,
        entry=entry,
        converters=_converters(handler),
        completion=completion,
    )


def _overlapping(templates: list[CompiledResource], problems: list[Problem]) -> None:
    """Two templates that can match the same URI make reads ambiguous."""
    for index, first in enumerate(templates):
        for second in templates[index + 1 :]:
            shared = shared_uri(first.uri_template_text, second.uri_template_text)
            if shared is None:
                continue
            if shared.matched_by_both:
                why = f"both match {shared.uri!r}"
            else:
                why = (
                    f"their patterns both allow {shared.uri!r}; the SDK's matcher may tell "
                    "them apart there, but this check cannot prove it, so it refuses"
                )
            problems.append(
                problem(
                    (second.cls.__qualname__,),
                    f"uri_template {second.uri_template_text!r} can match the same URIs as "
                    f"{first.cls.__qualname__}'s {first.uri_template_text!r}: {why}",
                    "make the literal parts of the templates differ (e.g. a distinct first "
                    "path segment per template)",
                )
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
                    f"duplicate {kind} {name!r}, also used by {table[name].cls.__qualname__}",
                    f"give each one its own {kind}",
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
    extend_tool: Callable[[CompiledTool, list[Problem]], CompiledTool | None] | None = None,
) -> Catalog:
    """Compile ``server`` against ``container``; raise ``CompileError`` listing every problem.

    ``extra_tools`` are tools compiled elsewhere (extensions) served alongside.
    ``extend_tool``, when given, gets each compiled class tool and returns what
    is served instead (extensions extending class tools by name), appending
    what is wrong to the problems.
    """
    problems: list[Problem] = []
    tools: list[CompiledTool] = []
    for cls in _classes(server, "tools", Tool, problems):
        tool = compile_tool(cls, container, problems)
        if tool is not None and extend_tool is not None:
            tool = extend_tool(tool, problems)
        if tool is not None:
            tools.append(tool)
    tools.extend(extra_tools)
    tool_table = _unique("tool name", tools, lambda t: t.name, problems)
    resources = [
        r
        for cls in _classes(server, "resources", Resource, problems)
        if (r := compile_resource(cls, container, problems)) is not None
    ]
    prompts = [
        p
        for cls in _classes(server, "prompts", Prompt, problems)
        if (p := compile_prompt(cls, container, problems)) is not None
    ]
    static = _unique(
        "resource uri", [r for r in resources if r.template is None], lambda r: str(r.uri), problems
    )
    templates = [r for r in resources if r.template is not None]
    _unique("uri_template", templates, lambda r: r.uri_template_text, problems)
    _overlapping(templates, problems)
    prompt_table = _unique("prompt name", prompts, lambda p: p.name, problems)
    lifespan = compile_lifespan(server, container, problems)
    eager = [key for key, binding in container.bindings.items() if binding.eager]
    if eager:  # (check() without roots would check every binding)
        problems.extend(p for p in container.check(*eager) if p not in problems)
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
        resources=MappingProxyType(static),
        templates=tuple(templates),
        prompts=MappingProxyType(prompt_table),
        input_timeout=server.input_timeout,
        rebuild=lambda again: compile_server(
            server, again, extra_tools=extra_tools, extend_tool=extend_tool
        ),
        lifespan=lifespan,
    )


def _classes(
    server: type[Server], attribute: str, base: type, problems: list[Problem]
) -> list[Any]:
    found = []
    for cls in tuple(getattr(server, attribute)):
        if isinstance(cls, type) and issubclass(cls, base):
            found.append(cls)
        else:
            problems.append(
                problem(
                    (server.__qualname__,),
                    f"{cls!r} in {attribute} is not a {base.__name__} class",
                )
            )
    return found
