"""The dispatcher's shared part: scopes, sessions, visibility, guards, timeouts."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeAlias, TypeVar, cast

import anyio
from mcp import MCPError, types
from mcp.server.auth.provider import AccessToken
from pydantic import ValidationError

from container import Container, Lifetime, ProviderKind, Scope, SessionScope
from mcp_adapter.compiled.catalog import (
    Catalog,
    CompiledComponent,
    CompiledPrompt,
    CompiledResource,
)
from mcp_adapter.compiled.context import RequestValues
from mcp_adapter.compiled.handlers import Offload
from mcp_adapter.compiled.handles import HandleDesk
from mcp_adapter.declare.middleware import Call, RequestCall
from mcp_adapter.declare.request import McpRequest, Transport, freeze
from mcp_adapter.dispatch import telemetry
from mcp_adapter.dispatch.cache_hints import page_hints
from mcp_adapter.dispatch.chain import through
from mcp_adapter.dispatch.inflight import CallsInFlight, Place
from mcp_adapter.dispatch.inputs import allowed_with_answers, injecting, resolve_inputs
from mcp_adapter.dispatch.modes import OnLoop, OnLoopWithWorker, OnThread, OnWorker, drive
from mcp_adapter.dispatch.paging import paginate, visible_all
from mcp_adapter.dispatch.snapshot import is_modern, snapshot
from mcp_adapter.dispatch.stage import LISTINGS, Answers, Inner, staged
from mcp_adapter.dispatch.telemetry import Traced, Tracing
from mcp_adapter.dispatch.threads import Threads, Worker
from mcp_adapter.errors import (
    IncidentError,
    Refusal,
    forbidden,
    incident_of,
    logger,
    new_incident,
    refused,
    unknown,
)
from mcp_adapter.input.asking import Asked, answered
from mcp_adapter.input.resolution import MAX_INPUT_ROUNDS, Resolution, Retry
from mcp_adapter.interrupts import cancelled_for_real
from mcp_adapter.sdk_compat import connection_of
from mcp_adapter.stores.handles import HandleStore
from schemas import Contract, render, summarize

T = TypeVar("T")
Entry = TypeVar("Entry")
Given: TypeAlias = Mapping[Any, Any]
"""Context values request-stage layers gave a call, by type."""
Mode: TypeAlias = OnLoop | OnThread | OnWorker | Traced
"""Where the stages of one call run (``modes``), traced or not (``telemetry``)."""

_SESSION_KEY = "mcp_adapter.session"
"""Where a connection's ``state`` keeps its session scope."""


