"""Open state: memory per open state handle and per 2025-11-25 session, and the cost of a
call that uses one handle while 10, 1,000 or 10,000 are open.

The workload is :mod:`benchmarks.workloads.open_state` (a counter per handle; the peer is
``MCPServer`` keeping its counters in a dict written by hand).

- **calls**: ``bump(counter)`` through ``mcp.Client`` (2026-07-28, in process) with N
  handles open, each opened and used once by the setup; the timed call always uses the
  same one. Memory per handle beside it, from a process of its own that opens the
  handles the same way: ``tracemalloc`` (what Python allocated and still holds) and
  RSS (what the process grew by), each from a baseline taken after a warm-up.
- **sessions**: 2025-11-25 sessions of stateful streamable HTTP apps (JSON answers),
  driven in process through the apps' ASGI callables (no socket): ``initialize`` and
  ``notifications/initialized``, the session left open. CPU time to open one, and
  memory per open session, as for handles.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.harness.curves import Curve, Series
from benchmarks.harness.suite import Column, Measured, RunOptions, Suite, Table, Target, find
from benchmarks.harness.timing import Case, Result, Row, ratio, run
from benchmarks.harness.venv import ROOT
from benchmarks.workloads.http import quiet_sdk_logs, running
from benchmarks.workloads.open_state import (
    BUMP,
    CALLS,
    OPEN,
    OURS,
    PEER,
    QUIET,
    SESSION,
    SESSION_APPS,
    call_in_session,
    count_of,
    handles,
    measured,
    open_session,
)

HANDLES = (10, 1_000, 10_000)
QUICK_HANDLES = (10, 50)
SESSIONS = (100, 1_000)
QUICK_SESSIONS = (5, 20)
FLAT = 1.15
"""A call with 10,000 handles open may cost at most this much more than with 10."""
HANDLE_BUDGET = 2048
"""Bytes (``tracemalloc``) one open handle, used once, may hold at the largest count."""

HANDLE_MEMORY = "handles"
MEMORY = {CALLS: HANDLE_MEMORY, SESSION: SESSION}
"""The scenario of each measure's memory rows."""
NAMES = {OURS: "this adapter, state handle", PEER: "MCPServer, dict by hand"}
SESSION_NAMES = {
    OURS: "this adapter (http_app)",
    QUIET: "this adapter (http_app, subscription_bus=False)",
    PEER: "MCPServer (streamable_http_app)",
}
KINDS = {CALLS: (OURS, PEER), SESSION: (OURS, QUIET, PEER)}
STMT = f'await client.call_tool("{BUMP}", args)'


# -- opening many: handles and sessions, and what they cost -------------------------------


def _memory(what: str, counts: Sequence[int], options: RunOptions) -> dict[str, Any]:
    """Per kind and count: bytes per item by tracemalloc and by RSS, CPU seconds to open
    one. A full run measures each kind in a process of its own (a clean heap and RSS);
    ``--quick``, a smoke run whose figures nobody reads, in this one."""
    found: dict[str, Any] = {}
    for kind in KINDS[what]:
        if options.quick:
            found[kind] = asyncio.run(measured(what, kind, counts))
            continue
        options.progress(f"{what}: memory of {kind} up to {counts[-1]:,}, own process")
        argv = [sys.executable, "-m", "benchmarks.suites.open_state", what, kind]
        done = subprocess.run(
            [*argv, *map(str, counts)], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True
        )
        found[kind] = {int(n): figures for n, figures in json.loads(done.stdout).items()}
    return found


# -- the run ------------------------------------------------------------------------------

OPENED = {CALLS: "open_counter + bump", SESSION: "initialize + notifications/initialized"}


def _rows(what: str, counts: Sequence[int], memory: Mapping[str, Any]) -> list[Result]:
    """One row per kind and count: CPU to open one (one sample), bytes per item in ``extra``."""
    names = NAMES if what == CALLS else SESSION_NAMES
    label = "handles" if what == CALLS else "sessions"
    results = []
    for kind in KINDS[what]:
        for count in counts:
            figures = memory[kind][count]
            case = Case(
                MEMORY[what],
                f"{names[kind]}, {count:,} {label} open",
                OPENED[what],
                dict,
                anchor=kind == PEER and count == counts[-1],
                tag=f"{kind}-{count}",
            )
            extra = {"traced": figures["traced"], "rss": figures["rss"]}
            results.append(Result(case, count, [figures["cpu_s"] * 1e9], extra=extra))
    return results


def _series(
    memory: Mapping[str, Any], counts: Sequence[int], names: Mapping[str, str]
) -> list[Series]:
    return [
        Series(
            f"{names[kind]} ({how})",
            [(n, memory[kind][n][how] / 1024) for n in counts],
            ours=kind != PEER,
        )
        for kind in memory
        for how in ("traced", "rss")
    ]


