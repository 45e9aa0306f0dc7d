"""Over HTTP on 127.0.0.1: ``tools/call`` per second and its latency, 1 and 2 workers.

The per-call workload, served over stateless streamable HTTP with JSON responses
under uvicorn, in processes of their own (:mod:`benchmarks.suites.served`: how they
are started, checked and loaded in passes): this adapter through ``mcp-adapter
serve`` (the documented way) and as ``http_app`` under uvicorn, the SDK's low-level
``Server`` with hand-written handlers (the floor), ``MCPServer`` with ``Resolve``
(the anchor of each table), and FastMCP with ``Depends`` from a venv of its own.
The ``asgi`` scenario times each app's ASGI callable in this process, without
sockets, with the harness; every app that runs here is also checked in process
(one ``Ledger`` per request, one ``Clock``, a bad argument refused).

This module is the suite: which contenders, the ``asgi`` scenario, the targets and
the columns.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from importlib import metadata
from typing import Any

from benchmarks.harness.suite import (
    CALLS_TIMED,
    Column,
    Measured,
    RunOptions,
    Suite,
    Table,
    Target,
    figure,
    find,
)
from benchmarks.harness.timing import Case, Row, Settings
from benchmarks.suites.served import (
    FASTMCP,
    FLOOR,
    Contender,
    Timing,
    contender,
    pass_ratio,
    passes,
    results,
)
from benchmarks.workloads.http import (
    EXPECT,
    adapter_app,
    adapter_lean_app,
    answered,
    caller,
    check_refusal,
    floor_app,
    floor_hook_app,
    mcpserver_app,
    quiet_sdk_logs,
    request_body,
)
from benchmarks.workloads.http import running as lifespan
from benchmarks.workloads.mcp import check_calls

SCENARIO = {1: "http-1", 2: "http-2"}
ASGI = "asgi"


def contenders(quick: bool, fastmcp: bool) -> list[Contender]:
    """One worker: the anchor, the floor, this adapter two ways (and, in a full run, without
    its disconnect watcher); two workers: the same and MCPServer on uvicorn's own listener;
    FastMCP in each when its venv is there."""
    one = ["mcpserver", "floor", "ours-cli", "ours-app"] + ([] if quick else ["ours-lean"])
    two = [] if quick else ["mcpserver", "floor", "ours-cli", "ours-app", "mcpserver-stock"]
    extra = ["fastmcp"] if fastmcp else []
    return [contender(tag, 1) for tag in one + extra] + [
        contender(tag, 2) for tag in two + (extra if two else [])
    ]


def measure(options: RunOptions) -> Measured:
    timing = Timing.for_run(options.quick)
    if timing.passes < 1:
        return Measured(
            notes=(
                "Over the wire: not measured in this run (`BENCH_HTTP_PASSES=0`); "
                "`python -m benchmarks.http_wire` measures it on its own.",
            )
        )
    notes: list[str] = [f"HTTP timing: {timing.describe()}."]
    versions = [
        f"uvicorn {metadata.version('uvicorn')} ({_uvicorn_flavour()}), "
        f"starlette {metadata.version('starlette')}"
    ]
    unusable = FASTMCP.unusable(options.venvs, options.progress)
    if unusable:
        notes.append(f"FastMCP rows {unusable}.")
    else:
        packages = ("fastmcp", "mcp", "uvicorn", "starlette", "pydantic")
        versions.append(f"FastMCP venv: {FASTMCP.versions(*packages)}")
    fastmcp = not unusable
    chosen = contenders(options.quick, fastmcp)
    options.progress(f"{len(chosen)} servers; {timing.describe()}")
    found, left_out = results(passes(chosen, timing, options.progress))
    return Measured(found, notes + left_out, versions)


def _uvicorn_flavour() -> str:
    found = []
    for module in ("uvloop", "httptools"):
        try:
            __import__(module)
            found.append(module)
        except ImportError:
            continue
    return "auto: " + (", ".join(found) if found else "asyncio loop, h11")


# -- in process: the ASGI app alone ------------------------------------------------


APPS: dict[str, tuple[str, Callable[[], Any]]] = {
    "mcpserver": ("MCPServer + Resolve (anchor)", mcpserver_app),
    "floor": (FLOOR, floor_app),
    "floor-hook": (f"{FLOOR} + `get_tool_input_schema` (diagnostic)", floor_hook_app),
    "ours-app": ("this adapter, `http_app`", adapter_app),
    "ours-lean": ("this adapter, `http_app` without `CancelOnDisconnect`", adapter_lean_app),
}
"""The apps that run in this environment: tag -> (name, make app)."""


async def _asgi_setup(make: Callable[[], Any]) -> Mapping[str, Any]:
    quiet_sdk_logs()
    app = make()
    return {"call": caller(app), "_close": await lifespan(app)}


async def _asgi_teardown(names: Mapping[str, Any]) -> None:
    await names["_close"]()


def cases(options: RunOptions | None = None) -> list[Case]:
    return [
        Case(
            ASGI,
            name,
            "await call()",
            lambda make=make: _asgi_setup(make),  # type: ignore[misc]
            is_async=True,
            anchor=tag == "mcpserver",
            tag=tag,
            teardown=_asgi_teardown,
        )
        for tag, (name, make) in APPS.items()
    ]


def verify(options: RunOptions | None = None) -> None:
    """In process: each app answers, builds one ``Ledger`` per request, never a ``Clock``."""

    async def check(name: str, make: Callable[[], Any]) -> None:
        app = make()
        close = await lifespan(app)
        try:
            call = caller(app)

            async def result() -> Any:
                status, raw = await call()
                if EXPECT.encode() not in raw:
                    raise AssertionError(f"{name}: the answer lacks {EXPECT}: {raw[:300]!r}")
                return answered(status, json.loads(raw), name)

            await check_calls(result, name)
            status, raw = await caller(app, request_body("one", 2))()
            check_refusal(status, json.loads(raw), name)
        finally:
            await close()

    async def check_all() -> None:
        quiet_sdk_logs()
        for name, make in APPS.values():
            await check(name, make)

    asyncio.run(check_all())


def tune(settings: Settings, quick: bool) -> Settings:
    """The ASGI scenario: at least 500 calls per timed loop (fewer rounds)."""
    if quick:
        return replace(settings, repeats=3, min_number=50)
    return replace(settings, repeats=11, min_number=500)


# -- targets and columns -----------------------------------------------------------

SCALING = 1.5
"""2 workers on 2 cores (shared with the load generator): at least 1.5x one worker."""
OVER_MCPSERVER = 1.3
"""Issue 20: at least 1.3x MCPServer's requests per second, at least the floor's, and a
p99 latency no worse than the floor's."""
LABELS = {"ours-cli": "`mcp-adapter serve`", "ours-app": "`http_app` under uvicorn"}


