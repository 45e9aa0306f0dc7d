"""Prompts compiled: their declared arguments as named arguments of ``handle()``, completion
(the parts every component shares come from ``parts``)."""

from __future__ import annotations

from mcp import types

from container import Container, Problem
from mcp_adapter.compile.parts import (
    converters,
    description_of,
    name_of,
    named_plans,
)
from mcp_adapter.compiled.catalog import CompiledPrompt
from mcp_adapter.declare.components import Prompt
from mcp_adapter.errors import problem


def compile_prompt(
    cls: type[Prompt], container: Container, problems: list[Problem]
) -> CompiledPrompt | None:
    """Compile one prompt class, appending what is wrong to ``problems``."""
    before = len(problems)
    name = name_of(cls, "Prompt", problems)
    arguments = tuple(cls.arguments)
    names = [argument.name for argument in arguments]
    if len(set(names)) != len(names):
        problems.append(problem((cls.__qualname__,), "duplicate prompt argument names"))
    handler, parts, completion = named_plans(cls, "prompt", name, names, container, problems)
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
        handler=handler,
        **parts.fields(),
        arguments=arguments,
        entry=entry,
        converters=converters(handler),
        completion=completion,
    )
