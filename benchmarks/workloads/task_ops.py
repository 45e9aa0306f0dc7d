"""Store operations per task: what one task costs this adapter in Docket's store, by phase.

``python -m benchmarks.workloads.task_ops [--url URL] [--tasks N]`` runs ``N`` tasks of
each body of :mod:`benchmarks.workloads.tasks` on one in-process server (its Docket and
worker in this process; the SDK's client, polling ``tasks/get`` until each has ended)
and counts, per task, the commands sent to the store and the round trips they took (a
pipeline is one), by whose code sent them: ``start`` (``tools/call``), ``get`` (each
``tasks/get``), ``update`` (``tasks/update``), ``worker`` (Docket's worker claiming,
running and recording the body, the body's status included). Lua scripts are named.
Counted at redis-py's client, so on a ``redis://`` store (``memory://`` runs the same
calls in process, where the client cannot be wrapped). A diagnostic of where a task's
store work goes; not a timed figure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from benchmarks.workloads.tasks import ASKS, KEY, QUICK, ours_server
from container import Container
from mcp_adapter.testing import TaskClient

PHASES = {
    "_start": "start",
    "_get": "get",
    "_update": "update",
    "_run": "worker",
}


def _phase() -> str:
    frame = sys._getframe(2)
    docket = None
    while frame is not None:
        name, path = frame.f_code.co_name, frame.f_code.co_filename
        if "mcp_adapter" in path and name in PHASES:
            return PHASES[name]
        if docket is None and "/docket/" in path:
            docket = name
        frame = frame.f_back  # type: ignore[assignment]
    return f"worker ({docket})" if docket else "other"


def _scripts() -> dict[str, str]:
    import docket._execution_progress as progress
    import docket._execution_scripts as scripts
    import docket._redelivery as redelivery
    import docket.worker as worker

    found: dict[str, str] = {}
    for module in (progress, scripts, redelivery, worker):
        for name, value in vars(module).items():
            sha = getattr(value, "sha", None)
            if isinstance(sha, str):
                found[sha] = name.strip("_")
    return found


class Counts:
    def __init__(self) -> None:
        self.commands: Counter[tuple[str, str]] = Counter()
        self.trips: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self.names = _scripts()

    def named(self, args: Sequence[Any]) -> str:
        command = str(args[0]).upper()
        if command == "EVALSHA":
            return f"EVALSHA {self.names.get(str(args[1]), str(args[1])[:8])}"
        if command == "EVAL":
            return "EVAL (ours)"
        return command

    def install(self) -> None:
        from redis.asyncio.client import Pipeline, Redis

        counts = self
        single, piped = Redis.execute_command, Pipeline.execute

        async def execute_command(self: Any, *args: Any, **options: Any) -> Any:
            if isinstance(self, Pipeline):
                return await single(self, *args, **options)
            phase = _phase()
            counts.trips[phase] += 1
            counts.commands[(phase, counts.named(args))] += 1
            return await single(self, *args, **options)

        async def execute(self: Any, raise_on_error: bool = True) -> Any:
            phase = _phase()
            counts.trips[phase] += 1
            for command in self.command_stack:
                args = getattr(command, "args", None) or command[0]
                counts.commands[(phase, counts.named(args))] += 1
            return await piped(self, raise_on_error)

        Redis.execute_command = execute_command  # type: ignore[method-assign]
        Pipeline.execute = execute  # type: ignore[method-assign]


async def run(url: str, tasks: int, body: str, counts: Counts) -> None:
    async def answer(context: Any, params: Any) -> Any:
        raise AssertionError("tasks ask through tasks/update")

    server = ours_server(url)
    async with TaskClient.connect(Container(), server, elicitation_callback=answer) as client:
        for n in range(2):  # warm-up: the worker has started
            await _one(client, body, n, Counter())
        await asyncio.sleep(0.3)
        before = Counter(counts.commands), Counter(counts.trips)
        for n in range(tasks):
            await _one(client, body, n, counts.requests)
        counts.commands -= before[0]
        counts.trips -= before[1]


async def _one(client: TaskClient, body: str, n: int, requests: Counter[str]) -> None:
    handle = await client.call(body, {"n": n})
    requests["start"] += 1
    task_id = handle["taskId"]
    while True:
        task = await client.get(task_id)
        requests["get"] += 1
        if task["status"] == "input_required":
            answers = {
                key: {"action": "accept", "content": {KEY: True}} for key in task["inputRequests"]
            }
            await client.update(task_id, answers)
            requests["update"] += 1
        elif task["status"] != "working":
            assert task["status"] == "completed", task
            return
        await asyncio.sleep(0.01)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads.task_ops")
    parser.add_argument("--url", required=True, help="a redis:// URL")
    parser.add_argument("--tasks", type=int, default=50)
    args = parser.parse_args(argv)
    for body in (QUICK, ASKS):
        counts = Counts()
        counts.install()
        asyncio.run(run(args.url, args.tasks, body, counts))
        per = args.tasks
        print(
            f"== {body} on {args.url.split(':')[0]}: per task "
            f"({ {k: round(v / per, 2) for k, v in counts.requests.items()} } requests)"
        )
        for phase in sorted(counts.trips):
            print(f"  {phase:28} {counts.trips[phase] / per:6.2f} round trips")
            for (where, command), seen in sorted(counts.commands.items()):
                if where == phase:
                    print(f"      {command:36} {seen / per:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
