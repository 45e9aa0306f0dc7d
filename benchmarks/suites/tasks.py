"""Tasks: start-to-completed throughput, latency and server CPU per task, against FastMCP.

Over HTTP on 127.0.0.1 (:mod:`benchmarks.workloads.tasks`): this adapter's ``http_app``
and FastMCP 4.1.4 with ``fastmcp-tasks`` 4.1.4 (from a venv of its own), each under
uvicorn with one worker, Docket's worker in the serving process, serving the same two
task bodies (a short one, and one that asks for input once) on the same Docket
(pydocket pinned to this environment's version), with the tasks in ``memory://`` and in
a ``redis-server`` this suite starts on 127.0.0.1 (no persistence; both servers use it,
under names of their own). Every server is started once and checked (one task of each
body, its own result); then each pass measures every row, the two servers of a row
back to back in an order that alternates by pass, with the closed-loop task clients of
:mod:`benchmarks.workloads.task_load` in a second process (1 and 16 clients; every task
checked). Per row: tasks per second, start-to-completed latency (p50, p99), and the CPU
time of the server's process per task (``/proc``, before and after the window), with
the redis-server's beside it.

In process (the figures ``benchmarks/task_cost.py`` used to print): one server, its
Docket and worker in this process, one connection of the SDK's client, and the median
wall time of an inline call, starting a task, reading an ended task's result, and
starting one and polling it (every 10 ms) to its end, on ``memory://`` and on the
redis-server, timed in alternating blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness.curves import Curve, Series
from benchmarks.harness.processes import Process, cpu_seconds, free_port, redis_server, wait_until
from benchmarks.harness.suite import (
    Column,
    Measured,
    RunOptions,
    Suite,
    Table,
    Target,
    figure,
    find,
)
from benchmarks.harness.timing import Case, Result
from benchmarks.harness.venv import ROOT, PinnedVenv
from benchmarks.suites.served import SHARED
from benchmarks.workloads.task_load import ACCEPT, Connection, Failed, one_task
from benchmarks.workloads.tasks import ASKS, BODIES, QUICK, expected, ours_server, question
from benchmarks.workloads.tasks_in_process import BLOCKS, OPERATIONS, in_process
from container import Container
from mcp_adapter.testing import TaskClient

FASTMCP_TASKS = PinnedVenv(
    ".bench-venvs/tasks-fastmcp",
    ("fastmcp==4.1.4", "fastmcp-tasks==4.1.4"),
    (*SHARED, "h11", "sse-starlette", "pydocket"),
    install_timeout=900,
)
"""FastMCP with its tasks extension, on this environment's SDK, server and Docket."""

CONTENDERS = {"ours": "this adapter, `http_app`", "fastmcp": "FastMCP 4.1.4 + fastmcp-tasks"}
CLIENTS = (1, 16)
BODY_NAMES = {QUICK: "short body", ASKS: "asks once"}
POLL = 0.01
"""Seconds between a client's ``tasks/get`` (both servers advertise longer intervals)."""
IN_PROCESS = "in-process"
OVER = 2.0
"""Issue 31: at least 2x FastMCP's tasks/s with 16 clients ..."""
CPU_SHARE = 0.5
"""... at most 0.5x its server CPU per task in every row, at no worse p99."""


@dataclass(frozen=True)
class Timing:
    warmup: float
    duration: float
    passes: int

    @classmethod
    def for_run(cls, quick: bool) -> Timing:
        """``--quick``: one pass, windows still long enough for tasks that take over a
        second from start to completed (16 clients on a loaded machine)."""
        return cls(0.5, 3.0, 1) if quick else cls(1.0, 3.0, 3)


def scenario(store: str) -> str:
    return f"tasks-{store}"


def tag(who: str, body: str, clients: int) -> str:
    return f"{who}-{body}-{clients}"


# -- the servers --------------------------------------------------------------------------


@dataclass
class Served:
    who: str
    store: str
    port: int
    process: Process


def command(who: str, port: int, url: str) -> list[str]:
    python = str(FASTMCP_TASKS.python) if who == "fastmcp" else sys.executable
    return [python, "-m", "benchmarks.workloads.tasks", who, "--port", str(port), "--url", url]


