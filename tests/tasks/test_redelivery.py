"""A worker killed mid-task (a real process, SIGKILL): with the tasks in Redis, another
process of the same server takes the task over after ``redelivery_timeout`` and ends it
``failed``; it is never left ``working``."""

from __future__ import annotations

import anyio
import pytest

from tests.serving.harness import serve_http
from tests.tasks.helpers import over_http

pytestmark = pytest.mark.anyio

TARGET = ["tests.tasks.redelivery:Replica", "--container", "tests.tasks.redelivery:build_container"]


async def test_a_task_whose_worker_was_killed_ends_failed_on_another_replica(
    redis_url: str,
) -> None:
    env = {"TASKS_REDIS_URL": redis_url}
    with serve_http(TARGET, env) as first:
        async with over_http(first.url) as tasks:
            task_id = (await tasks.call("sleeps"))["taskId"]
            await tasks.until(task_id, "working")
            with anyio.fail_after(10):  # the first process's worker has taken it
                while True:
                    task = await tasks.get(task_id)
                    if task["lastUpdatedAt"] != task["createdAt"]:
                        break
                    await anyio.sleep(0.05)
        first.process.kill()
        first.process.wait(timeout=10)
    with serve_http(TARGET, env) as second:
        async with over_http(second.url) as tasks:
            ended = await tasks.until(task_id)
    assert ended["status"] == "failed"
    assert "worker running this task stopped" in ended["error"]["message"]
