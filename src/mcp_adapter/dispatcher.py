"""Serving a catalog: one scope per request, hooks, validation, invocation, results."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp import MCPError, types
from mcp.server.auth.provider import AccessToken
from pydantic import ValidationError

from container import Container, Scope, SessionScope
from mcp_adapter.call_modes import OnLoop, OnThread, drive, verdict
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
from mcp_adapter.input_requests import accepted, envelope
from mcp_adapter.interrupts import cancelled_for_real
from mcp_adapter.request import McpRequest, Transport, freeze
from mcp_adapter.response import McpResponse
from mcp_adapter.results import (
    error_result,
    execution_failed,
    input_timed_out,
    invalid_arguments,
    prompt_messages,
    resource_contents,
    tool_result,
)
from mcp_adapter.scope_context import RequestValues
from mcp_adapter.sdk_compat import connection_of
from schemas import Contract, render, summarize

T = TypeVar("T")
Entry = TypeVar("Entry")

MAX_INPUT_ROUNDS = 8
"""Elicitation rounds one 2025-11-25 call may go through before it is refused."""
MAX_COMPLETIONS = 100
_SESSION_KEY = "mcp_adapter.session"
"""Where a connection's ``state`` keeps its session scope."""
_CURSOR = re.compile(r"[0-9]{1,9}")


def _paginate(entries: Sequence[Entry], size: int) -> tuple[tuple[Entry, ...], ...]:
    return tuple(tuple(entries[i : i + size]) for i in range(0, len(entries), size)) or ((),)


def _page_index(cursor: str | None, count: int) -> int:
    if cursor is None:
        return 0
    if _CURSOR.fullmatch(cursor) is None or int(cursor) >= count:
        raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
    return int(cursor)


def _next_cursor(index: int, count: int) -> str | None:
    return str(index + 1) if index + 1 < count else None


