"""The HTTP contenders served in processes of their own: started, checked, loaded in passes.

Each contender serves the per-call workload over stateless streamable HTTP with
JSON responses under uvicorn (:mod:`benchmarks.workloads.http`, or ``mcp-adapter
serve``), on a free port of 127.0.0.1. :func:`passes` starts every one once,
checks it over the wire (sums 3 and 42, a string argument refused) and waits
until all its processes are idle; then each pass measures every server once with
the load generator (:mod:`benchmarks.harness.load`) in a second process, the
servers of one worker count together, in a shuffled order, so a server is
compared with the anchor measured a few seconds from it; :func:`results` makes
them the harness's rows (time per request, and the figures beside it). Shared by the HTTP suite
(:mod:`benchmarks.suites.http`) and ``python -m benchmarks.http_wire``.
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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness import load as generator
from benchmarks.harness.processes import (
    HOST,
    Process,
    connections_by_process,
    cpu_seconds,
    free_port,
)
from benchmarks.harness.timing import Case, Result
from benchmarks.harness.venv import ROOT, PinnedVenv
from benchmarks.workloads.http import (
    BODY,
    EXPECT,
    HEADERS,
    PATH,
    answered,
    check_refusal,
    request_body,
)
from benchmarks.workloads.mcp import check_result

FASTMCP_DIR = ".bench-venvs/http-fastmcp"
SHARED = ("mcp", "mcp-types", "pydantic", "pydantic-core", "anyio", "starlette", "uvicorn")
FASTMCP = PinnedVenv(
    FASTMCP_DIR,
    ("fastmcp==4.2.3",),
    (*SHARED, "h11", "sse-starlette"),
    install_timeout=900,
)
"""FastMCP's venv, with the SDK and the server pinned to this environment's versions, so
FastMCP runs on the same SDK and server as the other contenders (the benchmarks package on
its ``PYTHONPATH``, not ``src/``)."""


@dataclass(frozen=True)
class Timing:
    warmup: float
    """Seconds of load before the first measured window of a server (connections, caches)."""
    rewarm: float
    """Seconds of load before each later window (new connections to a warm server)."""
    duration: float
    """Seconds of one measured window."""
    passes: int
    """Measured windows per server; a pass measures every server once, in a fresh order."""
    connections: int = 32

    @classmethod
    def for_run(cls, quick: bool) -> Timing:
        base = cls(0.5, 0.5, 1.5, 1) if quick else cls(3.0, 1.0, 4.0, 7)
        env = os.environ.get
        return cls(
            warmup=float(env("BENCH_HTTP_WARMUP") or base.warmup),
            rewarm=float(env("BENCH_HTTP_REWARM") or base.rewarm),
            duration=float(env("BENCH_HTTP_SECONDS") or base.duration),
            passes=int(env("BENCH_HTTP_PASSES") or base.passes),
            connections=int(env("BENCH_HTTP_CONNECTIONS") or base.connections),
        )

    def describe(self) -> str:
        return (
            f"{self.connections} keep-alive connections; {self.passes} "
            f"pass{'es' if self.passes != 1 else ''} over all servers (started once), each "
            f"server measured for {self.duration:g} s per pass after {self.warmup:g} s of "
            f"warm-up ({self.rewarm:g} s in later passes); medians over passes"
        )

    def bound(self, servers: int) -> float:
        """Seconds of load over every window of every pass (start-ups aside)."""
        first, later = self.warmup + self.duration, self.rewarm + self.duration
        return servers * (first + later * (self.passes - 1))


@dataclass(frozen=True)
class Contender:
    tag: str
    name: str
    workers: int
    argv: Callable[[int], list[str]]
    """The command serving on the given port."""
    anchor: bool = False
    note: str = ""
    venv: bool = False
    """Runs with the python of :data:`FASTMCP`."""

    @property
    def scenario(self) -> str:
        return f"http-{self.workers}"


def _cli(workers: int) -> Callable[[int], list[str]]:
    def argv(port: int) -> list[str]:
        command = [sys.executable, "-m", "mcp_adapter.cli", "serve"]
        command += ["benchmarks.workloads.adapter:AddServer"]
        command += ["--container", "benchmarks.workloads.adapter:services", "--http"]
        command += ["--host", HOST, "--port", str(port), "--json-response"]
        return command + (["--workers", str(workers)] if workers > 1 else [])

    return argv


def _app(kind: str, workers: int, *flags: str, venv: bool = False) -> Callable[[int], list[str]]:
    def argv(port: int) -> list[str]:
        python = str(FASTMCP.python) if venv else sys.executable
        command = [python, "-m", "benchmarks.workloads.http", kind, "--port", str(port)]
        return [*command, "--workers", str(workers), *flags]

    return argv


FLOOR = "low-level Server, hand-written (floor)"
NODELAY = "listener made with IPPROTO_TCP, so TCP_NODELAY is on"


def contender(tag: str, workers: int = 1) -> Contender:
    """The contender ``tag`` served by ``workers`` uvicorn workers."""
    listener = "`uvicorn.run(factory)`" if workers == 1 else NODELAY
    known: dict[str, tuple[str, Callable[[int], list[str]], str]] = {
        "mcpserver": ("MCPServer + Resolve (anchor)", _app("mcpserver", workers), listener),
        "floor": (FLOOR, _app("floor", workers), listener),
        "floor-hook": (
            f"{FLOOR} + `get_tool_input_schema`",
            _app("floor-hook", workers),
            f"{listener}: diagnostic",
        ),
        "floor-tuned": (
            f"{FLOOR}, served with the adapter's uvicorn settings",
            _app("floor", workers, "--adapter-settings"),
            "`uvicorn_config(app, limits=HttpLimits())`: diagnostic",
        ),
        "ours-cli": (
            "this adapter, `mcp-adapter serve" + (f" --workers {workers}`" if workers > 1 else "`"),
            _cli(workers),
            "the CLI binds its listener with IPPROTO_TCP, so TCP_NODELAY is on",
        ),
        "ours-app": (
            "this adapter, `http_app` under uvicorn",
            _app("adapter", workers),
            "started like MCPServer" if workers == 1 else NODELAY,
        ),
        "ours-lean": (
            "this adapter, `http_app` without `CancelOnDisconnect`",
            _app("adapter-lean", workers),
            "diagnostic: what the disconnect watcher costs (not a configuration to serve)",
        ),
        "mcpserver-stock": (
            f"MCPServer + Resolve, stock `uvicorn.run(workers={workers})`",
            _app("mcpserver", workers, "--stock"),
            "uvicorn's own listener (proto 0, uvicorn#3149): Nagle on",
        ),
        "fastmcp": (
            "FastMCP + Depends (own venv)",
            _app("fastmcp", workers, venv=True),
            f"`{FASTMCP_DIR}`; {listener}",
        ),
    }
    name, argv, note = known[tag]
    return Contender(tag, name, workers, argv, tag == "mcpserver", note, tag == "fastmcp")


# -- one server: started, checked, loaded, stopped ------------------------------------------


def post(port: int, body: bytes, timeout: float = 10.0) -> tuple[int, Any]:
    """One request on a new connection; the status and the decoded JSON body."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json", **dict(HEADERS)}
        connection.request("POST", PATH, body=body, headers=headers)
        response = connection.getresponse()
        raw = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw.decode(errors="replace")


