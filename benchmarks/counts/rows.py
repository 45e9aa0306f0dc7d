"""The rows the instruction counts measure: the timed suites' own cases, chosen by key.

A row's key is ``scenario/tag`` of the timed suites (``modern/ours-constructor``,
``scoped/ours-sync``, ...), so a count and a wall-clock ratio of the same key
measure the same statement with the same setup. Every scenario has its floor
(tag ``floor``), counted the same way, and each row's ratio is to it.

Left out on purpose: the sync ``handle()`` row, whose call runs on a worker
thread (the thread's start and hand-off are scheduled by the kernel, so its
count is not repeatable), and the rows of other venvs (FastMCP, dishka-fastmcp).
The other containers' rows (``scoped/diwire-sync``, ...) and the HTTP suite's
in-process ASGI rows (``asgi/...``) are counted in processes of their own, which
import those libraries only when such a row is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.harness.timing import Case

MCP_SCENARIOS = ("modern", "legacy")
MCP_TAGS = (
    "floor",
    "ours-constructor",
    "ours-handle",
    "ours-handle-layer",
    "ours-function",
    "ours-function-layer",
    "resolve",
    "ours-elicit",
    "resolve-elicit",
)
"""A call through ``mcp.Client``; the two ``*-elicit`` rows ask the client one question
per call (a parameter ``Annotated[Approval, Resolve(fn)]`` whose resolver returns
``Elicit``), answered by the client's elicitation callback: one elicitation round."""
HANDLER_TAGS = (
    "floor",
    "ours-constructor",
    "ours-handle",
    "ours-handle-layer",
    "ours-handle-request-layer",
    "ours-handle-builtin",
)
SCOPED_TAGS = (
    "floor",
    "floor-async",
    "ours-sync",
    "ours-async",
    "ours-new-scope",
    "ours-empty-sync",
    "ours-empty-async",
)
TRANSIENT_TAGS = ("floor", "floor-async", "ours-sync", "ours-async", "ours-root")
PEER_TAGS = (
    "diwire-sync",
    "diwire-async",
    "dishka-sync",
    "dishka-async",
    "wireup-sync",
    "wireup-async",
    "di",
)
"""The other containers' rows (:mod:`benchmarks.suites.container`), scoped and transient."""
ASGI_TAGS = ("floor", "floor-hook", "ours-app", "mcpserver")
"""One ``tools/call`` over HTTP through each app's ASGI callable, in process (no socket);
``floor-hook`` is the floor with the SDK's ``get_tool_input_schema`` hook set."""

SCENARIOS: dict[str, str] = {
    "modern": "2026-07-28, direct dispatch, through mcp.Client: instructions per call",
    "legacy": "2025-11-25, JSON-RPC over memory streams, through mcp.Client: instructions per call",
    "handler": "The tools/call handler alone, awaited directly: instructions per call",
    "scoped": "Scope enter + resolve a 5-node graph + scope exit (and the scope alone): "
    "instructions per resolution",
    "transient": "Resolve a transient with no dependencies (scope already open): "
    "instructions per resolution",
    "asgi": "One stateless HTTP tools/call through the ASGI app, in process: instructions per call",
}
"""Scenario key -> its heading, in table order (the same keys as the timed suites)."""

CALL_SCENARIOS = (*MCP_SCENARIOS, "handler", "asgi")
"""Scenarios whose statement is one ``tools/call``: counted per call."""
RESOLVE_SCENARIOS = ("scoped", "transient")
"""Scenarios whose statement is one resolution: counted per resolution."""

ALL: tuple[str, ...] = (
    *(f"{scenario}/{tag}" for scenario in MCP_SCENARIOS for tag in MCP_TAGS),
    *(f"handler/{tag}" for tag in HANDLER_TAGS),
    *(f"scoped/{tag}" for tag in (*SCOPED_TAGS, *PEER_TAGS)),
    *(f"transient/{tag}" for tag in (*TRANSIENT_TAGS, *PEER_TAGS)),
    *(f"asgi/{tag}" for tag in ASGI_TAGS),
)
"""Every row, in the order the table prints them."""

BUDGET: tuple[str, ...] = (
    "modern/ours-constructor",
    "modern/ours-function",
    "modern/ours-handle-layer",
    "scoped/ours-sync",
    "scoped/ours-async",
)
"""The rows the test budget holds to the committed baseline."""


def scenario_of(key: str) -> str:
    return key.split("/", 1)[0]


def floor_of(key: str) -> str:
    """The key of the floor ``key`` is divided by."""
    return f"{scenario_of(key)}/floor"


def with_floors(keys: Sequence[str]) -> list[str]:
    """``keys`` plus the floor of each scenario they touch, in :data:`ALL`'s order."""
    unknown = set(keys) - set(ALL)
    wanted = set(keys) | {floor_of(key) for key in keys}
    if unknown:
        raise ValueError(f"unknown row(s) {', '.join(sorted(unknown))}; rows: {', '.join(ALL)}")
    return [key for key in ALL if key in wanted]


def per_call(key: str) -> bool:
    return scenario_of(key) in CALL_SCENARIOS


@dataclass(frozen=True)
class Row:
    key: str
    case: Case


def _mcp_cases() -> list[Case]:
    from benchmarks.suites import mcp_call

    return mcp_call.cases()


def _container_cases() -> list[Case]:
    from benchmarks.workloads import container as work

    return [
        *work.scoped_floors(),
        work.OURS.scoped(False),
        work.OURS.scoped(True),
        *work.scope_pieces(),
        *work.transient_floors(),
        work.OURS.transient(False),
        work.OURS.transient(True),
        work.ours_root_transient(),
    ]


def _peer_cases() -> list[Case]:
    from benchmarks.suites import container

    return [case for case in container.cases() if case.tag in PEER_TAGS]


def _asgi_cases() -> list[Case]:
    from benchmarks.suites import http

    return http.cases()


def rows(keys: Sequence[str]) -> list[Row]:
    """The cases of ``keys``, imported only for the scenarios (and libraries) asked for."""
    makers: list[Callable[[], list[Case]]] = []
    scenarios = {scenario_of(key) for key in keys}
    if scenarios & {*MCP_SCENARIOS, "handler"}:
        makers.append(_mcp_cases)
    if scenarios & set(RESOLVE_SCENARIOS):
        makers.append(_container_cases)
    if any(key.split("/", 1)[1] in PEER_TAGS for key in keys):
        makers.append(_peer_cases)
    if "asgi" in scenarios:
        makers.append(_asgi_cases)
    by_key = {f"{case.scenario}/{case.tag}": case for make in makers for case in make()}
    return [Row(key, by_key[key]) for key in keys]
