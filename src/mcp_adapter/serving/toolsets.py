"""Per-request toolset selection over HTTP (github-mcp-server conventions).

A client narrows the served tools with an ``X-MCP-Toolsets: a,b`` header or by
connecting to ``{path}/x/{toolset}``. A tool outside the selection is absent
from ``tools/list`` and unknown to ``tools/call``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from mcp import types
from mcp.server import Server as SdkServer
from starlette.types import ASGIApp, Receive, Scope, Send

from container import Container
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.dispatch.inflight import CallsInFlight
from mcp_adapter.dispatch.threads import Threads
from mcp_adapter.errors import unknown
from mcp_adapter.serving.lowlevel import build_sdk_server
from mcp_adapter.stores.handles import HandleStore

TOOLSETS_HEADER = "x-mcp-toolsets"
"""Request header naming the toolsets a client wants, comma-separated."""
TOOLSET_PATH_PARAM = "toolset"
SCOPE_KEY = "mcp_adapter.toolsets"
"""ASGI scope key holding the ``frozenset`` selected for the request (absent: everything)."""
TOOL_METHODS = ("tools/list", "tools/call")
_CACHE_LIMIT = 256

Handler = Callable[[Any, Any], Awaitable[Any]]


def parse_toolsets(value: str) -> frozenset[str]:
    """``"a, b,,c"`` -> ``{"a", "b", "c"}``.

    >>> sorted(parse_toolsets(" repos, issues ,,"))
    ['issues', 'repos']
    """
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def requested_toolsets(scope: Scope) -> tuple[frozenset[str] | None, str]:
    """The selection a request asks for and where it came from (``"path"``/``"header"``)."""
    from_path = (scope.get("path_params") or {}).get(TOOLSET_PATH_PARAM)
    if from_path is not None:
        return parse_toolsets(str(from_path)), "path"
    for key, value in scope.get("headers") or ():
        if key.decode("latin-1").lower() == TOOLSETS_HEADER:
            selection = parse_toolsets(value.decode("latin-1"))
            return (selection or None), "header"
    return None, ""


class ToolsetGate:
    """ASGI wrapper: rejects unknown toolsets, records the selection in the scope.

    The URL path wins over the header when both are present.
    """

    def __init__(self, app: ASGIApp, known: Collection[str]) -> None:
        self.app = app
        self.known = frozenset(known)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            selection, source = requested_toolsets(scope)
            if selection is not None:
                unknown = sorted(selection - self.known)
                if unknown or not selection:
                    await _reject(send, source, unknown, self.known)
                    return
                scope[SCOPE_KEY] = selection
        await self.app(scope, receive, send)


async def _reject(send: Send, source: str, unknown: list[str], known: frozenset[str]) -> None:
    status = 404 if source == "path" else 400
    description = (
        f"unknown toolset(s): {', '.join(unknown) or '(none)'}; "
        f"known: {', '.join(sorted(known)) or 'none'}"
    )
    body = json.dumps({"error": "unknown_toolset", "error_description": description}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def selection_of(ctx: Any) -> frozenset[str] | None:
    """The toolsets a handler's request selected, from the HTTP request's scope."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    selected = scope.get(SCOPE_KEY)
    return selected if isinstance(selected, frozenset) else None


class ToolsetRouter:
    """Routes ``tools/*`` to the handlers of a server built for the request's selection.

    One SDK server (and so one dispatcher with its precomputed listings) is
    built per distinct selection, on first use, and kept.
    """

    def __init__(
        self,
        catalog: Catalog,
        container: Container,
        *,
        threads: Threads | None = None,
        calls: CallsInFlight | None = None,
        handles: HandleStore | None = None,
    ) -> None:
        self.catalog = catalog
        self.container = container
        self.threads = threads
        """The app's worker threads, its calls in flight and its state handles: one for
        every selection."""
        self.calls = calls
        self.handles = handles
        self._full: dict[str, Handler] = {}
        self._selected: dict[frozenset[str], dict[str, Handler]] = {}

    def install(self, server: SdkServer[Any]) -> None:
        for method in TOOL_METHODS:
            entry = server.get_request_handler(method)
            if entry is None:
                continue
            self._full[method] = entry.handler
            server.add_request_handler(method, entry.params_type, self._route(method))

    def handlers_for(self, selection: frozenset[str]) -> dict[str, Handler]:
        found = self._selected.get(selection)
        if found is not None:
            return found
        server = build_sdk_server(
            self.catalog.select(selection),
            self.container,
            transport="http",
            threads=self.threads,
            calls=self.calls,
            handles=self.handles,
        )
        handlers: dict[str, Handler] = {}
        for method in TOOL_METHODS:
            entry = server.get_request_handler(method)
            if entry is not None:
                handlers[method] = entry.handler
        if len(self._selected) >= _CACHE_LIMIT:
            self._selected.pop(next(iter(self._selected)))
        self._selected[selection] = handlers
        return handlers

    def _route(self, method: str) -> Handler:
        full = self._full[method]

        async def route(ctx: Any, params: Any) -> Any:
            selection = selection_of(ctx)
            if selection is None:
                return await full(ctx, params)
            handler = self.handlers_for(selection).get(method)
            if handler is not None:
                return await handler(ctx, params)
            if method == "tools/list":
                return types.ListToolsResult(tools=[])
            raise unknown("tool", getattr(params, "name", ""))

        return route