class DispatchCore:
    """What every kind of call shares: the catalog it follows, scopes and sessions,
    visibility, the guard that turns failures into safe answers, timeouts, and
    ``Server.middleware`` around listings."""

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

    def request(self, ctx: Any, given: Given | None = None, **fields: Any) -> McpRequest:
        """The request snapshot; ``given``: the context values request-stage layers gave."""
        return snapshot(
            ctx,
            server_id=self.catalog.name,
            default_transport=self.transport,
            caller=self.caller,
            provided=given,
            **fields,
        )

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

    def scope(
        self, ctx: Any, request: McpRequest | None, session: SessionScope | None = None
    ) -> Scope:
        """The scope of one call: given the request's context values when it has one, and
        opened in ``session`` (a state handle's) when given, else in the MCP session's
        scope when the container has session-scoped bindings."""
        values = None if request is None else RequestValues(request, self.caller, self.handles)
        if session is not None:
            return session.scope(context=values)
        if self._sessions:
            session = self._session(ctx)
            if session is not None:
                return session.scope(context=values)
        return self.container.scope() if values is None else self.container.scope(values)

    def _session(self, ctx: Any) -> SessionScope | None:
        """The session scope of the 2025-11-25 connection ``ctx`` arrived on, made on its
        first request and closed with it (DELETE, idle timeout, client gone, shutdown).

        2026-07-28 has no session: each request scope is its own (``Lifetime.SESSION``
        values then live as long as the request), as on any transport without one.
        """
        if is_modern(ctx):
            return None
        connection = connection_of(ctx)
        if connection is None:
            return None
        session: SessionScope | None = connection.state.get(_SESSION_KEY)
        if session is None:
            session = self.container.session()
            connection.state[_SESSION_KEY] = session
            connection.exit_stack.push_async_callback(session.aclose)
        return session

    # -- visibility -----------------------------------------------------------

    async def visible(
        self,
        component: CompiledComponent,
        scope: Any,
        request: McpRequest | None,
        threads: Offload | None = None,
    ) -> tuple[bool, bool]:
        """``(registered, authorized)`` for this request; hooks run with injection (the
        instance is built only when a hook is its method; a sync hook runs on ``threads``,
        by default the server's)."""
        hooks = component.hooks
        if not hooks.any:
            return True, True
        offload = self.threads if threads is None else threads
        instance = await component.instance(scope) if hooks.needs_instance else None
        for plan in hooks.should_register:
            if not await plan.invoke(instance, scope, request, None, None, offload):
                return False, False
        for plan in hooks.authorize:
            if not await plan.invoke(instance, scope, request, None, None, offload):
                return True, False
        return True, True

    async def _gate(
        self,
        run: Mode,
        kind: str,
        component: CompiledComponent,
        scope: Any,
        request: McpRequest | None,
    ) -> None:
        registered, authorized = await run.visible(component, scope, request)
        if not registered:
            raise self.hidden(kind, component.name)
        if not authorized:
            raise forbidden(kind, component.name)

    def hidden(self, kind: str, name: str) -> MCPError:
        """The answer to a call of a component its hooks hide: exactly an unknown one's."""
        return unknown(kind, name)

    async def _filter(
        self,
        ctx: Any,
        page: Sequence[tuple[CompiledComponent, Entry]],
        given: Given | None = None,
    ) -> list[Entry]:
        if not any(component.hooks.any for component, _ in page):
            return [entry for _, entry in page]
        request = self.request(ctx, given)
        hooked = [component for component, _ in page if component.hooks.any]
        in_thread = [component for component in hooked if component.sync_hooks]

        def all_in_thread() -> list[Entry]:
            # Every hook of the page is sync: the listing's scope lives and ends on the
            # worker thread its hooks run on, so their services may be thread-bound.
            with self.scope(ctx, request) as scope:
                verdicts = iter(visible_all(in_thread, scope, request))
                return [
                    entry for component, entry in page if not component.hooks.any or next(verdicts)
                ]

        async def run_hooks() -> list[Entry]:
            if len(in_thread) == len(hooked):
                return await self.threads.run(all_in_thread)
            listed: list[Entry] = []
            async with self.scope(ctx, request) as scope:
                verdicts = iter(
                    await self.threads.run(visible_all, in_thread, scope, request)
                    if in_thread
                    else ()
                )
                for component, entry in page:
                    if not component.hooks.any:
                        shown = True
                    elif component.sync_hooks:
                        shown = next(verdicts)
                    else:
                        shown = all(await self.visible(component, scope, request))
                    if shown:
                        listed.append(entry)
            return listed

        def failed(incident: str) -> list[Entry]:
            raise IncidentError("Listing failed", incident)

        return await self._guarded("listing", str(getattr(ctx, "method", "")), run_hooks, failed)

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

    async def _guarded(
        self,
        what: str,
        name: str,
        call: Callable[[], Awaitable[T]],
        failure: Callable[[str], T],
        timeout: float | None = None,
    ) -> T:
        """Run ``call``; protocol errors pass, a ``Refusal`` becomes its safe answer, anything
        else is logged with an incident id; past ``timeout`` seconds it is cancelled, its
        scope closed, and answered as a failure."""
        try:
            if timeout is None:
                return await call()
            with anyio.move_on_after(timeout):
                return await call()
            return failure(self._timed_out(what, name, timeout))
        except MCPError:
            raise
        except Refusal as refusal:
            raise refused(what, name, refusal) from None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a safe answer
            return failure(self._incident(what, name, exc))
        except BaseException as exc:
            if cancelled_for_real(exc):
                raise
            return failure(self._incident(what, name, exc))

    def _incident(self, what: str, name: str, error: BaseException) -> str:
        """Log ``error`` with its traceback under its incident id, and return the id."""
        incident = incident_of(error)
        logger.error("%s %r failed (incident %s)", what, name, incident, exc_info=error)
        if self._otel is not None:
            telemetry.incident(incident)
        return incident

    def _timed_out(self, what: str, name: str, timeout: float) -> str:
        """Log that a call was cancelled at its timeout, and return the incident id."""
        incident = new_incident()
        logger.error("%s %r timed out after %g s (incident %s)", what, name, timeout, incident)
        if self._otel is not None:
            telemetry.incident(incident)
        return incident

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

    async def _input_phase(
        self,
        run: Mode,
        kind: str,
        component: CompiledComponent,
        ctx: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any,
        named: Mapping[str, Any] | None,
        retry: Retry | None,
        roots: Sequence[tuple[str, Any]] | None = None,
    ) -> tuple[Resolution, Any] | types.InputRequiredResult | Asked:
        """The input phase of a call whose component takes resolved values
        (``component.inputs``): its resolvers run and what they ask is asked
        (``dispatch.inputs.resolve_inputs``); once every answer is in, the component is
        built and each ``authorize`` that takes answers is asked with them (a refusal is
        ``forbidden``). ``(answers, instance)``, or this round's questions; ``roots``: only
        these resolved parameters (a task tool's ``authorize``, before its task starts)."""
        assert request is not None  # a component with resolvers needs the request
        threads = self.threads
        timeout = self.catalog.input_timeout
        found = await resolve_inputs(
            run, component, ctx, scope, request, payload, named, retry, threads, timeout, roots
        )
        if not isinstance(found, Resolution):
            return found
        instance = await run.aresolve(component.instance, scope)
        if component.hooks.answered and not await allowed_with_answers(
            run, component, instance, scope, request, found, threads
        ):
            raise forbidden(kind, component.name)
        return found, instance

    async def _rounds(
        self,
        ctx: Any,
        what: str,
        request: McpRequest | None,
        one: Callable[[McpRequest | None, Retry | None], Awaitable[Any]],
    ) -> Any:
        """A resource read or a prompt, round after round while it asks a 2025-11-25 client
        (each round in a scope of its own; the question goes out between them, here)."""
        outcome = await one(request, None)
        rounds = 1
        while isinstance(outcome, Asked):
            if rounds == MAX_INPUT_ROUNDS:
                raise RuntimeError(f"{what} asked for input {MAX_INPUT_ROUNDS} times")
            try:
                request, retry = await self.answered(ctx, outcome)
            except TimeoutError:
                seconds = self.catalog.input_timeout
                raise MCPError(
                    types.INTERNAL_ERROR,
                    f"The client did not answer the request for input within {seconds:g} s",
                ) from None
            outcome = await one(request, retry)
            rounds += 1
        return outcome

    async def answered(self, ctx: Any, asked: Asked) -> tuple[McpRequest, Retry]:
        """2025-11-25: ask the client what a round asked (``input.asking.answered``), each
        question within ``Server.input_timeout``."""
        return await answered(ctx, asked, self.catalog.input_timeout)