def _extra(row: Row, key: str) -> float:
    return row.result.extra.get(key, 0.0)


def _passes(row: Row | None) -> dict[int, float]:
    extra = {} if row is None else row.result.extra
    return {int(key[5:]): value for key, value in extra.items() if key.startswith("pass:")}


def _ours(table: Table) -> list[tuple[str, str, Row]]:
    """``(where, label, row)`` of this adapter's rows, by worker count."""
    return [
        (f"{workers} worker{'s' if workers > 1 else ''}", label, ours)
        for workers, scenario in SCENARIO.items()
        for tag, label in LABELS.items()
        if (ours := find(table, scenario, tag)) is not None
    ]


def against_floor(table: Table) -> list[Target]:
    """Issue 20: req/s at least 1.3x MCPServer's and at least the floor's, p99 at most the
    floor's (``python -m benchmarks.http_wire`` holds its run to the same)."""
    found: list[Target] = []
    for where, label, ours in _ours(table):
        share = _extra(ours, "paired")
        found.append(
            Target(
                f"{where}: this adapter ({label}) req/s >= {OVER_MCPSERVER}x MCPServer's",
                share >= OVER_MCPSERVER,
                f"{share:.2f}x",
            )
        )
        floor = find(table, ours.case.scenario, "floor")
        if floor is None:
            continue
        ratio = pass_ratio(_passes(ours), _passes(floor))
        p99, reference = _extra(ours, "p99_ms"), _extra(floor, "p99_ms")
        found += [
            Target(
                f"{where}: this adapter ({label}) req/s >= the floor's",
                ratio is not None and ratio >= 1.0,
                "no common pass" if ratio is None else f"{ratio:.2f}x",
            ),
            Target(
                f"{where}: this adapter ({label}) p99 <= the floor's",
                p99 <= reference,
                f"{p99:.1f} vs {reference:.1f} ms",
            ),
        ]
    return found


