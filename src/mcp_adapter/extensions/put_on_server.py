"""``put_on_server``: tools on an SDK server exactly as the host serves them.

The specs are compiled by the host's path (same ``inputSchema``/``outputSchema``,
injection plan and ``Dispatcher``: the same validation and error results).

- On ``mcp.server.mcpserver.MCPServer`` each tool is one of its own tool
  entries whose ``run`` is the dispatcher, so ``list_tools()``, ``call_tool()``,
  ``remove_tool()`` and extension interceptors see it. ``MCPServer`` lists one
  schema for every protocol era, so a non-object output is served the
  2025-11-25 way in both eras: ``{"result": value}`` and a schema describing
  it (the convention of ``MCPServer``'s own tools).
- On the low-level ``mcp.server.Server`` it registers ``tools/list`` and
  ``tools/call``; handlers already there keep serving their own tools.

Visibility hooks (``ToolSpec.should_register``/``authorize``) are honoured on
both: a hidden tool is left out of ``tools/list`` and a call to it answers what
the server answers for a name it does not serve (``MCPServer``: an ``isError``
result ``Unknown tool: <name>``; the low-level ``Server``: its earlier
``tools/call`` handler's answer, else ``-32602 Unknown tool: <name>``); a
forbidden one is left out and refused with ``-32003``.

MCP Apps: a tool's view (``ToolSpec(ui=...)``) is served by the server the tools are
put on (the SDK's ``Apps.add_html_resource``, or a resource of its own), so it is not
looked for among these tools; its ``_meta.ui`` is listed only to clients that
negotiated the extension, as the host lists its own.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

from mcp import MCPError, types
from mcp.server import Server as SdkServer
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import PrivateAttr

from container import Container, Problem
from mcp_adapter.compat import (
    built_unvalidated,
    mcpserver_lowlevel,
    mcpserver_tool,
    mcpserver_tools,
)
from mcp_adapter.compile.apps import view_of
from mcp_adapter.compile.server import compile_server
from mcp_adapter.compile.tools import compile_function_tool
from mcp_adapter.compiled.catalog import Catalog, CompiledTool
from mcp_adapter.compiled.legacy import LEGACY_WRAP_KEY
from mcp_adapter.declare.apps import supports_apps, without_view
from mcp_adapter.declare.components import Server
from mcp_adapter.dispatch import Dispatcher
from mcp_adapter.dispatch.snapshot import is_modern
from mcp_adapter.errors import CompileError, problem, unknown
from mcp_adapter.extensions.spec import ToolSpec
from mcp_adapter.tasks.wire import CreateTaskResult

_PUT: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
"""Names ``put_on_server`` placed on each low-level server (to refuse duplicates)."""


def put_on_server(
    server: MCPServer[Any] | SdkServer[Any],
    specs: Iterable[ToolSpec],
    container: Container | None = None,
) -> Catalog:
    """Compile ``specs`` as the host does and serve them from ``server``.

    Services come from ``container`` (an empty ``Container`` by default).
    Raises ``CompileError`` listing every problem, including a name the server
    already serves. Returns the compiled catalog of these tools.
    """
    container = container if container is not None else Container()
    problems: list[Problem] = []
    compiled = [
        tool
        for spec in specs
        if (tool := compile_function_tool(spec, container, problems, toolset=spec.toolset))
        is not None
    ]
    taken = _served_names(server)
    for tool in compiled:
        if tool.name in taken:
            problems.append(
                problem(
                    (f"tool {tool.name!r}",),
                    f"{server.name} already serves a tool named {tool.name!r}",
                    "tool names are unique across a server",
                )
            )
    declaration = type("PutOnServer", (Server,), {"name": server.name, "__module__": __name__})
    try:
        catalog = compile_server(declaration, container, extra_tools=compiled, views_elsewhere=True)
    except CompileError as exc:
        raise CompileError(server.name, [*problems, *exc.problems]) from None
    if problems:
        raise CompileError(server.name, problems)
    dispatcher = _Dispatcher(catalog, container)
    if isinstance(server, MCPServer):
        for tool in catalog.tools.values():
            mcpserver_tools(server)[tool.name] = _AdapterTool.of(tool, dispatcher)
        if any(tool.hooks.any or view_of(tool) for tool in catalog.tools.values()):
            _filter_listing(server, dispatcher)
    else:
        _install(server, catalog, dispatcher)
        _PUT.setdefault(server, set()).update(catalog.tools)
    return catalog


def _served_names(server: MCPServer[Any] | SdkServer[Any]) -> set[str]:
    if isinstance(server, MCPServer):
        return set(mcpserver_tools(server))
    return set(_PUT.get(server, ()))


class _Hidden(MCPError):
    """A call to a tool its hooks hide: the answer to an unknown name (same code and
    message), told apart so the server it was put on can answer as for a name it
    does not serve."""

    def __init__(self, name: str) -> None:
        super().__init__(types.INVALID_PARAMS, f"Unknown tool: {name}")


class _Dispatcher(Dispatcher):
    """The host's dispatcher, raising ``_Hidden`` for a tool its hooks hide."""

    def hidden(self, kind: str, name: str) -> MCPError:
        return _Hidden(name)