def check_over_the_wire(port: int, who: str) -> None:
    check_result(answered(*post(port, BODY), who), who)
    check_result(answered(*post(port, request_body(20, 22, 7)), who), who, 42)
    check_refusal(*post(port, request_body("one", 2, 8)), who)


@dataclass
class Running:
    contender: Contender
    port: int
    process: Process


def start(contender: Contender) -> Running:
    port = free_port()
    env = FASTMCP.env(ROOT) if contender.venv else None
    return Running(contender, port, Process(contender.argv(port), env=env))


def wait_ready(server: Running, timeout: float = 120.0) -> None:
    """Until the server answers correctly and every process of it has gone idle.

    Idle (no CPU time used for 0.5 s) means every worker has finished importing
    and waits in its event loop, so the load generator's connections are
    accepted by all workers, not by the first one up.
    """
    who, process = server.contender.name, server.process
    deadline = time.monotonic() + timeout
    while True:
        if process.exited() is not None:
            raise RuntimeError(f"{who} exited ({process.exited()}):\n{process.output()}")
        try:
            check_over_the_wire(server.port, who)
            break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{who} did not answer within {timeout:g} s:\n{process.output()}")
        time.sleep(0.2)
    before = cpu_seconds(process.pids())
    while time.monotonic() < deadline:
        time.sleep(0.5)
        pids = process.pids()
        now = cpu_seconds(pids)
        if now == before and len(pids) >= server.contender.workers:
            return
        before = now
    raise RuntimeError(f"{who} never went idle within {timeout:g} s")


def load(server: Running, timing: Timing, warmup: float) -> dict[str, Any]:
    """Run the load generator against ``server`` in a second process; its figures, and how
    its connections spread over the server's processes (Linux ``/proc``)."""
    pids = server.process.pids()
    command = generator.command(
        server.port,
        BODY,
        EXPECT,
        HEADERS,
        connections=timing.connections,
        warmup=warmup,
        duration=timing.duration,
        pids=pids,
    )
    running = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    spread: dict[int, int] = {}
    with contextlib.suppress(subprocess.TimeoutExpired):
        running.wait(timeout=warmup / 2 + 0.3)
    if running.poll() is None:
        spread = connections_by_process(server.port, pids)
    out, _ = running.communicate(timeout=warmup + timing.duration + 120)
    if running.returncode != 0:
        raise RuntimeError(f"the load generator failed against {server.contender.name}")
    figures: dict[str, Any] = json.loads(out)
    figures["spread"] = sorted(spread.values(), reverse=True)
    return figures


# -- every server, in passes ------------------------------------------------------------------


@dataclass
class Samples:
    contender: Contender
    passes: dict[int, dict[str, Any]] = field(default_factory=dict)
    """The load generator's figures by pass."""
    failure: str = ""


