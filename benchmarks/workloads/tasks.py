"""Tasks over HTTP: the two task bodies, served by this adapter and by FastMCP + fastmcp-tasks.

Two task tools, the same on both servers, each required to run as a task:

- ``quick(n)``: answers the text ``done <n>`` (a short body);
- ``asks(n)``: asks once, an elicitation ``Confirm <n>?`` with a boolean ``confirm``,
  and answers ``confirmed <n>`` (or ``declined <n>``) once the client has answered it
  with ``tasks/update``. This adapter asks with a ``Resolve`` returning ``Elicit``;
  FastMCP with its guard pattern (the tool returns an ``InputRequiredResult``, and
  reads ``ctx.input_responses`` when ``tasks/update`` has re-run it).

``python -m benchmarks.workloads.tasks KIND --port P --url URL`` serves ``ours`` or
``fastmcp`` (run with the python of its own venv) under ``uvicorn.run(factory)``,
one worker, stateless streamable HTTP with JSON responses, the tasks on Docket at
``URL`` (``memory://`` or a ``redis://``), Docket's worker in the serving process.
With ``BENCH_TASKS_PROFILE=FILE`` set, this adapter's server runs under cProfile and
writes its stats to ``FILE`` when it stops (a diagnostic; FastMCP never does).
No ``from __future__ import annotations``: both servers read the annotations of bodies
defined inside functions here.
"""

import argparse
import cProfile
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

from benchmarks.harness.processes import HOST

PATH = "/mcp"
QUICK, ASKS = "quick", "asks"
BODIES = (QUICK, ASKS)
KEY = "confirm"
"""The key FastMCP's guard asks under (this adapter's is the parameter's name)."""
URL_VARIABLE = "BENCH_TASKS_URL"
PROFILE_VARIABLE = "BENCH_TASKS_PROFILE"
CONCURRENCY = 10_000
"""Tasks a server may run at once: no cap either server's body would meet."""


def expected(body: str, n: int) -> str:
    """The text a task of ``body`` started with ``n`` must end with (the client confirms)."""
    return f"done {n}" if body == QUICK else f"confirmed {n}"


def question(n: int) -> str:
    return f"Confirm {n}?"


# -- this adapter -------------------------------------------------------------------------


def ours_server(url: str) -> Any:
    """The adapter's server of both task tools, its tasks on ``url``."""
    from mcp_adapter import Elicit, McpResponse, Resolve, Server, Tasks, Tool
    from schemas import Schema

    class Numbered(Schema):
        n: int

    class Confirm(Schema):
        confirm: bool

    async def confirm(payload: Numbered) -> Elicit[Confirm]:
        return Elicit(question(payload.n), Confirm)

    class Quick(Tool[Numbered]):
        name = QUICK
        task_support = "required"

        async def handle(self, payload: Numbered) -> McpResponse:
            return McpResponse.text(f"done {payload.n}")

    class Asks(Tool[Numbered]):
        name = ASKS
        task_support = "required"

        async def handle(
            self, payload: Numbered, answer: Annotated[Confirm, Resolve(confirm)]
        ) -> McpResponse:
            said = "confirmed" if answer.confirm else "declined"
            return McpResponse.text(f"{said} {payload.n}")

    class TaskBench(Server):
        tools = (Quick, Asks)
        tasks = Tasks(url=url, max_running=CONCURRENCY, max_running_per_identity=CONCURRENCY)

    return TaskBench


def ours_app() -> Any:
    """What ``mcp-adapter serve ... --http --json-response`` builds for the task server
    (profiled from its first request on, with ``BENCH_TASKS_PROFILE``)."""
    from container import Container
    from mcp_adapter import http_app

    app = http_app(ours_server(os.environ[URL_VARIABLE]), Container(), json_response=True)
    if not os.environ.get(PROFILE_VARIABLE):
        return app

    async def profiled(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            PROFILER.enable()  # start-up and imports left out; idempotent
        await app(scope, receive, send)

    return profiled


PROFILER = cProfile.Profile()
"""The diagnostic profile of :func:`ours_app` (``BENCH_TASKS_PROFILE``)."""


# -- FastMCP + fastmcp-tasks (its own venv) ------------------------------------------------


def fastmcp_app() -> Any:
    """FastMCP with ``TasksExtension`` on the same URL: stateless HTTP, JSON responses."""
    import mcp_types
    from fastmcp import Context, FastMCP  # type: ignore[import-not-found, unused-ignore]
    from fastmcp.utilities.tasks import TaskConfig  # type: ignore[import-not-found, unused-ignore]
    from fastmcp_tasks import TasksExtension  # type: ignore[import-not-found, unused-ignore]

    server = FastMCP("fastmcp-tasks-bench")
    server.add_extension(
        TasksExtension(url=os.environ[URL_VARIABLE], name="bench", concurrency=CONCURRENCY)
    )
    required = TaskConfig(mode="required")

    async def quick(n: int) -> str:
        return f"done {n}"

    async def asks(n: int, ctx: Context) -> Any:
        answers = ctx.input_responses or {}
        answer = answers.get(KEY)
        if answer is None:
            schema = {
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}},
                "required": ["confirm"],
            }
            params = mcp_types.ElicitRequestFormParams(message=question(n), requested_schema=schema)
            ask = mcp_types.ElicitRequest(params=params)
            return mcp_types.InputRequiredResult(input_requests={KEY: ask})
        content = getattr(answer, "content", None) or {}
        said = "confirmed" if answer.action == "accept" and content.get("confirm") else "declined"
        return f"{said} {n}"

    server.tool(quick, name=QUICK, task=required, output_schema=None)
    server.tool(asks, name=ASKS, task=required, output_schema=None)
    return server.http_app(path=PATH, transport="http", stateless_http=True, json_response=True)


APPS = {"ours": ours_app, "fastmcp": fastmcp_app}


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads.tasks")
    parser.add_argument("kind", choices=sorted(APPS))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--url", default="memory://")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    os.environ[URL_VARIABLE] = args.url
    target = f"benchmarks.workloads.tasks:{APPS[args.kind].__name__}"
    settings: dict[str, Any] = {"factory": True, "log_level": "warning", "lifespan": "on"}
    profile = os.environ.get(PROFILE_VARIABLE) if args.kind == "ours" else None
    if not profile:
        uvicorn.run(target, host=HOST, port=args.port, **settings)
        return 0
    from benchmarks.workloads import tasks  # the module uvicorn imports (not ``__main__``)

    try:  # uvicorn returns on SIGINT, after its lifespan has ended
        uvicorn.run(target, host=HOST, port=args.port, **settings)
    finally:
        tasks.PROFILER.disable()
        tasks.PROFILER.dump_stats(profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
