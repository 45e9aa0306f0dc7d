"""The compiled, immutable form of a server: what the dispatcher serves."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcp import types
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import DEFAULT_RESOURCE_SECURITY, ResourceSecurity
from mcp.shared.uri_template import UriTemplate
from starlette.requests import Request as HttpRequest

from container import Container
from mcp_adapter.compiled.handlers import HandlerPlan, Layer
from mcp_adapter.compiled.handles import HandleField, StateHandles
from mcp_adapter.compiled.lifespan import CompiledLifespan
from mcp_adapter.compiled.resolvers import ResolverPlan, in_order
from mcp_adapter.declare.components import DEFAULT_THREADS, PromptArgument
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.errors import McpAdapterError
from schemas import Contract


@dataclass(frozen=True, slots=True)
class Hooks:
    """Compiled visibility rules of a component, in the order they are asked: every
    ``should_register`` plan, then every ``authorize`` plan (policies' first, then the
    component's own hook). A plan with a ``function`` is called directly (a policy, a
    function tool's hook); one without is a method of the component instance."""

    should_register: tuple[HandlerPlan, ...] = ()
    authorize: tuple[HandlerPlan, ...] = ()
    answered: tuple[HandlerPlan, ...] = field(init=False)
    """The ``authorize`` plans that take resolved parameters: asked on a call only, once the
    input phase has their answers (a listing cannot ask, and shows the component)."""
    any: bool = field(init=False)
    """Whether there is a rule at all (decided once: read on every request)."""
    needs_request: bool = field(init=False)
    needs_instance: bool = field(init=False)
    """A rule is a method of the component: its instance is built to ask it."""
    sync: bool = field(init=False)
    """There is a rule, and every rule is a sync callable with only sync services."""
    scoped: bool = field(init=False)
    """A rule takes a service: asking them needs a container scope (``HandlerPlan.scoped``)."""

    def __post_init__(self) -> None:
        answered = tuple(plan for plan in self.authorize if plan.resolved)
        object.__setattr__(self, "answered", answered)
        if answered:
            plain = tuple(plan for plan in self.authorize if not plan.resolved)
            object.__setattr__(self, "authorize", plain)
        plans = self.plans
        object.__setattr__(self, "any", bool(plans))
        object.__setattr__(self, "needs_request", any(p.needs_request for p in plans))
        object.__setattr__(self, "needs_instance", any(p.function is None for p in plans))
        object.__setattr__(self, "sync", bool(plans) and all(p.sync for p in plans))
        object.__setattr__(self, "scoped", any(p.scoped for p in plans))

    @property
    def plans(self) -> tuple[HandlerPlan, ...]:
        return (*self.should_register, *self.authorize)

    def within(self, outer: Hooks) -> Hooks:
        """These rules asked after ``outer``'s (a server's or an extension's policies)."""
        if not outer.any:
            return self
        return Hooks(
            should_register=(*outer.should_register, *self.should_register),
            authorize=(*outer.authorize, *self.authorize, *self.answered),
        )


@dataclass(frozen=True, slots=True)
class CompiledComponent:
    """What every kind shares: the class, how to build it, its handler and hooks."""

    name: str
    cls: type
    build: Callable[[Any], Any] = field(repr=False)
    """Builds the component instance in a scope (awaitable when ``build_is_async``)."""
    build_is_async: bool
    handler: HandlerPlan = field(repr=False)
    hooks: Hooks = field(repr=False)
    build_contexts: frozenset[Any] = field(default=frozenset(), kw_only=True, repr=False)
    """The context values building the component itself needs (its constructor's graph)."""
    builds_alone: bool = field(default=False, kw_only=True, repr=False)
    """Building it needs no scope: a transient class taking nothing (``build(None)``)."""
    middleware: tuple[Layer, ...] = field(default=(), kw_only=True, repr=False)
    """The layers around its handler, outermost first (the server's, extensions', its own)."""
    timeout: float | None = field(default=None, kw_only=True)
    """Seconds a call may take before it is cancelled (its own, else the server's)."""
    cache: CacheHint | None = field(default=None, kw_only=True, repr=False)
    """Its declared freshness (``Component.cache``); ``None``: the server's."""
    needs_request: bool = field(init=False, repr=False)
    """Whether the handler, a hook, or a service they or the constructor need reads the
    request (``McpRequest`` or another context value); else none is built."""
    sync_hooks: bool = field(init=False, repr=False)
    """Its hooks, its construction and their services are all sync: a listing runs them,
    with those of the rest of its page, in one worker-thread call (``Dispatcher._filter``)."""
    scoped_hooks: bool = field(init=False, repr=False)
    """Asking its hooks needs a container scope: a hook takes a service, or is a method of
    an instance that does not build alone. Else a delivery asks them with no scope
    (``ResourceReads.readable``): no scope opened and closed per listener."""
    needs_http: bool = field(init=False, repr=False)
    """It (its handler, hooks or a service) needs the HTTP request: it works over HTTP only."""
    contexts: frozenset[Any] = field(init=False, repr=False)
    """Every context value its handler, hooks, middleware or constructor may take."""
    mints: bool = field(init=False, repr=False)
    """Its calls may open state handles: ``StateHandles`` is among its ``contexts`` (its
    handler, constructor, a hook, a resolver, a layer of any level, or a service any of
    those takes, however deep, can receive it). A tool call that may mint settles its
    handles with the store before it answers (``HandleStore.settle``); no other does."""
    thread_bound: bool = field(init=False, repr=False)
    """Handler, construction, services, hooks and the services middleware layers take all
    sync: the call's scope, services, hooks, handler and finalizers run on one worker
    thread (its async middleware layers on the loop; ``dispatch.modes``)."""
    inputs: tuple[ResolverPlan, ...] = field(init=False, repr=False)
    """Every resolver its handler takes (``Annotated[T, Resolve(fn)]``), dependencies first:
    the input phase of a call (empty, and free, for a component that asks nothing)."""
    input_roots: tuple[tuple[str, ResolverPlan], ...] = field(init=False, repr=False)
    """``(parameter, resolver)`` of each resolved parameter of its handler and hooks."""
    borrows: bool = field(init=False, repr=False)
    """A call borrows a worker thread for its whole run (``dispatch.threads.Worker``): a
    thread-bound component with middleware or a timeout, or a sync handler with a timeout."""
    on_loop: bool = field(init=False, repr=False)
    """Neither thread-bound nor borrowing: its calls run on the loop (``dispatch.modes.OnLoop``)."""

    def __post_init__(self) -> None:
        layers = [layer.plan for layer in self.middleware]
        consumers = [self.handler, *self.hooks.answered]
        consumers.extend(layer.plan for layer in self.middleware if layer.plan.resolved)
        inputs = in_order(consumers) if any(plan.resolved for plan in consumers) else ()
        object.__setattr__(self, "inputs", inputs)
        roots = tuple((name, resolver) for plan in consumers for name, resolver, _ in plan.resolved)
        object.__setattr__(self, "input_roots", roots)
        resolving = [resolver.plan for resolver in inputs]
        resolving.extend(self.hooks.answered)
        needs = (
            bool(inputs)
            or self.handler.needs_request
            or self.hooks.needs_request
            or bool(self.build_contexts)
            or any(plan.needs_request for plan in layers)
        )
        object.__setattr__(self, "needs_request", needs)
        object.__setattr__(
            self,
            "sync_hooks",
            self.hooks.sync and not (self.hooks.needs_instance and self.build_is_async),
        )
        scoped = self.hooks.scoped or (self.hooks.needs_instance and not self.builds_alone)
        object.__setattr__(self, "scoped_hooks", scoped)
        bound = (
            self.handler.sync
            and not self.build_is_async
            and (self.hooks.sync or not self.hooks.any)
            and not any(plan.async_services for plan in layers)  # layers run on the loop
            and all(plan.sync for plan in resolving)
        )
        object.__setattr__(self, "thread_bound", bound)
        timed = self.timeout is not None
        borrows = (bound and (bool(self.middleware) or timed)) or (
            timed and not self.handler.is_async
        )
        object.__setattr__(self, "borrows", borrows)
        object.__setattr__(self, "on_loop", not (bound or borrows))
        plans = [self.handler, *self.hooks.plans]
        plans.extend(layers)
        plans.extend(resolving)
        http = any(p.http_requests or HttpRequest in p.contexts for p in plans)
        object.__setattr__(self, "needs_http", http or HttpRequest in self.build_contexts)
        contexts = self.build_contexts.union(*(p.contexts for p in plans))
        object.__setattr__(self, "contexts", contexts)
        object.__setattr__(self, "mints", StateHandles in contexts)

    async def instance(self, scope: Any) -> Any:
        if self.build_is_async:
            return await self.build(scope)
        return self.build(scope)


@dataclass(frozen=True, slots=True)
class CompiledTool(CompiledComponent):
    input: Contract[Any] = field(repr=False, kw_only=True)
    output: Contract[Any] | None = field(repr=False, kw_only=True)
    modern: types.Tool = field(repr=False, kw_only=True)
    """The ``tools/list`` entry for 2026-07-28."""
    legacy: types.Tool = field(repr=False, kw_only=True)
    """The ``tools/list`` entry for 2025-11-25 (object-only output schema)."""
    spread: tuple[str, ...] = field(default=(), kw_only=True)
    """Payload fields passed to the handler as named arguments (function tools)."""
    toolset: str = field(default="", kw_only=True)
    """The named group the tool belongs to (a class tool's: ``Tool.toolset``, else its
    server's ``Server.toolset``; a contributed tool's: its extension's)."""
    fields: Callable[[Any], dict[str, Any]] = field(default=dict, kw_only=True, repr=False)
    """The validated payload as middleware sees it: its fields by name."""
    convert: Callable[[Any], Any] | None = field(default=None, kw_only=True, repr=False)
    """Reads what the handler returned (a function tool's plain value becomes a result);
    ``None``: a class tool's ``handle()`` returns responses."""
    task_support: str = field(default="forbidden", kw_only=True)
    """``"forbidden"``, ``"optional"`` or ``"required"``: whether it may run as a task."""
    handle: HandleField | None = field(default=None, kw_only=True, repr=False)
    """The input field that takes a state handle back (``compile.handles``); ``None``: its
    calls open no handle's session, and pay nothing for handles."""

    def revalidate(self, arguments: Mapping[str, Any]) -> Any:
        """Arguments middleware changed, validated into the input contract again."""
        return self.input.adapter.validate_python(dict(arguments), by_alias=True, by_name=True)

    def arguments(self, payload: Any) -> dict[str, Any] | None:
        if not self.spread:
            return None
        return {name: getattr(payload, name) for name in self.spread}


@dataclass(frozen=True, slots=True)
class CompiledResource(CompiledComponent):
    uri: str | None = field(kw_only=True)
    template: UriTemplate | None = field(repr=False, kw_only=True)
    mime_type: str | None = field(kw_only=True)
    entry: types.Resource | types.ResourceTemplate = field(repr=False, kw_only=True)
    """The ``resources/list`` or ``resources/templates/list`` entry."""
    converters: Mapping[str, Contract[Any]] = field(repr=False, kw_only=True)
    """Typed URI variables (``id: int``) are validated from their text."""
    completion: HandlerPlan | None = field(default=None, repr=False, kw_only=True)
    security: ResourceSecurity = field(default=DEFAULT_RESOURCE_SECURITY, repr=False, kw_only=True)
    """The SDK's policy for the decoded URI variables (``Resource.security``)."""
    non_empty: frozenset[str] = field(default=frozenset(), repr=False, kw_only=True)
    """URI variables that must not be empty: those whose expansion has no spelling of
    "empty" of its own (``{;x}``, ``{?x}``, ``{&x}`` and explode lists have one)."""

    @property
    def uri_template_text(self) -> str:
        return str(self.template) if self.template is not None else ""

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables of ``uri``, or ``None`` when this resource does not serve it:
        the template does not match, a required variable is empty, or a value fails
        the security policy (as ``MCPServer`` refuses it: an unknown resource)."""
        if self.template is None:
            return {} if uri == self.uri else None
        variables = self.template.match(uri)
        if variables is None or any(variables.get(name) == "" for name in self.non_empty):
            return None
        if self.security.validate(variables) is not None:
            return None
        return variables


@dataclass(frozen=True, slots=True)
class CompiledPrompt(CompiledComponent):
    arguments: tuple[PromptArgument, ...] = field(kw_only=True)
    entry: types.Prompt = field(repr=False, kw_only=True)
    converters: Mapping[str, Contract[Any]] = field(repr=False, kw_only=True)
    completion: HandlerPlan | None = field(default=None, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Catalog:
    """Everything decided before the first request, frozen."""

    server: type
    name: str
    version: str
    title: str | None
    description: str | None
    instructions: str | None
    website_url: str | None
    icons: tuple[types.Icon, ...] | None
    tools: Mapping[str, CompiledTool]
    resources: Mapping[str, CompiledResource] = field(default_factory=dict)
    """Static resources by URI."""
    templates: tuple[CompiledResource, ...] = ()
    prompts: Mapping[str, CompiledPrompt] = field(default_factory=dict)
    page_size: int = 100
    input_timeout: float = 300.0
    threads: int = DEFAULT_THREADS
    """Worker threads this server's sync work uses at once (``Server.threads``)."""
    rebuild: Callable[[Container], Catalog] | None = field(default=None, repr=False, compare=False)
    """Compiles this catalog again against a container whose bindings changed (an override):
    what serves it recompiles when ``container.generation`` moves."""
    """Seconds a 2025-11-25 client has to answer an elicitation (``Server.input_timeout``)."""
    middleware: tuple[Layer, ...] = field(default=(), repr=False)
    """The call-stage layers of ``Server.middleware`` (and the app's), compiled: around
    listings and completions (each component's ``middleware`` starts with them)."""
    request_layers: tuple[Layer, ...] = field(default=(), repr=False)
    """The request-stage layers, the app's first, then the server's: around everything
    the dispatcher does for one request, of every method."""
    provided: frozenset[Any] = field(default=frozenset(), repr=False)
    """The context values the request-stage layers give every call."""
    lifespan: CompiledLifespan | None = field(default=None, repr=False)
    """``Server.lifespan``, entered at serve start (``serve_lifespan``); ``None`` without one."""
    cache_hints: Mapping[str, CacheHint] = field(default_factory=dict, repr=False)
    """``Server.cache_hints``: the server-wide freshness of each cacheable method."""
    protocol_extensions: tuple[Any, ...] = field(default=(), repr=False)
    """``Server.protocol_extensions``: the SDK ``Extension``s served beside the components."""
    tasks: Tasks | None = field(default=None, repr=False)
    """``Server.tasks`` when some tool may run as a task; ``None``: no task is served."""

    @property
    def components(self) -> list[CompiledComponent]:
        """Every tool, resource, resource template and prompt."""
        return [
            *self.tools.values(),
            *self.resources.values(),
            *self.templates,
            *self.prompts.values(),
        ]

    def takes(self, key: Any) -> bool:
        """Whether some component may take the context value ``key`` (``ClientLogger``...)."""
        return any(key in component.contexts for component in self.components)

    def http_only(self) -> list[tuple[str, str]]:
        """``(kind, name)`` of every component that needs the HTTP request."""
        found: list[tuple[str, str]] = []
        for kind, components in (
            ("tool", list(self.tools.values())),
            ("resource", [*self.resources.values(), *self.templates]),
            ("prompt", list(self.prompts.values())),
        ):
            found.extend((kind, c.name) for c in components if c.needs_http)
        return found

    @property
    def toolsets(self) -> frozenset[str]:
        """The names of the toolsets present."""
        return frozenset(tool.toolset for tool in self.tools.values() if tool.toolset)

    def select(self, toolsets: Collection[str]) -> Catalog:
        """The same catalog with only the tools of ``toolsets``; unknown names are an error."""
        unknown = sorted(set(toolsets) - self.toolsets)
        if unknown:
            known = ", ".join(sorted(self.toolsets)) or "none"
            raise UnknownToolsetError(f"unknown toolset(s): {', '.join(unknown)} (known: {known})")
        wanted = frozenset(toolsets)
        kept = {name: tool for name, tool in self.tools.items() if tool.toolset in wanted}
        rebuild, selected = self.rebuild, tuple(toolsets)

        def reselect(container: Container) -> Catalog:
            assert rebuild is not None
            return rebuild(container).select(selected)

        return dataclasses.replace(
            self, tools=MappingProxyType(kept), rebuild=reselect if rebuild else None
        )


class UnknownToolsetError(McpAdapterError, ValueError):
    """A client or an operator asked for a toolset no extension contributed."""
