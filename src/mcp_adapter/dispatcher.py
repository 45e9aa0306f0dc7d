"""Serving a catalog: one scope per request, hooks, validation, invocation, results."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar, cast

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp import MCPError, types
from mcp.server.auth.provider import AccessToken
from pydantic import ValidationError

from container import Container, Scope, SessionScope
from mcp_adapter.call_modes import OnLoop, OnThread, drive
from mcp_adapter.catalog import (
    Catalog,
    CompiledComponent,
    CompiledPrompt,
    CompiledResource,
    CompiledTool,
)
from mcp_adapter.context import is_modern, snapshot, supports_elicitation
from mcp_adapter.errors import (
    Forbidden,
    NotFound,
    Refusal,
    ToolError,
    forbidden,
    logger,
    new_incident,
    refused,
    resource_not_found,
    unknown,
)
from mcp_adapter.input_flow import (
    MAX_INPUT_ROUNDS,
    asking,
    elicit,
    input_required,
    missing_elicitation,
    no_back_channel,
)
from mcp_adapter.interrupts import cancelled_for_real
from mcp_adapter.middleware import Call, through
from mcp_adapter.paging import next_cursor, page_index, paginate, visible_all
from mcp_adapter.request import McpRequest, Transport
from mcp_adapter.response import McpResponse
from mcp_adapter.results import (
    error_result,
    execution_failed,
    input_timed_out,
    invalid_arguments,
    prompt_messages,
    resource_contents,
    timed_out,
    tool_result,
)
from mcp_adapter.scope_context import RequestValues
from mcp_adapter.sdk_compat import connection_of
from schemas import Contract, render, summarize

T = TypeVar("T")
Entry = TypeVar("Entry")

MAX_COMPLETIONS = 100
_SESSION_KEY = "mcp_adapter.session"
"""Where a connection's ``state`` keeps its session scope."""