def measure(options: RunOptions) -> Measured:
    handle_counts = QUICK_HANDLES if options.quick else HANDLES
    session_counts = QUICK_SESSIONS if options.quick else SESSIONS
    held_by_handles = _memory(CALLS, handle_counts, options)
    held_by_sessions = _memory(SESSION, session_counts, options)
    curves = [
        Curve(
            "Open state handles (each used once): memory per handle",
            "handles open",
            "KiB per handle",
            _series(held_by_handles, handle_counts, NAMES),
            from_zero=True,
        ),
        Curve(
            "2025-11-25 sessions (stateful HTTP): memory per session",
            "sessions open",
            "KiB per session",
            _series(held_by_sessions, session_counts, SESSION_NAMES),
            from_zero=True,
        ),
    ]
    options.progress(f"timing calls with {', '.join(f'{n:,}' for n in handle_counts)} handles open")
    calls = run(call_cases(handle_counts), options.settings, progress=options.progress)
    curves.insert(
        0,
        Curve(
            "A call using one handle, by handles open (median)",
            "handles open",
            "µs per call (CPU)",
            [
                Series(
                    NAMES[kind],
                    [
                        (_count_of(r.case.tag), r.median_ns / 1000)
                        for r in calls
                        if r.case.tag.rsplit("-", 1)[0] == kind
                    ],
                    ours=kind == OURS,
                )
                for kind in (OURS, PEER)
            ],
            from_zero=True,
        ),
    )
    results = _rows(CALLS, handle_counts, held_by_handles)
    results += _rows(SESSION, session_counts, held_by_sessions)
    return Measured([*calls, *results], curves=curves)


