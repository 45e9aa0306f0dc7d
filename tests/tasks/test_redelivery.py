"""A worker killed mid-task (a real process, SIGKILL): with the tasks in Redis, another
process of the same server takes the task over after ``redelivery_timeout`` and ends it
``failed``; it is never left ``working``."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator

import anyio
import pytest

from tests import needs
from tests.serving.harness import serve_http
from tests.tasks.helpers import over_http

pytestmark = pytest.mark.anyio

TARGET = ["tests.tasks.redelivery:Replica", "--container", "tests.tasks.redelivery:build_container"]


@pytest.fixture
def redis_url() -> Iterator[str]:
    server = needs.command("redis-server", "apt-get install redis-server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


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