class Dispatcher:
    """Answers protocol requests from a compiled catalog and a container.

    The SDK hands it each request's context and params; it owns argument
    validation, injection, result building and error mapping.
    """

    def __init__(
        self,
        catalog: Catalog,
        container: Container,
        *,
        transport: Transport = "memory",
        caller: AccessToken | None = None,
    ) -> None:
        self.catalog = catalog
        self.container = container
        self.transport: Transport = transport
        self.caller = caller
        """Off HTTP, the verified token every request is made with (a test's signed-in caller)."""
        self._on_loop = OnLoop(self)
        self._on_thread = OnThread(self)
        self._load(catalog)

    def _load(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._generation = self.container.generation
        self._sessions = self.container.has_sessions
        size = catalog.page_size
        tools = list(catalog.tools.values())
        self._tool_pages = {
            True: paginate([t.modern for t in tools], size),
            False: paginate([t.legacy for t in tools], size),
        }
        self._tool_hooks = any(t.hooks.any for t in tools)
        self._resource_pages = paginate(list(catalog.resources.values()), size)
        self._template_pages = paginate(list(catalog.templates), size)
        self._prompt_pages = paginate(list(catalog.prompts.values()), size)

    def request(self, ctx: Any, **fields: Any) -> McpRequest:
        return snapshot(
            ctx,
            server_id=self.catalog.name,
            default_transport=self.transport,
            caller=self.caller,
            **fields,
        )

    def _follow(self) -> None:
        """Recompile the catalog when the container's bindings changed since it was compiled
        (``container.override(...)`` entered or ended): one comparison per request."""
        if self._generation != self.container.generation:
            rebuild = self.catalog.rebuild
            self._load(rebuild(self.container) if rebuild is not None else self.catalog)

    def scope(self, ctx: Any, request: McpRequest | None) -> Scope:
        """The scope of one call: given the request's context values when it has one, and
        opened in the MCP session's scope when the container has session-scoped bindings."""
        values = None if request is None else RequestValues(request, self.caller)
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
        self, component: CompiledComponent, scope: Any, request: McpRequest | None
    ) -> tuple[bool, bool]:
        """``(registered, authorized)`` for this request; hooks run with injection."""
        hooks = component.hooks
        if not hooks.any:
            return True, True
        instance = await component.instance(scope)
        if hooks.should_register is not None and not await hooks.should_register.invoke(
            instance, scope, request
        ):
            return False, False
        if hooks.authorize is not None and not await hooks.authorize.invoke(
            instance, scope, request
        ):
            return True, False
        return True, True

    async def _gate(
        self,
        run: OnLoop | OnThread,
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
        self, ctx: Any, page: Sequence[tuple[CompiledComponent, Entry]]
    ) -> list[Entry]:
        if not any(component.hooks.any for component, _ in page):
            return [entry for _, entry in page]
        request = self.request(ctx)
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
                return await anyio.to_thread.run_sync(all_in_thread)
            listed: list[Entry] = []
            async with self.scope(ctx, request) as scope:
                verdicts = iter(
                    await anyio.to_thread.run_sync(visible_all, in_thread, scope, request)
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
            raise MCPError(types.INTERNAL_ERROR, f"Listing failed (incident {incident})")

        return await self._guarded("listing", str(getattr(ctx, "method", "")), run_hooks, failed)

    def _mode(
        self, component: CompiledComponent, body: Callable[[OnLoop | OnThread], Awaitable[T]]
    ) -> Callable[[], Awaitable[T]]:
        """``body`` as a call: on one worker thread for a thread-bound component, else here."""
        if component.thread_bound:
            call = functools.partial(body, self._on_thread)
            return functools.partial(anyio.to_thread.run_sync, drive, call)
        return functools.partial(body, self._on_loop)

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

    @staticmethod
    def _incident(what: str, name: str, error: BaseException) -> str:
        """Log ``error`` with its traceback under a new incident id, and return the id."""
        incident = new_incident()
        logger.error("%s %r failed (incident %s)", what, name, incident, exc_info=error)
        return incident

    @staticmethod
    def _timed_out(what: str, name: str, timeout: float) -> str:
        """Log that a call was cancelled at its timeout, and return the incident id."""
        incident = new_incident()
        logger.error("%s %r timed out after %g s (incident %s)", what, name, timeout, incident)
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
    ) -> T:
        """A listing or completion through ``Server.middleware``, in a scope of its own."""
        request = self.request(ctx)
        async with self.scope(ctx, request) as scope:
            return cast(T, await through(self.catalog.middleware, call, body, scope, request))

    def _listed(
        self, ctx: Any, method: str, cursor: str | None, body: Callable[[str | None], Awaitable[T]]
    ) -> Awaitable[T]:
        if not self.catalog.middleware:
            return body(cursor)
        arguments = MappingProxyType({} if cursor is None else {"cursor": cursor})

        async def listed(call: Call) -> T:
            return await body(call.arguments.get("cursor"))

        async def around() -> T:
            return await self._around(ctx, Call("", arguments, method), listed)

        def failed(incident: str) -> T:
            raise MCPError(types.INTERNAL_ERROR, f"Listing failed (incident {incident})")

        return self._guarded("listing", method, around, failed)

    # -- tools ------------------------------------------------------------------

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._follow()
        cursor = params.cursor if params else None
        return await self._listed(ctx, "tools/list", cursor, functools.partial(self._tools, ctx))

    async def _tools(self, ctx: Any, cursor: str | None) -> types.ListToolsResult:
        pages = self._tool_pages[is_modern(ctx)]
        index = page_index(cursor, len(pages))
        cursor = next_cursor(index, len(pages))
        if not self._tool_hooks:
            return types.ListToolsResult(tools=list(pages[index]), next_cursor=cursor)
        paired = [(self.catalog.tools[entry.name], entry) for entry in pages[index]]
        return types.ListToolsResult(tools=await self._filter(ctx, paired), next_cursor=cursor)

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if self._generation != self.container.generation:
            self._follow()
        tool = self.catalog.tools.get(params.name)
        if tool is None:
            raise unknown("tool", params.name)
        arguments: Mapping[str, Any] = params.arguments or {}
        request = self.request(ctx, arguments=arguments) if tool.needs_request else None
        try:
            if tool.timeout is None:
                return await self._call_tool(tool, ctx, arguments, request)
            with anyio.move_on_after(tool.timeout):
                return await self._call_tool(tool, ctx, arguments, request)
            return timed_out(tool.timeout, self._timed_out("tool", tool.name, tool.timeout))
        except MCPError:
            raise
        except ToolError as refusal:
            return error_result(refusal.message)
        except Refusal as refusal:
            raise refused("tool", tool.name, refusal) from None
        except Exception as exc:  # noqa: BLE001 - every failure becomes a safe result
            return execution_failed(self._incident("tool", tool.name, exc))
        except BaseException as exc:
            if cancelled_for_real(exc):
                raise
            return execution_failed(self._incident("tool", tool.name, exc))

    def _call_tool(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
    ) -> Awaitable[types.CallToolResult | types.InputRequiredResult]:
        if tool.thread_bound:
            call = functools.partial(self._tool, self._on_thread, tool, ctx, arguments, request)
            return anyio.to_thread.run_sync(drive, call)
        return self._tool(self._on_loop, tool, ctx, arguments, request)

    async def _tool(
        self,
        run: OnLoop | OnThread,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        async with run.scope(ctx, request) as scope:
            if tool.hooks.any:
                await self._gate(run, "tool", tool, scope, request)
            payload, errors = tool.input.check_wire(arguments)
            if errors:
                return invalid_arguments(errors)
            instance = await tool.build(scope) if tool.build_is_async else tool.build(scope)
            if tool.middleware:
                outcome = await self._tool_chain(run, tool, instance, scope, request, payload)
            else:
                spread = tool.arguments(payload)
                outcome = await run.call(tool.handler, instance, scope, request, payload, spread)
            if tool.convert is not None:
                outcome = tool.convert(outcome)
            for _ in range(MAX_INPUT_ROUNDS):
                question = asking(outcome)
                if question is None:
                    break
                current = request or self.request(ctx)
                modern = is_modern(ctx)
                if not modern and not ctx.session.can_send_request:
                    raise no_back_channel()
                if not supports_elicitation(current):
                    raise missing_elicitation()
                if modern:
                    return input_required(question)
                try:
                    request = await run.elicit(ctx, question, current)
                except TimeoutError:
                    return input_timed_out(self.catalog.input_timeout)
                outcome = await self._handle(run, tool, instance, scope, request, payload)
            else:
                raise RuntimeError(f"{tool.name} asked for input {MAX_INPUT_ROUNDS} times")
            return tool_result(
                outcome, owner=tool.cls.__qualname__, output=tool.output, modern=is_modern(ctx)
            )

    async def _handle(
        self,
        run: OnLoop | OnThread,
        tool: CompiledTool,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any,
    ) -> Any:
        """The handler's value, through the tool's middleware when it has some, read by its
        ``convert`` (a function tool's plain value becomes a result)."""
        if tool.middleware:
            outcome = await self._tool_chain(run, tool, instance, scope, request, payload)
        else:
            spread = tool.arguments(payload)
            outcome = await run.call(tool.handler, instance, scope, request, payload, spread)
        return outcome if tool.convert is None else tool.convert(outcome)

    async def _tool_chain(
        self,
        run: OnLoop | OnThread,
        tool: CompiledTool,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any,
    ) -> Any:
        given = MappingProxyType(tool.fields(payload))

        async def handler(call: Call) -> Any:
            # changed arguments are validated into the input contract again
            value = payload if call.arguments is given else tool.revalidate(call.arguments)
            spread = tool.arguments(value)
            return await run.call(tool.handler, instance, scope, request, value, spread)

        return await through(tool.middleware, Call(tool.name, given), handler, scope, request)

    async def _named_chain(
        self,
        run: OnLoop | OnThread,
        component: CompiledResource | CompiledPrompt,
        call: Call,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
    ) -> Any:
        """A resource's or prompt's handler through its middleware; changed arguments are
        converted to their declared types again (a value they refuse is a failure)."""
        given = call.arguments

        async def handler(changed: Call) -> Any:
            values = dict(given)
            if changed.arguments is not given:
                values = dict(changed.arguments)
                for name, contract in component.converters.items():
                    if name in values:
                        values[name] = contract.validate(values[name])
            return await run.call(component.handler, instance, scope, request, None, values)

        return await through(component.middleware, call, handler, scope, request)

    async def elicit(self, ctx: Any, question: McpResponse, request: McpRequest) -> McpRequest:
        """2025-11-25: ask the client (``input_flow.elicit``) within ``Server.input_timeout``."""
        return await elicit(ctx, question, request, self.catalog.input_timeout)

    # -- resources ------------------------------------------------------------------

    async def list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._follow()
        cursor = params.cursor if params else None
        return await self._listed(
            ctx, "resources/list", cursor, functools.partial(self._resources, ctx)
        )

    async def _resources(self, ctx: Any, cursor: str | None) -> types.ListResourcesResult:
        pages = self._resource_pages
        index = page_index(cursor, len(pages))
        listed = await self._filter(ctx, [(r, r.entry) for r in pages[index]])
        return types.ListResourcesResult(
            resources=[e for e in listed if isinstance(e, types.Resource)],
            next_cursor=next_cursor(index, len(pages)),
        )

    async def list_resource_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._follow()
        cursor = params.cursor if params else None
        return await self._listed(
            ctx, "resources/templates/list", cursor, functools.partial(self._templates, ctx)
        )

    async def _templates(self, ctx: Any, cursor: str | None) -> types.ListResourceTemplatesResult:
        pages = self._template_pages
        index = page_index(cursor, len(pages))
        listed = await self._filter(ctx, [(r, r.entry) for r in pages[index]])
        return types.ListResourceTemplatesResult(
            resource_templates=[e for e in listed if isinstance(e, types.ResourceTemplate)],
            next_cursor=next_cursor(index, len(pages)),
        )

    def find_resource(self, uri: str) -> tuple[CompiledResource, dict[str, Any]] | None:
        """The resource that serves ``uri``: a static one first, else the matching template."""
        static = self.catalog.resources.get(uri)
        if static is not None:
            return static, {}
        return self.find_template(uri)

    def find_template(self, uri: str) -> tuple[CompiledResource, dict[str, Any]] | None:
        for template in self.catalog.templates:
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    async def read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        self._follow()
        uri = str(params.uri)
        static = self.catalog.resources.get(uri)
        if static is not None:
            result = await self._read(ctx, uri, static, {})
            if result is not None:
                return result
            # Hidden is absent: answer what the server would without the static resource.
        found = self.find_template(uri)
        result = await self._read(ctx, uri, *found) if found is not None else None
        if result is None:
            raise resource_not_found(uri, modern=is_modern(ctx))
        return result

    async def _read(
        self, ctx: Any, uri: str, resource: CompiledResource, variables: dict[str, Any]
    ) -> types.ReadResourceResult | None:
        """Read ``resource`` in a scope of its own; ``None`` when it is hidden from this caller."""
        request = (
            self.request(ctx, uri=uri, uri_variables=variables) if resource.needs_request else None
        )

        async def read(run: OnLoop | OnThread) -> types.ReadResourceResult | None:
            try:
                async with run.scope(ctx, request) as scope:
                    if resource.hooks.any:
                        registered, authorized = await run.visible(resource, scope, request)
                        if not registered:
                            return None
                        if not authorized:
                            raise forbidden("resource", resource.name)
                    arguments = self._convert(resource.converters, variables, "URI variable")
                    instance = await resource.instance(scope)
                    if resource.middleware:
                        call = Call(uri, MappingProxyType(arguments), "resources/read")
                        outcome = await self._named_chain(
                            run, resource, call, instance, scope, request
                        )
                    else:
                        outcome = await run.call(
                            resource.handler, instance, scope, request, None, arguments
                        )
                    return resource_contents(
                        outcome,
                        owner=resource.cls.__qualname__,
                        uri=uri,
                        mime_type=resource.mime_type,
                    )
            except NotFound:
                return None  # absent, exactly as when hidden
            except Forbidden:
                raise forbidden("resource", resource.name) from None

        def failed(incident: str) -> types.ReadResourceResult | None:
            raise MCPError(types.INTERNAL_ERROR, f"Resource read failed (incident {incident})")

        return await self._guarded(
            "resource", uri, self._mode(resource, read), failed, resource.timeout
        )

    # -- prompts ----------------------------------------------------------------------

    async def list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self._follow()
        cursor = params.cursor if params else None
        return await self._listed(
            ctx, "prompts/list", cursor, functools.partial(self._prompts, ctx)
        )

    async def _prompts(self, ctx: Any, cursor: str | None) -> types.ListPromptsResult:
        pages = self._prompt_pages
        index = page_index(cursor, len(pages))
        paired = [(p, p.entry) for p in pages[index]]
        return types.ListPromptsResult(
            prompts=await self._filter(ctx, paired), next_cursor=next_cursor(index, len(pages))
        )

    async def get_prompt(
        self, ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        self._follow()
        prompt = self.catalog.prompts.get(params.name)
        if prompt is None:
            raise unknown("prompt", params.name)
        given = dict(params.arguments or {})
        request = self.request(ctx, arguments=given) if prompt.needs_request else None

        async def get(run: OnLoop | OnThread) -> types.GetPromptResult:
            async with run.scope(ctx, request) as scope:
                if prompt.hooks.any:
                    await self._gate(run, "prompt", prompt, scope, request)
                _check_prompt_arguments(prompt, given)
                arguments = self._convert(prompt.converters, given, "prompt argument")
                instance = await prompt.instance(scope)
                if prompt.middleware:
                    call = Call(prompt.name, MappingProxyType(arguments), "prompts/get")
                    outcome = await self._named_chain(run, prompt, call, instance, scope, request)
                else:
                    outcome = await run.call(
                        prompt.handler, instance, scope, request, None, arguments
                    )
                return prompt_messages(
                    outcome, owner=prompt.cls.__qualname__, description=prompt.entry.description
                )

        def failed(incident: str) -> types.GetPromptResult:
            raise MCPError(types.INTERNAL_ERROR, f"Prompt failed (incident {incident})")

        return await self._guarded(
            "prompt", prompt.name, self._mode(prompt, get), failed, prompt.timeout
        )

    # -- completion ---------------------------------------------------------------------

    def _completion_target(
        self, ref: types.PromptReference | types.ResourceTemplateReference
    ) -> CompiledPrompt | CompiledResource | None:
        if isinstance(ref, types.PromptReference):
            return self.catalog.prompts.get(ref.name)
        for template in self.catalog.templates:
            if template.uri_template_text == ref.uri:
                return template
        return None

    async def complete(self, ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        self._follow()
        target = self._completion_target(params.ref)
        empty = types.CompleteResult(completion=types.Completion(values=[]))
        if target is None or target.completion is None:
            return empty
        plan = target.completion
        layers = self.catalog.middleware
        needed = plan.needs_request or target.needs_request or bool(layers)
        request = self.request(ctx) if needed else None
        context = dict(params.context.arguments or {}) if params.context else {}
        given = MappingProxyType(
            {"argument": params.argument.name, "value": params.argument.value, "context": context}
        )

        async def run() -> types.CompleteResult:
            async with self.scope(ctx, request) as scope:
                if not all(await self.visible(target, scope, request)):
                    return empty
                instance = await target.instance(scope)

                async def values_of(call: Call) -> types.CompleteResult:
                    picked = {name: call.arguments[name] for name in plan.arguments}
                    found = await plan.invoke(instance, scope, request, None, picked)
                    values = [str(v) for v in found]
                    return types.CompleteResult(
                        completion=types.Completion(
                            values=values[:MAX_COMPLETIONS],
                            total=len(values),
                            has_more=len(values) > MAX_COMPLETIONS,
                        )
                    )

                call = Call(target.name, given, "completion/complete")
                if not layers:
                    return await values_of(call)
                completed = await through(layers, call, values_of, scope, request)
                return cast(types.CompleteResult, completed)

        def failed(incident: str) -> types.CompleteResult:
            raise MCPError(types.INTERNAL_ERROR, f"Completion failed (incident {incident})")

        return await self._guarded("completion", target.name, run, failed, target.timeout)


def _check_prompt_arguments(prompt: CompiledPrompt, given: Mapping[str, Any]) -> None:
    declared = {argument.name for argument in prompt.arguments}
    extra = sorted(set(given) - declared)
    if extra:
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt argument(s): {', '.join(extra)}")
    missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
    if missing:
        raise MCPError(
            types.INVALID_PARAMS, f"Missing required prompt argument(s): {', '.join(missing)}"
        )
