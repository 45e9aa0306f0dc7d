"""The dispatcher's shared part: the catalog it follows, where a call's stages run, the
request stage and ``Server.middleware`` around listings, and a named component's chain;
with its scopes (``scopes``), visibility (``visibility``), guard (``guard``) and input
phase (``inputs``)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar, cast

from mcp import MCPError, types
from mcp.server.auth.provider import AccessToken
from pydantic import ValidationError

from container import Container, Lifetime, ProviderKind, Scope
from mcp_adapter.compiled.catalog import (
    Catalog,
    CompiledComponent,
    CompiledPrompt,
    CompiledResource,
)
from mcp_adapter.compiled.handles import HandleDesk
from mcp_adapter.declare.middleware import Call, RequestCall
from mcp_adapter.declare.request import McpRequest, Transport, freeze
from mcp_adapter.dispatch import telemetry
from mcp_adapter.dispatch.batched import Batched
from mcp_adapter.dispatch.cache_hints import page_hints
from mcp_adapter.dispatch.chain import through
from mcp_adapter.dispatch.inflight import CallsInFlight, Place
from mcp_adapter.dispatch.inputs import InputPhase, injecting
from mcp_adapter.dispatch.modes import Mode as Mode
from mcp_adapter.dispatch.modes import OnLoop, OnLoopWithWorker, OnThread, OnWorker, drive
from mcp_adapter.dispatch.paging import paginate
from mcp_adapter.dispatch.scopes import Given as Given
from mcp_adapter.dispatch.snapshot import is_modern
from mcp_adapter.dispatch.stage import LISTINGS, Answers, Inner, staged
from mcp_adapter.dispatch.telemetry import Tracing
from mcp_adapter.dispatch.threads import Threads, Worker
from mcp_adapter.dispatch.visibility import Visibility
from mcp_adapter.errors import IncidentError
from mcp_adapter.input.resolution import Resolution
from mcp_adapter.stores.handles import HandleStore
from schemas import Contract, render, summarize

T = TypeVar("T")


class DispatchCore(Visibility, InputPhase):
    """What every kind of call shares: the catalog it follows, scopes and sessions
    (``Scopes``), visibility (``Visibility``), the guard that turns failures into safe
    answers and its timeouts (``Guard``), the input phase (``InputPhase``), where a call's
    stages run, and ``Server.middleware`` around listings."""

    def __init__(
        self,
        catalog: Catalog,
        container: Container,
        *,
        transport: Transport = "memory",
        caller: AccessToken | None = None,
        threads: Threads | None = None,
        calls: CallsInFlight | None = None,
        handles: HandleStore | None = None,
    ) -> None:
        self.catalog = catalog
        self.container = container
        self.transport: Transport = transport
        self.caller = caller
        """Off HTTP, the verified token every request is made with (a test's signed-in caller)."""
        self.threads = Threads(catalog.threads) if threads is None else threads
        """The worker threads of this server's sync work (shared with the other dispatchers
        of one app: ``serving.toolsets``)."""
        self.calls = calls
        """The bound on calls in flight (per client and in all); ``None``: unbounded."""
        self.handles = HandleDesk.of(container, handles)
        """The state handles of this server's callers (shared with the other dispatchers of
        one app), in memory by default."""
        self._together: Batched[tuple[bool, bool]] = Batched(self.threads)
        """Sync visibility checks of one turn of the loop (one change reaching many
        listeners), run in one worker-thread call."""
        self._on_loop = OnLoop(self)
        self._on_thread = OnThread(self)
        self._otel = telemetry.switch(catalog.server)
        """Read once per component call: ``None`` when telemetry is switched off."""
        self._details = getattr(catalog.server, "telemetry_exception_details", False) is True
        """Whether failed stages' spans record exception messages and stack traces."""
        self._load(catalog)

    def _load(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._generation = self.container.generation
        self._sessions = any(  # a session-level context value alone (StateHandle) needs none
            binding.lifetime is Lifetime.SESSION and binding.kind is not ProviderKind.CONTEXT
            for binding in self.container.bindings.values()
        )
        size = catalog.page_size
        tools = list(catalog.tools.values())
        self._tool_pages = {
            True: paginate([t.modern for t in tools], size),
            False: paginate([t.legacy for t in tools], size),
        }
        self._tool_hooks = any(t.hooks.any for t in tools)
        self._staged = catalog.request_layers
        """The request-stage layers: empty (false) on the common path."""
        self._staged_request = any(layer.plan.requests for layer in self._staged)
        self._resource_pages = paginate(list(catalog.resources.values()), size)
        self._template_pages = paginate(list(catalog.templates), size)
        self._prompt_pages = paginate(list(catalog.prompts.values()), size)
        hints = catalog.cache_hints
        self._tool_hints = page_hints(paginate(tools, size), "tools/list", hints)
        self._resource_hints = page_hints(self._resource_pages, "resources/list", hints)
        self._template_hints = page_hints(self._template_pages, "resources/templates/list", hints)
        self._prompt_hints = page_hints(self._prompt_pages, "prompts/list", hints)

    def _request_stage(
        self,
        ctx: Any,
        call: RequestCall,
        inner: Inner[T],
        answers: Answers,
        **fields: Any,
    ) -> Awaitable[T]:
        """Answer the request through the request-stage layers; ``inner`` is the
        dispatcher's method again, given what they provided. ``fields`` build the
        ``McpRequest`` they inject (its arguments are the call's, frozen once)."""
        request = self.request(ctx, **fields) if self._staged_request else None
        reuse = request is not None and "arguments" in fields
        frozen = request.arguments if reuse and request else freeze(call.arguments)
        call = dataclasses.replace(call, arguments=frozen)
        answer = staged(self._staged, call, inner, request, answers, self._incident, is_modern(ctx))
        return cast("Awaitable[T]", answer)

    def _staged_listing(
        self,
        ctx: Any,
        method: str,
        params: types.PaginatedRequestParams | None,
        again: Callable[[Any, types.PaginatedRequestParams | None, Given], Awaitable[T]],
    ) -> Awaitable[T]:
        """A listing through the request stage (``again``: the listing method)."""
        cursor = params.cursor if params else None
        arguments = {} if cursor is None else {"cursor": cursor}
        inner = functools.partial(again, ctx, params)
        call = RequestCall("", arguments, method)
        return self._request_stage(ctx, call, inner, LISTINGS[method])

    def _follow(self) -> None:
        """Recompile the catalog when the container's bindings changed since it was compiled
        (``container.override(...)`` entered or ended): one comparison per request."""
        if self._generation != self.container.generation:
            rebuild = self.catalog.rebuild
            self._load(rebuild(self.container) if rebuild is not None else self.catalog)

    def _mode(
        self,
        component: CompiledComponent,
        body: Callable[[Mode], Awaitable[T]],
        tracing: Tracing | None = None,
        place: Place | None = None,
    ) -> Callable[[], Awaitable[T]]:
        """``body`` as a call: on one worker thread for a thread-bound component, split
        between the loop and a borrowed worker thread when it must be, else here (see
        ``dispatch.modes``); with a span per stage when ``tracing``. A borrowed thread
        keeps the call's ``place`` until it is done."""
        if component.borrows:
            borrowed = functools.partial(self._borrowed, component, body, tracing)
            return functools.partial(self.threads.borrowed, borrowed, place)
        run: Mode = self._on_thread if component.thread_bound else self._on_loop
        if tracing is not None:
            run = tracing.on(run)
        if component.thread_bound:
            call = functools.partial(body, run)
            return functools.partial(self.threads.run, drive, call)
        return functools.partial(body, run)

    def _borrowed(
        self,
        component: CompiledComponent,
        body: Callable[[Mode], Awaitable[T]],
        tracing: Tracing | None,
        worker: Worker,
    ) -> Awaitable[T]:
        """``body`` in the mode of a call that borrowed ``worker``."""
        run: Mode = (
            OnWorker(self, worker) if component.thread_bound else OnLoopWithWorker(self, worker)
        )
        if tracing is not None:
            run = tracing.on(run)
        return body(run)

    @staticmethod
    def _convert(
        converters: Mapping[str, Contract[Any]], values: Mapping[str, Any], what: str
    ) -> dict[str, Any]:
        converted = dict(values)
        for name, contract in converters.items():
            if name in converted:
                try:
                    converted[name] = contract.validate(converted[name])
                except ValidationError as exc:
                    detail = render(summarize(exc))
                    raise MCPError(
                        types.INVALID_PARAMS, f"Invalid {what} {name}: {detail}"
                    ) from None
        return converted

    async def _around(
        self,
        ctx: Any,
        call: Call,
        body: Callable[[Call], Awaitable[T]],
        given: Given | None = None,
    ) -> T:
        """A listing through the call-stage layers of ``Server.middleware``, in a scope of
        its own."""
        request = self.request(ctx, given)
        async with self.scope(ctx, request) as scope:
            return cast(T, await through(self.catalog.middleware, call, body, scope, request))

    def _listing(
        self,
        ctx: Any,
        method: str,
        params: types.PaginatedRequestParams | None,
        given: Given | None,
        again: Callable[[Any, types.PaginatedRequestParams | None, Given], Awaitable[T]],
        page: Callable[[Any, Given | None, str | None], Awaitable[T]],
    ) -> Awaitable[T]:
        """A listing: through the request-stage layers when the server has them (``again``,
        the listing method, is called with what they gave), else ``page(ctx, given,
        cursor)`` through ``Server.middleware``."""
        self._follow()
        if self._staged and given is None:
            return self._staged_listing(ctx, method, params, again)
        cursor = params.cursor if params else None
        return self._listed(ctx, method, cursor, functools.partial(page, ctx, given), given)

    def _listed(
        self,
        ctx: Any,
        method: str,
        cursor: str | None,
        body: Callable[[str | None], Awaitable[T]],
        given: Given | None = None,
    ) -> Awaitable[T]:
        if not self.catalog.middleware:
            return body(cursor)
        arguments = MappingProxyType({} if cursor is None else {"cursor": cursor})

        async def listed(call: Call) -> T:
            return await body(call.arguments.get("cursor"))

        async def around() -> T:
            return await self._around(ctx, Call("", arguments, method), listed, given)

        def failed(incident: str) -> T:
            raise IncidentError("Listing failed", incident)

        return self._guarded("listing", method, around, failed)

    async def _named_chain(
        self,
        run: Mode,
        component: CompiledResource | CompiledPrompt,
        call: Call,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        inputs: Resolution | None = None,
    ) -> Any:
        """A resource's or prompt's handler through its middleware; changed arguments are
        converted to their declared types again (a value they refuse is a failure);
        ``inputs``: the answers of its input phase (its resolved parameters' values, never
        shown to middleware as arguments)."""
        given = call.arguments
        resolved = inputs.values(component.handler.resolved) if inputs is not None else None

        async def handler(changed: Call) -> Any:
            values = dict(given)
            if changed.arguments is not given:
                values = dict(changed.arguments)
                for name, contract in component.converters.items():
                    if name in values:
                        values[name] = contract.validate(values[name])
            if resolved:
                values.update(resolved)
            return await run.call(
                component.handler, instance, scope, request, None, values, self.threads
            )

        inject = run.inject if inputs is None else injecting(run.inject, inputs)
        return await through(component.middleware, call, handler, scope, request, inject)
