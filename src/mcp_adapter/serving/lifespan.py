"""``serve_lifespan``: start-up and shutdown around serving, in one explicit order.

Start-up: 1. the container's eager singletons, in binding order
(``container.astart()``); 2. the server's ``lifespan`` entered (its ``self`` and
services resolved then, so it can use the eager singletons). Shutdown, after
the last request: 1. the lifespan left; 2. the container closed
(``close_container=True``): every singleton finalized in the reverse order
of its creation.

A failure at start-up raises :class:`~mcp_adapter.compile.lifespan.StartupError` (the
original exception is its ``__cause__``) once what had started is closed
again: eager singletons built so far (``astart`` closes the container), or, when
the lifespan fails to enter, the container (with ``close_container=True``).
A failure at shutdown propagates as itself, after the container is closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from container import Container
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.compiled.lifespan import StartupError


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@asynccontextmanager
async def serve_lifespan(
    catalog: Catalog, container: Container, *, close_container: bool = True
) -> AsyncIterator[None]:
    """Run ``catalog``'s start-up on entry and its shutdown on exit (see the module).

    Every serving path uses it once per process (``serve_stdio``, ``http_app``'s
    lifespan, ``mcp-adapter serve``); wrap an ``McpTestClient`` in it to test a
    server with its lifespan::

        async with serve_lifespan(catalog, container):
            result = await McpTestClient(container, catalog).tool("ping")
    """
    try:
        await container.astart()
    except Exception as exc:
        raise StartupError(f"building the eager singletons failed: {_cause(exc)}") from exc
    async with AsyncExitStack() as stack:
        if close_container:
            stack.push_async_callback(container.aclose)
        lifespan = catalog.lifespan
        if lifespan is not None:
            try:
                await stack.enter_async_context(await lifespan.open(container))
            except Exception as exc:
                raise StartupError(f"{lifespan.label} failed: {_cause(exc)}") from exc
        yield


@asynccontextmanager
async def transport_lifespan(
    catalog: Catalog, container: Container, *, run_lifespan: bool, close_container: bool
) -> AsyncIterator[None]:
    """What a transport (``serve_stdio``, ``http_app``) runs around serving:
    ``serve_lifespan`` with ``run_lifespan``; without it the lifespan is its caller's, and
    the container is only closed at the end (with ``close_container``)."""
    if run_lifespan:
        async with serve_lifespan(catalog, container, close_container=close_container):
            yield
        return
    async with AsyncExitStack() as stack:
        if close_container:
            stack.push_async_callback(container.aclose)
        yield
