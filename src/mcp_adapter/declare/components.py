"""The declarations users write: ``Tool``, ``Resource``, ``Prompt`` and ``Server``.

They are plain classes read once by the compiler; nothing here runs per request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Generic

from mcp import types
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import DEFAULT_RESOURCE_SECURITY, ResourceSecurity
from typing_extensions import TypeVar

from mcp_adapter.declare.annotations import ToolAnnotations
from mcp_adapter.declare.apps import ToolUI
from mcp_adapter.declare.policy import Policy
from mcp_adapter.declare.tasks import Tasks, TaskSupport


class NoContract:
    """The default of ``Tool``'s type parameters: nothing was declared."""


InputT = TypeVar("InputT", default=NoContract)
OutputT = TypeVar("OutputT", default=NoContract)


class Component:
    """Metadata shared by every kind of component."""

    name: ClassVar[str | None] = None
    """Stable public identifier; derived from the class name when omitted."""
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    """What a model reads; the class docstring when omitted."""
    icons: ClassVar[Sequence[types.Icon] | None] = None
    meta: ClassVar[Mapping[str, Any] | None] = None
    middleware: ClassVar[Sequence[Callable[..., Any]]] = ()
    """``async (call, call_next, ...)`` layers around ``handle`` (innermost: inside the
    server's and extensions'); parameters after the first two are injected."""
    timeout: ClassVar[float | None] = None
    """Seconds a call may take before it is cancelled; ``None``: ``Server.timeout``."""
    policies: ClassVar[Sequence[Policy]] = ()
    """Reusable rules of who sees and may use it (``Policy``), asked before its own
    ``shouldRegister``/``authorize`` and after its server's policies."""
    cache: ClassVar[CacheHint | None] = None
    """Declared freshness (the SDK's ``CacheHint``): ``ttlMs``/``cacheScope`` of its
    ``resources/read`` results and of the listing pages it is on (2026-07-28); results
    are never memoized."""


class Tool(Component, Generic[InputT, OutputT]):
    """A tool: ``handle(self, payload, *services)`` returns ``McpResponse``.

    ``Tool[Input]`` declares validated input; ``Tool[Input, Output]`` also a
    typed structured output. The ``input``/``output`` attributes, when not
    ``None``, take precedence over the generic arguments.
    """

    input: ClassVar[Any] = None
    output: ClassVar[Any] = None
    annotations: ClassVar[ToolAnnotations | types.ToolAnnotations | None] = None
    toolset: ClassVar[str | None] = None
    """The toolset it belongs to (``--toolsets``, ``X-MCP-Toolsets``); ``None``: its
    server's (``Server.toolset``)."""
    task_support: ClassVar[TaskSupport] = "forbidden"
    """Whether it may run as a task (docs/tasks.md): ``"forbidden"``, ``"optional"``
    or ``"required"``."""
    ui: ClassVar[ToolUI | None] = None
    """The interactive view it names (MCP Apps, ``ToolUI("ui://...")``): shown to clients
    that negotiated the extension, absent for the others (docs/extensions.md)."""


class Resource(Component):
    """A resource at a fixed ``uri`` or matching a ``uri_template``.

    ``handle()`` receives URI variables by parameter name plus injected services.
    """

    uri: ClassVar[str | None] = None
    uri_template: ClassVar[str | None] = None
    mime_type: ClassVar[str | None] = None
    size: ClassVar[int | None] = None
    security: ClassVar[ResourceSecurity] = DEFAULT_RESOURCE_SECURITY
    """The SDK's path-safety policy for decoded URI variables: a value with a ``..``
    segment, an absolute path or a NUL byte makes the URI an unknown resource.
    Opt a variable out with ``ResourceSecurity(exempt_params={"name"})``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptArgument:
    """One argument a prompt accepts, passed to ``handle()`` by name."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False

    def to_protocol(self) -> types.PromptArgument:
        return types.PromptArgument(
            name=self.name, title=self.title, description=self.description, required=self.required
        )


