"""FastMCP's side of the HTTP benchmark; imported only inside its own venv.

The ``add`` tool of :mod:`benchmarks.mcp_workload` with ``Depends`` (uncalled-for):
the singleton ``Clock`` is the prebuilt ``CLOCK``, the ``Ledger`` is built per call.
No ``from __future__ import annotations`` here: FastMCP reads the annotations of
the tool and of the dependency functions from this module's globals.
"""

from typing import Any

from fastmcp import FastMCP  # type: ignore[import-not-found, unused-ignore]
from fastmcp.dependencies import Depends  # type: ignore[import-not-found, unused-ignore]

from benchmarks.mcp_workload import CLOCK, TOOL, AddResult, Clock, Ledger


async def depends_clock() -> Clock:
    return CLOCK


async def depends_ledger(clock: Clock = Depends(depends_clock)) -> Ledger:  # noqa: B008
    return Ledger(clock)


def app(path: str, host: str) -> Any:
    """FastMCP + ``Depends``: stateless streamable HTTP, JSON responses."""
    server = FastMCP("fastmcp-depends")

    @server.tool(name=TOOL)  # type: ignore[untyped-decorator, unused-ignore]
    async def add(
        a: int,
        b: int,
        ledger: Ledger = Depends(depends_ledger),  # noqa: B008
        clock: Clock = Depends(depends_clock),  # noqa: B008
    ) -> AddResult:
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return server.http_app(path=path, transport="http", stateless_http=True, json_response=True)
