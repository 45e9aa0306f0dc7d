"""The ``add`` tool on FastMCP, with ``Depends`` and with dishka-fastmcp; imported only inside
the venvs that have them (:mod:`benchmarks.suites.field`, the HTTP suite's FastMCP venv).

The workload of :mod:`benchmarks.workloads.mcp`: the singleton ``Clock`` is the prebuilt
``CLOCK`` (or dishka's APP scope), the ``Ledger`` is built per call. No ``from __future__
import annotations`` here: FastMCP reads the annotations of the tool and of the
dependency functions from this module's globals.
"""

from typing import Any

from fastmcp import FastMCP  # type: ignore[import-not-found, unused-ignore]
from fastmcp.dependencies import Depends  # type: ignore[import-not-found, unused-ignore]

from benchmarks.workloads.mcp import CLOCK, TOOL, AddResult, Clock, Ledger


async def depends_clock() -> Clock:
    return CLOCK


async def depends_ledger(clock: Clock = Depends(depends_clock)) -> Ledger:  # noqa: B008
    return Ledger(clock)


def fastmcp_depends() -> Any:
    """FastMCP with ``Depends`` (uncalled-for)."""
    server = FastMCP("fastmcp-depends")

    @server.tool(name=TOOL)  # type: ignore[untyped-decorator, unused-ignore]
    async def add(
        a: int,
        b: int,
        ledger: Ledger = Depends(depends_ledger),  # noqa: B008
        clock: Clock = Depends(depends_clock),  # noqa: B008
    ) -> AddResult:
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return server


def app(path: str, host: str) -> Any:
    """FastMCP + ``Depends``: stateless streamable HTTP, JSON responses."""
    return fastmcp_depends().http_app(
        path=path, transport="http", stateless_http=True, json_response=True
    )


def dishka_fastmcp() -> Any:
    """dishka-fastmcp: ``@inject`` + ``FromDishka``, Clock in APP scope, Ledger in REQUEST."""
    import dishka
    from dishka_fastmcp import (  # type: ignore[import-not-found, unused-ignore]
        FromDishka,
        dishka_lifespan,
        inject,
        setup_dishka,
    )

    provider = dishka.Provider()
    provider.provide(Clock, scope=dishka.Scope.APP)
    provider.provide(Ledger, scope=dishka.Scope.REQUEST)
    container = dishka.make_async_container(provider)
    server = FastMCP("dishka-fastmcp", lifespan=dishka_lifespan(container))
    setup_dishka(container, server)

    @server.tool(name=TOOL)  # type: ignore[untyped-decorator, unused-ignore]
    @inject  # type: ignore[untyped-decorator, unused-ignore]
    async def add(
        a: int, b: int, ledger: FromDishka[Ledger], clock: FromDishka[Clock]
    ) -> AddResult:
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return server
