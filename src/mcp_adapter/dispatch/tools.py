"""``tools/list`` and ``tools/call``: validation, the middleware stage, the handler, input
requests, the result."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Mapping
from types import MappingProxyType
from typing import Any

import anyio
from mcp import MCPError, types

from container import Scope
from mcp_adapter.compiled.catalog import (
    CompiledTool,
)
from mcp_adapter.declare.middleware import Call, RequestCall
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch import handles, stage, telemetry
from mcp_adapter.dispatch.cache_hints import hinted
from mcp_adapter.dispatch.chain import through
from mcp_adapter.dispatch.core import Given, Mode
from mcp_adapter.dispatch.inflight import Place
from mcp_adapter.dispatch.inputs import handler_asked, injecting
from mcp_adapter.dispatch.modes import drive
from mcp_adapter.dispatch.paging import next_cursor, page_index
from mcp_adapter.dispatch.results import (
    error_result,
    execution_failed,
    input_timed_out,
    invalid_arguments,
    timed_out,
)
from mcp_adapter.dispatch.snapshot import is_modern
from mcp_adapter.dispatch.stage import ToolAnswer
from mcp_adapter.dispatch.tasking import TaskCalls
from mcp_adapter.dispatch.telemetry import Tracing
from mcp_adapter.errors import (
    Refusal,
    ToolError,
    refused,
    unknown,
)
from mcp_adapter.input.asking import Asked, asking
from mcp_adapter.input.resolution import MAX_INPUT_ROUNDS, Resolution, Retry
from mcp_adapter.interrupts import cancelled_for_real


class ToolCalls(TaskCalls):
    """Serving tools."""

    # -- tools ------------------------------------------------------------------

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None, given: Given | None = None
    ) -> types.ListToolsResult:
        return await self._listing(ctx, "tools/list", params, given, self.list_tools, self._tools)

    async def _tools(
        self, ctx: Any, given: Given | None, cursor: str | None
    ) -> types.ListToolsResult:
        pages = self._tool_pages[is_modern(ctx)]
        index = page_index(cursor, len(pages))
        cursor = next_cursor(index, len(pages))
        hint = self._tool_hints[index]
        if not self._tool_hooks:
            return hinted(types.ListToolsResult(tools=list(pages[index]), next_cursor=cursor), hint)
        paired = [(self.catalog.tools[entry.name], entry) for entry in pages[index]]
        tools = await self._filter(ctx, paired, given)
        return hinted(types.ListToolsResult(tools=tools, next_cursor=cursor), hint)

    async def call_tool(
        self,
        ctx: Any,
        params: types.CallToolRequestParams,
        tracing: Tracing | None = None,
        observed: bool = False,
        given: Given | None = None,
    ) -> ToolAnswer:
        otel = self._otel
        if otel is not None and not observed and (otel.on or (next(otel.due) and otel.refresh())):
            known = params.name in self.catalog.tools
            return await telemetry.observed(
                telemetry.TOOL,
                params.name,
                ctx,
                self.call_tool,
                params,
                known=known,
                details=self._details,
            )
        if self._generation != self.container.generation:
            self._follow()
        tool = self.catalog.tools.get(params.name)
        if self._staged and given is None:
            if tool is not None and tool.task_support != "forbidden":
                inner = functools.partial(self.call_tool, ctx, params, tracing, True)
                return await self._staged_task(ctx, params, tool, inner)
            return await self._request_stage(
                ctx,
                RequestCall(
                    params.name, params.arguments or {}, component=tool.name if tool else None
                ),
                functools.partial(self.call_tool, ctx, params, tracing, True),
                stage.TOOL,
                arguments=params.arguments or {},
            )
        if tool is None:
            raise unknown("tool", params.name)
        arguments: Mapping[str, Any] = params.arguments or {}
        if tool.task_support != "forbidden":  # the tasks extension (dispatch.tasking)
            starting = self._as_task(tool, ctx, arguments, given)
            started = await (self._settled(starting, ctx) if tool.mints else starting)
            if started is not None:
                return started
        request = self.request(ctx, given, arguments=arguments) if tool.needs_request else None
        place = None if self.calls is None else self.calls.admit(ctx, self.caller)
        held = None
        mints = tool.mints
        if mints:  # the handles it mints are its own until it settles them
            self.handles.store.begin(ctx)
        try:
            if tool.handle is not None:  # its calls run in the session of the handle they carry
                store = self.handles.store
                held = await handles.take(store, tool.handle, ctx, self.caller, arguments)
            answer: ToolAnswer | None = None
            if tool.timeout is None:
                answer = await self._answer(tool, ctx, arguments, request, tracing, place, held)
            else:
                with anyio.move_on_after(tool.timeout):
                    answer = await self._answer(tool, ctx, arguments, request, tracing, place, held)
                if answer is None:
                    late = self._timed_out("tool", tool.name, tool.timeout)
                    answer = timed_out(tool.timeout, late)
            if mints:  # the handles it minted are known to every call before it answers
                await self.handles.store.settle(ctx)
            return answer
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
        finally:
            if place is not None:
                place.release()
            if held is not None and held.record is not None:
                await self.handles.store.release(held.record)
            if mints:  # a call that failed drops the handles it minted
                await self.handles.store.settle(ctx, keep=False)

    async def _answer(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
        tracing: Tracing | None,
        place: Place | None,
        held: handles.Held | None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The call's answer, through every round of input it asks for (2025-11-25)."""
        if tool.on_loop and tracing is None:  # the common call: ``_call_tool``'s path
            outcome = await self._tool(self._on_loop, tool, ctx, arguments, request, None, held)
        else:
            outcome = await self._call_tool(
                tool, ctx, arguments, request, tracing, place, held=held
            )
        if isinstance(outcome, Asked):
            return await self._ask(outcome, tool, ctx, arguments, tracing, place, held)
        return outcome

    def _call_tool(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
        tracing: Tracing | None,
        place: Place | None,
        retry: Retry | None = None,
        held: handles.Held | None = None,
    ) -> Awaitable[types.CallToolResult | types.InputRequiredResult | Asked]:
        """One round of the call (see ``dispatch.modes`` for where its parts run)."""
        if tool.borrows:
            body = functools.partial(self._tool_round, tool, ctx, arguments, request, retry, held)
            return self._mode(tool, body, tracing, place)()
        run: Mode = self._on_thread if tool.thread_bound else self._on_loop
        if tracing is not None:
            run = tracing.on(run)
        if tool.thread_bound:
            call = functools.partial(self._tool, run, tool, ctx, arguments, request, retry, held)
            return self.threads.run(drive, call)
        return self._tool(run, tool, ctx, arguments, request, retry, held)

    def _tool_round(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
        retry: Retry | None,
        held: handles.Held | None,
        run: Mode,
    ) -> Awaitable[types.CallToolResult | types.InputRequiredResult | Asked]:
        return self._tool(run, tool, ctx, arguments, request, retry, held)

    async def _ask(
        self,
        asked: Asked,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        tracing: Tracing | None,
        place: Place | None,
        held: handles.Held | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """2025-11-25: the round that asked is over (its scope closed); ask the client here,
        on the loop, and call again in a new round with the answers, as a retry would."""
        rounds = 1
        while True:
            try:
                request, retry = await self.answered(ctx, asked)
            except TimeoutError:
                return input_timed_out(self.catalog.input_timeout)
            outcome = await self._call_tool(
                tool, ctx, arguments, request, tracing, place, retry, held
            )
            if not isinstance(outcome, Asked):
                return outcome
            if rounds == MAX_INPUT_ROUNDS:
                raise RuntimeError(f"{tool.name} asked for input {MAX_INPUT_ROUNDS} times")
            rounds += 1
            asked = outcome

    async def _tool(
        self,
        run: Mode,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
        retry: Retry | None = None,
        held: handles.Held | None = None,
    ) -> types.CallToolResult | types.InputRequiredResult | Asked:
        """One round in a scope of its own (in a state handle's session when it carries
        one): a result, or the 2025-11-25 question it asked."""
        session = None if held is None or held.record is None else held.record.session
        async with run.scope(ctx, request, session) as scope:
            if tool.hooks.any:
                await self._gate(run.visible, "tool", tool, scope, request)
            payload, errors = run.check_wire(tool.input.check_wire, arguments)
            if errors:
                return invalid_arguments(errors)
            if held is not None and tool.handle and not handles.matches(held, tool.handle, payload):
                return handles.unknown_handle(tool.handle)
            inputs: Resolution | None = None
            if tool.inputs:  # the input phase: only for a tool that takes resolved values
                named = tool.arguments(payload)
                found = await self._input_phase(
                    run, "tool", tool, ctx, scope, request, payload, named, retry
                )
                if not isinstance(found, tuple):
                    return found
                inputs, instance = found
            elif tool.build_is_async:
                instance = await run.aresolve(tool.build, scope)
            else:
                instance = run.resolve(tool.build, scope)
            if tool.middleware:
                outcome = await self._tool_chain(
                    run, tool, instance, scope, request, payload, inputs
                )
            else:
                spread = tool.arguments(payload) if tool.spread else None
                if inputs is not None:
                    spread = {**(spread or {}), **inputs.values(tool.handler.resolved)}
                outcome = await run.call(
                    tool.handler, instance, scope, request, payload, spread, self.threads
                )
            if tool.convert is not None and (
                tool.output is None or type(outcome) is not tool.output.type
            ):
                outcome = tool.convert(outcome)  # a function tool's plain value becomes a result
            question = asking(outcome)
            if question is not None:  # 2025-11-25: asked on the loop, once this scope is closed
                return handler_asked(question, ctx, request or self.request(ctx), inputs, retry)
            return run.tool_result(
                outcome, owner=tool.cls.__qualname__, output=tool.output, modern=is_modern(ctx)
            )

    def _tool_chain(
        self,
        run: Mode,
        tool: CompiledTool,
        instance: Any,
        scope: Scope,
        request: McpRequest | None,
        payload: Any,
        inputs: Resolution | None = None,
    ) -> Awaitable[Any]:
        """The call through the tool's layers, for ``_tool`` to await (no coroutine of its
        own, nor for the link to the handler: only the layers' and the handler's run)."""
        given = MappingProxyType(tool.fields(payload))

        def handler(call: Call) -> Awaitable[Any]:
            # changed arguments are validated into the input contract again
            value = payload if call.arguments is given else tool.revalidate(call.arguments)
            spread = tool.arguments(value)
            if inputs is not None:
                spread = {**(spread or {}), **inputs.values(tool.handler.resolved)}
            return run.call(tool.handler, instance, scope, request, value, spread, self.threads)

        call = Call(tool.name, given)
        inject = run.inject if inputs is None else injecting(run.inject, inputs)
        return through(tool.middleware, call, handler, scope, request, inject)
