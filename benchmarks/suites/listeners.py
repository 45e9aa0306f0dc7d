"""Listeners: one change announced to 10, 100 and 1,000 ``subscriptions/listen`` streams.

Each server runs in a process of its own under uvicorn with one worker
(:mod:`benchmarks.workloads.listeners`): this adapter's ``http_app`` serving three
resources (an ``async def shouldRegister``, a sync one, none), and the SDK's
``MCPServer`` with its ``ListenHandler`` on an in-memory ``SubscriptionBus``
serving the same URIs (it has no visibility hooks). The listeners are raw HTTP
connections reading SSE in a second process (:mod:`benchmarks.harness.listen`),
so the client is never the bottleneck; each announcement is a
``POST /bench/publish`` (the container's ``Notifier`` for this adapter, the bus
for ``MCPServer``), one at a time.

Per listener count and contender: the time from the announcement until every
listener has its ``notifications/resources/updated`` (p50, p99 over the updates
of every round) and the servers' CPU time (user + system, ``/proc``) per delivered
notification. Rounds interleave the contenders in a fresh order for every count,
so a busy moment of a shared machine hits all of them. Every listener must get
every update, in order, exactly once: a contender that loses one fails the run.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.curves import Curve, Series
from benchmarks.harness.processes import HOST, Process, accepting, free_port, wait_until
from benchmarks.harness.suite import Column, Measured, RunOptions, Suite, Table, Target, find
from benchmarks.harness.timing import Case, Result, Row
from benchmarks.harness.venv import ROOT
from benchmarks.workloads.listeners import ASYNC_HOOK, LISTENERS, NO_HOOK, SYNC_HOOK

SIZES = (10, 100, 1_000)
QUICK_SIZES = (5, 20)
ANCHOR = "mcpserver"
HOOKED = ("ours-async", "ours-sync")
"""The rows the targets judge: this adapter with a visibility hook."""
FLAT = 1.25
"""CPU per delivery with the most listeners at most this much over that with 100."""
DELIVERIES = 2_000
"""Updates per round are at least enough for this many deliveries (CPU time is read in
clock ticks, 10 ms, so a round of 10 listeners needs 200 updates to read well)."""


@dataclass(frozen=True)
class Contender:
    tag: str
    name: str
    kind: str
    """The app of :mod:`benchmarks.workloads.listeners` serving it."""
    uri: str
    note: str = ""


CONTENDERS = (
    Contender(ANCHOR, "MCPServer + SubscriptionBus (anchor)", "mcpserver", NO_HOOK, "no hooks"),
    Contender(
        "ours-async", "this adapter, async shouldRegister", "adapter", ASYNC_HOOK, "on the loop"
    ),
    Contender(
        "ours-sync",
        "this adapter, sync shouldRegister",
        "adapter",
        SYNC_HOOK,
        "a worker thread, as docs/visibility.md says",
    ),
    Contender("ours-plain", "this adapter, no hook", "adapter", NO_HOOK, "diagnostic"),
)


@dataclass(frozen=True)
class Plan:
    sizes: Sequence[int]
    rounds: int
    warmup: int
    least_updates: int

    @classmethod
    def for_run(cls, quick: bool) -> Plan:
        base = cls(QUICK_SIZES, 1, 1, 3) if quick else cls(SIZES, 5, 2, 10)
        rounds = os.environ.get("BENCH_LISTEN_ROUNDS")
        return cls(
            base.sizes, int(rounds) if rounds else base.rounds, base.warmup, base.least_updates
        )

    def updates(self, listeners: int, quick: bool) -> int:
        return self.least_updates if quick else max(self.least_updates, -(-DELIVERIES // listeners))

    def describe(self, quick: bool) -> str:
        counts = ", ".join(f"{n:,} ({self.updates(n, quick)})" for n in self.sizes)
        return (
            f"{self.rounds} round{'s' if self.rounds != 1 else ''}; listeners (updates timed per "
            f"round): {counts}; {self.warmup} untimed update(s) first in each"
        )


# -- the servers ------------------------------------------------------------------------


def _listeners(port: int) -> int:
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        connection.request("GET", LISTENERS)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    if response.status != 200:
        raise OSError(f"{LISTENERS} answered {response.status}")
    return int(body)


@dataclass
class Served:
    kind: str
    port: int
    process: Process

    def idle(self) -> None:
        """Wait until the previous round's streams have ended on the server."""
        wait_until(lambda: _listeners(self.port) == 0, f"{self.kind}: listeners gone", 60)


@contextlib.contextmanager
def serving(kinds: Sequence[str]) -> Iterator[dict[str, Served]]:
    started: dict[str, Served] = {}
    try:
        for kind in kinds:
            port = free_port()
            command = [sys.executable, "-m", "benchmarks.workloads.listeners", kind]
            process = Process([*command, "--port", str(port)])
            started[kind] = Served(kind, port, process)
        for served in started.values():

            def ready(served: Served = served) -> bool:
                if served.process.exited() is not None:
                    raise SystemExit(f"{served.kind} exited: {served.process.output()}")
                return accepting(served.port) and _listeners(served.port) == 0

            wait_until(ready, f"the {served.kind} listeners server")
        yield started
    finally:
        for served in started.values():
            served.process.stop()