class _AdapterTool(SdkTool):
    """An ``MCPServer`` tool entry whose ``run`` is the adapter's dispatcher."""

    _dispatcher: Dispatcher = PrivateAttr()
    _compiled: CompiledTool = PrivateAttr()

    @classmethod
    def of(cls, tool: CompiledTool, dispatcher: Dispatcher) -> _AdapterTool:
        entry = tool.legacy
        adapter = built_unvalidated(
            cls,
            fn=tool.handler.function or _no_function,
            name=tool.name,
            title=entry.title,
            description=entry.description,
            parameters=entry.input_schema,
            fn_metadata=FuncMetadata(arg_model=ArgModelBase, output_schema=entry.output_schema),
            is_async=True,
            context_kwarg=None,
            resolved_params={},
            resolver_plans={},
            annotations=entry.annotations,
            icons=entry.icons,
            meta=entry.meta,
        )
        adapter._dispatcher = dispatcher
        adapter._compiled = tool
        return adapter

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> types.CallToolResult | types.InputRequiredResult:
        ctx = _request_context(context)
        params = types.CallToolRequestParams(name=self.name, arguments=arguments)
        try:
            result = await self._dispatcher.call_tool(ctx, params)
        except _Hidden:
            # what MCPServer's tool manager raises for a name it does not serve
            raise ToolError(f"Unknown tool: {self.name}") from None
        output = self._compiled.output
        if (
            isinstance(result, types.CallToolResult)
            and is_modern(ctx)
            and output is not None
            and not output.is_object
            and not result.is_error
            and result.structured_content is not None
        ):
            wrapped = {LEGACY_WRAP_KEY: result.structured_content}
            return result.model_copy(update={"structured_content": wrapped})
        if isinstance(result, CreateTaskResult):  # no task engine here: never started
            raise ToolError(f"{self.name} runs as a task, which MCPServer does not serve")
        return result


def _no_function() -> None:
    """Placeholder ``fn`` (the dispatcher runs the tool)."""


def _request_context(context: Any) -> Any:
    """The SDK request context of an ``MCPServer`` ``Context``; ``None`` outside a request."""
    try:
        return context.request_context
    except (AttributeError, ValueError):
        return None


async def _visible(
    dispatcher: Dispatcher, ctx: Any, listed: list[types.Tool], ours: Callable[[str], bool]
) -> list[types.Tool]:
    """``listed`` without the tools of ``dispatcher`` that their hooks hide from this
    request (``ours(name)``: the entry is one of them), and without their views for a
    client that did not negotiate MCP Apps; one listing scope, in order."""
    tools = dispatcher.catalog.tools
    page = [(tools[entry.name], entry) for entry in listed if ours(entry.name)]
    if any(view_of(tool) for tool, _ in page) and not supports_apps(dispatcher.request(ctx)):
        plain = {id(entry): without_view(entry) for _, entry in page}
        listed = [plain.get(id(entry), entry) for entry in listed]
        page = [(tool, plain[id(entry)]) for tool, entry in page]
    if not any(tool.hooks.any for tool, _ in page):
        return listed
    shown = {id(entry) for entry in await dispatcher._filter(ctx, page)}
    return [entry for entry in listed if not ours(entry.name) or id(entry) in shown]


def _filter_listing(server: MCPServer[Any], dispatcher: Dispatcher) -> None:
    """Wrap ``server``'s ``tools/list`` so a put tool its hooks hide is not listed."""
    lowlevel = mcpserver_lowlevel(server)
    previous = lowlevel.get_request_handler("tools/list")
    if previous is None:  # pragma: no cover - MCPServer always registers one
        return

    def ours(name: str) -> bool:
        entry = mcpserver_tool(server, name)
        return isinstance(entry, _AdapterTool) and entry._dispatcher is dispatcher

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        result = types.ListToolsResult.model_validate(
            await previous.handler(ctx, params), from_attributes=True
        )
        tools = await _visible(dispatcher, ctx, list(result.tools), ours)
        return result.model_copy(update={"tools": tools})

    lowlevel.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)


def _install(server: SdkServer[Any], catalog: Catalog, dispatcher: Dispatcher) -> None:
    previous_list = server.get_request_handler("tools/list")
    previous_call = server.get_request_handler("tools/call")
    ours = catalog.tools
    hooked = any(tool.hooks.any for tool in ours.values())
    filtered = hooked or any(view_of(tool) for tool in ours.values())

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        result = types.ListToolsResult(tools=[])
        if previous_list is not None:
            result = types.ListToolsResult.model_validate(
                await previous_list.handler(ctx, params), from_attributes=True
            )
        if cursor is not None:
            return result  # the previous handler's later pages
        modern = is_modern(ctx)
        mine = [tool.modern if modern else tool.legacy for tool in ours.values()]
        if filtered:
            mine = await _visible(dispatcher, ctx, mine, ours.__contains__)
        return result.model_copy(update={"tools": [*result.tools, *mine]})

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        if params.name in ours:
            try:
                return await dispatcher.call_tool(ctx, params)
            except _Hidden:
                pass  # hidden: answered below, as for a name this server does not serve
        if previous_call is not None:
            return await previous_call.handler(ctx, params)
        raise unknown("tool", params.name)

    paginated = types.PaginatedRequestParams
    alone = previous_list is None and previous_call is None
    server.add_request_handler(
        "tools/list", paginated, dispatcher.list_tools if alone and not filtered else list_tools
    )
    server.add_request_handler(
        "tools/call",
        types.CallToolRequestParams,
        dispatcher.call_tool if alone and not hooked else call_tool,
    )
