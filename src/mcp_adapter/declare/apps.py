"""MCP Apps (``io.modelcontextprotocol/ui``): a tool that names an interactive view.

A tool declares ``ui=ToolUI("ui://...")``; the view is a ``Resource`` at that ``ui://``
URI served as ``text/html;profile=mcp-app`` (``APP_MIME_TYPE``), with injection like any
other. Clients that negotiated the extension see ``_meta.ui.resourceUri`` on the tool and
render the view with the tool's result; the others see the tool without it, so its
result must read well as text. A tool only its view calls (``visibility=("app",)``)
does not exist for those others (:data:`APP_ONLY`): nothing would keep their model from
calling it. The identifiers are the SDK's (``mcp.server.apps``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, Visibility

from mcp_adapter.declare.policy import Policy
from mcp_adapter.declare.request import McpRequest

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "ToolUI", "Visibility", "supports_apps"]


@dataclass(frozen=True, slots=True)
class ToolUI:
    """The view a tool names: ``Tool.ui``, ``@tool(ui=...)``, ``ToolSpec(ui=...)``.

    ``resource_uri`` is a ``ui://`` resource the same server serves with
    ``APP_MIME_TYPE``; ``visibility`` (``("model", "app")`` when omitted, by the
    extension's rule) says who may call the tool: the model, the view, or both.
    Checked when the server compiles. A tool only the view calls (``("app",)``) is
    listed and callable only for clients that negotiated MCP Apps (:data:`APP_ONLY`).

    >>> ToolUI("ui://orders/view.html").meta()
    {'resourceUri': 'ui://orders/view.html'}
    """

    resource_uri: str
    visibility: Sequence[Visibility] | None = None

    def meta(self) -> dict[str, Any]:
        """The tool's ``_meta.ui`` entry."""
        ui: dict[str, Any] = {"resourceUri": self.resource_uri}
        if self.visibility is not None:
            ui["visibility"] = list(self.visibility)
        return ui


def supports_apps(request: McpRequest) -> bool:
    """Whether the caller negotiated MCP Apps: its capabilities name the extension and
    list ``APP_MIME_TYPE`` (the SDK's ``client_supports_apps`` rule, on the snapshot).

    A tool with a view answers such a caller knowing the view shows its result, and
    anyone else with text that stands on its own.
    """
    extensions = request.client_capabilities.get("extensions")
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    mime_types = settings.get("mimeTypes") if isinstance(settings, Mapping) else None
    if not isinstance(mime_types, Sequence) or isinstance(mime_types, str | bytes):
        return False  # a string is not a list of MIME types, whatever it contains
    return APP_MIME_TYPE in mime_types


def is_view(uri: str) -> bool:
    """Whether ``uri`` (a resource's URI or URI template) is an MCP Apps view: a
    ``ui://`` resource, listed only to clients that negotiated the extension."""
    return uri.startswith("ui://")


def without_view(tool: types.Tool) -> types.Tool:
    """``tool`` as a client that did not negotiate MCP Apps lists it: no ``_meta.ui``."""
    if not tool.meta or "ui" not in tool.meta:
        return tool
    rest = {key: value for key, value in tool.meta.items() if key != "ui"}
    return tool.model_copy(update={"meta": rest or None})


def app_only(meta: Mapping[str, Any] | None) -> bool:
    """Whether a tool's ``_meta`` makes it one only its view calls: a ``_meta.ui.visibility``
    without ``"model"``.

    >>> app_only({"ui": ToolUI("ui://a/v.html", visibility=("app",)).meta()})
    True
    >>> app_only({"ui": ToolUI("ui://a/v.html").meta()}), app_only(None)
    (False, False)
    """
    ui = (meta or {}).get("ui")
    visibility = ui.get("visibility") if isinstance(ui, Mapping) else None
    if not isinstance(visibility, Sequence) or isinstance(visibility, str):
        return False
    return "model" not in visibility


APP_ONLY = Policy(should_register=supports_apps, name="app-only tool (MCP Apps)")
"""The rule every app-only tool is given when the server compiles: it exists only for a
client that negotiated MCP Apps (:func:`supports_apps`). Its only mark is ``_meta.ui``,
which no other client is shown, so for them it is left out of ``tools/list`` and a call
to it is answered as for an unknown tool: a model is never offered a tool meant for a
view."""
