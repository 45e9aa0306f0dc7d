"""What a task costs: ``python -m benchmarks.task_cost [--calls 200] [--no-redis]``.

One server (its Docket and worker in this process), one connection of the real SDK
client that declared the tasks extension, and three timed operations:

- ``inline``: ``tools/call`` of a tool that never runs as a task (the reference);
- ``start``: ``tools/call`` of a task tool, answered with the task's handle once Docket
  holds the task;
- ``result``: ``tasks/get`` of a task that has completed: its state and its result
  read from Docket's store, the result inlined;
- ``start + result``: ``start``, then ``tasks/get`` until the task has completed and its
  result is inlined (the worker takes the task from Docket's stream, runs the body in a
  scope of its own, stores the result); the client polls every 10 ms, which bounds how
  finely this figure can tell two stores apart.

Each figure is the median of ``--calls`` operations, in milliseconds (wall time), with
the tasks in ``memory://`` and then, in the same run, in a ``redis-server`` this command
starts on 127.0.0.1 (no persistence; skipped when it is not installed or with
``--no-redis``): what Redis adds to starting a task and fetching its result, side by
side with the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, nullcontext
from typing import Any

from benchmarks.harness.processes import redis_server
from container import Container
from mcp_adapter import McpResponse, Server, Tasks, Tool
from mcp_adapter.testing import TaskClient


class Quick(Tool):
    name = "quick"
    task_support = "optional"

    async def handle(self) -> McpResponse:
        return McpResponse.text("done")


class Plain(Tool):
    name = "plain"

    async def handle(self) -> McpResponse:
        return McpResponse.text("done")


def bench_server(url: str) -> type[Server]:
    class Bench(Server):
        tools = (Quick, Plain)
        tasks = Tasks(url=url, max_running=10_000, max_running_per_identity=10_000)

    return Bench


Operation = Callable[[], Awaitable[Any]]
BLOCKS = 10
"""Each operation is timed in this many blocks per store, the stores alternating, so a
change of load on the machine falls on both."""


async def _spent(operation: Operation, calls: int) -> list[float]:
    spent: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        await operation()
        spent.append(time.perf_counter() - start)
    return spent


async def operations(tasks: TaskClient) -> dict[str, Operation]:
    """The timed operations on one connection, warmed up."""

    async def inline() -> None:
        answer = await tasks.call("plain")
        assert answer["content"][0]["text"] == "done"

    async def start() -> None:
        assert (await tasks.call("quick"))["resultType"] == "task"

    async def start_and_result() -> None:
        task_id = (await tasks.call("quick"))["taskId"]
        done = await tasks.until(task_id)
        assert done["result"]["content"][0]["text"] == "done"

    await start_and_result()  # warm: the worker has started
    ended = (await tasks.call("quick"))["taskId"]
    await tasks.until(ended)

    async def result() -> None:
        done = await tasks.get(ended)
        assert done["result"]["content"][0]["text"] == "done"

    return {"inline": inline, "start": start, "result": result, "start + result": start_and_result}


async def measure(calls: int, urls: Sequence[str] = ("memory://",)) -> dict[str, dict[str, float]]:
    """url -> operation -> the median in ms of ``calls`` operations, on servers of every
    url at once, timed in alternating blocks."""
    async with AsyncExitStack() as stack:
        timed: dict[str, dict[str, Operation]] = {}
        for url in urls:
            client = TaskClient.connect(Container(), bench_server(url))
            timed[url] = await operations(await stack.enter_async_context(client))
        samples: dict[str, dict[str, list[float]]] = {url: {} for url in urls}
        per_block = max(1, calls // BLOCKS)
        for label in timed[urls[0]]:
            for block in range(BLOCKS):
                for url in urls if block % 2 == 0 else urls[::-1]:
                    spent = await _spent(timed[url][label], per_block)
                    samples[url].setdefault(label, []).extend(spent)
        return {
            url: {label: statistics.median(found) * 1000 for label, found in by_label.items()}
            for url, by_label in samples.items()
        }


def table(memory: dict[str, float], redis: dict[str, float] | None, calls: int) -> str:
    lines = [
        f"median of {calls} operations each, in process, one SDK client per store, "
        f"timed in {BLOCKS} alternating blocks (ms)",
        "",
        "| operation | memory:// | redis:// | redis / memory |",
        "|---|---:|---:|---:|",
    ]
    for label, value in memory.items():
        other = "-" if redis is None else f"{redis[label]:.3f}"
        ratio = "-" if redis is None else f"{redis[label] / value:.2f}x"
        lines.append(f"| {label} | {value:.3f} | {other} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_cost")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--no-redis", action="store_true", help="measure memory:// only")
    args = parser.parse_args()
    with redis_server() if not args.no_redis else nullcontext() as url:
        if url is None and not args.no_redis:
            print("redis-server not found: memory:// only (apt-get install redis-server)")
        urls = ("memory://",) if url is None else ("memory://", url)
        figures = asyncio.run(measure(args.calls, urls))
    print(table(figures["memory://"], None if url is None else figures[url], args.calls))


if __name__ == "__main__":
    main()