class Prompt(Component):
    """A prompt template; ``handle()`` returns one or more ``McpResponse`` messages."""

    arguments: ClassVar[Sequence[PromptArgument]] = ()


DEFAULT_THREADS = 40
"""``Server.threads`` unless a server says otherwise."""


class Server:
    """A server declaration: identity plus the component classes it serves."""

    name: ClassVar[str | None] = None
    version: ClassVar[str] = "0.1.0"
    title: ClassVar[str | None] = None
    description: ClassVar[str | None] = None
    instructions: ClassVar[str | None] = None
    website_url: ClassVar[str | None] = None
    icons: ClassVar[Sequence[types.Icon] | None] = None
    tools: ClassVar[Sequence[type[Tool[Any, Any]]]] = ()
    resources: ClassVar[Sequence[type[Resource]]] = ()
    prompts: ClassVar[Sequence[type[Prompt]]] = ()
    input_timeout: ClassVar[float] = 300.0
    """Seconds a 2025-11-25 client has to answer a request for input (elicitation)."""
    middleware: ClassVar[Sequence[Any]] = ()
    """``async (call, call_next, ...)`` layers around every call of every method,
    outermost; parameters after the first two are injected. Each stands in its stage
    (``stage``: ``"call"``, the default, or ``"request"``); a class is built from the
    container when the server compiles (docs/middleware.md)."""
    timeout: ClassVar[float | None] = None
    """Seconds any component call may take (a component's own ``timeout`` wins)."""
    policies: ClassVar[Sequence[Policy]] = ()
    """Rules (``Policy``) every component it serves must pass, contributed tools included,
    asked before the component's own."""
    threads: ClassVar[int] = DEFAULT_THREADS
    """Worker threads this server's sync handlers, hooks and services use at once (its
    own pool's size: calls beyond wait for one to be free)."""
    cache_hints: ClassVar[Mapping[str, CacheHint]] = {}
    """Server-wide freshness per cacheable method (``"tools/list"``, ``"resources/read"``,
    ...), the SDK's ``Server(cache_hints=...)``: what results carry when their components
    declare no ``cache`` of their own (2026-07-28)."""
    telemetry: ClassVar[bool] = True
    """``False``: no spans of the adapter's stages and no ``mcp.server.operation.duration``
    for this server's calls, even with a provider configured; ``MCP_ADAPTER_TELEMETRY=off``
    turns them off for every server (docs/observability.md)."""
    telemetry_exception_details: ClassVar[bool] = False
    """``True``: a failed stage's span records the exception's message and stack trace
    (``span.record_exception``). By default it records its type and the incident id only:
    messages often carry the call's data (docs/observability.md)."""
    toolset: ClassVar[str | None] = None
    """The toolset of its class tools that name none: by default the server's ``name``
    (the class name, kebab-case, without ``Server``, when ``name`` is not a valid
    toolset name)."""
    protocol_extensions: ClassVar[Sequence[Any]] = ()
    """Protocol extensions it serves (SEP-2133), as the SDK's ``mcp.server.extension.Extension``
    instances: each one's ``settings()`` is advertised under ``capabilities.extensions``
    and its ``methods()`` are served (docs/extensions.md)."""
    tasks: ClassVar[Tasks] = Tasks()
    """How its task tools run (``Tasks``: where Docket keeps them, TTL, caps, shutdown);
    read only when some tool declares ``task_support`` (docs/tasks.md)."""
    lifespan: Callable[..., AsyncIterator[None] | AbstractAsyncContextManager[None]] | None = None
    """Start-up and shutdown, once per serving process: define it as an async generator
    method (``async def lifespan(self, db: Database) -> AsyncIterator[None]: ...; yield``)
    or a method returning an async context manager (``@asynccontextmanager``). Its
    parameters are services from the container (singletons or transients); ``self`` is
    an instance of the server class built by the container. It runs after the eager
    singletons are built and is left before the container closes (docs/serving.md).
    Declared without ``ClassVar`` so that a method of that name type-checks as its override."""
