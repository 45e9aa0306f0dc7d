"""``Platform``: collects extensions' contributions and builds the server a client gets."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from collections.abc import Iterable, Iterator
from typing import Any, Final, Literal, overload

from container import Container, Problem
from mcp_adapter.compile.parts import declared_name, owner_of, policy_hooks
from mcp_adapter.compile.server import compile_server
from mcp_adapter.compile.tools import compile_function_tool
from mcp_adapter.compiled.catalog import Catalog, CompiledTool
from mcp_adapter.declare.components import Server
from mcp_adapter.declare.naming import valid_name
from mcp_adapter.errors import CompileError, McpAdapterError, problem
from mcp_adapter.extensions import amend
from mcp_adapter.extensions.extension import McpExtension
from mcp_adapter.extensions.points import POINTS, TOOL_EXTENSIONS, TOOLS, Contribution
from mcp_adapter.extensions.spec import ToolExtension, ToolSpec

ENTRY_POINT_GROUP: Final = "mcp_adapter.extensions"
"""The entry-point group installed distributions list their extensions under."""


class ExtensionLoadError(McpAdapterError, RuntimeError):
    """An installed entry point could not be loaded or did not yield an ``McpExtension``."""


class Platform:
    """The host: holds extensions, yields their contributions, compiles the server.

    Extensions never hold a server object; ``compile`` builds one catalog from
    every contribution (and a class-based ``Server`` declaration, when given:
    its name and version then name the server), and a transport serves it or a
    ``Catalog.select(toolsets)`` of it. A ``Platform`` is servable as is
    (``http_app``, ``serve_stdio``, ``mcp-adapter serve``).
    """

    def __init__(
        self,
        extensions: Iterable[McpExtension] = (),
        *,
        server: type[Server] | None = None,
        name: str = "mcp-adapter",
        version: str = "0.1.0",
    ) -> None:
        self.server = server
        self.name = name
        self.version = version
        self._extensions: list[McpExtension] = []
        for extension in extensions:
            self.register(extension)

    @property
    def extensions(self) -> tuple[McpExtension, ...]:
        return tuple(self._extensions)

    def register(self, extension: McpExtension | type[McpExtension]) -> McpExtension:
        """Add an extension (an instance, or a class to instantiate); returns the instance."""
        instance = extension() if isinstance(extension, type) else extension
        if not isinstance(instance, McpExtension):
            raise TypeError(f"{instance!r} is not an McpExtension")
        if all(existing is not instance for existing in self._extensions):
            self._extensions.append(instance)
        return instance

    def discover(self, group: str = ENTRY_POINT_GROUP) -> list[McpExtension]:
        """Register the extensions installed distributions list under ``group``.

        An entry point names an ``McpExtension`` subclass (instantiated without
        arguments), an instance, or a factory returning one. A class already
        registered is not registered twice. Returns the newly registered ones.
        """
        found: list[McpExtension] = []
        for entry_point in sorted(
            importlib.metadata.entry_points(group=group), key=lambda ep: ep.name
        ):
            extension = _load(entry_point)
            if any(type(existing) is type(extension) for existing in self._extensions):
                continue
            found.append(self.register(extension))
        return found

    @overload
    def get_contributions(
        self, point: Literal["mcp.tools"]
    ) -> Iterator[Contribution[ToolSpec]]: ...

    @overload
    def get_contributions(
        self, point: Literal["mcp.tools.extensions"]
    ) -> Iterator[Contribution[ToolExtension]]: ...

    @overload
    def get_contributions(self, point: str) -> Iterator[Contribution[Any]]: ...

    def get_contributions(self, point: str) -> Iterator[Contribution[Any]]:
        """Every value contributed at ``point``, with the manifest of who contributed it."""
        if point not in POINTS:
            raise ValueError(f"unknown contribution point {point!r} (known: {', '.join(POINTS)})")
        for extension in self._extensions:
            plugin = extension.manifest()
            values: list[Any] = (
                list(extension.tools()) if point == TOOLS else extension._contributed_extensions()
            )
            for value in values:
                yield Contribution(plugin, value, point, extension)

    def compile(self, container: Container, server: type[Server] | None = None) -> Catalog:
        """One catalog of every contributed tool and ``server``'s own class tools, each
        extended by name (``server`` defaults to the one given to the constructor).

        Raises ``CompileError`` listing every problem: duplicate names,
        extensions of names nobody contributed, conflicting replacements or
        amendments, and whatever stops a tool from compiling.
        """
        declaration = server or self.server or self._declaration()
        problems: list[Problem] = []
        tools = self._entries(container, problems)
        class_tools = {
            str(declared_name(cls, "Tool")) for cls in declaration.tools if isinstance(cls, type)
        }
        amendments = amend.apply(
            tools,
            list(self.get_contributions(TOOL_EXTENSIONS)),
            problems,
            owner_of=owner_of,
            class_tools=class_tools,
        )
        compiled: list[CompiledTool] = []
        for entry in tools.values():
            if not valid_name(entry.toolset):
                problems.append(
                    problem(
                        (entry.plugin.name, f"tool {entry.spec.name!r}"),
                        f"invalid toolset name {entry.toolset!r}",
                        "toolset names match [A-Za-z0-9_.-]{1,128}",
                    )
                )
            tool = compile_function_tool(
                entry.spec,
                container,
                problems,
                toolset=entry.toolset,
                owner=entry.owner,
                middleware=entry.middleware,
                governing=entry.governing,
            )
            if tool is not None:
                compiled.append(tool)

        def extend(tool: CompiledTool, found: list[Problem]) -> CompiledTool | None:
            amendment = amendments.get(tool.name)
            if amendment is None:  # nobody extends it: served as compiled
                return tool
            return amend.extend_compiled(tool, amendment, container, found)

        try:
            catalog = compile_server(
                declaration,
                container,
                extra_tools=compiled,
                extend_tool=extend if amendments else None,
            )
        except CompileError as exc:
            raise CompileError(_name(declaration), [*problems, *exc.problems]) from None
        if problems:
            raise CompileError(_name(declaration), problems)
        return dataclasses.replace(catalog, rebuild=lambda again: self.compile(again, server))

    def _entries(self, container: Container, problems: list[Problem]) -> dict[str, amend.Entry]:
        tools: dict[str, amend.Entry] = {}
        governing = {
            id(extension): policy_hooks(
                type(extension).policies,
                f"extension {extension.manifest().name}",
                container,
                problems,
            )
            for extension in self._extensions
        }
        for contribution in self.get_contributions(TOOLS):
            spec: Any = contribution.value
            plugin = contribution.plugin
            if not isinstance(spec, ToolSpec):
                problems.append(
                    problem((plugin.name,), f"{plugin.name} contributed {spec!r}, not a ToolSpec")
                )
                continue
            existing = tools.get(spec.name)
            if existing is not None:
                problems.append(
                    problem(
                        (plugin.name, f"tool {spec.name!r}"),
                        f"tool {spec.name!r} is contributed by both {existing.plugin.name} "
                        f"and {plugin.name}",
                        "tool names are unique across a server; to change another extension's "
                        "tool, extend it by name (ToolExtension)",
                    )
                )
                continue
            tools[spec.name] = amend.Entry(
                spec=_ungoverned(spec, contribution.extension),
                plugin=plugin,
                owner=type(contribution.extension),
                toolset=spec.toolset or plugin.name,
                governing=governing[id(contribution.extension)],
            )
        return tools

    def _declaration(self) -> type[Server]:
        return type(
            "PlatformServer",
            (Server,),
            {"name": self.name, "version": self.version, "__module__": __name__},
        )


def _ungoverned(spec: ToolSpec, extension: McpExtension) -> ToolSpec:
    """``spec`` without its extension's own policies (``tools()`` puts them on its specs
    for ``put_on_server``): the platform plans those once for the extension."""
    own = type(extension).policies
    if not isinstance(own, tuple | list) or not spec.policies:
        return spec
    kept = tuple(p for p in spec.policies if all(p is not q for q in own))
    return spec if len(kept) == len(spec.policies) else dataclasses.replace(spec, policies=kept)


def _name(declaration: type[Server]) -> str:
    return declaration.name or declaration.__name__


def _load(entry_point: importlib.metadata.EntryPoint) -> McpExtension:
    where = f"entry point {entry_point.name!r} ({entry_point.value}) in group {entry_point.group!r}"
    try:
        target = entry_point.load()
        extension = (
            target() if callable(target) and not isinstance(target, McpExtension) else target
        )
    except Exception as exc:
        raise ExtensionLoadError(f"cannot load {where}: {exc}") from exc
    if not isinstance(extension, McpExtension):
        raise ExtensionLoadError(f"{where} yields {extension!r}, not an McpExtension")
    return extension
