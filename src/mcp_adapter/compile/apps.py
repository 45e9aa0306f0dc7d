"""MCP Apps at compile time: a tool's ``ui`` becomes its ``_meta.ui``, the view it names
must be a resource of the same server served as ``APP_MIME_TYPE``, and a tool only its
view calls exists only for clients that negotiated the extension (``APP_ONLY``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from container import Container, Problem
from mcp_adapter.compile.parts import policy_hooks
from mcp_adapter.compiled.catalog import CompiledResource, CompiledTool
from mcp_adapter.declare.apps import APP_MIME_TYPE, APP_ONLY, ToolUI, app_only
from mcp_adapter.errors import problem

_VISIBILITY = frozenset({"model", "app"})


def with_ui(
    meta: Mapping[str, Any] | None, ui: Any, where: str, problems: list[Problem]
) -> dict[str, Any]:
    """The tool's ``meta`` with ``ui``'s entry under ``"ui"``; what is wrong with ``ui``
    goes to ``problems``."""
    merged = dict(meta) if meta else {}
    if ui is None:
        return merged
    if not isinstance(ui, ToolUI):
        problems.append(
            problem(
                (where,),
                f"ui must be a ToolUI, not {ui!r}",
                'write ui = ToolUI("ui://app/view.html")',
            )
        )
        return merged
    uri = ui.resource_uri
    if not isinstance(uri, str) or not uri.startswith("ui://"):
        problems.append(
            problem(
                (where,),
                f"the view {uri!r} is not a ui:// URI",
                'MCP Apps views are resources at ui:// URIs: ToolUI("ui://app/view.html")',
            )
        )
    visibility = ui.visibility
    if visibility is not None and (
        isinstance(visibility, str) or not visibility or not set(visibility) <= _VISIBILITY
    ):
        problems.append(
            problem(
                (where,),
                f"the view's visibility {visibility!r} is not a non-empty sequence of "
                "'model' and 'app'",
                'write visibility=("model", "app"), or ("app",) for a tool only its view calls',
            )
        )
    if "ui" in merged:
        problems.append(
            problem(
                (where,),
                "meta has a 'ui' key and ui= is given: the view's _meta.ui comes from ui=",
                "drop the 'ui' key from meta",
            )
        )
        return merged
    merged["ui"] = ui.meta()
    return merged


def view_of(tool: CompiledTool) -> str | None:
    """The ``ui://`` URI of the view ``tool`` names, if any."""
    ui = (tool.modern.meta or {}).get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, Mapping) else None
    return uri if isinstance(uri, str) else None


def for_apps_only(
    tool: CompiledTool, container: Container, problems: list[Problem]
) -> CompiledTool:
    """``tool``, and when only its view calls it (``visibility=("app",)``), with the
    ``APP_ONLY`` rule asked before every other: for a client that did not negotiate MCP
    Apps it is hidden (left out of listings, a call answered as for an unknown tool), by
    the visibility hooks every path of a call already asks (``tools/list``, ``tools/call``,
    a task's start, tools put on an SDK server)."""
    if not app_only(tool.modern.meta):
        return tool
    rule = policy_hooks((APP_ONLY,), f"tool {tool.name!r}", container, problems)
    return dataclasses.replace(tool, hooks=tool.hooks.within(rule))


def view_problems(
    tools: Iterable[CompiledTool],
    static: Mapping[str, CompiledResource],
    templates: Iterable[CompiledResource],
) -> list[Problem]:
    """Each view a tool names must be served by this server, as ``APP_MIME_TYPE``."""
    found: list[Problem] = []
    templates = tuple(templates)
    for tool in tools:
        uri = view_of(tool)
        if uri is None or not uri.startswith("ui://"):
            continue
        resource = static.get(uri) or next((t for t in templates if t.match(uri)), None)
        where = (f"tool {tool.name!r}", f"view {uri!r}")
        if resource is None:
            found.append(
                problem(
                    where,
                    f"tool {tool.name!r} names the view {uri!r}, which this server does not serve",
                    f'add a Resource with uri = "{uri}" and mime_type = APP_MIME_TYPE to the '
                    "server's resources",
                )
            )
        elif resource.mime_type != APP_MIME_TYPE:
            found.append(
                problem(
                    where,
                    f"the view {uri!r} is served as {resource.mime_type!r}; hosts render only "
                    f"{APP_MIME_TYPE!r}",
                    f"set mime_type = APP_MIME_TYPE on {resource.cls.__qualname__}",
                )
            )
    return found