async def check(port: int, who: str) -> None:
    """One task of each body, followed to its own result (``Failed`` otherwise)."""
    connection = await Connection.open(port)
    try:
        for number, body in enumerate(BODIES, start=7):
            await one_task(connection, body, number, POLL)
    except Failed as failed:
        raise AssertionError(f"{who}: {failed}") from None
    finally:
        connection.close()


def ready(served: Served) -> None:
    """Until the server has answered both bodies right and its process has gone idle."""
    who = CONTENDERS[served.who]

    def answers() -> bool:
        if served.process.exited() is not None:
            raise SystemExit(f"{who} exited:\n{served.process.output()}")
        asyncio.run(check(served.port, who))
        return True

    wait_until(answers, f"{who} on {served.store}")
    before = -1.0
    for _ in range(60):  # idle: Docket's worker and the imports have settled
        now = cpu_seconds(served.process.pids())
        if now == before:
            return
        before = now
        time.sleep(0.3)


@contextmanager
def serving(
    who: Sequence[str], urls: Mapping[str, str], progress: Callable[[str], None]
) -> Iterator[list[Served]]:
    with ExitStack() as stack:
        running = []
        for store, url in urls.items():
            for name in who:
                port = free_port()
                env = FASTMCP_TASKS.env(ROOT) if name == "fastmcp" else None
                process = Process(command(name, port, url), env=env)
                stack.callback(process.stop)
                running.append(Served(name, store, port, process))
        for served in running:
            progress(f"checking {CONTENDERS[served.who]} on {served.store}")
            ready(served)
        yield running


def load(served: Served, body: str, clients: int, timing: Timing, store: list[int]) -> Any:
    argv = [sys.executable, "-m", "benchmarks.workloads.task_load", "--port", str(served.port)]
    argv += ["--tool", body, "--clients", str(clients), "--poll", str(POLL)]
    argv += ["--warmup", str(timing.warmup), "--duration", str(timing.duration)]
    argv += ["--pids", *map(str, served.process.pids()), "--store-pids", *map(str, store)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"{CONTENDERS[served.who]}, {body}: {done.stdout}{done.stderr}")
    return json.loads(done.stdout)


def redis_pids(url: str) -> list[int]:
    """The ``redis-server`` serving ``url`` (its title names its port; ``/proc``)."""
    address = url.removeprefix("redis://").split("/")[0]
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if entry.name.isdigit() and "redis-server" in title and f"{address} " in f"{title} ":
                found.append(int(entry.name))
    return found


# -- measured -------------------------------------------------------------------------------


def measure(options: RunOptions) -> Measured:
    timing = Timing.for_run(options.quick)
    notes: list[str] = []
    unusable = FASTMCP_TASKS.unusable(options.venvs, options.progress)
    who = ["ours"] + ([] if unusable else ["fastmcp"])
    versions = [] if unusable else [f"FastMCP venv: {FASTMCP_TASKS.versions(*PACKAGES)}"]
    if unusable:
        notes.append(f"FastMCP rows {unusable}.")
    with redis_server() as redis_url:
        urls = {"memory": "memory://"} | ({} if redis_url is None else {"redis": redis_url})
        if redis_url is None:
            notes.append("redis:// rows skipped: redis-server is not installed.")
        store_pids = {"memory": [], "redis": [] if redis_url is None else redis_pids(redis_url)}
        figures: dict[str, list[dict[str, Any]]] = {}
        with serving(who, urls, options.progress) as running:
            for number in range(timing.passes):
                options.progress(f"pass {number + 1}/{timing.passes}")
                order = running if number % 2 == 0 else running[::-1]
                for store in urls:
                    for body in BODIES:
                        for clients in CLIENTS:
                            for served in order:
                                if served.store != store:
                                    continue
                                key = f"{store}/{tag(served.who, body, clients)}"
                                found = load(served, body, clients, timing, store_pids[store])
                                figures.setdefault(key, []).append(found)
        in_process = in_process_results(options, redis_url)
    results = [*over_http(figures, urls, who), *in_process]
    return Measured(results, notes, versions, curves(results))


PACKAGES = ("fastmcp", "fastmcp-tasks", "pydocket", "mcp", "uvicorn")


