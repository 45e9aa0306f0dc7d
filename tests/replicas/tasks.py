"""What the task tests share: the deployment's settings, a tasks client through the
balancer, and the marks the ``held`` body leaves in its folder."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client

from mcp_adapter.tasks.wire import EXTENSION
from mcp_adapter.testing import TaskClient
from tests.replicas.task_app import REDELIVERY_TIMEOUT

TASK_APP = "tests.replicas.task_app:TaskReplicaServer"
CONTAINER = ("--container", "tests.replicas.task_app:build_container")
TIMEOUT = 120
ADA, BOB = "ada-token", "bob-token"

TAKEN_OVER = 1.6 * REDELIVERY_TIMEOUT
"""When a task whose worker was killed is taken over, at the latest, after the kill:
Docket's ``redelivery_timeout`` since the worker last renewed its lease (it renews every
quarter of that timeout), then a sweep, which a worker runs every quarter of the timeout
(jittered up to 1.25 times) under a fleet-wide lease that a killed holder keeps for one
more quarter. The tests wait ``ENDED_WITHIN`` (bounded, with room for a loaded machine)."""
ENDED_WITHIN = 30 + TAKEN_OVER


@asynccontextmanager
async def tasks_client(url: str, token: str) -> AsyncIterator[TaskClient]:
    """The SDK's client over streamable HTTP, the tasks extension declared."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
        Client(
            streamable_http_client(url, http_client=http),  # type: ignore[arg-type]
            extensions=[advertise(EXTENSION)],
        ) as client,
    ):
        yield TaskClient(client)


def new_mark() -> str:
    return secrets.token_hex(6)


def release(marks: Path, mark: str) -> None:
    (marks / f"{mark}.go").touch()


async def started(marks: Path, mark: str, timeout: float = TIMEOUT) -> str:
    """The process that started the body ``mark`` (bounded wait)."""
    path = marks / f"{mark}.started"
    with anyio.fail_after(timeout):
        while not path.exists() or not path.read_text():
            await anyio.sleep(0.02)
    return path.read_text()


def closed(marks: Path) -> list[str]:
    """The processes whose task scopes closed, one line each."""
    path = marks / "closed"
    return path.read_text().split() if path.exists() else []


async def ended(tasks: TaskClient, task_id: str, within: float = ENDED_WITHIN) -> dict[str, Any]:
    """``tasks/get`` until the task ended, for ``within`` seconds at most."""
    deadline = time.monotonic() + within
    with anyio.fail_after(within + 5):
        while True:
            task = await tasks.get(task_id)
            if task["status"] in ("completed", "failed", "cancelled"):
                return task
            assert time.monotonic() < deadline, f"still {task['status']} after {within:g} s"
            await anyio.sleep(0.1)
