"""MCP Apps on the SDK's server: the extension declared under ``capabilities.extensions``
when some tool names a view (through ``tasks.extension.install``, as every protocol
extension), and ``_meta.ui`` and the ``ui://`` views listed only to clients that
negotiated it (reading a view stays open to every client, as the extension allows). A
tool only its view calls is not listed to the others at all: the visibility rule it was
given when it compiled (``compile.apps.for_apps_only``) hides it, as any hidden tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp import types
from mcp.server import Server as SdkServer
from mcp.server.apps import Apps

from mcp_adapter.compile.apps import view_of
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.apps import is_view, supports_apps, without_view
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.tasks.extension import install

Listed = TypeVar("Listed", bound=types.Result)
ListTools = Callable[[Any, types.PaginatedRequestParams | None], Awaitable[types.ListToolsResult]]
ListResources = Callable[
    [Any, types.PaginatedRequestParams | None], Awaitable[types.ListResourcesResult]
]
ListTemplates = Callable[
    [Any, types.PaginatedRequestParams | None], Awaitable[types.ListResourceTemplatesResult]
]


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
    client that did not negotiate MCP Apps (the app-only tools are already left out by
    their visibility rule). A catalog without views gets the dispatcher's own handler:
    nothing is added to its listings."""
    if not has_views(catalog):
        return dispatcher.list_tools

    def shown(tools: list[types.Tool]) -> list[types.Tool]:
        return [without_view(tool) for tool in tools]

    return _for_apps(dispatcher, dispatcher.list_tools, "tools", shown)


def has_view_resources(catalog: Catalog) -> bool:
    """Whether ``catalog`` serves a ``ui://`` resource or template (an MCP Apps view)."""
    return any(is_view(uri) for uri in catalog.resources) or any(
        is_view(template.uri_template_text) for template in catalog.templates
    )


def resources_listing(
    catalog: Catalog, dispatcher: Dispatcher
) -> tuple[ListResources, ListTemplates]:
    """The ``resources/list`` and ``resources/templates/list`` handlers: the dispatcher's,
    without the ``ui://`` views for a client that did not negotiate MCP Apps (the
    extension lets a server leave them out: its hosts find a view through the tool).
    A catalog without views gets the dispatcher's own handlers."""
    if not has_view_resources(catalog):
        return dispatcher.list_resources, dispatcher.list_resource_templates

    def resources(entries: list[types.Resource]) -> list[types.Resource]:
        return [entry for entry in entries if not is_view(str(entry.uri))]

    def templates(entries: list[types.ResourceTemplate]) -> list[types.ResourceTemplate]:
        return [entry for entry in entries if not is_view(entry.uri_template)]

    return (
        _for_apps(dispatcher, dispatcher.list_resources, "resources", resources),
        _for_apps(dispatcher, dispatcher.list_resource_templates, "resource_templates", templates),
    )


def _for_apps(
    dispatcher: Dispatcher,
    listing: Callable[[Any, types.PaginatedRequestParams | None], Awaitable[Listed]],
    field: str,
    shown: Callable[[Any], list[Any]],
) -> Callable[[Any, types.PaginatedRequestParams | None], Awaitable[Listed]]:
    """``listing`` as it is for a client that negotiated MCP Apps; for any other, with
    its ``field`` (the listed entries) through ``shown``."""

    async def listed(ctx: Any, params: types.PaginatedRequestParams | None) -> Listed:
        result = await listing(ctx, params)
        if supports_apps(dispatcher.request(ctx)):
            return result
        return result.model_copy(update={field: shown(getattr(result, field))})

    return listed