def over_http(
    figures: Mapping[str, list[dict[str, Any]]], urls: Mapping[str, str], who: Sequence[str]
) -> list[Result]:
    results = []
    for store in urls:
        anchor = "fastmcp" if "fastmcp" in who else "ours"
        for body in BODIES:
            for clients in CLIENTS:
                for name in who:
                    found = figures[f"{store}/{tag(name, body, clients)}"]
                    peer = figures.get(f"{store}/{tag('fastmcp', body, clients)}")
                    case = Case(
                        scenario(store),
                        f"{CONTENDERS[name]}: {BODY_NAMES[body]}, {clients} client"
                        + ("s" if clients > 1 else ""),
                        "",
                        dict,
                        anchor=name == anchor and body == QUICK and clients == 1,
                        tag=tag(name, body, clients),
                    )
                    samples = [1e9 / max(f["tasks_per_s"], 1e-9) for f in found]
                    extra = {
                        key: statistics.median(f[key] for f in found)
                        for key in ("tasks_per_s", "p50_ms", "p99_ms", "server_cpu_us")
                    }
                    extra["store_cpu_us"] = statistics.median(f["store_cpu_us"] for f in found)
                    extra["clients"] = clients
                    if peer is not None and name != "fastmcp":
                        extra["paired"] = statistics.median(
                            mine["tasks_per_s"] / max(theirs["tasks_per_s"], 1e-9)
                            for mine, theirs in zip(found, peer, strict=True)
                        )
                        extra["cpu_share"] = statistics.median(
                            mine["server_cpu_us"] / max(theirs["server_cpu_us"], 1e-9)
                            for mine, theirs in zip(found, peer, strict=True)
                        )
                    results.append(Result(case, 1, samples, extra))
    return results


def in_process_results(options: RunOptions, redis_url: str | None) -> list[Result]:
    calls = 20 if options.quick else 200
    options.progress(f"in process: {calls} operations per store")
    urls = ("memory://",) if redis_url is None else ("memory://", redis_url)
    medians = asyncio.run(in_process(calls, urls))
    results = []
    for url, by_label in medians.items():
        store = "memory" if url == "memory://" else "redis"
        for label in OPERATIONS:
            case = Case(
                IN_PROCESS,
                f"{label}, {store}://",
                "",
                dict,
                anchor=label == "inline" and store == "memory",
                tag=f"{label}-{store}",
            )
            results.append(Result(case, 1, [s * 1e9 for s in by_label[label]]))
    return results


def curves(results: Sequence[Result]) -> list[Curve]:
    found = []
    for store in ("memory", "redis"):
        series = []
        for name in CONTENDERS:
            for body in BODIES:
                points = [
                    (float(r.case.tag.rsplit("-", 1)[1]), r.extra["tasks_per_s"])
                    for r in results
                    if r.case.scenario == scenario(store)
                    and r.case.tag.startswith(f"{name}-{body}-")
                ]
                if points:
                    label = f"{CONTENDERS[name]}, {BODY_NAMES[body]}"
                    series.append(Series(label, sorted(points), ours=name == "ours"))
        if series:
            found.append(Curve(f"tasks/s, {store}://", "concurrent clients", "tasks/s", series))
    return found


# -- verification, targets, columns -------------------------------------------------------------


def verify(options: RunOptions) -> None:
    """This adapter's server, in process through the SDK's client, answers each body's own
    result; FastMCP's is checked over the wire once started (:func:`ready`), and every
    task of every measured window is checked by the clients."""

    async def not_here(context: Any, params: Any) -> Any:
        raise AssertionError("a task's question is answered with tasks/update")

    async def check_ours() -> None:
        server = ours_server("memory://")
        async with TaskClient.connect(Container(), server, elicitation_callback=not_here) as tasks:
            done = await tasks.until((await tasks.call(QUICK, {"n": 3}))["taskId"])
            answered = [c["text"] for c in done["result"]["content"]]
            if answered != [expected(QUICK, 3)]:
                raise AssertionError(f"this adapter, {QUICK}: {done}")
            task_id = (await tasks.call(ASKS, {"n": 4}))["taskId"]
            waiting = await tasks.until(task_id, "input_required")
            ((key, asked),) = waiting["inputRequests"].items()
            if asked["params"]["message"] != question(4):
                raise AssertionError(f"this adapter, {ASKS}: {waiting}")
            await tasks.update(task_id, {key: ACCEPT})
            done = await tasks.until(task_id)
            if [c["text"] for c in done["result"]["content"]] != [expected(ASKS, 4)]:
                raise AssertionError(f"this adapter, {ASKS}: {done}")

    asyncio.run(check_ours())


