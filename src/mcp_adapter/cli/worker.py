"""``mcp-adapter worker``: run a server's task bodies, from the Redis its replicas share,
with no MCP endpoint: serving (``serve --enqueue-only``) and working scale apart."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Mapping

from container import Container
from mcp_adapter.cli.errors import CliError
from mcp_adapter.cli.options import ServeOptions
from mcp_adapter.cli.parsing import Command
from mcp_adapter.cli.serve import check_redis, load_catalog, redis_of, startup_failed, status
from mcp_adapter.cli.settings import ALL_SETTINGS, SETTINGS, forget_secrets, options_of
from mcp_adapter.compiled.catalog import Catalog
from mcp_adapter.compiled.lifespan import StartupError
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.serving.lifespan import serve_lifespan
from mcp_adapter.serving.lowlevel import build_sdk_server
from mcp_adapter.serving.replicas import Readiness, bus_of, shared_redis
from mcp_adapter.serving.signals import HeldSignals

WORKER_SETTINGS = tuple(s for s in SETTINGS if s.name in ("container", "redis_url", "redis_prefix"))
"""``serve``'s settings that mean something to a worker (same flags, same variables)."""

SHUTDOWN_MARGIN = 10.0
"""Seconds a stopping worker has beyond draining and cancelling its bodies (twice
``Tasks.shutdown_grace``) before it exits anyway."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``worker``."""
    parser.add_argument("target", metavar="MODULE:ATTR", help="the server whose tasks to run")
    for setting in WORKER_SETTINGS:
        setting.add_to(parser)


def worker_options(
    args: argparse.Namespace, environ: Mapping[str, str] = os.environ
) -> ServeOptions:
    """The worker's settings, from its flags, else their ``MCP_ADAPTER_*`` variables, checked
    as ``serve`` checks them; the variables of settings a worker has not are not read."""
    for setting in ALL_SETTINGS:
        if setting not in WORKER_SETTINGS:
            setattr(args, setting.name, None)
    wanted = {setting.env for setting in WORKER_SETTINGS}
    return options_of(args, {name: value for name, value in environ.items() if name in wanted})


def run(args: argparse.Namespace) -> int:
    options = worker_options(args)
    forget_secrets()
    check_redis(options)
    catalog, container = load_catalog(options)
    _check_tasks(catalog, options)
    try:
        asyncio.run(_work(options, catalog, container))
    except StartupError as exc:
        raise startup_failed(exc) from exc
    return 0


def _check_tasks(catalog: Catalog, options: ServeOptions) -> None:
    tasks = catalog.tasks
    if tasks is None:
        raise CliError(
            f"{options.target} has no tool that may run as a task: a worker has nothing to run",
            "declare task_support='optional' or 'required' on a tool (docs/tasks.md)",
        )
    if tasks.url.startswith("memory://"):
        raise CliError(
            "a worker needs Redis: without --redis the tasks stay in each serving process",
            "give --redis redis://HOST:PORT/DB, the one `mcp-adapter serve --redis` shares",
        )


def shutdown_timeout(tasks: Tasks) -> float:
    """Seconds a stopping worker has: draining, then cancelling, its bodies (each up to
    ``shutdown_grace``), and ``SHUTDOWN_MARGIN`` for the rest."""
    return 2 * tasks.shutdown_grace + SHUTDOWN_MARGIN


async def _work(options: ServeOptions, catalog: Catalog, container: Container) -> None:
    """Start up, run the worker until a stop signal, then drain or cancel and shut down
    (the server's own lifespan: the same path as ``serve``)."""
    assert catalog.tasks is not None
    shared = shared_redis(redis_of(options), catalog.name)
    bus = bus_of(shared, None)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    held = HeldSignals(shutdown_timeout(catalog.tasks))

    def stop(_: int) -> None:  # in the signal handler: wake the loop, do nothing else
        loop.call_soon_threadsafe(stopped.set)

    with held:
        async with serve_lifespan(catalog, container):
            server = build_sdk_server(catalog, container, transport="http", subscription_bus=bus)
            async with Readiness.of(shared, bus).serving(), server.lifespan(server):
                held.install(stop)
                status(
                    f"worker of {catalog.name!r}: running its tasks "
                    f"(up to {catalog.tasks.max_running} at once; SIGTERM stops it)"
                )
                await stopped.wait()
                status(f"worker of {catalog.name!r}: stopping ({catalog.tasks.on_shutdown})")
                held.shutting_down()


COMMAND = Command(
    "worker",
    help="run a server's task tools from Redis, with no MCP endpoint",
    description="Run the task bodies of MODULE:ATTR (the server `serve` serves, the same "
    "target) from the Redis its replicas share; `serve --enqueue-only` then runs none. "
    "SIGTERM or SIGINT stops it as Server.tasks says: running bodies are cancelled "
    "(on_shutdown='cancel') or awaited up to shutdown_grace ('drain'), their scopes "
    "closed.",
    arguments=add_arguments,
    run=run,
)