def _start_all(samples: Sequence[Samples], progress: Callable[[str], None]) -> dict[int, Running]:
    """Start every server, wait until each answers correctly and is idle; a server of
    another venv that fails is left out, any other stops the run."""
    running = {index: start(sample.contender) for index, sample in enumerate(samples)}
    for index, server in list(running.items()):
        try:
            wait_ready(server)
        except (RuntimeError, AssertionError) as exc:
            if not server.contender.venv:
                raise
            samples[index].failure = str(exc).splitlines()[0]
            progress(f"{server.contender.name} left out: {samples[index].failure}")
            running.pop(index).process.stop()
    return running


def passes(
    chosen: Sequence[Contender], timing: Timing, progress: Callable[[str], None]
) -> list[Samples]:
    """Start the servers once, then measure each once per pass, in a fresh order.

    A pass measures the servers of one worker count together (in shuffled order),
    then the others, alternating which count goes first, so each server's window
    is close in time to the anchor's window of the same pass.
    """
    samples = [Samples(c) for c in chosen]
    shuffle = random.Random(0).shuffle
    counts = sorted({c.workers for c in chosen})
    progress(f"starting {len(samples)} servers")
    running: dict[int, Running] = {}
    try:
        running = _start_all(samples, progress)
        for number in range(timing.passes):
            progress(f"pass {number + 1}/{timing.passes}")
            for workers in counts[::-1] if number % 2 else counts:
                group = [i for i in running if samples[i].contender.workers == workers]
                shuffle(group)
                for index in group:
                    _measure(samples[index], running[index], number, timing, progress)
    finally:
        for server in running.values():
            server.process.stop()
    return samples


def _measure(
    sample: Samples, server: Running, number: int, timing: Timing, progress: Callable[[str], None]
) -> None:
    if sample.failure:
        return
    figures = load(server, timing, timing.warmup if not sample.passes else timing.rewarm)
    label = f"{server.contender.name} ({server.contender.workers}w)"
    if figures["errors"] or not figures["requests"]:
        sample.failure = f"{figures['errors']} bad answers, e.g. {figures['error_sample']}"
        progress(f"{label} left out: {sample.failure}")
        return
    sample.passes[number] = figures
    progress(
        f"{label}: {figures['rps']:,.0f} req/s, p50 {figures['p50_ms']:.1f} ms,"
        f" p99 {figures['p99_ms']:.1f} ms"
    )


def pass_ratio(mine: Mapping[int, float], theirs: Mapping[int, float]) -> float | None:
    """Median over the passes both have of ``mine``'s req/s over ``theirs``."""
    ratios = [value / theirs[number] for number, value in mine.items() if theirs.get(number)]
    return statistics.median(ratios) if ratios else None


def rps(sample: Samples | None) -> dict[int, float]:
    """Requests per second by pass."""
    return {} if sample is None else {n: f["rps"] for n, f in sample.passes.items()}


def result(sample: Samples, anchor: Samples | None, floor: Samples | None) -> Result:
    """One server's row: time per request (1 / req/s) by pass, and its figures."""
    served, rounds = sample.contender, list(sample.passes.values())

    def median(key: str) -> float:
        return statistics.median(float(r[key]) for r in rounds)

    case = Case(
        served.scenario,
        served.name,
        "",
        dict,
        anchor=served.anchor,
        note=served.note,
        tag=served.tag,
    )
    spreads = [r["spread"] for r in rounds if r["spread"]]
    nan = float("nan")
    extra = {
        "rps": median("rps"),
        "paired": pass_ratio(rps(sample), rps(anchor)) or nan,
        "over_floor": pass_ratio(rps(sample), rps(floor)) or nan,
        "p50_ms": median("p50_ms"),
        "p99_ms": median("p99_ms"),
        "cpu_us": statistics.median(r["server_cpu_s"] / r["requests"] * 1e6 for r in rounds),
        "server_cores": statistics.median(r["server_cpu_s"] / r["seconds"] for r in rounds),
        "other_cores": statistics.median(
            r["machine_busy_cores"] - (r["server_cpu_s"] + r["generator_cpu_s"]) / r["seconds"]
            for r in rounds
        ),
        "spread_max": max((s[0] for s in spreads), default=0),
        "spread_min": min((s[-1] if len(s) > 1 else 0 for s in spreads), default=0),
    }
    extra.update({f"pass:{n}": value for n, value in rps(sample).items()})
    number = int(statistics.median(r["requests"] for r in rounds))
    return Result(case, number, [1e9 / r["rps"] for r in rounds], extra)


def results(samples: Sequence[Samples]) -> tuple[list[Result], list[str]]:
    """The measured servers' rows, and a note for each server left out."""
    measured = [s for s in samples if s.passes and not s.failure]

    def reference(sample: Samples, tag: str) -> Samples | None:
        same = sample.contender.workers
        return next(
            (s for s in measured if s.contender.tag == tag and s.contender.workers == same), None
        )

    notes = [
        f"{s.contender.name} ({s.contender.workers}w) left out: {s.failure or 'not measured'}"
        for s in samples
        if s not in measured
    ]
    found = [result(s, reference(s, "mcpserver"), reference(s, "floor")) for s in measured]
    return found, notes
