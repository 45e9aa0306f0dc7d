"""Replicas: CPU per request with 1, 2 and 3 ``mcp-adapter serve --redis`` replicas
behind haproxy, and what one more replica costs.

Starts one ``redis-server`` (no persistence), three replicas of the HTTP benchmark's
``add`` server (``serve --http --json-response --redis``, one shared request-state
key) and three haproxy processes balancing round-robin over the first 1, 2 and 3
replicas; then, round after round in an order that alternates, drives each
balancer (and one replica directly, for haproxy's own share) with the closed-loop
load generator (:mod:`benchmarks.harness.load`) after a warm-up, every answer
checked. Everything listens on 127.0.0.1 and stops at the end.

The figure is **CPU per request**: the user + system CPU time the replicas and
haproxy spent in the measured window (``/proc``, every process of each), divided by
the requests answered in it. On a machine with fewer cores than replicas, balancer
and load generator, requests per second cannot grow with replicas (the cores are
the ceiling); CPU per request says what each replica adds, which is what decides
throughput where each replica has cores of its own.

A stateless call touches no Redis (its state, when it asks for input, is sealed
into ``requestState``).
"""

from __future__ import annotations

import asyncio
import http.client
import itertools
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.harness import load
from benchmarks.harness.curves import Curve, Series
from benchmarks.harness.processes import HOST, binary, free_port, redis_server, started, wait_until
from benchmarks.harness.suite import Column, Measured, RunOptions, Suite, Table, Target, find
from benchmarks.harness.timing import Case, Result
from benchmarks.workloads.http import (
    BODY,
    EXPECT,
    HEADERS,
    PATH,
    adapter_app,
    answered,
    caller,
    quiet_sdk_logs,
    running,
)

KEY = "b" * 64
HAPROXY = """\
global
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind {host}:{port}
    default_backend replicas
backend replicas
    balance roundrobin
{servers}
"""
SCENARIO = "cpu"
DIRECT = "direct"
COUNTS = (1, 2, 3)
ONE_MORE = 1.15
"""Goal: CPU per request with 3 replicas at most this much of 1 replica's (behind haproxy):
a replica costs its requests, not a share of the others'."""