def targets(table: Table) -> list[Target]:
    """Issue 8: req/s at least MCPServer's, and scaling with workers.

    Also, per worker count, server CPU per request at most MCPServer's: the same
    question asked of a figure a busy shared machine disturbs less than req/s.
    """
    found: list[Target] = []
    for where, label, ours in _ours(table):
        anchor = find(table, ours.case.scenario, "mcpserver")
        if anchor is None:
            continue
        share = _extra(ours, "paired")
        cpu, reference = _extra(ours, "cpu_us"), _extra(anchor, "cpu_us")
        found += [
            Target(
                f"{where}: this adapter ({label}) req/s >= MCPServer's",
                share >= 1.0,
                f"{share:.2f}x (medians {_extra(ours, 'rps'):,.0f} vs "
                f"{_extra(anchor, 'rps'):,.0f} req/s)",
            ),
            Target(
                f"{where}: this adapter ({label}) server CPU per request <= MCPServer's",
                cpu <= reference,
                f"{cpu / reference:.2f}x ({cpu:,.0f} vs {reference:,.0f} µs)",
            ),
        ]
    found += against_floor(table)

    def scaling(tag: str) -> float | None:
        one, two = (find(table, SCENARIO[n], tag) for n in (1, 2))
        return None if two is None else pass_ratio(_passes(two), _passes(one))

    reference_scaling = scaling("mcpserver")
    for tag, label in LABELS.items():
        ratio, two = scaling(tag), find(table, SCENARIO[2], tag)
        if ratio is None or two is None:
            continue
        also = f"; MCPServer {reference_scaling:.2f}x" if reference_scaling is not None else ""
        found.append(
            Target(
                f"this adapter ({label}) scales: 2 workers >= {SCALING}x the req/s of 1",
                ratio >= SCALING,
                f"{ratio:.2f}x{also}; the 2 workers used {_extra(two, 'server_cores'):.2f} cores "
                f"while the rest of the machine used {_extra(two, 'other_cores'):.2f}",
            )
        )
    return found


def _vs_anchor(row: Row) -> str:
    return f"{row.result.extra.get('paired', 1 / row.ratio):.2f}x"


def _spread(row: Row) -> str:
    extra = row.result.extra
    if not extra.get("spread_max"):
        return ""
    return f"{extra['spread_max']:.0f}/{extra['spread_min']:.0f}"


HTTP_COLUMNS = (
    Column("req/s", figure("rps", ",.0f")),
    Column("req/s vs MCPServer", _vs_anchor),
    Column("req/s vs floor", figure("over_floor", ".2f", "x")),
    Column("p50 ms", figure("p50_ms", ".1f")),
    Column("p99 ms", figure("p99_ms", ".1f")),
    Column("server CPU µs/req", figure("cpu_us", ",.0f")),
    Column("server cores", figure("server_cores", ".2f")),
    Column("others' cores", figure("other_cores", ".2f")),
)
WORKER_COLUMNS = (*HTTP_COLUMNS, Column("connections per worker", _spread))


SUITE = Suite(
    name="http",
    title="HTTP on 127.0.0.1: tools/call, stateless",
    scenarios={
        SCENARIO[1]: "1 worker (load from a second process)",
        SCENARIO[2]: "2 workers (2 cores, shared with the load)",
        ASGI: "the ASGI app alone, in process",
    },
    cases=cases,
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "mcp"),
    tune=tune,
    measure=measure,
    units={SCENARIO[1]: "us", SCENARIO[2]: "us", ASGI: "us"},
    ratio_titles={
        SCENARIO[1]: "x MCPServer (time/req)",
        SCENARIO[2]: "x MCPServer (time/req)",
        ASGI: "x MCPServer",
    },
    columns={
        SCENARIO[1]: HTTP_COLUMNS,
        SCENARIO[2]: WORKER_COLUMNS,
        ASGI: (CALLS_TIMED,),
    },
    notes=(
        "Workload: `add(a: int, b: int)` with a singleton `Clock` and a per-request "
        "`Ledger(clock)` injected, structured output `{sum}`; stateless streamable HTTP, "
        "JSON responses, one 2026-07-28 `tools/call` per request (`_meta` envelope with "
        "protocol version, client info and capabilities; `MCP-Protocol-Version`, "
        "`Mcp-Method` and `Mcp-Name` headers).",
        "HTTP tables: µs/op is 1 / throughput (wall time per request over all connections); "
        "the ratio column divides it by MCPServer's median, so lower is better there. "
        "'req/s vs MCPServer' is the median over passes of the req/s ratio to MCPServer "
        "measured in the same pass (the targets use it). p50/p99 are per-request latencies at that "
        "concurrency. 'server CPU µs/req' is the user+system CPU time of all the server's "
        "processes per request (less sensitive to a busy machine than req/s); "
        "'others' cores' is what the rest of the machine used meanwhile.",
        "Every server is checked over the wire before it is measured (sums 3 and 42, a "
        "string argument refused), and every answer during the run must be a 200 "
        "containing the structured sum. The apps that run in this environment are also "
        "checked in process: one Ledger per request, the Clock never rebuilt.",
        "uvicorn's own `--workers` listener is bound without `IPPROTO_TCP` (uvicorn "
        "issue 3149), so asyncio never sets `TCP_NODELAY` on its connections; uvicorn "
        "writes a response's head and body separately, so with Nagle on each keep-alive "
        "response waits for the client's delayed ACK (about 40 ms on Linux). That row is "
        "marked; `mcp-adapter serve` binds its listener with `IPPROTO_TCP`, and the other "
        "2-worker rows use such a listener too (benchmarks/http_serve.py).",
    ),
)
