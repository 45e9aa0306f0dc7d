"""``Server.lifespan`` as compiled (``compile.lifespan``), entered at serve start with its
services."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from container import Container
from mcp_adapter.errors import McpAdapterError

LIFESPAN = "lifespan"


class StartupError(McpAdapterError):
    """Start-up failed: an eager singleton or ``Server.lifespan`` raised (the ``__cause__``)."""


@dataclass(frozen=True, slots=True)
class CompiledLifespan:
    """How to enter a server's lifespan: decided at compile time."""

    server: type
    services: tuple[tuple[str, Any], ...]
    """``(parameter name, key)`` of every injected parameter, in order."""
    generator: bool
    """An async generator method (wrapped as a context manager), else a factory of one."""

    @property
    def label(self) -> str:
        return f"{self.server.__qualname__}.{LIFESPAN}"

    async def open(self, container: Container) -> AbstractAsyncContextManager[None]:
        """The lifespan's context manager, its ``self`` and services resolved from ``container``."""
        instance: object = await container.aget(self.server)
        kwargs = {name: await container.aget(key) for name, key in self.services}
        method: Callable[..., Any] = getattr(instance, LIFESPAN)
        if self.generator:
            manager: object = asynccontextmanager(method)(**kwargs)
        else:
            manager = method(**kwargs)
        if not isinstance(manager, AbstractAsyncContextManager):
            raise TypeError(
                f"{self.label}() returned {type(manager).__name__}, not an async context manager"
            )
        return manager
