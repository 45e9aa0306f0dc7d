"""Resources compiled: the URI or template, its variables as typed named arguments, the
security policy, completion (the parts every component shares come from ``parts``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp import types
from mcp.server.mcpserver import ResourceSecurity
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from container import Container, Problem
from mcp_adapter.compile.parts import (
    converters,
    description_of,
    name_of,
    named_plans,
)
from mcp_adapter.compile.uri_overlap import non_empty_variables
from mcp_adapter.compiled.catalog import CompiledResource
from mcp_adapter.declare.components import Resource
from mcp_adapter.errors import problem


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
    name = name_of(cls, "Resource", problems)
    template = _template(cls, problems)
    variables = template.variable_names if template is not None else []
    _security(cls, variables, problems)
    handler, parts, completion = named_plans(cls, "resource", name, variables, container, problems)
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
        handler=handler,
        **parts.fields(),
        uri=cls.uri,
        template=template,
        mime_type=cls.mime_type,
        entry=entry,
        converters=converters(handler),
        completion=completion,
        security=cls.security,
        non_empty=non_empty_variables(template) if template is not None else frozenset(),
    )
