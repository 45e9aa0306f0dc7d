"""The tasks extension as the SDK's ``Extension`` (SEP-2133): its identifier, its settings
under ``capabilities.extensions``, and the methods it adds (``tasks/get``,
``tasks/update``, ``tasks/cancel``). ``tasks/result`` and ``tasks/list`` were removed
from the extension and stay unknown methods (``-32601``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp import MCPError, types
from mcp.server.extension import Extension, MethodBinding, RequestHandler
from mcp.shared.inbound import MCP_NAME_HEADER
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_adapter.declare.request import McpRequest
from mcp_adapter.tasks.engine import TaskEngine
from mcp_adapter.tasks.frozen import owner_of
from mcp_adapter.tasks.wire import (
    EXTENSION,
    Ack,
    DetailedTask,
    TaskParams,
    UpdateParams,
    header_mismatch,
    missing_extension,
    negotiated,
)

Describe = Callable[[Any], McpRequest]
"""The request snapshot of an SDK request context (the dispatcher's)."""


class TasksExtension(Extension):
    """``io.modelcontextprotocol/tasks`` on a low-level server: each method checks that
    the client negotiated the extension (``-32021``), that an ``Mcp-Name`` header names
    the task of the body (``-32020``), and answers only about the caller's own tasks."""

    identifier = EXTENSION

    def __init__(self, engine: TaskEngine, describe: Describe) -> None:
        self.engine = engine
        self.describe = describe

    def methods(self) -> Sequence[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return (
            MethodBinding("tasks/get", TaskParams, self.get, modern),
            MethodBinding("tasks/update", UpdateParams, self.update, modern),
            MethodBinding("tasks/cancel", TaskParams, self.cancel, modern),
        )

    def _owner(self, ctx: Any, params: TaskParams) -> str:
        request = self.describe(ctx)
        if not negotiated(request.client_capabilities):
            raise missing_extension()
        http = getattr(ctx, "request", None)
        named = http.headers.get(MCP_NAME_HEADER) if http is not None else None
        if named is not None and named.strip() != params.task_id:
            raise header_mismatch()
        return owner_of(request)

    async def get(self, ctx: Any, params: TaskParams) -> DetailedTask:
        return await self.engine.get(params.task_id, self._owner(ctx, params))

    async def cancel(self, ctx: Any, params: TaskParams) -> Ack:
        return await self.engine.cancel(params.task_id, self._owner(ctx, params))

    async def update(self, ctx: Any, params: UpdateParams) -> Ack:
        """Answers for a task waiting for input (``input_required``); a task that waits
        for none ignores them (``tasks.waiting``)."""
        owner = self._owner(ctx, params)
        return await self.engine.update(params.task_id, owner, params.input_responses or {})


def install(server: Any, extension: Extension) -> None:
    """Put ``extension`` on a low-level SDK server as ``MCPServer(extensions=...)`` does:
    its methods registered, its settings advertised under ``capabilities.extensions``."""
    for method in extension.methods():
        handler = method.handler
        if method.protocol_versions is not None:
            handler = _gated(handler, method.method, method.protocol_versions)
        server.add_request_handler(method.method, method.params_type, handler)
    server.extensions[extension.identifier] = extension.settings()


def _gated(handler: RequestHandler, name: str, versions: frozenset[str]) -> RequestHandler:
    """``handler`` at ``versions`` only; elsewhere the method is unknown (``-32601``)."""

    async def gated(ctx: Any, params: Any) -> Any:
        if getattr(ctx, "protocol_version", None) not in versions:
            raise MCPError(types.METHOD_NOT_FOUND, f"Method not found: {name}")
        return await handler(ctx, params)

    return gated


def with_tasks(
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]], engine: TaskEngine
) -> Callable[[Any], AbstractAsyncContextManager[Any]]:
    """A server's lifespan that also serves ``engine`` (Docket and its worker) meanwhile."""

    @asynccontextmanager
    async def serving(server: Any) -> AsyncIterator[Any]:
        async with engine.serving(), lifespan(server) as state:
            yield state

    return serving