def ready(port: int) -> bool:
    """Whether ``/readyz`` on ``port`` answers 200 (``OSError`` while nothing listens)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status == 200
    finally:
        connection.close()


def label(tag: str) -> str:
    if tag == DIRECT:
        return "1 replica, direct (no haproxy)"
    count = int(tag)
    return f"haproxy, {count} replica{'s' if count > 1 else ''}"


@contextmanager
def deployment(folder: Path) -> Iterator[dict[str, tuple[int, list[int]]]]:
    """Redis, three replicas, and balancers over 1, 2, 3 of them: tag -> (port, pids)."""
    haproxy = binary("haproxy")
    with ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        if redis is None or haproxy is None:
            raise SystemExit(
                "redis-server or haproxy not found: apt-get install redis-server haproxy"
            )
        replicas = []
        for _ in range(max(COUNTS)):
            port = free_port()
            command = [sys.executable, "-m", "mcp_adapter.cli", "serve"]
            command += ["benchmarks.workloads.adapter:AddServer", "--container"]
            command += ["benchmarks.workloads.adapter:services", "--http", "--port", str(port)]
            command += ["--json-response", "--redis", redis, "--request-state-key", KEY]
            replicas.append((port, stack.enter_context(started(command))))
        for port, _ in replicas:
            wait_until(partial(ready, port), f"the replica on port {port}")
        pids = [process.pids() for _, process in replicas]
        setups = {DIRECT: (replicas[0][0], pids[0])}
        for count in COUNTS:
            port = free_port()
            servers = "\n".join(
                f"    server r{n} {HOST}:{p}" for n, (p, _) in enumerate(replicas[:count])
            )
            config = folder / f"haproxy{count}.cfg"
            config.write_text(HAPROXY.format(host=HOST, port=port, servers=servers))
            balancer = stack.enter_context(started([haproxy, "-f", str(config), "-db"]))
            wait_until(partial(ready, port), f"haproxy over {count}")
            own = [pid for found in pids[:count] for pid in found]
            setups[str(count)] = (port, own + balancer.pids())
        yield setups


def check(port: int, tag: str) -> None:
    """One ``tools/call`` through ``port`` answers the right sum."""
    connection = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        connection.request(
            "POST", PATH, BODY, dict(HEADERS, **{"Content-Type": "application/json"})
        )
        response = connection.getresponse()
        raw = response.read()
    finally:
        connection.close()
    if EXPECT.encode() not in raw:
        raise AssertionError(f"{label(tag)}: HTTP {response.status}, {raw[:300]!r}")


def rounds_of(options: RunOptions) -> tuple[int, float, float, int]:
    """Rounds, seconds measured, seconds of warm-up, connections."""
    return (1, 0.5, 0.3, 8) if options.quick else (5, 5.0, 2.0, 32)


def measure(options: RunOptions) -> Measured:
    rounds, duration, warmup, connections = rounds_of(options)
    figures: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as folder, deployment(Path(folder)) as setups:
        for tag, (port, _) in setups.items():
            check(port, tag)
        tags = list(setups)
        for round_ in range(rounds):
            for tag in tags if round_ % 2 == 0 else tags[::-1]:
                port, pids = setups[tag]
                request = load.request_bytes(port, PATH, BODY, HEADERS)
                result = asyncio.run(
                    load.run(
                        port,
                        request,
                        expect=EXPECT.encode(),
                        connections=connections,
                        warmup=warmup,
                        duration=duration,
                        pids=pids,
                    )
                )
                if result["errors"] or not result["requests"]:
                    raise SystemExit(
                        f"{label(tag)}: {result['errors']} errors of {result['requests']} "
                        f"requests, e.g. {result['error_sample']}"
                    )
                figures.setdefault(tag, []).append(result)
                options.progress(
                    f"round {round_ + 1} {label(tag)}: {result['rps']:.0f} rps, "
                    f"{result['server_cpu_s'] / result['requests'] * 1e6:.0f} µs CPU/request"
                )
    results = [_result(tag, runs, duration, connections) for tag, runs in figures.items()]
    return Measured(results, notes=(_costs(results),), curves=_curves(results))


def _result(
    tag: str, runs: Sequence[Mapping[str, Any]], duration: float, connections: int
) -> Result:
    case = Case(
        SCENARIO,
        label(tag),
        "a stateless tools/call (2026-07-28, JSON answer)",
        dict,
        anchor=tag == "1",
        tag=tag,
        note=f"{connections} connections, {duration:g} s per round; loops = requests per round",
    )

    def median(key: str) -> float:
        return statistics.median(float(run[key]) for run in runs)

    samples = [run["server_cpu_s"] / run["requests"] * 1e9 for run in runs]
    extra = {key: median(key) for key in ("rps", "p50_ms", "p99_ms", "machine_busy_cores")}
    return Result(case, int(median("requests")), samples, extra=extra)


def _by_count(results: Sequence[Result]) -> list[Result]:
    return sorted((r for r in results if r.case.tag != DIRECT), key=lambda r: int(r.case.tag))


def _costs(results: Sequence[Result]) -> str:
    """What one more replica costs per request, step by step."""
    steps = _by_count(results)
    parts = [
        f"{int(a.case.tag)} -> {int(b.case.tag)}: "
        f"{(b.median_ns - a.median_ns) / 1000:+,.0f} µs CPU per request "
        f"({b.median_ns / a.median_ns:.2f}x)"
        for a, b in itertools.pairwise(steps)
    ]
    return "One more replica, CPU per request (replicas + haproxy): " + "; ".join(parts) + "."


def _curves(results: Sequence[Result]) -> list[Curve]:
    steps = _by_count(results)

    def series(name: str, value: Any) -> Series:
        return Series(name, [(int(r.case.tag), value(r)) for r in steps], ours=True)

    return [
        Curve(
            "CPU per request, replicas + haproxy",
            "replicas behind haproxy",
            "µs CPU per request (median)",
            [series("mcp-adapter serve --redis", lambda r: r.median_ns / 1000)],
            log_x=False,
            from_zero=True,
        ),
        Curve(
            f"Requests per second ({os.cpu_count()} cores for everything)",
            "replicas behind haproxy",
            "requests/s (median)",
            [series("mcp-adapter serve --redis", lambda r: r.extra["rps"])],
            log_x=False,
            from_zero=True,
        ),
    ]


def verify(options: RunOptions | None = None) -> None:
    """The replicas' app answers the sum in process (measure then checks every answer
    through each setup, one request before the load and each under it)."""

    async def check_app() -> None:
        quiet_sdk_logs()
        app = adapter_app()
        close = await running(app)
        try:
            status, raw = await caller(app)()
            if EXPECT.encode() not in raw:
                raise AssertionError(f"the replicas' app answered {raw[:300]!r}")
            answered(status, json.loads(raw), "the replicas' app")
        finally:
            await close()

    asyncio.run(check_app())


def targets(table: Table) -> list[Target]:
    one = find(table, SCENARIO, "1")
    most = find(table, SCENARIO, str(max(COUNTS)))
    if one is None or most is None:
        return []
    grown = most.result.median_ns / one.result.median_ns
    return [
        Target(
            f"CPU per request with {max(COUNTS)} replicas <= {ONE_MORE}x with 1 (haproxy in "
            "front of both)",
            grown <= ONE_MORE,
            f"{grown:.2f}x ({most.result.median_ns / 1000:,.0f} vs "
            f"{one.result.median_ns / 1000:,.0f} µs)",
        )
    ]


SUITE = Suite(
    name="replicas",
    title="Replicas: CPU per request behind haproxy, on Redis",
    scenarios={SCENARIO: "CPU per request (replicas + haproxy), 1-3 replicas"},
    cases=lambda _options: [],
    timed_loops=False,
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "mcp", "uvicorn", "redis"),
    measure=measure,
    units={SCENARIO: "us"},
    ratio_titles={SCENARIO: "x haproxy, 1 replica"},
    columns={
        SCENARIO: (
            Column("requests/s", lambda row: f"{row.result.extra['rps']:,.0f}"),
            Column("p50 ms", lambda row: f"{row.result.extra['p50_ms']:,.1f}"),
            Column("p99 ms", lambda row: f"{row.result.extra['p99_ms']:,.1f}"),
            Column("busy cores", lambda row: f"{row.result.extra['machine_busy_cores']:.2f}"),
        )
    },
    notes=(
        "Each figure is the median over rounds of (CPU seconds the replicas and haproxy "
        "used in the measured window, read from /proc for every process of each) / "
        "(requests answered in it); the IQR is over rounds. The load generator's own CPU "
        "is not counted. Setups alternate in order round by round.",
        "Requests per second are bounded by the machine's cores, shared by the load "
        "generator, haproxy and every replica (and by other work on a shared machine: "
        "the busy-cores column is the whole machine's); CPU per request is the figure "
        "that carries to a deployment where each replica has cores of its own.",
    ),
)
