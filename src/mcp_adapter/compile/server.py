"""``compile_server``: a declaration and a container in, an immutable catalog out.

Every problem is collected and reported at once; a server that compiled cannot
fail later for a missing binding. Each component compiles into its kind's one
form (``tools``, ``resources``, ``prompts``); what the server declares
for all of them (``middleware``, ``timeout``, ``toolset``) is added here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from mcp.server.caching import validate_cache_hints

from container import Container, Problem
from mcp_adapter.compile.apps import for_apps_only, view_problems
from mcp_adapter.compile.contexts import given_by, ungiven, ungiven_layers
from mcp_adapter.compile.handles import handle_problems, with_handle
from mcp_adapter.compile.lifespan import compile_lifespan
from mcp_adapter.compile.middleware import plan_layers
from mcp_adapter.compile.parts import checked_name, description_of, policy_hooks, timeout_of
from mcp_adapter.compile.prompts import compile_prompt
from mcp_adapter.compile.resources import compile_resource
from mcp_adapter.compile.tasks import compile_tasks, protocol_extensions
from mcp_adapter.compile.tools import compile_tool
from mcp_adapter.compile.uri_overlap import shared_uri
from mcp_adapter.compiled.catalog import (
    Catalog,
    CompiledComponent,
    CompiledPrompt,
    CompiledResource,
    CompiledTool,
    Hooks,
)
from mcp_adapter.compiled.context import PROVIDED
from mcp_adapter.compiled.handlers import Layer
from mcp_adapter.declare.components import Prompt, Resource, Server, Tool
from mcp_adapter.declare.middleware import CALL, REQUEST
from mcp_adapter.declare.naming import default_name, valid_name
from mcp_adapter.errors import CompileError, problem

C = TypeVar("C", bound=CompiledComponent)


def server_toolset(server: type[Server], problems: list[Problem]) -> str:
    """The toolset of the server's class tools that name none (``Server.toolset``)."""
    if server.toolset is not None:
        where = f"{server.__qualname__}.toolset"
        return checked_name(server.toolset, where, problems, "toolset name")
    name = server.name or ""
    return name if valid_name(name) else default_name(server.__name__, "Server")


@dataclasses.dataclass(frozen=True, slots=True)
class _Served:
    """What the server declares for every component: layers, timeout, policies."""

    layers: tuple[Layer, ...]
    timeout: float | None
    hooks: Hooks

    def apply(self, component: C) -> C:
        """``component`` with the server's layers outside its own, the server's timeout
        when it sets none, and the server's policies asked before its own rules."""
        layers, timeout, hooks = self.layers, self.timeout, self.hooks
        if not layers and not hooks.any and (timeout is None or component.timeout is not None):
            return component
        return dataclasses.replace(
            component,
            middleware=(*layers, *component.middleware),
            timeout=component.timeout if component.timeout is not None else timeout,
            hooks=component.hooks.within(hooks),
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
    views_elsewhere: bool = False,
) -> Catalog:
    """Compile ``server`` against ``container``; raise ``CompileError`` listing every problem.

    ``extra_tools`` are tools compiled elsewhere (extensions) served alongside.
    ``extend_tool``, when given, gets each compiled class tool and returns what
    is served instead (extensions extending class tools by name), appending
    what is wrong to the problems. ``views_elsewhere``: the MCP Apps views its tools
    name are served by another server (``put_on_server``), so they are not looked for
    among its resources.
    """
    problems: list[Problem] = []
    where = server.__qualname__
    planned = plan_layers(
        tuple(server.middleware), f"server {where}", container, problems, server_wide=True
    )
    layers = tuple(layer for layer in planned if layer.stage == CALL)
    request_layers = tuple(layer for layer in planned if layer.stage == REQUEST)
    timeout = timeout_of(server, f"{where}.timeout", problems)
    served = _Served(
        layers, timeout, policy_hooks(server.policies, f"server {where}", container, problems)
    )
    threads = server.threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        problems.append(
            problem(
                (f"{where}.threads",),
                f"threads must be a whole number of worker threads, at least 1, not {threads!r}",
            )
        )
    toolset = server_toolset(server, problems)
    tools: list[CompiledTool] = []
    for cls in _classes(server, "tools", Tool, problems):
        tool = compile_tool(cls, container, problems, toolset=toolset)
        if tool is not None and extend_tool is not None:
            tool = extend_tool(tool, problems)
        if tool is not None:
            tools.append(tool)
    tools.extend(extra_tools)
    tools = [
        with_handle(for_apps_only(served.apply(tool), container, problems), problems)
        for tool in tools
    ]
    tool_table = _unique("tool name", tools, lambda t: t.name, problems)
    resources = [
        served.apply(r)
        for cls in _classes(server, "resources", Resource, problems)
        if (r := compile_resource(cls, container, problems)) is not None
    ]
    prompts = [
        served.apply(p)
        for cls in _classes(server, "prompts", Prompt, problems)
        if (p := compile_prompt(cls, container, problems)) is not None
    ]
    static = _unique(
        "resource uri", [r for r in resources if r.template is None], lambda r: str(r.uri), problems
    )
    templates = [r for r in resources if r.template is not None]
    _unique("uri_template", templates, lambda r: r.uri_template_text, problems)
    _overlapping(templates, problems)
    if not views_elsewhere:
        problems.extend(view_problems(tools, static, templates))
    prompt_table = _unique("prompt name", prompts, lambda p: p.name, problems)
    given = given_by(request_layers)
    problems.extend(ungiven_layers(layers, f"server {where}", given, container))
    problems.extend(ungiven(_owned(tools, resources, prompts), given, container, layers))
    problems.extend(handle_problems(_owned(tools, resources, prompts)))
    lifespan = compile_lifespan(server, container, problems)
    cache_hints = _cache_hints(server, problems)
    tasks = compile_tasks(tools, server.tasks, f"{where}.tasks", problems)
    extensions = protocol_extensions(server, f"{where}.protocol_extensions", problems)
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
        threads=threads,
        middleware=layers,
        request_layers=request_layers,
        provided=given - frozenset(PROVIDED),
        rebuild=lambda again: compile_server(
            server,
            again,
            extra_tools=extra_tools,
            extend_tool=extend_tool,
            views_elsewhere=views_elsewhere,
        ),
        lifespan=lifespan,
        cache_hints=MappingProxyType(cache_hints),
        tasks=tasks,
        protocol_extensions=extensions,
    )


