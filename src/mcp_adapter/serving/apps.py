"""MCP Apps on the SDK's server: the extension declared under ``capabilities.extensions``
when some tool names a view (through ``tasks.extension.install``, as every protocol
extension), and ``_meta.ui`` listed only to clients that negotiated it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp import types
from mcp.server import Server as SdkServer
from mcp.server.apps import Apps

from mcp_adapter.compile.apps import view_of
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.apps import supports_apps
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.tasks.extension import install

ListTools = Callable[[Any, types.PaginatedRequestParams | None], Awaitable[types.ListToolsResult]]


def has_views(catalog: Catalog) -> bool:
    """Whether some tool of ``catalog`` names an MCP Apps view."""
    return any(view_of(tool) is not None for tool in catalog.tools.values())


def declare_apps(server: SdkServer[Any], catalog: Catalog) -> None:
    """Declare MCP Apps on ``server`` when some tool of ``catalog`` names a view: the SDK's
    ``Apps`` extension (no settings, no methods), installed as any protocol extension, so
    that ``capabilities.extensions`` advertises it."""
    if has_views(catalog):
        install(server, Apps())


def tools_listing(catalog: Catalog, dispatcher: Dispatcher) -> ListTools:
    """The ``tools/list`` handler: the dispatcher's, with ``_meta.ui`` removed for a
    client that did not negotiate MCP Apps. A catalog without views gets the
    dispatcher's own handler: nothing is added to its listings."""
    if not has_views(catalog):
        return dispatcher.list_tools

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = await dispatcher.list_tools(ctx, params)
        if supports_apps(dispatcher.request(ctx)):
            return listed
        return listed.model_copy(update={"tools": [_without_view(t) for t in listed.tools]})

    return list_tools


def _without_view(tool: types.Tool) -> types.Tool:
    if not tool.meta or "ui" not in tool.meta:
        return tool
    rest = {key: value for key, value in tool.meta.items() if key != "ui"}
    return tool.model_copy(update={"meta": rest or None})