def listen(served: Served, uri: str, listeners: int, updates: int, warmup: int) -> dict[str, Any]:
    """One round of the load process against ``served``; raises if a listener lost one."""
    served.idle()
    command = [sys.executable, "-m", "benchmarks.harness.listen", "--port", str(served.port)]
    command += ["--uri", uri, "--listeners", str(listeners), "--updates", str(updates)]
    command += ["--warmup", str(warmup), "--pids", ",".join(map(str, served.process.pids()))]
    done = subprocess.run(
        command, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True, timeout=900
    )
    found: dict[str, Any] = json.loads(done.stdout)
    if found["errors"] or found["lost"] or found["updates"] != updates:
        raise AssertionError(
            f"{served.kind} {uri} with {listeners} listeners: {found['lost']} lost an update "
            f"({found['updates']} of {updates} complete): {found['errors']}"
        )
    return found


# -- measuring ------------------------------------------------------------------------------


@dataclass
class Figures:
    all_ms: list[float] = field(default_factory=list)
    each_ms: list[float] = field(default_factory=list)
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    deliveries: int = 0

    def add(self, found: Mapping[str, Any]) -> None:
        self.all_ms += found["all_ms"]
        self.each_ms += found["each_ms"]
        self.server_cpu_s += found["server_cpu_s"]
        self.client_cpu_s += found["client_cpu_s"]
        self.deliveries += found["updates"] * found["listeners"]