def _owned(
    tools: Sequence[CompiledTool],
    resources: Sequence[CompiledResource],
    prompts: Sequence[CompiledPrompt],
) -> list[tuple[str, CompiledComponent]]:
    """Each component with how a problem names it."""
    owned: list[tuple[str, CompiledComponent]] = [(f"tool {t.name!r}", t) for t in tools]
    owned.extend((f"resource {r.name!r}", r) for r in resources)
    owned.extend((f"prompt {p.name!r}", p) for p in prompts)
    return owned


def _cache_hints(server: type[Server], problems: list[Problem]) -> dict[str, Any]:
    """``Server.cache_hints``, checked as the SDK's ``Server(cache_hints=...)`` checks them."""
    try:
        return validate_cache_hints(server.cache_hints)
    except (TypeError, ValueError) as exc:
        problems.append(
            problem(
                (f"{server.__qualname__}.cache_hints",),
                str(exc),
                "map cacheable methods to CacheHint values: "
                "{'tools/list': CacheHint(ttl_ms=60_000, scope='public')}",
            )
        )
        return {}


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


def with_middleware(catalog: Catalog, middleware: Sequence[Any], container: Container) -> Catalog:
    """``catalog`` with ``middleware`` outside every layer of its stage, around every call
    of every method (``http_app(middleware=...)``, ``serve_stdio(middleware=...)``); it
    follows the catalog when an override recompiles it. Raises ``CompileError`` for a bad
    layer, and for one that gives context values (only ``Server.middleware`` may: the
    components that need them were compiled with the server)."""
    if not middleware:
        return catalog
    problems: list[Problem] = []
    owner = f"the app serving {catalog.name}"
    planned = plan_layers(tuple(middleware), owner, container, problems, server_wide=True)
    layers = tuple(layer for layer in planned if layer.stage == CALL)
    request_layers = tuple(layer for layer in planned if layer.stage == REQUEST)
    for layer in request_layers:
        if layer.provides:
            problems.append(
                problem(
                    (f"middleware of {owner}",),
                    "a layer of the app cannot give context values: the server's components "
                    "were compiled without it",
                    "put the layer that gives them in Server.middleware",
                )
            )
    given = frozenset(PROVIDED) | catalog.provided
    problems.extend(ungiven_layers(layers, owner, given, container))
    if problems:
        raise CompileError(catalog.name, problems)

    def outside(component: C) -> C:
        return dataclasses.replace(component, middleware=(*layers, *component.middleware))

    rebuild = catalog.rebuild

    def again(changed: Container) -> Catalog:
        assert rebuild is not None
        return with_middleware(rebuild(changed), middleware, changed)

    return dataclasses.replace(
        catalog,
        tools=MappingProxyType({name: outside(t) for name, t in catalog.tools.items()}),
        resources=MappingProxyType({uri: outside(r) for uri, r in catalog.resources.items()}),
        templates=tuple(outside(t) for t in catalog.templates),
        prompts=MappingProxyType({name: outside(p) for name, p in catalog.prompts.items()}),
        middleware=(*layers, *catalog.middleware),
        request_layers=(*request_layers, *catalog.request_layers),
        rebuild=again if rebuild is not None else None,
    )
