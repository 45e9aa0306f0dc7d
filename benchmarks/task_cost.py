"""What a task costs: ``python -m benchmarks.task_cost``.

One server (``memory://``, its Docket and worker in this process), one connection of the
real SDK client that declared the tasks extension, and three timed operations:

- ``inline``: ``tools/call`` of a tool that never runs as a task (the reference);
- ``start``: ``tools/call`` of a task tool, answered with the task's handle once Docket
  holds the task;
- ``start + result``: the same, then ``tasks/get`` until the task has completed and its
  result is inlined (the worker takes the task from Docket's stream, runs the body in a
  scope of its own, stores the result).

Each figure is the median of ``--calls`` operations, in milliseconds (wall time).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

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


class Bench(Server):
    tools = (Quick, Plain)
    tasks = Tasks(max_running=10_000, max_running_per_identity=10_000)


async def _timed(operation: Callable[[], Awaitable[Any]], calls: int) -> float:
    spent: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        await operation()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent) * 1000


async def measure(calls: int) -> dict[str, float]:
    async with TaskClient.connect(Container(), Bench) as tasks:

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
        return {
            "inline": await _timed(inline, calls),
            "start": await _timed(start, calls),
            "start + result": await _timed(start_and_result, calls),
        }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.task_cost")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.calls))
    print(f"median of {args.calls} operations each, memory://, in process (ms)")
    for label, value in figures.items():
        print(f"  {label:<16} {value:8.3f}")


if __name__ == "__main__":
    main()
