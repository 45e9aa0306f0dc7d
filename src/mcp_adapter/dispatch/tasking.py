"""A ``tools/call`` as a task (docs/tasks.md): started at once on the caller's request,
its body run later by the task engine's worker in a fresh scope of its own, with a
frozen copy of the request that started it (the context values request-stage layers
gave included), through the same code as an inline call. Request-stage layers see the
task's handle as the call's answer; a handle they do not pass on withdraws its task."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Mapping
from typing import Any

from mcp import MCPError, types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from mcp_adapter.compiled.catalog import Catalog, CompiledTool
from mcp_adapter.declare.middleware import RequestCall
from mcp_adapter.declare.request import McpRequest, freeze
from mcp_adapter.dispatch import stage
from mcp_adapter.dispatch.core import DispatchCore, Given
from mcp_adapter.dispatch.inflight import Place
from mcp_adapter.dispatch.paging import paginate
from mcp_adapter.dispatch.results import error_result, execution_failed, invalid_arguments
from mcp_adapter.dispatch.snapshot import is_modern
from mcp_adapter.dispatch.stage import ToolAnswer
from mcp_adapter.dispatch.telemetry import Tracing
from mcp_adapter.errors import Refusal, ToolError, forbidden, refused
from mcp_adapter.input.asking import Asked
from mcp_adapter.input.resolution import FIRST, Resolution, Retry
from mcp_adapter.input.state import envelope, retried_answers, retried_progress
from mcp_adapter.tasks.engine import TaskEngine
from mcp_adapter.tasks.frozen import owner_of, plain, request_of, token_of
from mcp_adapter.tasks.status import StatusSession
from mcp_adapter.tasks.waiting import INPUT
from mcp_adapter.tasks.wire import CreateTaskResult, missing_extension, negotiated


class _Principal:
    """Where ``access_token`` finds the verified token of the request a task started with
    (an HTTP request's ASGI ``scope["user"]``); no headers, no body."""

    __slots__ = ("headers", "scope")

    def __init__(self, token: AccessToken) -> None:
        self.scope = {"user": AuthenticatedUser(token)}
        self.headers: Mapping[str, str] = {}


class TaskContext:
    """Stands for the SDK's request context in a task body: the protocol version of the
    request that started it and its caller; for a session, the task's status (progress
    and log messages become its ``statusMessage``; no question to the client) and no
    HTTP request."""

    __slots__ = ("meta", "method", "params", "protocol_version", "request", "request_id", "session")

    def __init__(self, protocol_version: str, token: AccessToken | None, session: Any) -> None:
        self.protocol_version = protocol_version
        self.request = None if token is None else _Principal(token)
        self.session = session
        self.meta = None
        self.params = None
        self.method = "tools/call"
        self.request_id = None


class TaskCalls(DispatchCore):
    """Starting a tool's task, and running its body when the worker takes it."""

    tasks: TaskEngine | None = None
    """The task engine when the catalog has task tools (set by serving)."""

    def _load(self, catalog: Catalog) -> None:
        """As the core loads a catalog; the 2025-11-25 listing leaves out the tools that
        only run as tasks, which that era cannot call (they are unknown there)."""
        super()._load(catalog)
        legacy = [t.legacy for t in catalog.tools.values() if t.task_support != "required"]
        if len(legacy) != len(catalog.tools):
            self._tool_pages[False] = paginate(legacy, catalog.page_size)

    def _call_tool(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
        tracing: Tracing | None,
        place: Place | None,
        retry: Retry | None = None,
    ) -> Awaitable[types.CallToolResult | types.InputRequiredResult | Asked]:
        raise NotImplementedError  # ToolCalls: one round of an inline call

    async def _as_task(
        self, tool: CompiledTool, ctx: Any, arguments: Mapping[str, Any], given: Given | None
    ) -> ToolAnswer | None:
        """The task's handle, when the client negotiated the extension (2026-07-28);
        ``None``: call inline (an optional tool, for a client without it). Visibility
        and arguments are checked here, before anything is enqueued; an ``authorize``
        that takes resolved values is asked here too, its questions answered inline
        (``input_required`` results) before the task starts."""
        tasks = self.tasks
        if tasks is None:
            return None
        modern = is_modern(ctx)
        if not modern and tool.task_support == "required":
            raise self.hidden("tool", tool.name)  # not listed in 2025-11-25 either
        request = self.request(ctx, given, arguments=arguments)
        if not (modern and negotiated(request.client_capabilities)):
            if tool.task_support == "required":
                raise missing_extension()
            return None
        if tool.hooks.any:
            async with self.scope(ctx, request) as scope:
                registered, authorized = await self.visible(tool, scope, request)
            if not registered:
                raise self.hidden("tool", tool.name)
            if not authorized:
                raise forbidden("tool", tool.name)
        payload, errors = tool.input.check_wire(arguments)
        if errors:
            return invalid_arguments(errors)
        frozen = plain(request)
        if tool.hooks.answered:
            first = await self._before_task(tool, ctx, request, payload)
            if isinstance(first, types.InputRequiredResult):
                return first
            frozen[INPUT] = {"state": first, "answers": {}}
        if tool.mints:  # what its hooks minted is known before the task is (or refused)
            try:
                await self.handles.store.settle(ctx)
            except ToolError as refusal:
                return error_result(refusal.message)
        return await tasks.start(tool.name, frozen, owner_of(request))

    async def _settled(self, starting: Awaitable[ToolAnswer | None], ctx: Any) -> ToolAnswer | None:
        """:meth:`_as_task` of a tool that may mint: what its hooks minted in this request
        and did not settle (it answered before starting a task, or failed) is dropped."""
        self.handles.store.begin(ctx)
        try:
            return await starting
        finally:
            await self.handles.store.settle(ctx, keep=False)

    async def _staged_task(
        self,
        ctx: Any,
        params: types.CallToolRequestParams,
        tool: CompiledTool,
        inner: stage.Inner[ToolAnswer],
    ) -> ToolAnswer:
        """A task tool's call through the request-stage layers, which see the task's handle
        as the call's answer (``AccessLog`` logs it, ``RateLimit`` counts it,
        ``ResponseLimit`` measures it). A task whose handle they did not pass on (a layer
        answered something else, raised, or the request was cancelled) is withdrawn:
        nobody could ever read it. ``inner``: the dispatcher's ``tools/call`` again, given
        what the layers provided."""
        arguments = params.arguments or {}
        call = RequestCall(params.name, arguments, component=tool.name)
        started: list[CreateTaskResult] = []

        async def recorded(given: Given) -> ToolAnswer:
            answer = await inner(given)
            if isinstance(answer, CreateTaskResult):
                started.append(answer)
            return answer

        answer: ToolAnswer | None = None
        try:
            answer = await self._request_stage(ctx, call, recorded, stage.TOOL, arguments=arguments)
            return answer
        finally:
            if self.tasks is not None:
                for handle in started:
                    if handle is not answer:
                        await self.tasks.withdraw(handle.task_id)

    async def _before_task(
        self, tool: CompiledTool, ctx: Any, request: McpRequest, payload: Any
    ) -> types.InputRequiredResult | str:
        """The input phase of a task tool's ``authorize`` hooks that take resolved values,
        inline: their questions (an ``input_required`` result, retried as any call), or,
        once answered and allowed, the state its task starts from (the answers recorded
        and pinned to their questions: the body's resolvers asking the same question
        get them without asking again)."""
        roots = [(name, found) for plan in tool.hooks.answered for name, found, _ in plan.resolved]
        named = tool.arguments(payload)
        async with self.scope(ctx, request) as scope:
            found = await self._input_phase(
                self._on_loop, "tool", tool, ctx, scope, request, payload, named, None, roots
            )
        if isinstance(found, types.InputRequiredResult):
            return found
        assert isinstance(found, tuple)  # 2026-07-28 never asks mid-call
        inputs: Resolution = found[0]
        return envelope(None, inputs.asker.progress())

    async def run_task(
        self, name: str, data: Mapping[str, Any], status: StatusSession
    ) -> dict[str, Any]:
        """A task's body: the tool called as inline, in a scope of its own; its outcome as
        ``{"result": ...}`` (a tool error included) or ``{"error": ...}`` (a protocol
        error). Cancellation passes through, after the scope has closed."""
        tool = self.catalog.tools.get(name)
        if tool is None:
            return {"error": {"code": types.INVALID_PARAMS, "message": f"Unknown tool: {name}"}}
        ctx = TaskContext(str(data["protocol_version"]), token_of(data), status)
        request = request_of(data, ctx)
        mints = tool.mints
        if mints:
            self.handles.store.begin(ctx)
        try:
            request, retry = resumed(request, data.get(INPUT))
            arguments = data["arguments"]  # plain, as they came
            outcome = await self._call_tool(tool, ctx, arguments, request, None, None, retry)
            if mints:  # the handles the body minted are known before its outcome is
                await self.handles.store.settle(ctx)
        except MCPError as error:
            return {"error": {"code": error.code, "message": error.message}}
        except ToolError as refusal:
            outcome = error_result(refusal.message)
        except Refusal as refusal:
            denied = refused("tool", tool.name, refusal)
            return {"error": {"code": denied.code, "message": denied.message}}
        except Exception as exc:  # noqa: BLE001 - every failure becomes a safe result
            outcome = execution_failed(self._incident("tool", tool.name, exc))
        finally:
            if mints:  # a body that failed drops the handles it minted
                await self.handles.store.settle(ctx, keep=False)
        if isinstance(outcome, types.InputRequiredResult):  # the task waits (tasks.waiting)
            requests = {
                key: question.model_dump(by_alias=True, mode="json", exclude_none=True)
                for key, question in (outcome.input_requests or {}).items()
            }
            return {INPUT: {"requests": requests, "state": outcome.request_state}}
        assert isinstance(outcome, types.CallToolResult)  # 2026-07-28 never asks mid-call
        dumped = outcome.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped.pop("resultType", None)
        return {"result": dumped}


def resumed(request: McpRequest, found: Any) -> tuple[McpRequest, Retry]:
    """A round of a task that asked for input: the request with the answers a handler
    reads (``McpResponse.elicit``), and the resolvers' retry, both from the state of the
    round that asked (kept server-side, never shown to the client) and the answers
    ``tasks/update`` gave. Answers are checked exactly as a retried call's: only for the
    questions that round asked, valid for them, pinned to each question's digest."""
    if not isinstance(found, Mapping):
        return request, FIRST
    params = {"requestState": found.get("state"), "inputResponses": found.get("answers") or {}}
    retry = retried_progress(params)
    answers, handler_state = retried_answers(params)
    if answers or handler_state is not None:
        request = dataclasses.replace(
            request, input_responses=freeze(answers), request_state=handler_state
        )
    return request, retry