async def _call_setup(kind: str, count: int) -> Mapping[str, Any]:
    """A client with ``count`` handles open (each used once); ``args`` name one of them,
    bumped once more here to check it counts on from its own state."""
    opener = await handles(kind)
    opened = [await opener.open() for _ in range(count)]
    chosen = opened[len(opened) // 2]
    client = opener.client
    args = {"counter": chosen}
    if count_of(await client.call_tool(BUMP, args)) != 2:
        raise AssertionError(f"{NAMES[kind]}: the chosen handle did not count on to 2")
    return {"client": client, "args": args, "_close": opener.close}


async def _teardown(names: Mapping[str, Any]) -> None:
    await names["_close"]()


def call_cases(counts: Sequence[int]) -> list[Case]:
    """The timed calls: one per contender and number of handles open."""
    return [
        Case(
            CALLS,
            f"{NAMES[kind]}, {count:,} handles open",
            STMT,
            functools.partial(_call_setup, kind, count),
            is_async=True,
            anchor=kind == OURS and count == counts[0],
            tag=f"{kind}-{count}",
            teardown=_teardown,
        )
        for kind in (OURS, PEER)
        for count in counts
    ]


# -- verification -------------------------------------------------------------------------


def verify(options: RunOptions | None = None) -> None:
    """Each handle counts on its own state, in process and in a 2025-11-25 session."""

    async def check() -> None:
        quiet_sdk_logs()
        for kind in (OURS, PEER):
            opener = await handles(kind)
            client = opener.client
            first, second = await opener.open(), await opener.open()
            counts = [
                count_of(await client.call_tool(BUMP, {"counter": h}))
                for h in (first, first, second)
            ]
            await opener.close()
            if counts != [2, 3, 2]:
                raise AssertionError(f"{NAMES[kind]}: bumps counted {counts}, not [2, 3, 2]")
        for kind in KINDS[SESSION]:
            app = SESSION_APPS[kind]()
            close = await running(app)
            try:
                session = await open_session(app)
                opened = await call_in_session(app, session, OPEN, {}, 2)
                handle = opened["content"][0]["text"]
                counts = [
                    (await call_in_session(app, session, BUMP, {"counter": handle}, n))
                    .get("structuredContent", {})
                    .get("count")
                    for n in (3, 4)
                ]
            finally:
                await close()
            if counts != [1, 2]:
                raise AssertionError(f"{SESSION_NAMES[kind]}: session bumps counted {counts}")

    asyncio.run(check())


# -- targets, columns ---------------------------------------------------------------------


def targets(table: Table) -> list[Target]:
    found = []
    ours = sorted((r for r in table.get(CALLS, ()) if _kind(r) == OURS), key=_count)
    if len(ours) > 1:
        spread = ratio(ours[-1].result, ours[0].result)
        found.append(
            Target(
                f"a call using one handle with {_count(ours[-1]):,} open <= {FLAT}x "
                f"with {_count(ours[0]):,} open (flat)",
                spread <= FLAT,
                f"{spread:.2f}x",
            )
        )
    held = sorted((r for r in table.get(HANDLE_MEMORY, ()) if _kind(r) == OURS), key=_count)
    if held:
        per_handle = held[-1].result.extra["traced"]
        found.append(
            Target(
                f"memory per open handle (used once) at {_count(held[-1]):,} open <= "
                f"{HANDLE_BUDGET:,} bytes (tracemalloc)",
                per_handle <= HANDLE_BUDGET,
                f"{per_handle:,.0f} bytes",
            )
        )
    sessions = table.get(SESSION, ())
    if sessions:
        most = max(_count(r) for r in sessions)
        peer_row = find(table, SESSION, f"{PEER}-{most}")
        for kind in (OURS, QUIET):
            row = find(table, SESSION, f"{kind}-{most}")
            if row is None or peer_row is None:
                continue
            mine, theirs = (r.result.extra["traced"] for r in (row, peer_row))
            found.append(
                Target(
                    f"memory per 2025-11-25 session at {most:,} open, {SESSION_NAMES[kind]}, "
                    "<= MCPServer's (tracemalloc)",
                    mine <= theirs,
                    f"{mine / 1024:,.1f} KiB vs {theirs / 1024:,.1f} KiB ({mine / theirs:.2f}x)",
                )
            )
    return found


def _count_of(tag: str) -> int:
    return int(tag.rsplit("-", 1)[1])


def _count(row: Row) -> int:
    return _count_of(row.case.tag)


def _kind(row: Row) -> str:
    return row.case.tag.rsplit("-", 1)[0]


def _bytes(key: str) -> Callable[[Row], str]:
    return lambda row: f"{row.result.extra[key]:,.0f}"


MEMORY_COLUMNS = (
    Column("bytes each (tracemalloc)", _bytes("traced")),
    Column("bytes each (RSS)", _bytes("rss")),
)
COLUMNS: Mapping[str, Sequence[Column]] = {HANDLE_MEMORY: MEMORY_COLUMNS, SESSION: MEMORY_COLUMNS}

SUITE = Suite(
    name="open_state",
    title="Open state: state handles and 2025-11-25 sessions",
    scenarios={
        CALLS: "A call using one state handle (2026-07-28, mcp.Client in process), by handles open",
        HANDLE_MEMORY: "State handles: CPU to open one and use it once, memory per open handle",
        SESSION: "2025-11-25 sessions (stateful streamable HTTP, ASGI in process): "
        "CPU to open one, memory per open session",
    },
    cases=lambda _options: [],  # the calls are timed by measure, beside the curves
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "mcp"),
    limits={CALLS: FLAT},
    measure=measure,
    units={CALLS: "us", HANDLE_MEMORY: "us", SESSION: "us"},
    ratio_titles={
        CALLS: "x adapter, 10 handles open",
        HANDLE_MEMORY: "x MCPServer (most open)",
        SESSION: "x MCPServer (most open)",
    },
    columns=COLUMNS,
    notes=(
        "Handles: each opened by `open_counter` and used once by `bump` (its `Tally`, a "
        "`Lifetime.SESSION` service, built), through `mcp.Client` in process; the adapter's "
        "limits lifted (`HandleLimits(max_per_client=None, max_handles=None)`). The peer "
        "keeps a `Tally` per `secrets.token_urlsafe(24)` in a dict inside its tools, with "
        "no owner check, expiry or limit: a floor, not a feature match.",
        "Memory: a process per contender and measure, warmed up by 5 items, then "
        "`gc.collect()` and a baseline; each count's figure is (held - baseline) / count. "
        "`tracemalloc` counts Python's allocations still held; RSS is what the process "
        "grew by (allocator arenas and pages included, so it is coarse at small counts).",
        "Sessions: the apps' lifespans run (session managers), each session opened by "
        "`initialize` and `notifications/initialized` posted to the ASGI callable and "
        "left open; session limits lifted on both. Their CPU figure is the CPU time of "
        "opening them all divided by their number (one sample), not a harness loop.",
        "What a 2025-11-25 session holds beyond MCPServer's: the adapter announces list "
        "changes (and subscribed resources' updates) to every session, so "
        "`notifications/initialized` starts a delivery loop that lives as long as the "
        "session; the SDK keeps that notification's whole request context (the Starlette "
        "request and the ASGI wrappers' `receive` chain) referenced from the handler's "
        "frames while it runs. `subscription_bus=False` (no change notifications) shows "
        "the session without it.",
    ),
)


def main(argv: Sequence[str]) -> int:
    """``python -m benchmarks.suites.open_state calls|sessions KIND N [N ...]``: memory."""
    what, kind, *counts = argv
    quiet_sdk_logs()
    figures = asyncio.run(measured(what, kind, [int(n) for n in counts]))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
