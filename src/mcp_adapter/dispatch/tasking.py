"""A ``tools/call`` as a task (docs/tasks.md): started at once on the caller's request,
its body run later by the task engine's worker in a fresh scope of its own, with a
frozen copy of the request that started it, through the same code as an inline call."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any

from mcp import MCPError, types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from mcp_adapter.compiled.catalog import CompiledTool
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch.core import DispatchCore, Given
from mcp_adapter.dispatch.inflight import Place
from mcp_adapter.dispatch.results import error_result, execution_failed, invalid_arguments
from mcp_adapter.dispatch.snapshot import is_modern
from mcp_adapter.dispatch.telemetry import Tracing
from mcp_adapter.errors import Refusal, ToolError, forbidden, refused
from mcp_adapter.input.asking import Asked
from mcp_adapter.tasks.engine import TaskEngine
from mcp_adapter.tasks.frozen import owner_of, plain, request_of, token_of
from mcp_adapter.tasks.wire import CreateTaskResult, missing_extension, negotiated

ASKED_FOR_INPUT = "This tool asked for input, which a task cannot ask for yet"


class _Principal:
    """Where ``access_token`` finds the verified token of the request a task started with
    (an HTTP request's ASGI ``scope["user"]``); no headers, no body."""

    __slots__ = ("headers", "scope")

    def __init__(self, token: AccessToken) -> None:
        self.scope = {"user": AuthenticatedUser(token)}
        self.headers: Mapping[str, str] = {}


class TaskContext:
    """Stands for the SDK's request context in a task body: the protocol version of the
    request that started it and its caller; no session (no progress, no log messages,
    no question to the client) and no HTTP request."""

    __slots__ = ("meta", "method", "params", "protocol_version", "request", "request_id", "session")

    def __init__(self, protocol_version: str, token: AccessToken | None) -> None:
        self.protocol_version = protocol_version
        self.request = None if token is None else _Principal(token)
        self.session = None
        self.meta = None
        self.params = None
        self.method = "tools/call"
        self.request_id = None


class TaskCalls(DispatchCore):
    """Starting a tool's task, and running its body when the worker takes it."""

    tasks: TaskEngine | None = None
    """The task engine when the catalog has task tools (set by serving)."""

    def _call_tool(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
        tracing: Tracing | None,
        place: Place | None,
    ) -> Awaitable[types.CallToolResult | types.InputRequiredResult | Asked]:
        raise NotImplementedError  # ToolCalls: one round of an inline call

    async def _as_task(
        self, tool: CompiledTool, ctx: Any, arguments: Mapping[str, Any], given: Given | None
    ) -> types.CallToolResult | CreateTaskResult | None:
        """The task's handle, when the client negotiated the extension (2026-07-28);
        ``None``: call inline (an optional tool, for a client without it). Visibility
        and arguments are checked here, before anything is enqueued."""
        tasks = self.tasks
        if tasks is None:
            return None
        request = self.request(ctx, given, arguments=arguments)
        if not (is_modern(ctx) and negotiated(request.client_capabilities)):
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
        _, errors = tool.input.check_wire(arguments)
        if errors:
            return invalid_arguments(errors)
        return await tasks.start(tool.name, plain(request), owner_of(request))

    async def run_task(self, name: str, data: Mapping[str, Any]) -> dict[str, Any]:
        """A task's body: the tool called as inline, in a scope of its own; its outcome as
        ``{"result": ...}`` (a tool error included) or ``{"error": ...}`` (a protocol
        error). Cancellation passes through, after the scope has closed."""
        tool = self.catalog.tools.get(name)
        if tool is None:
            return {"error": {"code": types.INVALID_PARAMS, "message": f"Unknown tool: {name}"}}
        ctx = TaskContext(str(data["protocol_version"]), token_of(data))
        request = request_of(data, ctx)
        try:
            arguments = data["arguments"]  # plain, as they came
            outcome = await self._call_tool(tool, ctx, arguments, request, None, None)
        except MCPError as error:
            return {"error": {"code": error.code, "message": error.message}}
        except ToolError as refusal:
            outcome = error_result(refusal.message)
        except Refusal as refusal:
            denied = refused("tool", tool.name, refusal)
            return {"error": {"code": denied.code, "message": denied.message}}
        except Exception as exc:  # noqa: BLE001 - every failure becomes a safe result
            outcome = execution_failed(self._incident("tool", tool.name, exc))
        if not isinstance(outcome, types.CallToolResult):
            return {"error": {"code": types.INTERNAL_ERROR, "message": ASKED_FOR_INPUT}}
        dumped = outcome.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped.pop("resultType", None)
        return {"result": dumped}