def _needs_input(outcome: Any) -> McpResponse | None:
    if type(outcome) is McpResponse:
        return outcome if outcome.input_requests else None
    responses = outcome
    if isinstance(responses, list | tuple):
        for response in responses:
            if isinstance(response, McpResponse) and response.input_requests:
                return response
    return None


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
            True: _paginate([t.modern for t in tools], size),
            False: _paginate([t.legacy for t in tools], size),
        }
        self._tool_hooks = any(t.hooks.any for t in tools)
        self._resource_pages = _paginate(list(catalog.resources.values()), size)
        self._template_pages = _paginate(list(catalog.templates), size)
        self._prompt_pages = _paginate(list(catalog.prompts.values()), size)

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
                verdicts = iter(_visible_all(in_thread, scope, request))
                return [
                    entry for component, entry in page if not component.hooks.any or next(verdicts)
                ]

        async def run_hooks() -> list[Entry]:
            if len(in_thread) == len(hooked):
                return await anyio.to_thread.run_sync(all_in_thread)
            listed: list[Entry] = []
            async with self.scope(ctx, request) as scope:
                verdicts = iter(
                    await anyio.to_thread.run_sync(_visible_all, in_thread, scope, request)
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
        self, what: str, name: str, call: Callable[[], Awaitable[T]], failure: Callable[[str], T]
    ) -> T:
        """Run ``call``; protocol errors pass, a ``Refusal`` becomes its safe answer, anything
        else is logged with an incident id."""
        try:
            return await call()
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

    # -- tools ------------------------------------------------------------------

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._follow()
        pages = self._tool_pages[is_modern(ctx)]
        index = _page_index(params.cursor if params else None, len(pages))
        cursor = _next_cursor(index, len(pages))
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
            return await self._call_tool(tool, ctx, arguments, request)
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
            spread = tool.arguments(payload)
            outcome = await run.call(tool.handler, instance, scope, request, payload, spread)
            for _ in range(MAX_INPUT_ROUNDS):
                asking = _needs_input(outcome)
                if asking is None:
                    break
                current = request or self.request(ctx)
                modern = is_modern(ctx)
                if not modern and not ctx.session.can_send_request:
                    raise _no_back_channel()
                if not supports_elicitation(current):
                    raise _missing_elicitation()
                if modern:
                    return _input_required(asking)
                try:
                    request = await run.elicit(ctx, asking, current)
                except TimeoutError:
                    return input_timed_out(self.catalog.input_timeout)
                outcome = await run.call(tool.handler, instance, scope, request, payload, spread)
            else:
                raise RuntimeError(f"{tool.name} asked for input {MAX_INPUT_ROUNDS} times")
            return tool_result(
                outcome, owner=tool.cls.__qualname__, output=tool.output, modern=is_modern(ctx)
            )

    async def elicit(self, ctx: Any, asking: McpResponse, request: McpRequest) -> McpRequest:
        """2025-11-25: ask through the SDK's elicitation request, answer as a retry would.

        Each answer is checked against the schema asked for (an invalid one is
        dropped, so the handler asks again); a client that does not answer
        within the catalog's ``input_timeout`` ends the call.
        """
        answers: dict[str, Any] = {}
        for key, form in (asking.input_requests or {}).items():
            with anyio.fail_after(self.catalog.input_timeout):
                result = await ctx.session.elicit_form(
                    form.message, form.requested_schema, related_request_id=ctx.request_id
                )
            answer = accepted(
                result.model_dump(by_alias=True, exclude_none=True, mode="json"),
                form.requested_schema,
            )
            if answer is not None:
                answers[key] = answer
        return dataclasses.replace(
            request, input_responses=freeze(answers), request_state=asking.request_state
        )

    # -- resources ------------------------------------------------------------------

    async def list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self._follow()
        pages = self._resource_pages
        index = _page_index(params.cursor if params else None, len(pages))
        paired = [(r, r.entry) for r in pages[index]]
        listed = await self._filter(ctx, paired)
        return types.ListResourcesResult(
            resources=[e for e in listed if isinstance(e, types.Resource)],
            next_cursor=_next_cursor(index, len(pages)),
        )

    async def list_resource_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._follow()
        pages = self._template_pages
        index = _page_index(params.cursor if params else None, len(pages))
        paired = [(r, r.entry) for r in pages[index]]
        listed = await self._filter(ctx, paired)
        return types.ListResourceTemplatesResult(
            resource_templates=[e for e in listed if isinstance(e, types.ResourceTemplate)],
            next_cursor=_next_cursor(index, len(pages)),
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

        return await self._guarded("resource", uri, self._mode(resource, read), failed)

    # -- prompts ----------------------------------------------------------------------

    async def list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self._follow()
        pages = self._prompt_pages
        index = _page_index(params.cursor if params else None, len(pages))
        paired = [(p, p.entry) for p in pages[index]]
        return types.ListPromptsResult(
            prompts=await self._filter(ctx, paired), next_cursor=_next_cursor(index, len(pages))
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
                outcome = await run.call(prompt.handler, instance, scope, request, None, arguments)
                return prompt_messages(
                    outcome, owner=prompt.cls.__qualname__, description=prompt.entry.description
                )

        def failed(incident: str) -> types.GetPromptResult:
            raise MCPError(types.INTERNAL_ERROR, f"Prompt failed (incident {incident})")

        return await self._guarded("prompt", prompt.name, self._mode(prompt, get), failed)

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
        request = self.request(ctx) if plan.needs_request or target.needs_request else None
        context = dict(params.context.arguments or {}) if params.context else {}
        arguments = {
            "argument": params.argument.name,
            "value": params.argument.value,
            "context": context,
        }

        async def run() -> types.CompleteResult:
            async with self.scope(ctx, request) as scope:
                if not all(await self.visible(target, scope, request)):
                    return empty
                instance = await target.instance(scope)
                picked = {name: arguments[name] for name in plan.arguments}
                values = [str(v) for v in await plan.invoke(instance, scope, request, None, picked)]
            return types.CompleteResult(
                completion=types.Completion(
                    values=values[:MAX_COMPLETIONS],
                    total=len(values),
                    has_more=len(values) > MAX_COMPLETIONS,
                )
            )

        def failed(incident: str) -> types.CompleteResult:
            raise MCPError(types.INTERNAL_ERROR, f"Completion failed (incident {incident})")

        return await self._guarded("completion", target.name, run, failed)


def _visible_all(
    components: Sequence[CompiledComponent], scope: Any, request: McpRequest | None
) -> list[bool]:
    """Whether each component is listed: its ``sync_hooks`` run here, in order.

    Runs in one worker thread for a whole page (``Dispatcher._filter``): each
    component is built, and its hooks get their services, exactly as
    ``Dispatcher.visible`` does on the loop; the first hook that raises ends
    the batch. A cancelled listing stops between components, as it would
    between thread hops.
    """
    verdicts: list[bool] = []
    for component in components:
        anyio.from_thread.check_cancelled()
        verdicts.append(all(verdict(component, scope, request)))
    return verdicts


def _missing_elicitation() -> MCPError:
    data = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities(elicitation=types.ElicitationCapability())
    )
    return MCPError(
        types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        "This tool needs input and the client did not declare the elicitation capability",
        data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def _no_back_channel() -> MCPError:
    return MCPError(
        types.INVALID_REQUEST,
        "This tool needs input, and on 2025-11-25 this transport cannot send the server's "
        "elicitation request (stateless or JSON-response HTTP); serve it statefully with SSE "
        "responses, or call it with 2026-07-28",
    )


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


def _input_required(asking: McpResponse) -> types.InputRequiredResult:
    requests: dict[str, types.InputRequest] = {
        key: types.ElicitRequest(method="elicitation/create", params=form)
        for key, form in (asking.input_requests or {}).items()
    }
    return types.InputRequiredResult(input_requests=requests, request_state=envelope(asking))