def p99(values: Sequence[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def scenario(listeners: int) -> str:
    return f"listeners-{listeners}"


def measure(options: RunOptions) -> Measured:
    plan = Plan.for_run(options.quick)
    options.progress(plan.describe(options.quick))
    figures: dict[tuple[int, str], Figures] = {}
    shuffle = random.Random(0).shuffle
    with serving(sorted({c.kind for c in CONTENDERS})) as servers:
        for number in range(plan.rounds):
            for listeners in plan.sizes:
                order = list(CONTENDERS)
                shuffle(order)
                updates = plan.updates(listeners, options.quick)
                options.progress(f"round {number + 1}: {listeners:,} listeners")
                for contender in order:
                    found = listen(
                        servers[contender.kind], contender.uri, listeners, updates, plan.warmup
                    )
                    figures.setdefault((listeners, contender.tag), Figures()).add(found)
    results = [
        result(listeners, contender, figures[listeners, contender.tag])
        for listeners in plan.sizes
        for contender in CONTENDERS
    ]
    return Measured(
        results,
        notes=(f"Listener timing: {plan.describe(options.quick)}.",),
        curves=curves(results),
    )


def result(listeners: int, contender: Contender, figures: Figures) -> Result:
    case = Case(
        scenario(listeners),
        contender.name,
        f"subscriptions/listen {contender.uri}",
        dict,
        anchor=contender.tag == ANCHOR,
        tag=contender.tag,
        note=contender.note,
    )
    return Result(
        case,
        1,
        [ms * 1e6 for ms in figures.all_ms],
        extra={
            "listeners": listeners,
            "p50_ms": statistics.median(figures.all_ms),
            "p99_ms": p99(figures.all_ms),
            "each_p50_ms": statistics.median(figures.each_ms),
            "cpu_us": figures.server_cpu_s * 1e6 / figures.deliveries,
            "client_cpu_us": figures.client_cpu_s * 1e6 / figures.deliveries,
            "updates": len(figures.all_ms),
        },
    )


def curves(results: Sequence[Result]) -> list[Curve]:
    def series(key: str) -> list[Series]:
        return [
            Series(
                contender.name,
                [
                    (r.extra["listeners"], r.extra[key])
                    for r in results
                    if r.case.tag == contender.tag
                ],
                ours=contender.tag.startswith("ours"),
            )
            for contender in CONTENDERS
        ]

    axis = "listen streams"
    return [
        Curve(
            "one update: time until every listener has it, p50",
            axis,
            "ms",
            series("p50_ms"),
            log_y=True,
        ),
        Curve(
            "one update: time until every listener has it, p99",
            axis,
            "ms",
            series("p99_ms"),
            log_y=True,
        ),
        Curve("server CPU per delivered notification", axis, "µs", series("cpu_us")),
    ]


# -- verification ----------------------------------------------------------------------------


def verify(options: RunOptions) -> None:
    """Every contender delivers every update to every listener (3 listeners, 2 updates)."""
    with serving(sorted({c.kind for c in CONTENDERS})) as servers:
        for contender in CONTENDERS:
            listen(servers[contender.kind], contender.uri, 3, 2, 0)


def cases(options: RunOptions) -> list[Case]:
    return []


# -- targets and columns ------------------------------------------------------------------------


def _extra(row: Row, key: str) -> float:
    return row.result.extra[key]


def targets(table: Table) -> list[Target]:
    """At most MCPServer's p50 and CPU per delivery at every count, hooks included; CPU per
    delivery flat from 100 listeners to the most."""
    found: list[Target] = []
    sizes = sorted(int(key.rsplit("-", 1)[1]) for key in table)
    for listeners in sizes:
        anchor = find(table, scenario(listeners), ANCHOR)
        if anchor is None:
            continue
        for tag in HOOKED:
            ours = find(table, scenario(listeners), tag)
            if ours is None:
                continue
            for key, what, unit in (
                ("p50_ms", "p50 latency", "ms"),
                ("cpu_us", "CPU per delivery", "µs"),
            ):
                mine, theirs = _extra(ours, key), _extra(anchor, key)
                found.append(
                    Target(
                        f"{listeners:,} listeners: {ours.case.name}: {what} <= MCPServer's",
                        mine <= theirs,
                        f"{_share(mine, theirs)} ({mine:,.1f} vs {theirs:,.1f} {unit})",
                    )
                )
    if len(sizes) >= 2:
        small, big = (100 if 100 in sizes else sizes[-2]), sizes[-1]
        for tag in HOOKED:
            low, high = find(table, scenario(small), tag), find(table, scenario(big), tag)
            if low is None or high is None:
                continue
            high_us, low_us = _extra(high, "cpu_us"), _extra(low, "cpu_us")
            found.append(
                Target(
                    f"{low.case.name}: CPU per delivery with {big:,} listeners <= {FLAT}x "
                    f"that with {small:,} (cost per listener flat)",
                    high_us <= FLAT * low_us,
                    _share(high_us, low_us),
                )
            )
    return found


def _share(mine: float, theirs: float) -> str:
    """``mine / theirs`` as a ratio; CPU below a clock tick reads as zero in a short run."""
    return f"{mine / theirs:.2f}x" if theirs else "no CPU time read"


def _figure(key: str, fmt: str) -> Callable[[Row], str]:
    return lambda row: format(row.result.extra[key], fmt)


COLUMNS = (
    Column("p50 ms", _figure("p50_ms", ",.1f")),
    Column("p99 ms", _figure("p99_ms", ",.1f")),
    Column("one listener's p50 ms", _figure("each_p50_ms", ",.1f")),
    Column("server CPU µs/delivery", _figure("cpu_us", ",.0f")),
    Column("load CPU µs/delivery", _figure("client_cpu_us", ",.0f")),
    Column("updates timed", _figure("updates", ",.0f")),
)

SUITE = Suite(
    name="listeners",
    title="Listeners: one change to 10, 100 and 1,000 subscriptions/listen streams",
    scenarios={scenario(n): f"{n:,} listen streams" for n in sorted({*SIZES, *QUICK_SIZES})},
    cases=cases,
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "mcp", "uvicorn"),
    measure=measure,
    units={scenario(n): "ms" for n in sorted({*SIZES, *QUICK_SIZES})},
    ratio_titles={scenario(n): "x MCPServer (p50)" for n in sorted({*SIZES, *QUICK_SIZES})},
    columns={scenario(n): COLUMNS for n in sorted({*SIZES, *QUICK_SIZES})},
    notes=(
        "Servers: stateless streamable HTTP with SSE answers, uvicorn with one worker each "
        "(`uvicorn.run(factory)`), started once for the whole run. This adapter serves "
        "three static resources, one with `async def shouldRegister(self, request: McpRequest)`, "
        "one with the same hook as a plain `def` (run in a worker thread), one without; "
        "MCPServer serves the same URIs (it has no visibility hooks). An update is announced "
        "by `POST /bench/publish`: `Notifier.resource_updated` for this adapter, "
        "`SubscriptionBus.publish(ResourceUpdated(...))` for MCPServer (what its "
        "`ctx.notify_resource_updated` does).",
        "Listeners: raw HTTP/1.1 connections in a second process, each posting a 2026-07-28 "
        "`subscriptions/listen` for one URI and counting the `notifications/resources/updated` "
        "frames of its SSE answer. An update is complete when every listener has it; the "
        "next is announced 10 ms later. Every listener must have every update exactly once "
        "and in order, or the run fails.",
        "µs/op (and the ratio) is the median time from the announcement to the last "
        "listener having it; p99 is over every timed update of every round. Server CPU "
        "is the server process's user + system time (`/proc/<pid>/stat`, all its threads) "
        "over the timed updates, divided by the notifications delivered; it includes the "
        "publish request (one small HTTP request per update, the same for both servers), "
        "a visible share with 10 listeners. 'load CPU' is what the listeners' process used.",
    ),
)