def targets(table: Table) -> list[Target]:
    found: list[Target] = []
    for store in ("memory", "redis"):
        rows = table.get(scenario(store), ())
        for row in rows:
            if row.case.tag.startswith("fastmcp") or "paired" not in row.result.extra:
                continue
            extra = row.result.extra
            peer = find(table, scenario(store), "fastmcp" + row.case.tag[4:])
            assert peer is not None
            if extra["clients"] == max(CLIENTS):
                found.append(
                    Target(
                        f"{store}://, {row.case.name}: tasks/s >= {OVER:g}x FastMCP's",
                        extra["paired"] >= OVER,
                        f"{extra['paired']:.2f}x",
                    )
                )
            found.append(
                Target(
                    f"{store}://, {row.case.name}: server CPU per task <= {CPU_SHARE:g}x FastMCP's",
                    extra["cpu_share"] <= CPU_SHARE,
                    f"{extra['cpu_share']:.2f}x",
                )
            )
            mine, theirs = extra["p99_ms"], peer.result.extra["p99_ms"]
            found.append(
                Target(
                    f"{store}://, {row.case.name}: p99 <= FastMCP's",
                    mine <= theirs,
                    f"{mine:.1f} vs {theirs:.1f} ms",
                )
            )
    return found


TASK_COLUMNS = (
    Column("tasks/s", figure("tasks_per_s", ",.0f")),
    Column("tasks/s vs FastMCP", figure("paired", ".2f", "x")),
    Column("p50 ms", figure("p50_ms", ".1f")),
    Column("p99 ms", figure("p99_ms", ".1f")),
    Column("server CPU µs/task", figure("server_cpu_us", ",.0f")),
    Column("CPU vs FastMCP", figure("cpu_share", ".2f", "x")),
    Column("redis-server CPU µs/task", figure("store_cpu_us", ",.0f")),
)

SUITE = Suite(
    name="tasks",
    title="Tasks: start to completed over HTTP, against FastMCP",
    scenarios={
        scenario("memory"): "memory:// (one server process, uvicorn, one worker)",
        scenario("redis"): "redis:// (a local redis-server, no persistence)",
        IN_PROCESS: "in process: one SDK client, one operation at a time (wall, medians)",
    },
    cases=lambda options: [],
    verify=verify,
    targets=targets,
    packages=("mcp-adapter-di", "mcp", "pydocket"),
    measure=measure,
    units={scenario("memory"): "ms", scenario("redis"): "ms", IN_PROCESS: "ms"},
    ratio_titles={
        scenario("memory"): "x the anchor (time/task)",
        scenario("redis"): "x the anchor (time/task)",
        IN_PROCESS: "x inline, memory://",
    },
    columns={scenario("memory"): TASK_COLUMNS, scenario("redis"): TASK_COLUMNS},
    notes=(
        "Over HTTP: each row's figure is 1 / tasks per second (so lower is better), its "
        "anchor FastMCP's short body with 1 client (this adapter's when FastMCP is not "
        "measured). 'tasks/s vs FastMCP' and 'CPU vs FastMCP' are medians over passes of "
        "the ratio to FastMCP's same row, measured right before or after it. A client "
        "polls `tasks/get` every 10 ms, so with 1 client the poll decides much of the "
        "latency. Server CPU is the user+system time of the server's process per task "
        "completed in the window (its polls, starts, updates and bodies); the redis-server "
        "column is the store's own, beside it.",
        f"In process: medians of operations timed in {BLOCKS} blocks per store, the "
        "stores alternating, one connection of the SDK's client with the extension "
        "declared (`mcp_adapter.testing.TaskClient`).",
    ),
)
