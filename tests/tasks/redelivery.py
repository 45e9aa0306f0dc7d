"""A server whose tasks live in the Redis at ``TASKS_REDIS_URL``: two processes of it share
them, as replicas do (tests/tasks/test_redelivery.py)."""

from __future__ import annotations

import os

import anyio

from container import Container
from mcp_adapter import McpResponse, Server, Tasks, Tool


class Sleeps(Tool):
    name = "sleeps"
    task_support = "required"

    async def handle(self) -> McpResponse:
        await anyio.sleep(600)
        return McpResponse.text("woke up")


class Replica(Server):
    name = "replica"
    tools = (Sleeps,)
    tasks = Tasks(url=os.environ.get("TASKS_REDIS_URL", "memory://"), redelivery_timeout=1.0)


def build_container() -> Container:
    return Container()
