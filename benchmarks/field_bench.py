"""Runs inside ``.bench-venvs/field``: FastMCP + Depends and dishka-fastmcp, per call.

``python -m benchmarks.field_bench --settings JSON`` prints one JSON object:
the versions, notes, and every row's samples (ns per call), measured with
:mod:`benchmarks.harness` on the workload of :mod:`benchmarks.mcp_workload`,
with a floor measured here, on this venv's ``mcp``. Started by
:mod:`benchmarks.field_venv`; it imports neither this project's lock nor
matplotlib, only the harness, the workload and the contenders.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

import dishka
from dishka_fastmcp import (  # type: ignore[import-not-found]
    FromDishka,
    dishka_lifespan,
    inject,
    setup_dishka,
)
from fastmcp import FastMCP  # type: ignore[import-not-found]
from fastmcp.dependencies import Depends  # type: ignore[import-not-found]

from benchmarks import harness
from benchmarks.harness import Case
from benchmarks.mcp_workload import (
    CALL,
    CLOCK,
    LEGACY,
    MODERN,
    MODES,
    TOOL,
    AddResult,
    Clock,
    Ledger,
    check_server,
    connected,
    disconnect,
    floor_server,
    mcpserver_resolve,
)

SCENARIO = {MODERN: "field-modern", LEGACY: "field-legacy"}
PROJECT_MCP = "2.3.0"
"""The ``mcp`` this project pins: this adapter runs here only on that version."""


async def depends_clock() -> Clock:
    return CLOCK


async def depends_ledger(clock: Clock = Depends(depends_clock)) -> Ledger:  # noqa: B008
    return Ledger(clock)


def fastmcp_depends() -> Any:
    """FastMCP with ``Depends`` (uncalled-for); served by its low-level SDK ``Server``."""
    app = FastMCP("fastmcp-depends")

    @app.tool(name=TOOL)  # type: ignore[untyped-decorator]
    async def add(
        a: int,
        b: int,
        ledger: Ledger = Depends(depends_ledger),  # noqa: B008
        clock: Clock = Depends(depends_clock),  # noqa: B008
    ) -> AddResult:
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return app._mcp_server


def dishka_fastmcp() -> Any:
    """dishka-fastmcp: ``@inject`` + ``FromDishka``, Clock in APP scope, Ledger in REQUEST."""
    provider = dishka.Provider()
    provider.provide(Clock, scope=dishka.Scope.APP)
    provider.provide(Ledger, scope=dishka.Scope.REQUEST)
    container = dishka.make_async_container(provider)
    app = FastMCP("dishka-fastmcp", lifespan=dishka_lifespan(container))
    setup_dishka(container, app)

    @app.tool(name=TOOL)  # type: ignore[untyped-decorator]
    @inject  # type: ignore[untyped-decorator]
    async def add(
        a: int, b: int, ledger: FromDishka[Ledger], clock: FromDishka[Clock]
    ) -> AddResult:
        return AddResult(sum=ledger.add(a, b) + clock.offset)

    return app._mcp_server


def _adapter() -> tuple[Callable[[], Any] | None, str]:
    version = metadata.version("mcp")
    if version != PROJECT_MCP:
        return None, f"this adapter is not run in the field venv: its mcp is {version}"
    try:
        from benchmarks.mcp_call_suite import adapter_constructor
    except ImportError as exc:
        return None, f"this adapter is not run in the field venv: {exc}"
    return adapter_constructor, ""


def contenders() -> tuple[list[tuple[str, str, Callable[[], Any], str]], list[str]]:
    """``(name, tag, make server, note)`` per contender, and notes."""
    notes = []
    found: list[tuple[str, str, Callable[[], Any], str]] = [
        (
            "low-level Server, hand-written (field floor)",
            "floor",
            floor_server,
            "this venv's mcp; same code as the main floor",
        ),
    ]
    make_adapter, why = _adapter()
    if make_adapter is not None:
        found.append(
            (
                "this adapter (singleton by constructor, scoped by handle())",
                "ours-constructor",
                make_adapter,
                "src/ on sys.path",
            )
        )
    else:
        notes.append(why)
    found += [
        ("MCPServer + Resolve", "resolve", mcpserver_resolve, "async resolvers"),
        (
            "FastMCP + Depends",
            "fastmcp-depends",
            fastmcp_depends,
            "async `Depends` factories",
        ),
        (
            "dishka-fastmcp",
            "dishka-fastmcp",
            dishka_fastmcp,
            "`@inject`, `FromDishka`; Clock APP, Ledger REQUEST",
        ),
    ]
    return found, notes


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.field_bench")
    parser.add_argument("--settings", required=True, help="harness.Settings as JSON")
    args = parser.parse_args()
    settings = harness.Settings(**json.loads(args.settings))
    found, notes = contenders()

    def say(message: str) -> None:
        print(f"[mcp_call: field venv] {message}", file=sys.stderr, flush=True)

    async def check() -> None:
        for name, _, make, _ in found:
            await check_server(make(), name)

    say("verifying contenders")
    asyncio.run(check())
    cases = [
        Case(
            SCENARIO[mode],
            name,
            CALL,
            connected(make, mode),
            is_async=True,
            anchor=tag == "floor",
            note=note,
            tag=tag,
            teardown=disconnect,
        )
        for mode in MODES
        for name, tag, make, note in found
    ]
    say(f"{len(cases)} cases; {settings.describe()}")
    results = harness.run(cases, settings, progress=say)
    packages = ("mcp", "pydantic", "fastmcp", "dishka", "dishka-fastmcp", "uncalled-for")
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in packages)
    python = ".".join(str(part) for part in sys.version_info[:3])
    answer = {
        "versions": f"Python {python}, {versions}",
        "notes": notes,
        "results": [
            {
                "scenario": r.case.scenario,
                "name": r.case.name,
                "tag": r.case.tag,
                "anchor": r.case.anchor,
                "note": r.case.note,
                "stmt": r.case.stmt,
                "number": r.number,
                "samples_ns": r.samples_ns,
            }
            for r in results
        ],
    }
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
