"""What a task costs in process: one server (its Docket and worker in this process), one
connection of the real SDK client that declared the tasks extension, four operations
(the ``in-process`` rows of :mod:`benchmarks.suites.tasks`):

- ``inline``: ``tools/call`` of a tool that never runs as a task (the reference);
- ``start``: ``tools/call`` of a task tool, answered with the task's handle once Docket
  holds the task;
- ``result``: ``tasks/get`` of a task that has completed: its state and its result
  read from Docket's store, the result inlined;
- ``start + result``: ``start``, then ``tasks/get`` until the task has completed and its
  result is inlined; the client polls every 10 ms, which bounds how finely this figure
  can tell two stores apart.

:func:`in_process` times each on servers of every URL at once (``memory://`` and a
local Redis, say), in alternating blocks, and answers every operation's wall time.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
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


OPERATIONS = ("inline", "start", "result", "start + result")


async def in_process(calls: int, urls: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """url -> operation -> the wall seconds of ``calls`` operations, on servers of every
    url at once, timed in alternating blocks."""
    async with AsyncExitStack() as stack:
        timed: dict[str, dict[str, Operation]] = {}
        for url in urls:
            client = TaskClient.connect(Container(), bench_server(url))
            timed[url] = await operations(await stack.enter_async_context(client))
        samples: dict[str, dict[str, list[float]]] = {url: {} for url in urls}
        per_block = max(1, calls // BLOCKS)
        for label in OPERATIONS:
            for block in range(BLOCKS):
                for url in urls if block % 2 == 0 else urls[::-1]:
                    spent = await _spent(timed[url][label], per_block)
                    samples[url].setdefault(label, []).extend(spent)
        return samples
