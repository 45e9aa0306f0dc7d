"""What can be served: a ``Server`` class, a ``Catalog``, or anything that compiles to one."""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias, runtime_checkable

from container import Container
from mcp_adapter.compile.server import compile_server
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.declare.components import Server
from mcp_adapter.errors import McpAdapterError


@runtime_checkable
class Compilable(Protocol):
    """An object that builds its own catalog against a container (an extensions ``Platform``)."""

    def compile(self, container: Container) -> Catalog: ...


Servable: TypeAlias = type[Server] | Catalog | Compilable
"""Accepted by every serving helper and by the CLI."""


class NotServableError(McpAdapterError, TypeError):
    """The object given is neither a ``Server`` class, a ``Catalog`` nor a ``Compilable``."""


def catalog_of(servable: Servable | Any, container: Container) -> Catalog:
    """The catalog to serve for ``servable``; compiling raises ``CompileError`` with every problem.

    >>> from mcp_adapter import McpResponse, Server, Tool
    >>> class PingTool(Tool):
    ...     async def handle(self) -> McpResponse:
    ...         return McpResponse.text("pong")
    >>> class Demo(Server):
    ...     tools = (PingTool,)
    >>> sorted(catalog_of(Demo, Container()).tools)
    ['ping']
    """
    if isinstance(servable, Catalog):
        return servable
    if isinstance(servable, type):
        if issubclass(servable, Server):
            return compile_server(servable, container)
        raise NotServableError(
            f"{servable.__qualname__} is a class but not a Server subclass; "
            "serve a Server subclass, a Catalog, or an object with compile(container)"
        )
    if isinstance(servable, Compilable):
        catalog = servable.compile(container)
        if not isinstance(catalog, Catalog):
            raise NotServableError(
                f"{type(servable).__qualname__}.compile() returned {type(catalog).__qualname__}, "
                "not a Catalog"
            )
        return catalog
    raise NotServableError(
        f"cannot serve {type(servable).__qualname__}: expected a Server subclass, a Catalog, "
        "or an object with compile(container) -> Catalog"
    )
