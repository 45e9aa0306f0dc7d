"""Serving a catalog: one scope per request, hooks, validation, invocation, results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp import MCPError, types

from container import Container
from mcp_adapter.catalog import Catalog, CompiledComponent, CompiledTool
from mcp_adapter.context import is_modern, snapshot
from mcp_adapter.errors import forbidden, logger, new_incident, unknown
from mcp_adapter.request import McpRequest, Transport
from mcp_adapter.results import execution_failed, invalid_arguments, tool_result


class Dispatcher:
    """Answers protocol requests from a compiled catalog and a container.

    The SDK hands it each request's context and params; it owns argument
    validation, injection, result building and error mapping.
    """

    def __init__(
        self, catalog: Catalog, container: Container, *, transport: Transport = "memory"
    ) -> None:
        self.catalog = catalog
        self.container = container
        self.transport: Transport = transport
        self._tools = catalog.tools
        self._tool_hooks = any(tool.hooks.any for tool in catalog.tools.values())
        self._tool_pages = {
            modern: self._paginate(
                [tool.modern if modern else tool.legacy for tool in catalog.tools.values()]
            )
            for modern in (True, False)
        }

    def _paginate(self, tools: list[types.Tool]) -> tuple[types.ListToolsResult, ...]:
        size = self.catalog.page_size
        chunks = [tools[i : i + size] for i in range(0, len(tools), size)] or [[]]
        return tuple(
            types.ListToolsResult(
                tools=chunk, next_cursor=str(index + 1) if index + 1 < len(chunks) else None
            )
            for index, chunk in enumerate(chunks)
        )

    def request(self, ctx: Any, **fields: Any) -> McpRequest:
        return snapshot(
            ctx, server_id=self.catalog.name, default_transport=self.transport, **fields
        )

    # -- visibility ---------------------------------------------------------

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

    # -- tools ----------------------------------------------------------------

    @staticmethod
    def _page(cursor: str | None, count: int) -> int:
        if cursor is None:
            return 0
        if not cursor.isdigit() or int(cursor) >= count:
            raise MCPError(types.INVALID_PARAMS, "Invalid cursor")
        return int(cursor)

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        modern = is_modern(ctx)
        pages = self._tool_pages[modern]
        index = self._page(params.cursor if params else None, len(pages))
        page = pages[index]
        if not self._tool_hooks:
            return page
        request = self.request(ctx)
        listed: list[types.Tool] = []
        async with self.container.scope() as scope:
            for entry in page.tools:
                tool = self._tools[entry.name]
                registered, authorized = await self.visible(tool, scope, request)
                if registered and authorized:
                    listed.append(entry)
        return types.ListToolsResult(tools=listed, next_cursor=page.next_cursor)

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self._tools.get(params.name)
        if tool is None:
            raise unknown("tool", params.name)
        arguments: Mapping[str, Any] = params.arguments or {}
        request = self.request(ctx, arguments=arguments) if tool.needs_request else None
        try:
            return await self._call(tool, ctx, arguments, request)
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a safe result
            incident = new_incident()
            logger.error("tool %r failed (incident %s)", tool.name, incident, exc_info=exc)
            return execution_failed(incident)

    async def _call(
        self,
        tool: CompiledTool,
        ctx: Any,
        arguments: Mapping[str, Any],
        request: McpRequest | None,
    ) -> types.CallToolResult:
        async with self.container.scope() as scope:
            if tool.hooks.any:
                registered, authorized = await self.visible(tool, scope, request)
                if not registered:
                    raise unknown("tool", tool.name)
                if not authorized:
                    raise forbidden("tool", tool.name)
            payload, errors = tool.input.check(arguments)
            if errors:
                return invalid_arguments(errors)
            instance = await tool.instance(scope)
            outcome = await tool.handler.invoke(
                instance, scope, request, payload, tool.arguments(payload)
            )
            return tool_result(
                outcome, owner=tool.cls.__qualname__, output=tool.output, modern=is_modern(ctx)
            )
