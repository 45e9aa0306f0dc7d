"""The server the task tests run behind haproxy, as replicas (``serve --redis``) and as
``mcp-adapter worker`` processes.

``held`` is a task body that notes where it started (``MARK.started`` in the folder
``TASK_MARKS`` names, holding the name of the process that ran it: ``REPLICA``), waits
until the test creates ``MARK.go``, and answers where it ran. Its scope holds a
``Journal`` whose finalizer appends a line to ``closed`` in that folder, so a test sees
each scope closed. ``TASK_SHUTDOWN`` sets ``Tasks.on_shutdown`` and ``TASK_GRACE`` its
``shutdown_grace``; a task whose worker
stopped is taken over after ``Tasks.redelivery_timeout``, 2 s here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, cast

import anyio

from container import Container
from mcp_adapter import McpResponse, Server, Tasks, Tool
from schemas import Schema
from tests.replicas.app import WhereTool, replica

REDELIVERY_TIMEOUT = 2.0


def marks() -> Path:
    return Path(os.environ["TASK_MARKS"])


class Journal:
    """A request-scoped service: its finalizer notes that the scope closed."""


def journal() -> Iterator[Journal]:
    try:
        yield Journal()
    finally:
        with (marks() / "closed").open("a") as closed:
            closed.write(f"{replica()}\n")


def build_container() -> Container:
    container = Container()
    container.scoped(Journal, journal)
    return container


class Hold(Schema):
    mark: str


class HeldTool(Tool[Hold]):
    """Starts, waits for the test's go, answers which process ran it."""

    name = "held"
    task_support = "optional"

    async def handle(self, payload: Hold, journal: Journal) -> McpResponse:
        folder = marks()
        (folder / f"{payload.mark}.started").write_text(replica())
        while not (folder / f"{payload.mark}.go").exists():
            await anyio.sleep(0.02)
        return McpResponse.text(f"{payload.mark} ran on {replica()}")


class TaskReplicaServer(Server):
    name = "task-replicas"
    tools = (HeldTool, WhereTool)
    tasks = Tasks(
        max_running_per_identity=2,
        on_shutdown=cast(Literal["cancel", "drain"], os.environ.get("TASK_SHUTDOWN", "cancel")),
        shutdown_grace=float(os.environ.get("TASK_GRACE", "10")),
        redelivery_timeout=REDELIVERY_TIMEOUT,
    )
